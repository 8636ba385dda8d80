/** Every KIR kernel kind on a real WebGPU device against plain-JS references on seeded random data. */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { generateKernelShaders, kernelConstants, sortKeyWords } from '@vixen/codegen-wgsl';
import type { HashJoinColumn, KirKernel, KirVariable, PipelineProbe } from '@vixen/kernel-ir';
import { rowWords, type CompareOp, type Expr, type OutputOrder, type Predicate, type ScalarType } from '@vixen/queryplan';
import { downloadRelation, exactRows, openGpu, releaseRelation, runKernel, uploadRelation, type Gpu } from '../src/gpu/index.js';
import { internals } from '../src/gpu/device.js';
import { sortRows } from '../src/gpu/kernels/sort.js';
import { madeUpShaders } from '../src/gpu/recorder.js';
import {
  canonical,
  constWords,
  encode,
  keyWords,
  passes,
  projectWords,
  projectedWidth,
  randomRows,
  rng,
  rowWordsOf,
  sortByKeys,
  sortedRows,
  type TestRow,
  type TestValue,
} from './gpu-fixtures.js';

let gpu: Gpu;
beforeAll(async () => {
  gpu = await openGpu();
});
afterAll(() => gpu?.dispose());

const SIZES = [0, 1, 7, 128, 129, 1000, 2049, 50_000];
const TYPES: ScalarType[] = ['int32', 'int64', 'string', 'int32'];
const OPS: CompareOp[] = ['=', '!=', '<', '<=', '>', '>='];

const col = (index: number, types: readonly ScalarType[]): Expr => ({ kind: 'col', index, type: types[index]! });

function vars(...columns: ScalarType[][]): KirVariable[] {
  return columns.map((c, id) => ({ id, name: `v${id}`, columns: c }));
}

/** Uploads `inputs` (rows of the kernel's input variables), runs the kernel, returns the output words. */
async function run(kernel: KirKernel, variables: KirVariable[], inputs: Array<{ types: ScalarType[]; rows: TestRow[] }>): Promise<number[]> {
  const rels = inputs.map((i) => uploadRelation(gpu, encode(i.types, i.rows), rowWords(i.types)));
  const out = await runKernel(gpu, kernel, generateKernelShaders(kernel, variables), rels, constWords(kernelConstants(kernel)), variables);
  const outVar = variables.find((v) => v.id === kernel.output)!;
  expect(out.width).toBe(rowWords(outVar.columns));
  const words = await downloadRelation(gpu, out);
  expect(words.length).toBe(out.count * out.width);
  // A kernel may pass an input through (sort and unique of a canonical input, or of at most one row).
  for (const r of new Set([...rels, out])) releaseRelation(gpu, r);
  return Array.from(words);
}

/** A device of its own whose pushErrorScope calls are counted. */
async function deviceCountingPushes(): Promise<{ other: Gpu; g: ReturnType<typeof internals>; pushes: () => number }> {
  const other = await openGpu();
  const push = other.device.pushErrorScope.bind(other.device);
  let pushes = 0;
  other.device.pushErrorScope = (filter: GPUErrorFilter) => {
    pushes += 1;
    push(filter);
  };
  return { other, g: internals(other), pushes: () => pushes };
}

const c32 = (value: number): Expr => ({ kind: 'const', type: 'int32', value });
const c64 = (value: bigint): Expr => ({ kind: 'const', type: 'int64', value });
const cStr = (id: number): Expr => ({ kind: 'const', type: 'string', value: `s${id}` });
const constOf: Partial<Record<ScalarType, Expr>> = { int32: c32(-3), int64: c64(-5_000_000_000n + 2n), string: cStr(5) };

describe('mapFilter', () => {
  const project: Expr[] = [col(2, TYPES), cStr(0xfffffff3), col(1, TYPES), c64(-(2n ** 40n) - 7n), col(0, TYPES), c32(-42)];
  const outTypes: ScalarType[] = ['string', 'string', 'int64', 'int64', 'int32', 'int32'];

  async function check(filter: Predicate[], rows: TestRow[]): Promise<void> {
    const kernel: KirKernel = { kind: 'mapFilter', id: 0, input: 0, output: 1, filter, project };
    const got = await run(kernel, vars(TYPES, outTypes), [{ types: TYPES, rows }]);
    expect(projectedWidth(project)).toBe(rowWords(outTypes));
    const want = rows.filter((r) => passes(filter, r)).flatMap((r) => projectWords(project, r));
    expect(got).toEqual(want);
  }

  it.each(SIZES)('projects constants and columns, no filter, n=%i', async (n) => {
    await check([], randomRows(rng(n), TYPES, n, 20));
  });

  for (const [index, type] of [[0, 'int32'], [1, 'int64'], [2, 'string']] as const) {
    it.each(OPS)(`filters ${type} column %s constant`, async (op) => {
      const rows = randomRows(rng(7 + index), TYPES, 1000, 20);
      // Comparisons against a value that occurs in the data, so = and boundaries matter.
      const probe = rows[3]![index]!;
      const constant: Expr = type === 'int32' ? c32(Number(probe)) : type === 'int64' ? c64(BigInt(probe)) : cStr(Number(probe));
      await check([{ kind: 'compare', op, left: col(index, TYPES), right: constant }], rows);
      await check([{ kind: 'compare', op, left: constOf[type]!, right: col(index, TYPES) }], rows);
    });
  }

  it.each(OPS)('filters column %s column (int32) in a conjunction', async (op) => {
    const rows = randomRows(rng(11), TYPES, 1000, 8);
    await check(
      [
        { kind: 'compare', op, left: col(0, TYPES), right: col(3, TYPES) },
        { kind: 'compare', op: '!=', left: col(1, TYPES), right: c64(0n) },
      ],
      rows,
    );
  });

  // Compaction tiles are 8 * workgroup size (2048 or 1024) rows.
  it.each([1023, 1024, 1025, 2047, 2048, 2049, 4097])('keeps input order across compaction tiles, n=%i', async (n) => {
    const rows = randomRows(rng(50 + n), TYPES, n, 1000);
    await check([{ kind: 'compare', op: '<', left: col(0, TYPES), right: c32(-480) }], rows);
    await check([{ kind: 'compare', op: '>', left: col(0, TYPES), right: c32(-480) }], rows);
  });

  it('compacts 70k rows (three scan levels)', async () => {
    const rows = randomRows(rng(70), TYPES, 70_000, 1000);
    await check([{ kind: 'compare', op: '<', left: col(0, TYPES), right: c32(100) }], rows);
  });
});

describe('madeUpShaders', () => {
  it('finds the passes of a kernel made up again, int64 constants and all, by what it is', () => {
    // gpu/chunks.ts makes kernels up anew in every run; a filter of one may hold bigint constants, which plain
    // JSON cannot key.
    const make = (bound: bigint): KirKernel => ({
      kind: 'mapFilter',
      id: 3,
      input: 0,
      output: 1,
      filter: [{ kind: 'compare', op: '<', left: col(1, TYPES), right: c64(bound) }],
      project: [col(1, TYPES)],
    });
    const variables = vars(TYPES, ['int64']);
    const passes = madeUpShaders(make(-(2n ** 40n)), variables);
    expect(madeUpShaders(make(-(2n ** 40n)), variables)).toBe(passes);
    expect(madeUpShaders(make(2n ** 40n), variables)).not.toBe(passes);
  });
});

