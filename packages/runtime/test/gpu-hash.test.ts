/** Hash join and hash group-by on a real WebGPU device against plain-TS references on seeded random data. */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { HASH_ITEMS, type HashAggregate, type JoinOutputWord } from '@vixen/codegen-wgsl';
import { rowWords, wordsOf, type ScalarType } from '@vixen/queryplan';
import { buildHashTable, downloadRelation, hashGroupBy, hashJoin, openGpu, probeHashTable, releaseHashTable, releaseRelation, uploadRelation, type Gpu } from '../src/gpu/index.js';
import { internals } from '../src/gpu/device.js';
import { roomFor, splitSide } from '../src/gpu/recorder.js';
import type { GuessingRun } from '../src/gpu/relations.js';
import { encode, keyWords, randomRows, rng, rowWordsOf, type TestRow } from './gpu-fixtures.js';

let gpu: Gpu;
beforeAll(async () => {
  gpu = await openGpu();
});
afterAll(() => gpu?.dispose());

/** Row offsets of the words of columns `cols` of rows of `types`. */
function wordOffsets(types: readonly ScalarType[], cols: readonly number[]): number[] {
  return cols.flatMap((c) => {
    const base = types.slice(0, c).reduce((n, t) => n + wordsOf(t), 0);
    return Array.from({ length: wordsOf(types[c]!) }, (_, w) => base + w);
  });
}

const pairOrder = (a: readonly number[], b: readonly number[]): number => a[0]! - b[0]! || a[1]! - b[1]!;

interface Side {
  types: ScalarType[];
  rows: TestRow[];
  keys: number[];
}

async function gpuJoin(build: Side, probe: Side): Promise<number[][]> {
  const b = uploadRelation(gpu, encode(build.types, build.rows), rowWords(build.types), build.rows.length);
  const p = uploadRelation(gpu, encode(probe.types, probe.rows), rowWords(probe.types), probe.rows.length);
  try {
    const out = await hashJoin(gpu, { relation: b, keyWords: wordOffsets(build.types, build.keys) }, { relation: p, keyWords: wordOffsets(probe.types, probe.keys) });
    expect(out.width).toBe(2);
    const words = await downloadRelation(gpu, out);
    releaseRelation(gpu, out);
    const pairs: number[][] = [];
    for (let i = 0; i < out.count; i++) pairs.push([words[2 * i]!, words[2 * i + 1]!]);
    return pairs.sort(pairOrder);
  } finally {
    releaseRelation(gpu, b);
    releaseRelation(gpu, p);
  }
}

/** The reference: build rows by key, then every probe row's matches. */
function tsJoin(build: Side, probe: Side): number[][] {
  const byKey = new Map<string, number[]>();
  build.rows.forEach((r, i) => {
    const k = keyWords(build.types, r, build.keys).join(',');
    byKey.set(k, [...(byKey.get(k) ?? []), i]);
  });
  return probe.rows.flatMap((r, i) => (byKey.get(keyWords(probe.types, r, probe.keys).join(',')) ?? []).map((j) => [i, j])).sort(pairOrder);
}

async function checkJoin(build: Side, probe: Side): Promise<number> {
  const want = tsJoin(build, probe);
  expect(await gpuJoin(build, probe)).toEqual(want);
  return want.length;
}

const I2: ScalarType[] = ['int32', 'int32'];
const side = (types: ScalarType[], rows: TestRow[], keys: number[]): Side => ({ types, rows, keys });
/** Rows of (key, i) for the given keys. */
const keyed = (keys: readonly number[]): TestRow[] => keys.map((k, i) => [k, i]);
/** A tile is HASH_ITEMS * 256 (or 128) probe rows; these sizes straddle tile and workgroup boundaries. */
const ODD_SIZES = [1, 7, 255, HASH_ITEMS * 128 + 1, HASH_ITEMS * 256 - 1, 3001];

