/**
 * Joins on a heavily skewed key: one key holds most rows of both sides, and a probe thread's rows (base + k * WG +
 * lid of a tile) meet its chain four times. CPU adapters end a shader invocation's loops after 65,535 iterations
 * in all; the hash probe bounds its chain walks there (codegen-wgsl kernels/hash.ts CHAIN_STEPS) and the runtime
 * joins over parts of the build side. Answers on the device equal the reference interpreter's; a fused pipeline's
 * probe stops with a limit error there instead.
 */
import { afterAll, beforeAll, expect, it } from 'vitest';
import { compile, openGpu, type Gpu } from '@vixen/runtime';
import { internals } from '@vixen/runtime/gpu';

let gpu: Gpu;
beforeAll(async () => {
  gpu = await openGpu();
});
afterAll(() => gpu?.dispose());

// Keyed by the second column: neither side is sorted by the key, so the join is a hash join (join-strategy.ts).
const DECLS = `
b(v, k) -> int32(v), int32(k).
p(w, k) -> int32(w), int32(k).
`;
// 10,000 build rows of key 7; probe rows 0, 64, ... 960 of key 7 (a thread's four rows for WG <= 256), the rest unique.
const FACTS = {
  b: Array.from({ length: 10_000 }, (_, i) => [i, 7]),
  p: Array.from({ length: 12_000 }, (_, i) => [i, i % 64 === 0 && i < 1024 ? 7 : 100_000 + i]),
};

it('a hash join kernel over a chain a CPU adapter cannot walk in one invocation', async () => {
  const program = compile(`${DECLS} r(v, w) <- b(v, k), p(w, k).`);
  expect(program.kir.kernels.map((k) => k.kind)).toContain('hashJoin');
  const r = (await program.run({ gpu, facts: FACTS })).relations.get('r')!;
  expect(r).toHaveLength(160_000);
  expect(r).toEqual((await program.interpret({ facts: FACTS })).get('r'));
}, 60_000);

it('a fused pipeline probe over such a chain: a located limit error on a CPU adapter, never missing rows', async () => {
  // Scanning p, probing b's table: no pipeline runs over parts of its build side yet.
  const program = compile(`${DECLS} r(v, x) <- p(w, k), b(v, k), w > 3, x = v + w.`);
  expect(program.kir.kernels.some((k) => k.kind === 'pipeline' && k.probes.length === 1)).toBe(true);
  const want = (await program.interpret({ facts: FACTS })).get('r');
  const run = program.run({ gpu, facts: FACTS });
  if (internals(gpu).cpuAdapter) await expect(run).rejects.toThrow(/rule <input>:4: .*a join key repeats more often than one shader invocation of a CPU adapter can walk/);
  else expect((await run).relations.get('r')).toEqual(want);
}, 60_000);