describe('sort', () => {
  it.each(SIZES)('sorts by mixed keys (stable), n=%i', async (n) => {
    const rows = randomRows(rng(100 + n), TYPES, n, 30);
    for (const keys of [[2, 0], [1], [0, 1, 2, 3], [3, 1]]) {
      const kernel: KirKernel = { kind: 'sort', id: 0, input: 0, output: 1, keys };
      const got = await run(kernel, vars(TYPES, TYPES), [{ types: TYPES, rows }]);
      expect(got).toEqual(Array.from(encode(TYPES, sortByKeys(TYPES, rows, keys))));
    }
  });

  /** Rows of `keyTypes` values made by `value(i)`, plus a last int32 column holding the input position. */
  async function checkSort(keyTypes: ScalarType[], n: number, value: (i: number) => TestRow, keys = keyTypes.map((_, k) => k)): Promise<void> {
    const types: ScalarType[] = [...keyTypes, 'int32'];
    const rows = Array.from({ length: n }, (_, i): TestRow => [...value(i), i]);
    const kernel: KirKernel = { kind: 'sort', id: 0, input: 0, output: 1, keys };
    const got = await run(kernel, vars(types, types), [{ types, rows }]);
    // The position column makes any instability visible.
    expect(got).toEqual(Array.from(encode(types, sortByKeys(types, rows, keys))));
  }

  // Tiles are 5 * workgroup size (1280 or 640) pairs: sizes around and across tile boundaries.
  const RADIX_SIZES = [0, 1, 2, 639, 640, 641, 1279, 1280, 1281, 3000, 70_000];

  it.each(RADIX_SIZES)('keeps input order when all keys are equal, n=%i', async (n) => {
    await checkSort(['int32', 'int64'], n, () => [-7, 5n]);
  });

  it.each(RADIX_SIZES)('sorts random 32-bit keys stably, n=%i', async (n) => {
    const r = rng(700 + n);
    await checkSort(['int32'], n, () => [Math.floor(r() * 2 ** 32) - 2 ** 31]);
  });

  it.each([1000, 70_000])('sorts keys that differ only in high bits (and bits 30-31 plus bit 0), n=%i', async (n) => {
    const r = rng(800 + n);
    await checkSort(['int32'], n, () => [(Math.floor(r() * 256) << 24) | 0]);
    // Varying windows at shift 0 and shift 30: the second digit's upper nibble lies past bit 31.
    await checkSort(['string'], n, () => [((Math.floor(r() * 4) << 30) | Math.floor(r() * 2)) >>> 0]);
  });

  it.each([1, 513, 5000, 70_000])('sorts 64-bit keys (both words vary), n=%i', async (n) => {
    const r = rng(900 + n);
    await checkSort(['int64'], n, () => [BigInt(Math.floor(r() * 2 ** 32)) * 2n ** 32n + BigInt(Math.floor(r() * 16)) - 2n ** 63n]);
  });

  // Keys of one, two and three words (int32; int64; int64 then int32) with the input position as payload, in random
  // order (half the keys repeating an earlier one), already sorted and reversed; sizes not a multiple of a tile.
  it.each([4097, 20_001])('sorts 32-, 64- and 96-bit keys with a payload: random, sorted, reversed, n=%i', async (n) => {
    const r = rng(1100 + n);
    const shapes: Array<[ScalarType[], () => TestRow]> = [
      [['int32'], () => [Math.floor(r() * 2 ** 32) - 2 ** 31]],
      [['int64'], () => [BigInt(Math.floor(r() * 2 ** 32)) * 2n ** 32n + BigInt(Math.floor(r() * 2 ** 32)) - 2n ** 63n]],
      [['int64', 'int32'], () => [BigInt(Math.floor(r() * 64)) - 32n, Math.floor(r() * 2 ** 32) - 2 ** 31]],
    ];
    for (const [keyTypes, value] of shapes) {
      const random = Array.from({ length: n }, value);
      for (let i = 1; i < n; i += 2) random[i] = random[Math.floor(r() * i)]!;
      const sorted = sortByKeys(keyTypes, random, keyTypes.map((_, k) => k));
      for (const order of [random, sorted, [...sorted].reverse()]) await checkSort(keyTypes, n, (i) => order[i]!);
    }
  });

  // Index pairs: the first digit pass reads keys from the rows, the last writes rows; here one pass does both.
  it.each([1, 1000, 70_000])('sorts one-word rows, and wide rows whose key varies in one digit only, n=%i', async (n) => {
    const r = rng(960 + n);
    const one: ScalarType[] = ['int32'];
    const keys = Array.from({ length: n }, (): TestRow => [Math.floor(r() * 2 ** 32) - 2 ** 31]);
    const sort: KirKernel = { kind: 'sort', id: 0, input: 0, output: 1, keys: [0] };
    expect(await run(sort, vars(one, one), [{ types: one, rows: keys }])).toEqual(Array.from(encode(one, sortByKeys(one, keys, [0]))));
    await checkSort(['string', 'int64'], n, () => [Math.floor(r() * 256) << 8, 5n], [0]);
  });

  // One-word rows are sorted as bare keys (tiles of 11 * workgroup size keys: 2816 or 1408); past 64 tiles a
  // CPU adapter's workgroups walk several tiles each.
  it.each([0, 1, 2, 1407, 1408, 1409, 2815, 2816, 2817, 5000, 70_001, 200_003])('sorts one-word rows as keys: random, equal, skewed, high bits, n=%i', async (n) => {
    const r = rng(970 + n);
    const cases: Array<[ScalarType, () => number]> = [
      ['int32', () => Math.floor(r() * 2 ** 32) - 2 ** 31],
      ['int32', () => -5],
      // Nine in ten rows share one key: long runs of one digit in every tile.
      ['int32', () => (r() < 0.9 ? 12345 : Math.floor(r() * 2 ** 16))],
      ['string', () => (Math.floor(r() * 256) << 24) >>> 0],
    ];
    for (const [type, value] of cases) {
      const one: ScalarType[] = [type];
      const rows = Array.from({ length: n }, (): TestRow => [value()]);
      const sort: KirKernel = { kind: 'sort', id: 0, input: 0, output: 1, keys: [0] };
      expect(await run(sort, vars(one, one), [{ types: one, rows }])).toEqual(Array.from(encode(one, sortByKeys(one, rows, [0]))));
    }
  });

  // Small sorts (up to 16 key words; 2^13 rows on a CPU adapter) rank each row against all others (rankSort, up to
  // 256 rows here) or sort tiles and merge them: wide keys with many ties (equal rows across rankSort's 64-row
  // stages), then one key word more than they take (radix passes).
  it.each([65, 200, 1000])('sorts small inputs by rank: 16 key words, and 17 by radix passes, ties across tiles, n=%i', async (n) => {
    const r = rng(880 + n);
    const wide = (): bigint => BigInt(Math.floor(r() * 3)) * 2n ** 40n - 1n;
    await checkSort(Array<ScalarType>(8).fill('int64'), n, () => Array.from({ length: 8 }, wide));
    await checkSort([...Array<ScalarType>(8).fill('int64'), 'int32'], n, () => [...Array.from({ length: 8 }, wide), Math.floor(r() * 2) - 1]);
  });

  // rankSort up to 256 rows, then sortTiles (tiles of 4 * workgroup size rows: 1024 or 512 here) and mergeRanks
  // passes (four runs into one), radix passes past 2^13 rows: random key columns, key orders and domains (ties within and
  // across tiles), the sizes around those boundaries.
  const MERGE_SIZES = [2, 255, 256, 257, 511, 512, 513, 1023, 1024, 1025, 2049, 3000, 4097, 8191, 8192, 8193];
  it.each(MERGE_SIZES)('sorts random key widths and domains as the host does (stable), n=%i', async (n) => {
    const r = rng(1300 + n);
    const pick = <T,>(xs: readonly T[]): T => xs[Math.floor(r() * xs.length)]!;
    for (const domain of [2, 40, 2 ** 30]) {
      const keyTypes = Array.from({ length: 1 + Math.floor(r() * 4) }, () => pick<ScalarType>(['int32', 'int64', 'string']));
      // A random non-empty subset of the columns in random order.
      const keys = keyTypes.map((_, k) => k).sort(() => r() - 0.5).slice(0, 1 + Math.floor(r() * keyTypes.length));
      await checkSort(keyTypes, n, () => randomRows(r, keyTypes, 1, domain)[0]!, keys);
    }
  });

  // The driver run directly, on more rows than a sort ranks and merges here (many doublings; the GPU's bounds).
  it.each([20_000, 70_001])('sorts by tiles and merges past the rows a CPU adapter ranks, n=%i', async (n) => {
    const r = rng(1400 + n);
    const types: ScalarType[] = ['int64', 'string', 'int32'];
    const rows = Array.from({ length: n }, (_, i): TestRow => [BigInt(Math.floor(r() * 7) - 3) * 2n ** 33n, Math.floor(r() * 5), i]);
    const kernel: KirKernel = { kind: 'sort', id: 0, input: 0, output: 1, keys: [1, 0] };
    const input = uploadRelation(gpu, encode(types, rows), rowWords(types));
    const out = await sortRows(internals(gpu), generateKernelShaders(kernel, vars(types, types)), input, sortKeyWords(types, [1, 0]), 'rank');
    expect(Array.from(await downloadRelation(gpu, out))).toEqual(Array.from(encode(types, sortByKeys(types, rows, [1, 0]))));
    for (const rel of [input, out]) releaseRelation(gpu, rel);
  });

  it.each([300, 3000, 70_000])('sorts one-word rows whose count is pending (a filter output), n=%i', async (n) => {
    const one: ScalarType[] = ['int32'];
    const r = rng(990 + n);
    const rows = Array.from({ length: n }, (): TestRow => [Math.floor(r() * 2 ** 32) - 2 ** 31]);
    const filter: KirKernel = { kind: 'mapFilter', id: 0, input: 0, output: 1, filter: [{ kind: 'compare', op: '<', left: col(0, one), right: c32(0) }], project: [col(0, one)] };
    const sort: KirKernel = { kind: 'sort', id: 1, input: 1, output: 2, keys: [0] };
    const vs = vars(one, one, one);
    const input = uploadRelation(gpu, encode(one, rows), 1);
    const kept = await runKernel(gpu, filter, generateKernelShaders(filter, vs), [input], constWords(kernelConstants(filter)), vs);
    expect(kept.pending).toBeDefined();
    const sorted = await runKernel(gpu, sort, generateKernelShaders(sort, vs), [kept], new Uint32Array(0), vs);
    expect(sorted.pending).toBeDefined();
    const words = await downloadRelation(gpu, sorted);
    expect(Array.from(words)).toEqual(Array.from(encode(one, sortByKeys(one, rows.filter(([v]) => (v as number) < 0), [0]))));
    for (const rel of new Set([input, kept, sorted])) releaseRelation(gpu, rel);
  });

  // Two-word rows are sorted as the radix pairs themselves (no index pairs, no gather).
  it.each([1, 2, 1025, 70_000])('sorts two-word rows directly: key in either word, or both words of an int64, n=%i', async (n) => {
    const r = rng(950 + n);
    const i2: ScalarType[] = ['int32', 'int32'];
    const rows = Array.from({ length: n }, (_, i): TestRow => [Math.floor(r() * 2 ** 32) - 2 ** 31, (i % 97) - 40]);
    for (const keys of [[0], [1], [1, 0]]) {
      const kernel: KirKernel = { kind: 'sort', id: 0, input: 0, output: 1, keys };
      expect(await run(kernel, vars(i2, i2), [{ types: i2, rows }])).toEqual(Array.from(encode(i2, sortByKeys(i2, rows, keys))));
    }
    const i64: ScalarType[] = ['int64'];
    const wide = Array.from({ length: n }, (): TestRow => [BigInt(Math.floor(r() * 2 ** 32)) * 2n ** 32n + BigInt(Math.floor(r() * 2 ** 32)) - 2n ** 63n]);
    const kernel: KirKernel = { kind: 'sort', id: 0, input: 0, output: 1, keys: [0] };
    expect(await run(kernel, vars(i64, i64), [{ types: i64, rows: wide }])).toEqual(Array.from(encode(i64, sortByKeys(i64, wide, [0]))));
  });

  it.each([1025, 20_000])('sorts by multi-column keys with few distinct values, n=%i', async (n) => {
    const r = rng(1000 + n);
    const value = (): TestRow => [Math.floor(r() * 3), BigInt(Math.floor(r() * 5) - 2), Math.floor(r() * 4)];
    await checkSort(['int32', 'int64', 'string'], n, value, [2, 0, 1]);
    await checkSort(['int32', 'int64', 'string'], n, value, [1]);
  });
});

