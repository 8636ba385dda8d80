/**
 * The single-pass select (mapFilter, unique, difference) against plain-JS references: row counts around
 * the tile and keep-word boundaries, all / none / some rows kept, inputs whose count is pending on the device
 * (the grid covers a bound, rows past the true count are not selected), and the counting run used when room
 * for every input row would pass one binding; unordered selects (any order across tiles) give the same rows. The
 * pass has one variant, with or without subgroups. A mapFilter without a filter is a projection pass instead, of
 * host-known and pending inputs alike.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { COMPACT_ITEMS, generateKernelShaders, kernelConstants } from '@vixen/codegen-wgsl';
import type { KirKernel, KirVariable } from '@vixen/kernel-ir';
import { rowWords, type Expr, type Predicate, type ScalarType } from '@vixen/queryplan';
import { downloadRelation, exactRows, openGpu, releaseRelation, runKernel, uploadRelation, type Gpu } from '../src/gpu/index.js';
import { internals } from '../src/gpu/device.js';
import type { DeviceRelation } from '../src/gpu/relations.js';
import { canonical, constWords, encode, passes, projectWords, randomRows, rng, rowWordsOf, sortByKeys, sortedRows, type TestRow } from './gpu-fixtures.js';

let gpu: Gpu;
beforeAll(async () => {
  gpu = await openGpu();
});
afterAll(() => gpu?.dispose());

const T: ScalarType[] = ['int32', 'int64', 'string'];
const col = (index: number, types: readonly ScalarType[] = T): Expr => ({ kind: 'col', index, type: types[index]! });
const c32 = (value: number): Expr => ({ kind: 'const', type: 'int32', value });
const vars = (...columns: ScalarType[][]): KirVariable[] => columns.map((c, id) => ({ id, name: `v${id}`, columns: c }));
/** int32 column 0 < t keeps about (t + 50) / 100 of the rows (values -50..49). */
const below = (t: number): Predicate[] => [{ kind: 'compare', op: '<', left: col(0), right: c32(t) }];

async function runOn(gpu: Gpu, kernel: KirKernel, variables: KirVariable[], inputs: DeviceRelation[]): Promise<DeviceRelation> {
  return runKernel(gpu, kernel, generateKernelShaders(kernel, variables), inputs, constWords(kernelConstants(kernel)), variables);
}

async function words(gpu: Gpu, rel: DeviceRelation): Promise<number[]> {
  const out = Array.from(await downloadRelation(gpu, rel));
  releaseRelation(gpu, rel);
  return out;
}

function tile(gpu: Gpu): number {
  return COMPACT_ITEMS * internals(gpu).limits.workgroupSize;
}