describe('hashJoin', () => {
  it('handles empty sides', async () => {
    const some = side(I2, keyed([1, 2, 3]), [0]);
    expect(await checkJoin(side(I2, [], [0]), some)).toBe(0);
    expect(await checkJoin(some, side(I2, [], [0]))).toBe(0);
  });

  it('joins one row with one row', async () => {
    expect(await checkJoin(side(I2, [[5, 9]], [0]), side(I2, [[5, 1]], [0]))).toBe(1);
    expect(await checkJoin(side(I2, [[5, 9]], [0]), side(I2, [[6, 1]], [0]))).toBe(0);
  });

  it.each(ODD_SIZES)('unique build keys, probe rows n=%i (half match)', async (n) => {
    const r = rng(n);
    const build = Array.from({ length: n }, (_, i) => 2 * i).sort(() => r() - 0.5);
    // Even probe rows look up an (even) build key, odd ones an odd key that no build row has.
    const probe = Array.from({ length: n }, (_, i) => 2 * Math.floor(r() * n) + (i & 1));
    expect(await checkJoin(side(I2, keyed(build), [0]), side(I2, keyed(probe), [0]))).toBe(Math.ceil(n / 2));
  });

  it('random keys with repeats on both sides (chains), sizes off the tile', async () => {
    const r = rng(11);
    const rows = (n: number): TestRow[] => randomRows(r, I2, n, 300);
    expect(await checkJoin(side(I2, rows(2049), [0]), side(I2, rows(1537), [0]))).toBeGreaterThan(1537);
  });

  it('all-equal keys: the full cross product (more pairs than probe rows)', async () => {
    const matches = await checkJoin(side(I2, keyed(Array(70).fill(-4)), [0]), side(I2, keyed(Array(130).fill(-4)), [0]));
    expect(matches).toBe(70 * 130);
  });

  it('skewed keys: a few keys take most rows', async () => {
    const r = rng(3);
    const skewed = (n: number): number[] => Array.from({ length: n }, () => Math.floor(1000 * r() ** 6));
    expect(await checkJoin(side(I2, keyed(skewed(1500)), [0]), side(I2, keyed(skewed(2500)), [0]))).toBeGreaterThan(2500);
  });

  it('64-bit keys: equal low words, different high words do not match', async () => {
    const r = rng(64);
    const types: ScalarType[] = ['int32', 'int64'];
    const rows = (n: number): TestRow[] => Array.from({ length: n }, (_, i) => [i, BigInt(Math.floor(r() * 40)) * 4294967296n + BigInt(Math.floor(r() * 3)) - 1n]);
    expect(await checkJoin(side(types, rows(900), [1]), side(types, rows(1100), [1]))).toBeGreaterThan(0);
  });

  it('composite keys of mixed types (int64, string, int32) at different offsets on each side', async () => {
    const r = rng(5);
    const bt: ScalarType[] = ['int64', 'string', 'int32', 'int32'];
    const pt: ScalarType[] = ['int32', 'int32', 'string', 'int64'];
    const build = randomRows(r, bt, 1200, 6);
    const probe = randomRows(r, pt, 1300, 6);
    expect(await checkJoin(side(bt, build, [0, 1, 3]), side(pt, probe, [3, 2, 1]))).toBeGreaterThan(0);
  });
});

describe('hashJoin guessed rooms', () => {
  /** Probes 1,000 rows (keys i % 200, width 3) against build rows of `keys` (width 2): the output, its count read back. */
  async function probe(keys: readonly number[]): Promise<{ room: number; rows: number }> {
    const b = uploadRelation(gpu, Uint32Array.from(keys.flatMap((k) => [k, 7])), 2, keys.length);
    const p = uploadRelation(gpu, Uint32Array.from({ length: 3000 }, (_, w) => (w % 3 === 0 ? (w / 3) % 200 : w)), 3, 1000);
    const t = await buildHashTable(gpu, { relation: b, keyWords: [0] });
    try {
      const out = await probeHashTable(gpu, t, { relation: p, keyWords: [0] });
      const room = out.count;
      const words = await downloadRelation(gpu, out);
      releaseRelation(gpu, out);
      return { room, rows: words.length / 2 };
    } finally {
      releaseHashTable(gpu, t);
      releaseRelation(gpu, b);
      releaseRelation(gpu, p);
    }
  }
  const range = (from: number, n: number): number[] => Array.from({ length: n }, (_, i) => from + i);

  /** `fn` in a run that guesses, whose guesses all held. */
  async function guessing<T>(fn: () => Promise<T>): Promise<T> {
    const g = internals(gpu);
    const run: GuessingRun = { missed: false };
    g.guessing = run;
    try {
      const out = await fn();
      expect(run.missed).toBe(false);
      return out;
    } finally {
      g.guessing = null;
    }
  }

  it('a probe whose build side grows (as in a fixpoint) guesses by its input rows; a split one by the sum of its parts', async () => {
    // Keys 0-99 match 500 probe rows; keys from 1,000 on match none.
    expect((await probe(range(0, 100))).rows).toBe(500);
    // Four times the build rows, the same 500 matches: room for the 500 seen (not four times as many).
    expect(await guessing(() => probe([...range(0, 100), ...range(1000, 300)]))).toEqual({ room: roomFor(500), rows: 500 });
    // The build side in two parts (its table past one binding), the first with every match, the second with none:
    // their totals are noted summed, so the launch on the whole side expects all 500.
    const part = splitSide(internals(gpu));
    expect((await part(0.5, () => probe(range(0, 100)))).rows).toBe(500);
    expect((await part(0.5, () => probe(range(1000, 100)))).rows).toBe(0);
    expect(await guessing(() => probe([...range(0, 100), ...range(1000, 100)]))).toEqual({ room: roomFor(500), rows: 500 });
  });
});