describe('unique', () => {
  it.each(SIZES)('drops adjacent duplicates, n=%i', async (n) => {
    const types: ScalarType[] = ['int64', 'string'];
    const rows = sortByKeys(types, randomRows(rng(200 + n), types, n, 6), [0, 1]);
    const kernel: KirKernel = { kind: 'unique', id: 0, input: 0, output: 1 };
    const got = await run(kernel, vars(types, types), [{ types, rows }]);
    expect(got).toEqual(Array.from(encode(types, canonical(types, rows))));
  });
});

describe('hashed unique', () => {
  it.each(SIZES)('keeps one row of each set of equal rows in any input order, n=%i', async (n) => {
    const types: ScalarType[] = ['int64', 'string', 'int32'];
    // A small domain: most rows have equal copies somewhere, not adjacent.
    const rows = randomRows(rng(250 + n), types, n, 3);
    const kernel: KirKernel = { kind: 'unique', id: 0, input: 0, output: 1, hashed: true };
    const got = await run(kernel, vars(types, types), [{ types, rows }]);
    // Which copy survives depends on the hash table race, so compare as sorted rows.
    const width = rowWords(types);
    const gotRows = Array.from({ length: got.length / width }, (_, i) => got.slice(i * width, (i + 1) * width).join(','));
    const want = canonical(types, rows).map((x) => rowWordsOf(types, x).join(','));
    expect(gotRows.sort()).toEqual(want.sort());
  });

  it.each([380, 450])('fits its table in one binding, or sorts, where twice the rows of slots would pass one binding, n=%i', async (n) => {
    // A binding 4 bytes short of a power of two, as on the H100 (2^31 - 4): up to 511 rows fit one chunk, and 1024
    // slots would pass it by 4 bytes. 512 slots hold 380 rows at 74% load; 450 rows would pass 3/4 and are sorted.
    const small = await openGpu({ maxStorageBufferBindingSize: 4092 });
    try {
      const types: ScalarType[] = ['int32'];
      const rows = Array.from({ length: n }, (_, i): TestRow => [(i * 7919) % (n / 2)]);
      const kernel: KirKernel = { kind: 'unique', id: 0, input: 0, output: 1, hashed: true };
      const variables = vars(types, types);
      const input = uploadRelation(small, encode(types, rows), 1);
      expect(input.chunks).toBeUndefined();
      const out = await runKernel(small, kernel, generateKernelShaders(kernel, variables), [input], new Uint32Array(0), variables);
      expect(Array.from(await downloadRelation(small, out)).sort((x, y) => x - y)).toEqual(Array.from({ length: n / 2 }, (_, i) => i));
      for (const r of new Set([input, out])) releaseRelation(small, r);
    } finally {
      small.dispose();
    }
  });
});