describe('select', () => {
  it('keeps none, some or all rows in input order, at sizes around tiles and keep words', async () => {
    const t = tile(gpu);
    const project = [col(2), col(0), c32(-7)];
    const outTypes: ScalarType[] = ['string', 'int32', 'int32'];
    for (const n of [1, 31, 32, 33, t - 1, t, t + 1, 3 * t + 17]) {
      const rows = randomRows(rng(n), T, n, 100);
      const rel = uploadRelation(gpu, encode(T, rows), rowWords(T));
      for (const threshold of [-1000, -45, 0, 1000]) {
        const filter = below(threshold);
        const kernel: KirKernel = { kind: 'mapFilter', id: 0, input: 0, output: 1, filter, project };
        const got = await words(gpu, await runOn(gpu, kernel, vars(T, outTypes), [rel]));
        expect(got, `n=${n} t=${threshold}`).toEqual(rows.filter((r) => passes(filter, r)).flatMap((r) => projectWords(project, r)));
      }
      releaseRelation(gpu, rel);
    }
  });

  it('selects from inputs whose count is pending on the device (a bound larger than the rows), none left included', async () => {
    const n = 3 * tile(gpu) + 5;
    const rows = randomRows(rng(7), T, n, 100);
    const rel = uploadRelation(gpu, encode(T, rows), rowWords(T));
    for (const [first, second] of [
      [-40, 0],
      [30, -45],
      [-1000, 0],
      [1000, -1000],
    ] as const) {
      const kernel = (filter: Predicate[]): KirKernel => ({ kind: 'mapFilter', id: 0, input: 0, output: 1, filter, project: [col(0), col(1), col(2)] });
      const mid = await runOn(gpu, kernel(below(first)), vars(T, T), [rel]);
      expect(mid.pending).toBeDefined();
      const out = await runOn(gpu, kernel([{ kind: 'compare', op: '>=', left: col(0), right: c32(second) }]), vars(T, T), [mid]);
      const want = rows.filter((r) => Number(r[0]) < first && Number(r[0]) >= second);
      expect(await exactRows(gpu, out)).toBe(want.length);
      expect(await words(gpu, out), `${first} then ${second}`).toEqual(Array.from(encode(T, want)));
      releaseRelation(gpu, mid);
    }
    releaseRelation(gpu, rel);
  });

  it('keeps order over more tiles than a look-back window (at most 32 tiles, LOOK)', async () => {
    const types: ScalarType[] = ['int32'];
    const n = (internals(gpu).limits.workgroupSize + 40) * tile(gpu) + 3;
    const r = rng(5);
    const values = Int32Array.from({ length: n }, () => Math.floor(r() * 100) - 50);
    const rel = uploadRelation(gpu, new Uint32Array(values.buffer), 1);
    for (const threshold of [-49, 10]) {
      const filter: Predicate[] = [{ kind: 'compare', op: '<', left: col(0, types), right: c32(threshold) }];
      const kernel: KirKernel = { kind: 'mapFilter', id: 0, input: 0, output: 1, filter, project: [col(0, types)] };
      const got = await words(gpu, await runOn(gpu, kernel, vars(types, types), [rel]));
      const want = Array.from(values.filter((v) => v < threshold), (v) => v >>> 0);
      expect(got.length).toBe(want.length);
      expect(got).toEqual(want);
    }
    releaseRelation(gpu, rel);
  });

  it('unordered: the same rows in any order across tiles, over many tiles, of pending inputs too', async () => {
    const types: ScalarType[] = ['int32', 'int32'];
    const n = 40 * tile(gpu) + 3;
    const r = rng(13);
    const rows: TestRow[] = Array.from({ length: n }, (_, i) => [Math.floor(r() * 100) - 50, i]);
    const rel = uploadRelation(gpu, encode(types, rows), 2);
    const project = [col(1, types), col(0, types)];
    for (const threshold of [-1000, -49, 10, 1000]) {
      const filter: Predicate[] = [{ kind: 'compare', op: '<', left: col(0, types), right: c32(threshold) }];
      const unordered: KirKernel = { kind: 'mapFilter', id: 0, input: 0, output: 1, filter, project, unordered: true };
      const want = rows.filter((x) => passes(filter, x)).flatMap((x) => projectWords(project, x));
      const out = await runOn(gpu, unordered, vars(types, types), [rel]);
      expect(await exactRows(gpu, out), `t=${threshold}`).toBe(want.length / 2);
      expect(sortedRows(await words(gpu, out), 2), `t=${threshold}`).toEqual(sortedRows(want, 2));
      // Of a pending input: the rows an ordered select kept.
      const mid = await runOn(gpu, { kind: 'mapFilter', id: 0, input: 0, output: 1, filter: below(20), project: [col(0, types), col(1, types)] }, vars(types, types), [rel]);
      expect(mid.pending).toBeDefined();
      const twice = await runOn(gpu, unordered, vars(types, types), [mid]);
      const wantTwice = rows.filter((x) => passes(filter, x) && Number(x[0]) < 20).flatMap((x) => projectWords(project, x));
      expect(sortedRows(await words(gpu, twice), 2), `pending, t=${threshold}`).toEqual(sortedRows(wantTwice, 2));
      releaseRelation(gpu, mid);
    }
    releaseRelation(gpu, rel);
  });

  it('unique and difference over several tiles, of pending inputs too', async () => {
    const types: ScalarType[] = ['int32', 'int64'];
    const n = 2 * tile(gpu) + 100;
    const r = rng(11);
    // Sorted, with runs of duplicates (a domain much smaller than n).
    const sorted = sortByKeys(types, randomRows(r, types, n, 40), [0, 1]);
    const distinct = canonical(types, sorted);
    const rel = uploadRelation(gpu, encode(types, sorted), rowWords(types));
    const unique: KirKernel = { kind: 'unique', id: 0, input: 0, output: 1 };
    const u = await runOn(gpu, unique, vars(types, types), [rel]);
    expect(await words(gpu, u)).toEqual(Array.from(encode(types, distinct)));
    // A pending left side: every row kept by a filter, then unique of that.
    const all: Predicate[] = [{ kind: 'compare', op: '>=', left: col(0, types), right: c32(-(2 ** 31)) }];
    const pending = await runOn(gpu, { kind: 'mapFilter', id: 0, input: 0, output: 1, filter: all, project: [col(0, types), col(1, types)] }, vars(types, types), [rel]);
    expect(pending.pending).toBeDefined();
    const u2 = await runOn(gpu, unique, vars(types, types), [pending]);
    expect(await words(gpu, u2)).toEqual(Array.from(encode(types, distinct)));
    const right = distinct.filter(() => r() < 0.5);
    const leftRel = uploadRelation(gpu, encode(types, distinct), rowWords(types));
    const rightRel = uploadRelation(gpu, encode(types, right), rowWords(types));
    const difference: KirKernel = { kind: 'difference', id: 0, left: 0, right: 1, output: 2 };
    const rightKeys = new Set(right.map((x) => rowWordsOf(types, x).join(',')));
    const d = await runOn(gpu, difference, vars(types, types, types), [leftRel, rightRel]);
    expect(await words(gpu, d)).toEqual(Array.from(encode(types, distinct.filter((x) => !rightKeys.has(rowWordsOf(types, x).join(','))))));
    for (const x of [rel, pending, leftRel, rightRel]) releaseRelation(gpu, x);
  });
});

