/**
 * Hash joins whose match chains are longer than a CPU adapter lets one shader invocation walk (its loops end after
 * 65,535 iterations in all, silently): the probe bounds its chain steps there and the join runs over parts of the
 * build side. Real WebGPU (llvmpipe in CI); on a GPU the same joins take the one probe.
 */
import { afterAll, beforeAll, expect, it } from 'vitest';
import { downloadRelation, hashJoin, openGpu, releaseRelation, uploadRelation, type Gpu } from '../src/gpu/index.js';

let gpu: Gpu;
beforeAll(async () => {
  gpu = await openGpu();
});
afterAll(() => gpu?.dispose());

/** Rows (key, index) with `keyOf(i)` keys. */
const rows = (n: number, keyOf: (i: number) => number): Uint32Array => Uint32Array.from({ length: 2 * n }, (_, w) => (w % 2 === 0 ? keyOf(w >> 1) : w >> 1));

/** The (probe row, build row) pairs of equal keys, sorted, from the device and from a plain-TS reference. */
async function pairs(build: Uint32Array, probe: Uint32Array): Promise<{ got: number[]; want: number[] }> {
  const b = uploadRelation(gpu, build, 2, build.length / 2);
  const p = uploadRelation(gpu, probe, 2, probe.length / 2);
  const out = await hashJoin(gpu, { relation: b, keyWords: [0] }, { relation: p, keyWords: [0] });
  const words = await downloadRelation(gpu, out);
  const nb = build.length / 2;
  const got = Array.from({ length: out.count }, (_, r) => words[2 * r]! * nb + words[2 * r + 1]!).sort((x, y) => x - y);
  for (const r of [out, b, p]) releaseRelation(gpu, r);
  const byKey = new Map<number, number[]>();
  for (let j = 0; j < nb; j++) {
    const chain = byKey.get(build[2 * j]!) ?? [];
    chain.push(j);
    byKey.set(build[2 * j]!, chain);
  }
  const want: number[] = [];
  for (let i = 0; i < probe.length / 2; i++) for (const j of byKey.get(probe[2 * i]!) ?? []) want.push(i * nb + j);
  return { got, want: want.sort((x, y) => x - y) };
}

it('joins one probe row against a chain past the loop limit of a CPU adapter', async () => {
  // 40,000 equal keys: the probe's count and write walks, 80,000 steps in one invocation, ended at 65,535 (a count
  // of all, fewer pairs written); 70,000: the count itself ended.
  for (const n of [40_000, 70_000]) {
    const { got, want } = await pairs(rows(n, () => 7), rows(1, () => 7));
    expect(got.length).toBe(n);
    expect(got).toEqual(want);
  }
}, 60_000);

it('joins skewed keys: a long chain beside short ones and probe rows of one thread sharing it', async () => {
  // 10,000 rows of key 7 and unique keys beside them; probe rows 0, 64, ... 960 of key 7 are a thread's four rows
  // (rows base + k * WG + lid of a tile, WG <= 256): 40,000 steps to count, again to write.
  const build = rows(15_000, (i) => (i % 3 === 0 ? 1000 + i : 7));
  const probe = rows(2_000, (i) => (i % 64 === 0 && i < 1024 ? 7 : 1000 + 3 * i));
  const { got, want } = await pairs(build, probe);
  expect(want.length).toBeGreaterThan(100_000);
  expect(got).toEqual(want);
}, 60_000);