describe('difference', () => {
  it.each(SIZES)('removes rows present on the right, n=%i', async (n) => {
    const types: ScalarType[] = ['int32', 'int64', 'string'];
    const r = rng(300 + n);
    const left = canonical(types, randomRows(r, types, n, 4));
    const right = canonical(types, [...left.filter(() => r() < 0.5), ...randomRows(r, types, Math.ceil(n / 2), 4)]);
    const kernel: KirKernel = { kind: 'difference', id: 0, left: 0, right: 1, output: 2 };
    const v = vars(types, types, types);
    const rightKeys = new Set(right.map((x) => rowWordsOf(types, x).join(',')));
    const want = left.filter((x) => !rightKeys.has(rowWordsOf(types, x).join(',')));
    expect(await run(kernel, v, [{ types, rows: left }, { types, rows: right }])).toEqual(Array.from(encode(types, want)));
    // An empty side.
    expect(await run(kernel, v, [{ types, rows: left }, { types, rows: [] }])).toEqual(Array.from(encode(types, left)));
  });

  it("keeps the order of a left side in no order (rows outside their group's window search all right rows)", async () => {
    const types: ScalarType[] = ['int32', 'int32'];
    const r = rng(377);
    const left = randomRows(r, types, 20_000, 300);
    const right = canonical(types, [...left.filter(() => r() < 0.5), ...randomRows(r, types, 5000, 300)]);
    const rightKeys = new Set(right.map((x) => x.join(',')));
    const want = left.filter((x) => !rightKeys.has(x.join(',')));
    const kernel: KirKernel = { kind: 'difference', id: 0, left: 0, right: 1, output: 2 };
    expect(await run(kernel, vars(types, types, types), [{ types, rows: left }, { types, rows: right }])).toEqual(Array.from(encode(types, want)));
  });
});

describe('mergeJoin', () => {
  const L: ScalarType[] = ['int32', 'int64', 'string'];
  const R: ScalarType[] = ['string', 'int32', 'int64'];
  const LR = [...L, ...R];

  async function check(n: number, m: number, leftKeys: number[], rightKeys: number[], filter: Predicate[], domain: number, leftSorted = true): Promise<void> {
    const r = rng(400 + n * 7 + m);
    const left = leftSorted ? sortByKeys(L, randomRows(r, L, n, domain), leftKeys) : randomRows(r, L, n, domain);
    const right = sortByKeys(R, randomRows(r, R, m, domain), rightKeys);
    const project: Expr[] = [col(5, LR), col(0, LR), c32(-9), col(3, LR), col(1, LR), cStr(77)];
    const outTypes: ScalarType[] = ['int64', 'int32', 'int32', 'string', 'int64', 'string'];
    const kernel: KirKernel = { kind: 'mergeJoin', id: 0, left: 0, right: 1, output: 2, leftKeys, rightKeys, filter, project };
    const got = await run(kernel, vars(L, R, outTypes), [{ types: L, rows: left }, { types: R, rows: right }]);
    // Right rows grouped by key words, in right order: the reference emits the pairs in the GPU's order.
    const groups = new Map<string, TestRow[]>();
    for (const x of right) {
      const k = keyWords(R, x, rightKeys).join(',');
      groups.set(k, [...(groups.get(k) ?? []), x]);
    }
    const want: number[] = [];
    for (const l of left) {
      for (const x of groups.get(keyWords(L, l, leftKeys).join(',')) ?? []) {
        const row = [...l, ...x];
        if (passes(filter, row)) want.push(...projectWords(project, row));
      }
    }
    expect(got).toEqual(want);
  }

  it.each(SIZES)('joins on int32 = int32 and int64 = int64 with duplicates, n=%i', async (n) => {
    await check(n, Math.max(0, Math.floor(n / 2) + 3), [0, 1], [1, 2], [], n >= 50_000 ? 400 : 5);
  });

  it('spreads the writes of left rows with hundreds of matches, and of rows with none, over the output', async () => {
    // About 750 right rows a key: a thread writes an output row, so one left row's pairs span many threads.
    await check(300, 3000, [0, 1], [1, 2], [], 2);
    await check(40, 2000, [2], [0], [], 3);
  });

  it("joins a left side in no order (rows outside their group's window search all right rows)", async () => {
    await check(3000, 2000, [0], [1], [], 500, false);
    await check(700, 900, [2], [0], [{ kind: 'compare', op: '<', left: col(0, LR), right: col(4, LR) }], 50, false);
  });

  it.each([0, 1, 7, 129])('joins on string with a filter across sides, n=%i', async (n) => {
    const filter: Predicate[] = [
      { kind: 'compare', op: '<', left: col(0, LR), right: col(4, LR) },
      { kind: 'compare', op: '>=', left: col(5, LR), right: c64(-10n) },
    ];
    await check(n, n + 5, [2], [0], filter, 6);
  });

  it.each([0, 1, 7, 129])('empty keys make a filtered product, n=%i', async (n) => {
    await check(n, 40, [], [], [{ kind: 'compare', op: '!=', left: col(2, LR), right: col(3, LR) }], 5);
  });

  it('runs a product whose output cannot fit one binding in halves of its left side (a chunked output)', async () => {
    const small = await openGpu({ maxStorageBufferBindingSize: 4096 });
    try {
      const types: ScalarType[] = ['int32'];
      const side = Math.ceil(Math.sqrt(4096 / 4 / 4)) + 16;
      const rows = Array.from({ length: side }, (_, i): TestRow => [i]);
      const project: Expr[] = [col(0, ['int32', 'int32']), col(1, ['int32', 'int32']), c32(1), c32(2)];
      const kernel: KirKernel = { kind: 'mergeJoin', id: 3, left: 0, right: 1, output: 2, leftKeys: [], rightKeys: [], filter: [], project };
      const variables = vars(types, types, ['int32', 'int32', 'int32', 'int32']);
      const rels = [0, 1].map(() => uploadRelation(small, encode(types, rows), 1));
      const out = await runKernel(small, kernel, generateKernelShaders(kernel, variables), rels, constWords(kernelConstants(kernel)), variables);
      expect(out.chunks!.length).toBeGreaterThan(1);
      const words = await downloadRelation(small, out);
      const got = sortedRows(words, 4, out.count);
      expect(got).toEqual(rows.flatMap(([x]) => rows.map(([y]) => `${x},${y},1,2`)).sort());
      for (const r of new Set([...rels, out])) releaseRelation(small, r);
    } finally {
      small.dispose();
    }
  });
});

