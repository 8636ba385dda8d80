/**
 * The merge kernel on a real WebGPU device against a two-pointer merge in TypeScript on seeded random data, and
 * the overflow check of join row offsets.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { generateKernelShaders, MERGE_TILE } from '@vixen/codegen-wgsl';
import type { KirKernel, KirVariable } from '@vixen/kernel-ir';
import { rowWords, type ScalarType } from '@vixen/queryplan';
import { downloadRelation, openGpu, releaseRelation, runKernel, uploadRelation, type Gpu } from '../src/gpu/index.js';
import { internals } from '../src/gpu/device.js';
import { encodeScan } from '../src/gpu/kernels/scan.js';
import { Recorder } from '../src/gpu/recorder.js';
import { canonical, compareWords, encode, keyWords, randomRows, rng, sortByKeys, type TestRow } from './gpu-fixtures.js';

let gpu: Gpu;
beforeAll(async () => {
  gpu = await openGpu();
});
afterAll(() => gpu?.dispose());

/** Two-pointer merge, left first among equal keys. */
function mergeRef(types: readonly ScalarType[], keys: readonly number[], left: readonly TestRow[], right: readonly TestRow[]): TestRow[] {
  const out: TestRow[] = [];
  let a = 0;
  let b = 0;
  while (a < left.length || b < right.length) {
    const takeLeft = b >= right.length || (a < left.length && compareWords(keyWords(types, left[a]!, keys), keyWords(types, right[b]!, keys)) <= 0);
    out.push(takeLeft ? left[a++]! : right[b++]!);
  }
  return out;
}

async function merge(types: ScalarType[], keys: number[], left: TestRow[], right: TestRow[]): Promise<number[]> {
  const variables: KirVariable[] = [0, 1, 2].map((id) => ({ id, name: `v${id}`, columns: types }));
  const kernel: KirKernel = { kind: 'merge', id: 0, left: 0, right: 1, output: 2, keys };
  const rels = [left, right].map((rows) => uploadRelation(gpu, encode(types, rows), rowWords(types)));
  const out = await runKernel(gpu, kernel, generateKernelShaders(kernel, variables), rels, new Uint32Array(0), variables);
  expect(out.count).toBe(left.length + right.length);
  const words = Array.from(await downloadRelation(gpu, out));
  for (const r of [...rels, out]) releaseRelation(gpu, r);
  return words;
}

const INT2: ScalarType[] = ['int32', 'int32'];
const WIDE: ScalarType[] = ['int64', 'string', 'int32'];

describe('merge', () => {
  // Sizes around a merge tile (one diagonal search each), and not multiples of it.
  const tile = MERGE_TILE;
  const SIZES: Array<[number, number]> = [
    [0, 0],
    [0, 5],
    [5, 0],
    [1, 1],
    [1, 1000],
    [1000, 1],
    [7, 9],
    [tile - 1, tile + 1],
    [3 * tile + 17, 2 * tile - 5],
    [40_000, 25_001],
  ];

  it.each(SIZES)('merges disjoint canonical relations (the semi-naive union), %i + %i rows', async (n, m) => {
    const r = rng(n * 31 + m);
    const all = canonical(INT2, randomRows(r, INT2, 2 * (n + m) + 10, 1 << 16));
    const picked = all.slice(0, n + m);
    // Random split of a canonical set: disjoint, each side canonical.
    const left: TestRow[] = [];
    const right: TestRow[] = [];
    for (const row of picked) (left.length < n && (right.length >= m || r() < n / (n + m)) ? left : right).push(row);
    const keys = [0, 1];
    const got = await merge(INT2, keys, left, right);
    expect(got).toEqual(Array.from(encode(INT2, mergeRef(INT2, keys, left, right))));
    expect(got).toEqual(Array.from(encode(INT2, canonical(INT2, picked))));
  });

  it.each(SIZES)('keeps duplicates, left first, with 64-bit and string columns in a non-canonical key order, %i + %i rows', async (n, m) => {
    const r = rng(7 + n * 13 + m);
    const keys = [2, 0, 1];
    // A small domain gives many equal keys across (and within) the sides.
    const left = sortByKeys(WIDE, randomRows(r, WIDE, n, 6), keys);
    const right = sortByKeys(WIDE, randomRows(r, WIDE, m, 6), keys);
    expect(await merge(WIDE, keys, left, right)).toEqual(Array.from(encode(WIDE, mergeRef(WIDE, keys, left, right))));
  });

  it('merges when every row of one side precedes every row of the other', async () => {
    const keys = [0, 1];
    const low = Array.from({ length: 3000 }, (_, i): TestRow => [i, -i]);
    const high = Array.from({ length: 2100 }, (_, i): TestRow => [5000 + i, i]);
    const want = Array.from(encode(INT2, [...low, ...high]));
    expect(await merge(INT2, keys, low, high)).toEqual(want);
    expect(await merge(INT2, keys, high, low)).toEqual(want);
  });
});

describe('scanWrapped (join row offsets past 2^32 - 1)', () => {
  const kernel: KirKernel = { kind: 'mergeJoin', id: 0, left: 0, right: 1, output: 2, leftKeys: [0], rightKeys: [0], filter: [], project: [] };
  const variables: KirVariable[] = [0, 1, 2].map((id) => ({ id, name: `v${id}`, columns: id < 2 ? INT2 : [] }));

  /** Scans `counts` (plus the trailing 0) as the join driver does and returns the overflow flag. */
  async function wrapped(counts: number[]): Promise<number> {
    const g = internals(gpu);
    const n = counts.length + 1;
    const data = uploadRelation(gpu, Uint32Array.from([...counts, 0, 7]), 1);
    const bound = { buffer: data.buffer!, words: n + 1 };
    const rec = new Recorder(g, generateKernelShaders(kernel, variables));
    encodeScan(rec, bound, n);
    g.device.queue.writeBuffer(bound.buffer, n * 4, new Uint32Array(1));
    rec.dispatch('scanWrapped', [bound], [n], n);
    await rec.submit();
    const words = await downloadRelation(gpu, data);
    releaseRelation(gpu, data);
    return words[n]!;
  }

  it('flags a running sum that wraps, at a block boundary or inside one, and nothing else', async () => {
    const big = 0x7fffffff;
    expect(await wrapped([big, big, 1])).toBe(0); // exactly 2^32 - 1
    expect(await wrapped([big, big, 2])).toBe(1);
    const many = Array.from({ length: 3000 }, (_, i) => (i === 2500 ? 0xffffffff : 1));
    expect(await wrapped(many)).toBe(1);
    expect(await wrapped(many.map((c, i) => (i === 2500 ? 0xffffffff - 3000 : c)))).toBe(0);
  });
});