describe('hashJoin output words', () => {
  it('writes words of both rows (and indices) instead of index pairs', async () => {
    const r = rng(77);
    const bt: ScalarType[] = ['int32', 'int64', 'string'];
    const pt: ScalarType[] = ['int64', 'int32'];
    const build = randomRows(r, bt, 700, 25);
    const probe = randomRows(r, pt, 900, 25);
    const b = uploadRelation(gpu, encode(bt, build), rowWords(bt));
    const p = uploadRelation(gpu, encode(pt, probe), rowWords(pt));
    // probe int64 (words 0-1) = build int64 (words 1-2); output: probe's int32, build's string, the key, build index.
    const output: JoinOutputWord[] = [{ from: 'probe', word: 2 }, { from: 'build', word: 3 }, { from: 'build', word: 1 }, { from: 'build', word: 2 }, { from: 'buildIndex' }];
    const out = await hashJoin(gpu, { relation: b, keyWords: [1, 2] }, { relation: p, keyWords: [0, 1] }, output);
    const words = Array.from(await downloadRelation(gpu, out));
    for (const x of [b, p, out]) releaseRelation(gpu, x);
    expect(out.width).toBe(5);
    const got = Array.from({ length: out.count }, (_, i) => words.slice(5 * i, 5 * i + 5)).sort(compareRows);
    const want = tsJoin(side(bt, build, [1]), side(pt, probe, [0]))
      .map(([i, j]) => {
        const pw = rowWordsOf(pt, probe[i]!);
        const bw = rowWordsOf(bt, build[j]!);
        return [pw[2]!, bw[3]!, bw[1]!, bw[2]!, j!];
      })
      .sort(compareRows);
    expect(want.length).toBeGreaterThan(0);
    expect(got).toEqual(want);
  });
});

type Agg = HashAggregate;

/** The reference group-by: output rows as word arrays (key words, then aggregate words), sorted. */
function tsGroupBy(types: readonly ScalarType[], rows: readonly TestRow[], keys: readonly number[], aggs: ReadonlyArray<{ agg: Agg; col?: number }>): number[][] {
  const groups = new Map<string, { key: number[]; rows: TestRow[] }>();
  for (const r of rows) {
    const k = keyWords(types, r, keys);
    const id = k.join(',');
    const g = groups.get(id) ?? { key: k, rows: [] };
    g.rows.push(r);
    groups.set(id, g);
  }
  const words = (v: bigint): number[] => {
    const u = BigInt.asUintN(64, v);
    return [Number(u & 0xffffffffn), Number(u >> 32n)];
  };
  return [...groups.values()]
    .map(({ key, rows: rs }) => [
      ...key,
      ...aggs.flatMap(({ agg, col }) => {
        const vals = rs.map((r) => BigInt(r[col ?? 0]!));
        switch (agg.fn) {
          case 'count':
            return [rs.length];
          case 'sum':
            return words(vals.reduce((a, b) => a + b, 0n));
          case 'min':
            return [Number(vals.reduce((a, b) => (b < a ? b : a))) >>> 0];
          case 'max':
            return [Number(vals.reduce((a, b) => (b > a ? b : a))) >>> 0];
        }
      }),
    ])
    .sort(compareRows);
}

function compareRows(a: readonly number[], b: readonly number[]): number {
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return a[i]! - b[i]!;
  return 0;
}

async function checkGroupBy(types: ScalarType[], rows: TestRow[], keys: number[], aggs: Array<{ agg: Agg; col?: number }>): Promise<number> {
  const rel = uploadRelation(gpu, encode(types, rows), rowWords(types), rows.length);
  try {
    const out = await hashGroupBy(gpu, { relation: rel, keyWords: wordOffsets(types, keys) }, aggs.map((a) => a.agg));
    const words = Array.from(await downloadRelation(gpu, out));
    releaseRelation(gpu, out);
    const got = Array.from({ length: out.count }, (_, i) => words.slice(i * out.width, (i + 1) * out.width)).sort(compareRows);
    const want = tsGroupBy(types, rows, keys, aggs);
    expect(got).toEqual(want);
    return want.length;
  } finally {
    releaseRelation(gpu, rel);
  }
}