describe('hashJoin', () => {
  const B: ScalarType[] = ['int32', 'int64', 'string'];
  const P: ScalarType[] = ['string', 'int32', 'int64'];
  const project: HashJoinColumn[] = [
    { side: 'probe', column: 2 },
    { side: 'build', column: 0 },
    { side: 'probe', column: 0 },
    { side: 'build', column: 1 },
  ];
  const outTypes: ScalarType[] = ['int64', 'int32', 'string', 'int64'];


  async function check(n: number, m: number, buildKeys: number[], probeKeys: number[], domain: number): Promise<void> {
    const r = rng(900 + n * 3 + m);
    const build = randomRows(r, B, n, domain);
    const probe = randomRows(r, P, m, domain);
    const kernel: KirKernel = { kind: 'hashJoin', id: 0, build: 0, probe: 1, output: 2, buildKeys, probeKeys, project };
    const got = await run(kernel, vars(B, P, outTypes), [{ types: B, rows: build }, { types: P, rows: probe }]);
    const want: number[] = [];
    for (const p of probe) {
      for (const b of build) {
        if (keyWords(B, b, buildKeys).join() !== keyWords(P, p, probeKeys).join()) continue;
        want.push(...project.flatMap((c) => (c.side === 'build' ? rowWordsOf([B[c.column]!], [b[c.column]!]) : rowWordsOf([P[c.column]!], [p[c.column]!]))));
      }
    }
    const width = rowWords(outTypes);
    // A hash join's row order is unspecified.
    expect(sortedRows(got, width)).toEqual(sortedRows(want, width));
  }

  // Both size orders: the driver builds on the smaller side, so either orientation runs.
  it.each([
    [0, 5],
    [1, 7],
    [129, 40],
    [40, 129],
    [2049, 60],
    [60, 2049],
  ])('joins on int32 = int32 and int64 = int64 with repeated keys, build %i rows, probe %i', async (n, m) => {
    await check(n, m, [0, 1], [1, 2], 5);
  });

  it.each([
    [7, 300],
    [300, 7],
  ])('joins on a string key, build %i rows, probe %i', async (n, m) => {
    await check(n, m, [2], [0], 50);
  });
});