describe('select whose room for every input row would pass one binding', () => {
  it('counts first, then writes exactly the kept rows; a projection of a pending count reads the count first', async () => {
    // 64 KiB bindings: 8,000 one-word rows fit (32 KB), room for all of them projected to 4 words (128 KB) does not.
    const small = await openGpu({ maxStorageBufferBindingSize: 64 * 1024 });
    try {
      const types: ScalarType[] = ['int32'];
      const rows: TestRow[] = Array.from({ length: 8000 }, (_, i) => [(i * 7919) % 1000]);
      const rel = uploadRelation(small, encode(types, rows), 1);
      const project = [col(0, types), c32(1), col(0, types), c32(2)];
      const outTypes: ScalarType[] = ['int32', 'int32', 'int32', 'int32'];
      for (const threshold of [0, 100]) {
        const filter: Predicate[] = [{ kind: 'compare', op: '<', left: col(0, types), right: c32(threshold) }];
        const kernel: KirKernel = { kind: 'mapFilter', id: 0, input: 0, output: 1, filter, project };
        const out = await runOn(small, kernel, vars(types, outTypes), [rel]);
        // The exact count, not a pending bound.
        expect(out.pending).toBeUndefined();
        const want = rows.filter((x) => passes(filter, x)).flatMap((x) => projectWords(project, x));
        expect(await words(small, out)).toEqual(want);
        const unordered = await runOn(small, { ...kernel, unordered: true }, vars(types, outTypes), [rel]);
        expect(unordered.pending).toBeUndefined();
        expect(sortedRows(await words(small, unordered), 4)).toEqual(sortedRows(want, 4));
      }
      // A projection (no filter) of a filter's output: room for its bound projected would pass one binding too, so
      // it reads the count first.
      const filter: Predicate[] = [{ kind: 'compare', op: '<', left: col(0, types), right: c32(100) }];
      const mid = await runOn(small, { kind: 'mapFilter', id: 0, input: 0, output: 1, filter, project: [col(0, types)] }, vars(types, types), [rel]);
      expect(mid.pending).toBeDefined();
      const projected = await runOn(small, { kind: 'mapFilter', id: 1, input: 0, output: 1, filter: [], project }, vars(types, outTypes), [mid]);
      expect(projected.pending).toBeUndefined();
      expect(await words(small, projected)).toEqual(rows.filter((x) => passes(filter, x)).flatMap((x) => projectWords(project, x)));
      releaseRelation(small, mid);
      releaseRelation(small, rel);
    } finally {
      small.dispose();
    }
  });
});

describe('projection (a mapFilter without a filter)', () => {
  // Rows moved as vec2 (2 -> 2 words), vec4 out (1 -> 4), vec4 in and single words out (4 -> 3), vec2 in (2 -> 1).
  const cases: Array<{ types: ScalarType[]; project: (types: ScalarType[]) => Expr[] }> = [
    { types: ['int32', 'int32'], project: (t) => [col(1, t), col(0, t)] },
    { types: ['int32'], project: (t) => [col(0, t), { kind: 'const', type: 'int64', value: -(2n ** 40n) - 7n }, c32(9)] },
    { types: ['int64', 'int32', 'string'], project: (t) => [col(2, t), col(0, t)] },
    { types: ['int32', 'int32'], project: (t) => [col(1, t)] },
  ];

  it('writes every row projected in input order, of host-known and pending inputs (a bound larger than the rows)', async () => {
    for (const { types, project } of cases) {
      const proj = project(types);
      const outTypes = proj.map((e) => e.type);
      const kernel: KirKernel = { kind: 'mapFilter', id: 0, input: 0, output: 1, filter: [], project: proj };
      for (const n of [1, 255, 3 * tile(gpu) + 5]) {
        const rows = randomRows(rng(n), types, n, 100);
        const rel = uploadRelation(gpu, encode(types, rows), rowWords(types));
        const out = await runOn(gpu, kernel, vars(types, outTypes), [rel]);
        expect(out.pending).toBeUndefined();
        expect(await words(gpu, out), `${types} n=${n}`).toEqual(rows.flatMap((r) => projectWords(proj, r)));
        // Of a filter's output, whose count stays on the device: the projection's count stays there too.
        const ten: Expr = types[0] === 'int64' ? { kind: 'const', type: 'int64', value: 10n } : c32(10);
        const first: Predicate[] = [{ kind: 'compare', op: '<', left: col(0, types), right: ten }];
        const mid = await runOn(gpu, { ...kernel, filter: first, project: types.map((_, i) => col(i, types)) }, vars(types, types), [rel]);
        expect(mid.pending).toBeDefined();
        const projected = await runOn(gpu, kernel, vars(types, outTypes), [mid]);
        expect(projected.pending).toBeDefined();
        const want = rows.filter((r) => passes(first, r)).flatMap((r) => projectWords(proj, r));
        expect(await exactRows(gpu, projected)).toBe(want.length / rowWords(outTypes));
        expect(await words(gpu, projected), `${types} n=${n}, pending`).toEqual(want);
        releaseRelation(gpu, mid);
        releaseRelation(gpu, rel);
      }
    }
  });

});