// (key int32, v int32, w int64, k2 string)
const GT: ScalarType[] = ['int32', 'int32', 'int64', 'string'];
const word = (col: number): number => wordOffsets(GT, [col])[0]!;
const ALL: Array<{ agg: Agg; col?: number }> = [
  { agg: { fn: 'count' } },
  { agg: { fn: 'sum', word: word(1), type: 'int32' }, col: 1 },
  { agg: { fn: 'sum', word: word(2), type: 'int64' }, col: 2 },
  { agg: { fn: 'min', word: word(1) }, col: 1 },
  { agg: { fn: 'max', word: word(1) }, col: 1 },
];

describe('hashGroupBy', () => {
  it('empty input gives no groups', async () => {
    expect(await checkGroupBy(GT, [], [0], ALL)).toBe(0);
  });

  it.each([1, 7, 1000, 4097])('count, int32/int64 sums (with carries), min, max by an int32 key, n=%i', async (n) => {
    // randomRows mixes in int32 and int64 extremes, so the 64-bit sums carry and wrap.
    expect(await checkGroupBy(GT, randomRows(rng(n), GT, n, 50), [0], ALL)).toBeGreaterThan(0);
  });

  it('no aggregates: the distinct keys', async () => {
    expect(await checkGroupBy(GT, randomRows(rng(31), GT, 3000, 40), [0, 3], [])).toBeGreaterThan(40);
  });

  it('all-equal keys: one group', async () => {
    const rows = randomRows(rng(9), GT, 3000, 50).map((r) => [7, ...r.slice(1)]);
    expect(await checkGroupBy(GT, rows, [0], ALL)).toBe(1);
  });

  it('the one int32 key a workgroup table cannot hold (0x5bd1e995) next to ordinary keys', async () => {
    const rows = randomRows(rng(13), GT, 5000, 50).map((r, i) => [i % 3 === 0 ? 0x5bd1e995 : i % 3, ...r.slice(1)]);
    expect(await checkGroupBy(GT, rows, [0], ALL)).toBe(3);
  });

  it('skewed keys, composite (int64, string) key', async () => {
    const r = rng(21);
    const rows = randomRows(r, GT, 5000, 1000).map((row) => [row[0]!, row[1]!, BigInt(Math.floor(30 * r() ** 5)), Math.floor(3 * r())]);
    expect(await checkGroupBy(GT, rows, [2, 3], ALL)).toBeGreaterThan(10);
  });

  it('2^16 groups fill the first table; more groups run again on a bigger one', async () => {
    const many = (groups: number, n: number): TestRow[] => Array.from({ length: n }, (_, i) => [(i * 7919) % groups, i - 1000, BigInt(i) << 20n, i & 3]);
    expect(await checkGroupBy(GT, many(65_536, 100_000), [0], ALL)).toBe(65_536);
    expect(await checkGroupBy(GT, many(150_000, 150_000), [0], ALL.slice(0, 2))).toBe(150_000);
  });
});


describe('hashGroupBy, int32 key, against plain TS', () => {
  const check = (rows: TestRow[]): Promise<number> => checkGroupBy(GT, rows, [0], ALL);
  const rowsOf = (n: number, key: (i: number) => number, v: (i: number) => number): TestRow[] => Array.from({ length: n }, (_, i) => [key(i), v(i), BigInt(v(i)) * 3n, i & 3]);

  it('one row', async () => {
    expect(await check([[-5, -7, -9n, 0]])).toBe(1);
  });

  it('16 groups over many tiles, negative values (min/max of signed ints)', async () => {
    const r = rng(41);
    expect(await check(rowsOf(40_000, (i) => ((i * 7) % 16) - 8, () => Math.floor(r() * 2 ** 32) - 2 ** 31))).toBe(16);
  });

  it('2^16 groups, scattered keys', async () => {
    // i * 40503 is a bijection mod 2^16, and the multiply by an odd constant one mod 2^32.
    expect(await check(rowsOf(200_000, (i) => Math.imul((i * 40_503) % 65_536, 0x9e3779b1) | 0, (i) => (i % 1000) - 500))).toBe(65_536);
  });

  it('300 groups: the workgroup tables hold some of them, the rest update the table directly', async () => {
    const r = rng(59);
    expect(await check(rowsOf(50_000, () => Math.floor(r() * 300) - 150, (i) => i - 25_000))).toBe(300);
  });

  it('skewed: half the rows on one key, the rest on 5000 keys', async () => {
    const r = rng(47);
    expect(await check(rowsOf(60_000, (i) => (i & 1 ? 3 : Math.floor(5000 * r() ** 2)), () => Math.floor(r() * 2 ** 31)))).toBeGreaterThan(1000);
  });

  it('int32 sums that carry past 32 bits, both ways', async () => {
    expect(await check(rowsOf(30_000, (i) => i % 5, (i) => (i % 3 === 0 ? -(2 ** 31) : 2 ** 31 - 1)))).toBe(5);
  });
});