describe('pipeline', () => {
  const P: ScalarType[] = ['string', 'int32', 'int64'];
  const B1: ScalarType[] = ['int32', 'int64', 'string'];
  const B2: ScalarType[] = ['string', 'int32'];
  // Row p ++ b1 ++ b2: p's columns 0..2, b1's 3..5, b2's 6..7.
  const project: Expr[] = [col(2, P), { kind: 'col', index: 3, type: 'int32' }, { kind: 'col', index: 7, type: 'int32' }, col(0, P)];
  const outTypes: ScalarType[] = ['int64', 'int32', 'int32', 'string'];

  // Small key domains: build keys repeat, so rows match several build rows in both tables (chains walked).
  // With a check, each combination of matches is tested (b1's int32 < b2's int32) before it is counted and written.
  it.each([
    [0, 5, 7, false],
    [7, 3, 300, false],
    [129, 40, 2049, false],
    [60, 7, 5000, false],
    [7, 3, 300, true],
    [129, 40, 2049, true],
  ])('filters, probes two tables (multi-word and string keys) and projects, builds %i and %i rows, input %i, check %s', async (n1, n2, m, check) => {
    const r = rng(1300 + n1 + m);
    const [b1, b2, probe] = [randomRows(r, B1, n1, 5), randomRows(r, B2, n2, 5), randomRows(r, P, m, 5)];
    const kernel: KirKernel = {
      kind: 'pipeline',
      id: 0,
      input: 0,
      output: 3,
      filter: [{ kind: 'compare', op: '>', left: col(1, P), right: c32(-1) }],
      probes: [
        { build: 1, buildKeys: [0, 1], probeKeys: [col(1, P), col(2, P)] },
        { build: 2, buildKeys: [0], probeKeys: [col(0, P)] },
      ],
      check: check ? [{ kind: 'compare', op: '<', left: { kind: 'col', index: 3, type: 'int32' }, right: { kind: 'col', index: 7, type: 'int32' } }] : [],
      project,
      fused: [0, 1, 2],
    };
    const got = await run(kernel, vars(P, B1, B2, outTypes), [{ types: P, rows: probe }, { types: B1, rows: b1 }, { types: B2, rows: b2 }]);
    const want: number[] = [];
    for (const p of probe.filter((p) => Number(p[1]) > -1)) {
      for (const x of b1.filter((x) => keyWords(B1, x, [0, 1]).join() === keyWords(P, p, [1, 2]).join())) {
        for (const y of b2.filter((y) => keyWords(B2, y, [0]).join() === keyWords(P, p, [0]).join())) {
          if (check && !(Number(x[0]) < Number(y[1]))) continue;
          want.push(...rowWordsOf(outTypes, [p[2]!, x[0]!, y[1]!, p[0]!]));
        }
      }
    }
    if (n1 > 0) expect(want.length).toBeGreaterThan(0);
    const width = rowWords(outTypes);
    expect(sortedRows(got, width)).toEqual(sortedRows(want, width));
  });

  // A selective build filter: its kept rows fill the first slots of a table sized for all build rows (1,024 of
  // 65,536 for 300 of 20,000 rows, each key twice: chains), or none of it.
  // Probe rows of 3 words: an odd width, staged in workgroup memory.
  it.each([300, 0])('joins the %i rows a build filter keeps of 20,000', async (keep) => {
    const I2: ScalarType[] = ['int32', 'int32'];
    const I3: ScalarType[] = ['int32', 'int32', 'int32'];
    const build: TestRow[] = Array.from({ length: 20_000 }, (_, i) => [i % 150, i]);
    const probe: TestRow[] = Array.from({ length: 3000 }, (_, i) => [(i * 7) % 200, i, -i]);
    const kernel: KirKernel = {
      kind: 'pipeline',
      id: 0,
      input: 0,
      output: 2,
      filter: [],
      probes: [{ build: 1, buildKeys: [0], probeKeys: [col(0, I3)], buildFilter: [{ kind: 'compare', op: '<', left: col(1, I2), right: c32(keep) }] }],
      check: [],
      project: [col(2, I3), { kind: 'col', index: 4, type: 'int32' }],
      fused: [0, 1],
    };
    const got = await run(kernel, vars(I3, I2, I2), [{ types: I3, rows: probe }, { types: I2, rows: build }]);
    const want = probe.flatMap((p) => build.filter((b) => Number(b[1]) < keep && b[0] === p[0]).flatMap((b) => rowWordsOf(I2, [p[2]!, b[1]!])));
    if (keep > 0) expect(want.length).toBeGreaterThan(0);
    expect(sortedRows(got, 2)).toEqual(sortedRows(want, 2));
  });

  // Anti-joins: the input rows whose (int32, int64) key the filtered b1 lacks, then (optionally) joined with b2 on
  // the string. Empty sides, several tiles, repeated keys on both sides (domain 5 over 2 words: 25 keys).
  it.each([
    [0, 5, 300, true],
    [7, 0, 300, true],
    [7, 3, 0, true],
    [1, 3, 7, true],
    [129, 40, 2049, true],
    [60, 7, 5000, false],
    [0, 0, 129, false],
    [300, 0, 5000, false],
  ])('keeps the rows a negated probe misses, negated build %i rows, joined build %i, input %i, joined %s', async (n1, n2, m, joined) => {
    const r = rng(1400 + n1 + n2 + m);
    const [b1, b2, probe] = [randomRows(r, B1, n1, 5), randomRows(r, B2, n2, 5), randomRows(r, P, m, 5)];
    const kept = (x: TestRow): boolean => Number(x[0]) !== 2;
    const absent: PipelineProbe = {
      build: 1,
      buildKeys: [0, 1],
      probeKeys: [col(1, P), col(2, P)],
      buildFilter: [{ kind: 'compare', op: '!=', left: col(0, B1), right: c32(2) }],
      negated: true,
    };
    // Row p ++ b2 (the negated probe adds no columns): b2's columns at 3..4.
    const types: ScalarType[] = joined ? ['int64', 'int32', 'string'] : ['int64', 'string'];
    const kernel: KirKernel = {
      kind: 'pipeline',
      id: 0,
      input: 0,
      output: 3,
      filter: [],
      probes: joined ? [absent, { build: 2, buildKeys: [0], probeKeys: [col(0, P)] }] : [absent],
      check: [],
      project: joined ? [col(2, P), { kind: 'col', index: 4, type: 'int32' }, col(0, P)] : [col(2, P), col(0, P)],
      fused: [0, 1, 2],
    };
    const got = await run(kernel, vars(P, B1, B2, types), [{ types: P, rows: probe }, { types: B1, rows: b1 }, ...(joined ? [{ types: B2, rows: b2 }] : [])]);
    const want: number[] = [];
    const misses = probe.filter((p) => !b1.some((x) => kept(x) && keyWords(B1, x, [0, 1]).join() === keyWords(P, p, [1, 2]).join()));
    for (const p of misses) {
      if (!joined) want.push(...rowWordsOf(types, [p[2]!, p[0]!]));
      else for (const y of b2.filter((y) => keyWords(B2, y, [0]).join() === keyWords(P, p, [0]).join())) want.push(...rowWordsOf(types, [p[2]!, y[1]!, p[0]!]));
    }
    // Some rows are dropped and some kept where both can happen.
    if (n1 > 100 && m > 0) expect(misses.length).toBeGreaterThan(0);
    if (n1 > 100 && m > 0) expect(misses.length).toBeLessThan(m);
    const width = rowWords(types);
    expect(sortedRows(got, width)).toEqual(sortedRows(want, width));
  });

  it.each([
    [0, 300],
    [7, 0],
    [129, 2049],
    [40, 5000],
  ])('counts per group the rows a negated probe misses, build %i rows, input %i', async (n, m) => {
    const r = rng(1500 + n + m);
    const [b1, probe] = [randomRows(r, B1, n, 5), randomRows(r, P, m, 5)];
    const types: ScalarType[] = ['string', 'int32'];
    const kernel: KirKernel = {
      kind: 'pipeline',
      id: 0,
      input: 0,
      output: 2,
      filter: [],
      probes: [{ build: 1, buildKeys: [0, 1], probeKeys: [col(1, P), col(2, P)], negated: true }],
      check: [],
      project: [col(0, P)],
      aggregate: { groupBy: [0], aggregates: [{ fn: 'count', type: 'int32' }] },
      fused: [0, 1],
    };
    const got = await run(kernel, vars(P, B1, types), [{ types: P, rows: probe }, { types: B1, rows: b1 }]);
    const counts = new Map<string, { s: TestRow[number]; n: number }>();
    for (const p of probe.filter((p) => !b1.some((x) => keyWords(B1, x, [0, 1]).join() === keyWords(P, p, [1, 2]).join()))) {
      const g = counts.get(String(p[0])) ?? { s: p[0]!, n: 0 };
      g.n++;
      counts.set(String(p[0]), g);
    }
    const want = [...counts.values()].flatMap((g) => rowWordsOf(types, [g.s, g.n]));
    expect(sortedRows(got, 2)).toEqual(sortedRows(want, 2));
  });
});

describe('pipeline with its sides exchanged', () => {
  const I3: ScalarType[] = ['int32', 'int32', 'int32'];
  const I2: ScalarType[] = ['int32', 'int32'];
  // Scanned rows (key, date, group), kept by a date range; build rows (key, value), some left out by a build filter;
  // keys repeat on both sides (chains) and the check compares a scanned with a build column. Per group: count and
  // sum of values. Builds of 5,000 rows take the filtered input as the table instead (the sides exchanged); of 100,
  // they stay the table.
  it.each([5000, 100])('aggregates a filtered input joined with %i build rows as the pipeline defines', async (builds) => {
    const r = rng(1600 + builds);
    const probe: TestRow[] = Array.from({ length: 2000 }, (_, i) => [Math.floor(r() * 300), Math.floor(r() * 100), i % 7]);
    const build: TestRow[] = Array.from({ length: builds }, (_, i) => [Math.floor(r() * 300), i % 50]);
    const kernel: KirKernel = {
      kind: 'pipeline',
      id: 0,
      input: 0,
      output: 2,
      filter: [
        { kind: 'compare', op: '>=', left: col(1, I3), right: c32(20) },
        { kind: 'compare', op: '<', left: col(1, I3), right: c32(45) },
      ],
      probes: [{ build: 1, buildKeys: [0], probeKeys: [col(0, I3)], buildFilter: [{ kind: 'compare', op: '!=', left: col(1, I2), right: c32(3) }] }],
      check: [{ kind: 'compare', op: '<=', left: col(1, I3), right: { kind: 'col', index: 4, type: 'int32' } }],
      project: [col(2, I3), { kind: 'col', index: 4, type: 'int32' }],
      aggregate: { groupBy: [0], aggregates: [{ fn: 'count', type: 'int32' }, { fn: 'sum', column: 1, type: 'int32' }] },
      fused: [0, 1],
    };
    const outTypes: ScalarType[] = ['int32', 'int32', 'int32'];
    const got = await run(kernel, vars(I3, I2, outTypes), [{ types: I3, rows: probe }, { types: I2, rows: build }]);
    const groups = new Map<number, [number, number]>();
    for (const p of probe.filter((p) => Number(p[1]) >= 20 && Number(p[1]) < 45)) {
      for (const b of build.filter((b) => b[0] === p[0] && b[1] !== 3 && Number(p[1]) <= Number(b[1]))) {
        const g = groups.get(Number(p[2])) ?? [0, 0];
        groups.set(Number(p[2]), [g[0] + 1, g[1] + Number(b[1])]);
      }
    }
    expect(groups.size).toBeGreaterThan(0);
    const want = [...groups].flatMap(([k, [n, sum]]) => [k, n, sum]);
    expect(sortedRows(got, 3)).toEqual(sortedRows(want, 3));
  });
});

