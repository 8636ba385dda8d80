/**
 * Relations known to be canonical (a unique kernel's output) skip the sort, unique and concat work that would
 * only restore that form: a union into an empty relation and re-canonicalizing its rows become no-ops, and
 * the result still equals the canonical form computed from scratch.
 */
import { afterAll, beforeAll, expect, test } from 'vitest';
import { generateKernelShaders } from '@vixen/codegen-wgsl';
import type { KirKernel, KirVariable } from '@vixen/kernel-ir';
import { downloadRelation, exactRows, openGpu, releaseRelation, runKernel, uploadRelation, type Gpu } from '../src/gpu/index.js';
import { encode, randomRows, rng } from './gpu-fixtures.js';
import { compile } from '../src/index.js';

let gpu: Gpu;
beforeAll(async () => {
  gpu = await openGpu();
});
afterAll(() => gpu?.dispose());

test('canonical relations skip sort, unique and a concat with an empty side', async () => {
  const vars: KirVariable[] = [0, 1, 2, 3].map((id) => ({ id, name: `v${id}`, columns: ['int32', 'int64'] }));
  const none = new Uint32Array(0);
  const launch = (k: KirKernel, inputs: Parameters<typeof runKernel>[3]) => runKernel(gpu, k, generateKernelShaders(k, vars), inputs, none, vars);
  const sort: KirKernel = { kind: 'sort', id: 0, input: 0, output: 1, keys: [0, 1] };
  const unique: KirKernel = { kind: 'unique', id: 1, input: 1, output: 2 };
  const concat: KirKernel = { kind: 'concat', id: 2, left: 2, right: 3, output: 3 };

  const raw = uploadRelation(gpu, encode(['int32', 'int64'], randomRows(rng(3), ['int32', 'int64'], 5000, 50)), 3);
  const sorted = await launch(sort, [raw]);
  expect(sorted.canonical).toBeFalsy();
  const canonical = await launch(unique, [sorted]);
  expect(canonical.canonical).toBe(true);
  expect(await exactRows(gpu, canonical)).toBeLessThan(5000);

  const empty = { buffer: null, count: 0, width: 3 };
  expect(await launch(concat, [empty, canonical])).toBe(canonical);
  expect(await launch(sort, [canonical])).toBe(canonical);
  expect(await launch(unique, [canonical])).toBe(canonical);
  // Sorting by other keys still sorts.
  const byKey1 = await launch({ ...sort, keys: [1, 0] }, [canonical]);
  expect(byKey1).not.toBe(canonical);
  expect(byKey1.canonical).toBeFalsy();

  // The canonical words are those of sort + unique over the concatenation computed from scratch.
  const both = await launch(concat, [canonical, canonical]);
  expect(both.canonical).toBeFalsy();
  const again = await launch(unique, [await launch(sort, [both])]);
  expect(Array.from(await downloadRelation(gpu, again))).toEqual(Array.from(await downloadRelation(gpu, canonical)));
  for (const r of [raw, sorted, canonical, byKey1, both, again]) releaseRelation(gpu, r);
});

test('a few host rows are made canonical on the host, in the order and form the sort and unique kernels give', async () => {
  // Rows out of order, repeated, with negative numbers, 64-bit values and strings (given through the API: the
  // compiler keeps no repeated inline facts); a sort-merge join reads them as canonical (sorted by every word) and a
  // count sees each distinct row once.
  const program = compile(
    `f(a, b, s) -> int32(a), int64(b), string(s).
g(a, t) -> int32(a), string(t).
g(3, "x"). g(-2, "y"). g(3, "w"). g(7, "v").
j(a, b, s, t) <- f(a, b, s), g(a, t).
n[] = c <- agg<<c = count()>> f(_, _, _).`,
    { joinStrategy: 'sort-merge' },
  );
  const f = [[3, -7n, 'b'], [-2, 5n, 'a'], [3, -7n, 'b'], [0, 9007199254740993n, 'c'], [-2, 5n, 'a'], [-2, -1n, 'zz'], [3, 2n, 'a']];
  const run = await program.run({ gpu, facts: { f }, outputs: ['j', 'n'] });
  const oracle = await program.interpret({ facts: { f } });
  expect(run.relations.get('j')).toEqual(oracle.get('j'));
  expect(run.relations.get('n')).toEqual(oracle.get('n'));
  expect(run.relations.get('n')).toEqual([[5]]);
});