describe('limit (top-k on the device)', () => {
  const T: ScalarType[] = ['int64', 'int32', 'string'];
  const typedCompare = (a: TestValue, b: TestValue): number => (a < b ? -1 : a > b ? 1 : 0);
  /** The first k of `rows` by `keys`, ties by all columns ascending (QP limit's order). */
  const firstRows = (rows: readonly TestRow[], keys: OutputOrder['keys'], k: number): TestRow[] => {
    const typed = [...keys, ...T.map((_, column) => ({ column, descending: false }))];
    return [...rows]
      .sort((a, b) => {
        for (const { column, descending } of typed) {
          const c = typedCompare(a[column]!, b[column]!);
          if (c !== 0) return descending ? -c : c;
        }
        return 0;
      })
      .slice(0, k);
  };
  // Small domains: many rows tie on the order's keys, and the tie order (all columns ascending) decides.
  it.each([
    [0, 3, [{ column: 0, descending: true }]],
    [1, 0, [{ column: 0, descending: true }]],
    [1, 1, [{ column: 0, descending: true }]],
    [7, 20, [{ column: 1, descending: false }]],
    [129, 129, [{ column: 2, descending: true }]],
    [129, 5, [{ column: 0, descending: true }]],
    [2049, 1, [{ column: 1, descending: true }, { column: 2, descending: false }]],
    [2049, 20, [{ column: 0, descending: false }]],
    [5000, 300, [{ column: 2, descending: false }, { column: 0, descending: true }]],
    [5000, 4999, [{ column: 1, descending: true }]],
  ] as Array<[number, number, OutputOrder['keys']]>)('keeps the first k of %i rows, k = %i, by %j, in canonical order', async (n, k, keys) => {
    const rows = canonical(T, randomRows(rng(1600 + n + k), T, n, 9));
    // Any input order: the rows reversed.
    const input = [...rows].reverse();
    const kernel: KirKernel = { kind: 'limit', id: 0, input: 0, output: 1, keys, count: k };
    const got = await run(kernel, vars(T, T), [{ types: T, rows: input }]);
    expect(got).toEqual(Array.from(encode(T, canonical(T, firstRows(rows, keys, k)))));
  });

  // Past the rows ranked in one pass and for k up to a quarter of a tile: rounds of tiles (one round when one tile
  // holds the rows, several past it), with wider domains so that tiles hold many distinct rows.
  it.each([
    [1500, 1, 40, [{ column: 0, descending: true }]],
    [5000, 7, 40, [{ column: 2, descending: true }, { column: 1, descending: false }]],
    [20_000, 20, 60, [{ column: 1, descending: true }]],
    [20_000, 64, 30, [{ column: 2, descending: false }]],
    [40_000, 256, 60, [{ column: 0, descending: false }, { column: 2, descending: true }]],
  ] as Array<[number, number, number, OutputOrder['keys']]>)('keeps the first k of %i rows, k = %i (domain %i), by %j, in tile rounds', async (n, k, domain, keys) => {
    const rows = canonical(T, randomRows(rng(1700 + n + k), T, n, domain));
    const kernel: KirKernel = { kind: 'limit', id: 0, input: 0, output: 1, keys, count: k };
    expect(await run(kernel, vars(T, T), [{ types: T, rows: [...rows].reverse() }])).toEqual(Array.from(encode(T, canonical(T, firstRows(rows, keys, k)))));
  });

  it('takes a pending row count through the tile rounds with no host sync', async () => {
    const rows = canonical(T, randomRows(rng(1800), T, 30_000, 60));
    const filter: KirKernel = { kind: 'mapFilter', id: 0, input: 0, output: 1, filter: [{ kind: 'compare', op: '<', left: col(1, T), right: c32(40) }], project: T.map((_, c) => col(c, T)) };
    const keys: OutputOrder['keys'] = [{ column: 0, descending: true }];
    const limit: KirKernel = { kind: 'limit', id: 1, input: 1, output: 2, keys, count: 30 };
    const vs = vars(T, T, T);
    const input = uploadRelation(gpu, encode(T, rows), rowWords(T));
    const kept = await runKernel(gpu, filter, generateKernelShaders(filter, vs), [input], constWords(kernelConstants(filter)), vs);
    expect(kept.pending).toBeDefined();
    const g = internals(gpu);
    const syncs = g.hostSyncs;
    const out = await runKernel(gpu, limit, generateKernelShaders(limit, vs), [kept], new Uint32Array(0), vs);
    expect(g.hostSyncs).toBe(syncs);
    const want = firstRows(rows.filter((r) => (r[1] as number) < 40), keys, 30);
    expect(Array.from(await downloadRelation(gpu, out))).toEqual(Array.from(encode(T, canonical(T, want))));
    for (const rel of new Set([input, kept, out])) releaseRelation(gpu, rel);
  });

  it('generates the device passes for every type but float32, whose rows the host limits', () => {
    const kernel = (types: ScalarType[]): KirKernel => ({ kind: 'limit', id: 0, input: 0, output: 1, keys: [{ column: 0, descending: true }], count: 3 });
    expect(generateKernelShaders(kernel(T), vars(T, T)).topkHist).toBeDefined();
    const floats: ScalarType[] = ['float32', 'int32'];
    expect(generateKernelShaders(kernel(floats), vars(floats, floats)).topkHist).toBeUndefined();
  });
});

describe('concat and copy', () => {
  it.each(SIZES)('concatenates and copies, n=%i', async (n) => {
    const rows = randomRows(rng(500 + n), TYPES, n, 50);
    const more = randomRows(rng(600 + n), TYPES, 3, 50);
    const v = vars(TYPES, TYPES, TYPES);
    expect(await run({ kind: 'concat', id: 0, left: 0, right: 1, output: 2 }, v, [{ types: TYPES, rows }, { types: TYPES, rows: more }])).toEqual(
      Array.from(encode(TYPES, [...rows, ...more])),
    );
    expect(await run({ kind: 'copy', id: 1, input: 0, output: 1 }, v, [{ types: TYPES, rows }])).toEqual(Array.from(encode(TYPES, rows)));
  });

  it.each([1, 300, 5000])('concatenates parts whose counts are pending on the device, with no host sync, n=%i', async (n) => {
    // Two filter outputs (counts pending) around a host-known part: the rows land after the counts the device wrote.
    const two: ScalarType[] = ['int32', 'int64'];
    const r = rng(700 + n);
    const rows = (k: number): TestRow[] => Array.from({ length: k }, (): TestRow => [Math.floor(r() * 200) - 100, BigInt(Math.floor(r() * 2 ** 40))]);
    const filter: KirKernel = { kind: 'mapFilter', id: 0, input: 0, output: 1, filter: [{ kind: 'compare', op: '<', left: col(0, two), right: c32(0) }], project: [col(0, two), col(1, two)] };
    const concat: KirKernel = { kind: 'concat', id: 1, left: 1, right: 1, output: 1 };
    const vs = vars(two, two);
    const [a, b, c] = [rows(n), rows(7), rows(2 * n)];
    const inputs = [a, c].map((x) => uploadRelation(gpu, encode(two, x), rowWords(two)));
    const kept = await Promise.all(inputs.map((i) => runKernel(gpu, filter, generateKernelShaders(filter, vs), [i], constWords(kernelConstants(filter)), vs)));
    const known = uploadRelation(gpu, encode(two, b), rowWords(two));
    const g = internals(gpu);
    const syncs = g.hostSyncs;
    const shaders = generateKernelShaders(concat, vs);
    const first = await runKernel(gpu, concat, shaders, [kept[0]!, known], new Uint32Array(0), vs);
    const out = await runKernel(gpu, concat, shaders, [first, kept[1]!], new Uint32Array(0), vs);
    expect(g.hostSyncs).toBe(syncs);
    expect(out.pending).toBeDefined();
    const negative = (x: TestRow[]): TestRow[] => x.filter(([v]) => (v as number) < 0);
    expect(Array.from(await downloadRelation(gpu, out))).toEqual(Array.from(encode(two, [...negative(a), ...b, ...negative(c)])));
    for (const rel of new Set([...inputs, ...kept, known, first, out])) releaseRelation(gpu, rel);
  });
});

describe('device', () => {
  it('describes the adapter', () => {
    expect(gpu.adapterName.length).toBeGreaterThan(0);
    expect(['vulkan', 'opengles']).toContain(gpu.backend);
    expect([128, 256]).toContain(gpu.limits.workgroupSize);
  });

  it('turns a WGSL compile error into a thrown Error and keeps working', async () => {
    const types: ScalarType[] = ['int32'];
    const kernel: KirKernel = { kind: 'unique', id: 9, input: 0, output: 1 };
    const shaders = { ...generateKernelShaders(kernel, vars(types, types)), select: 'this is not wgsl' };
    const rel = uploadRelation(gpu, Uint32Array.from([1, 2, 2]), 1);
    await expect(runKernel(gpu, kernel, shaders, [rel], new Uint32Array(0), vars(types, types))).rejects.toThrow(/unique kernel 9/);
    releaseRelation(gpu, rel);
    expect(await run(kernel, vars(types, types), [{ types, rows: [[1], [2], [2]] }])).toEqual([1, 2]);
  });

  it('reports a GPU error of scoped work that did not throw, naming the work, at the next readback', async () => {
    const other = await openGpu();
    const g = internals(other);
    // MAP_READ goes only with COPY_DST: a validation error, raised on the device, not thrown.
    await g.scoped('the odd buffer', async () => void other.device.createBuffer({ size: 16, usage: GPUBufferUsage.MAP_READ | GPUBufferUsage.STORAGE }));
    const rel = uploadRelation(other, Uint32Array.from([1]), 1);
    await expect(downloadRelation(other, rel)).rejects.toThrow(/^the device refused the run's work at or before the odd buffer \(a GPU validation error/);
    // Reported once: a validation error makes only the objects involved invalid, so the device goes on.
    expect([...(await downloadRelation(other, rel))]).toEqual([1]);
    other.dispose();
  });

  it('names an earlier scoped GPU error when later scoped work throws (the cause, not its consequence)', async () => {
    const other = await openGpu();
    const g = internals(other);
    await g.scoped('the odd buffer', async () => void other.device.createBuffer({ size: 16, usage: GPUBufferUsage.MAP_READ | GPUBufferUsage.STORAGE }));
    await expect(
      g.scoped('the next kernel', async () => {
        throw new Error('a consequence');
      }),
    ).rejects.toThrow(/^the device refused the run's work at or before the odd buffer \(a GPU validation error/);
    other.dispose();
  });

  it("runs a run's scoped work inside the run's one set of error scopes, and rejects the run on a GPU error in it", async () => {
    const { other, g, pushes } = await deviceCountingPushes();
    const value = await g.runScoped('the run', async () => (await g.scoped('a', async () => 1)) + (await g.scoped('b', async () => 2)));
    expect(value).toBe(3);
    expect(pushes()).toBe(3);
    // Outside a run, scoped work pushes its own again.
    await g.scoped('c', async () => undefined);
    expect(pushes()).toBe(6);
    await expect(
      g.runScoped('the run', async () => {
        await g.scoped('the odd buffer', async () => void other.device.createBuffer({ size: 16, usage: GPUBufferUsage.MAP_READ | GPUBufferUsage.STORAGE }));
        return 'rows';
      }),
    ).rejects.toThrow(/^the device refused the run's work at or before the run \(a GPU validation error/);
    other.dispose();
  });

  it("ends a run's scopes at its last readback: a GPU error before still rejects the run, scoped work after pushes its own", async () => {
    const { other, g, pushes } = await deviceCountingPushes();
    const value = await g.runScoped('the run', async (endScopes) => {
      endScopes();
      endScopes();
      return g.scoped('after the end', async () => 5);
    });
    expect(value).toBe(5);
    expect(pushes()).toBe(6);
    await expect(
      g.runScoped('the run', async (endScopes) => {
        other.device.createBuffer({ size: 16, usage: GPUBufferUsage.MAP_READ | GPUBufferUsage.STORAGE });
        endScopes();
        return 'rows';
      }),
    ).rejects.toThrow(/^the device refused the run's work at or before the run \(a GPU validation error/);
    other.dispose();
  });

  it('fails cleanly, without hanging, once the device is lost or disposed', async () => {
    const types: ScalarType[] = ['int32'];
    const kernel: KirKernel = { kind: 'sort', id: 1, input: 0, output: 1, keys: [0] };
    for (const end of ['destroy', 'dispose'] as const) {
      const other = await openGpu();
      const rel = uploadRelation(other, Uint32Array.from([3, 1, 2]), 1);
      if (end === 'destroy') {
        other.device.destroy();
        await other.device.lost;
      } else other.dispose();
      await expect(runKernel(other, kernel, generateKernelShaders(kernel, vars(types, types)), [rel], new Uint32Array(0), vars(types, types))).rejects.toThrow(
        /the GPU device was closed/,
      );
      await expect(downloadRelation(other, rel)).rejects.toThrow();
    }
  });

  it('handles zero-width (nullary) relations', async () => {
    const rel = uploadRelation(gpu, new Uint32Array(0), 0, 3);
    const kernel: KirKernel = { kind: 'unique', id: 0, input: 0, output: 1 };
    const out = await runKernel(gpu, kernel, generateKernelShaders(kernel, vars([], [])), [rel], new Uint32Array(0), vars([], []));
    expect(await exactRows(gpu, out)).toBe(1);
    releaseRelation(gpu, rel);
    releaseRelation(gpu, out);
  });
});
