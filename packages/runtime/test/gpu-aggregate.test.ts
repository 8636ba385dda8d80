/**
 * Sorted aggregation (KIR `aggregate`, a parallel segmented reduction) on a real WebGPU device against
 * @vixen/queryplan's evalAggregate over seeded data: huge groups (past llvmpipe's 65535-iteration loop limit),
 * groups straddling tile boundaries, many tiny groups, one row, every argument type, decimal overflow.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AGG_ITEMS, generateKernelShaders } from '@vixen/codegen-wgsl';
import { hashableAggregate, type KirKernel, type KirVariable } from '@vixen/kernel-ir';
import { aggregateType, evalAggregate, rowWords, VixenError, type Aggregate, type AggregateFn, type Expr, type Predicate, type ScalarType, type Value } from '@vixen/queryplan';
import { compile, type Gpu } from '../src/index.js';
import { downloadRelation, openGpu, releaseRelation, runKernel, uploadRelation } from '../src/gpu/index.js';
import { rng } from './gpu-fixtures.js';

let gpu: Gpu;
beforeAll(async () => {
  gpu = await openGpu();
});
afterAll(() => gpu?.dispose());

/** Values as evalAggregate takes them: numbers (int32, uint32, float32, date, boolean 0/1, string ids), bigints. */
type V = number | bigint;

const f32 = new Float32Array(1);
const f32Words = new Uint32Array(f32.buffer);

function words(type: ScalarType, v: V): number[] {
  switch (type) {
    case 'int64':
    case 'decimal': {
      const x = BigInt.asUintN(64, BigInt(v));
      return [Number(x & 0xffffffffn), Number(x >> 32n)];
    }
    case 'float32':
      f32[0] = Number(v);
      return [f32Words[0]!];
    default:
      return [Number(v) >>> 0];
  }
}

function decode(type: ScalarType, w: readonly number[], at: number): V {
  switch (type) {
    case 'int64':
    case 'decimal':
      return BigInt.asIntN(64, (BigInt(w[at + 1]!) << 32n) | BigInt(w[at]!));
    case 'float32':
      f32Words[0] = w[at]!;
      return f32[0]!;
    case 'int32':
    case 'date':
      return w[at]! | 0;
    default:
      return w[at]!;
  }
}

function randomValue(r: () => number, type: ScalarType): V {
  switch (type) {
    case 'int32':
    case 'date':
      return Math.floor(r() * 2000) - 1000 + (r() < 0.02 ? 2 ** 31 - 2001 : 0);
    case 'uint32':
      return Math.floor(r() * 4000000000);
    case 'int64':
      return BigInt(Math.floor(r() * 2 ** 40)) - 2n ** 39n;
    case 'decimal':
      return BigInt(Math.floor(r() * 2 ** 44)) - 2n ** 43n;
    // Multiples of 1/4 of small magnitude: every sum is exact, so the summation order does not matter.
    case 'float32':
      return Math.floor(r() * 64 - 32) / 4;
    case 'boolean':
      return r() < 0.5 ? 0 : 1;
    case 'string':
      return Math.floor(r() * 50);
  }
}

interface Case {
  /** Column 0 is the group key (int32), non-decreasing; the others are arguments. */
  types: ScalarType[];
  rows: V[][];
  aggregates: Array<{ fn: AggregateFn; column?: number }>;
  nullary?: boolean;
  /** Hashed only: aggregate the rows whose int32 column `keep[0]` is below column `keep[1]` (a pipeline's filter). */
  keep?: [number, number];
}

/** Rows of `sizes.length` groups of those sizes (key = group index), arguments random. */
function groupedRows(r: () => number, types: readonly ScalarType[], sizes: readonly number[]): V[][] {
  return sizes.flatMap((size, g) => Array.from({ length: size }, () => [g, ...types.slice(1).map((t) => randomValue(r, t))]));
}

/** The sorted reduction (KIR `aggregate`), or the hashed one: a pipeline that only aggregates its input (hash-aggregates.ts). */
type Way = 'sorted' | 'hashed';

function plan(c: Case, way: Way = 'sorted'): { kernel: KirKernel; variables: KirVariable[]; aggs: Aggregate[] } {
  const aggs = c.aggregates.map((a) => {
    const type = aggregateType(a.fn, a.column === undefined ? undefined : c.types[a.column]);
    if (!type) throw new Error(`bad test aggregate ${a.fn}`);
    return { ...a, type };
  });
  const groupBy = c.nullary ? [] : [0];
  const variables: KirVariable[] = [
    { id: 0, name: 'in', columns: c.types },
    { id: 1, name: 'out', columns: [...groupBy.map((k) => c.types[k]!), ...aggs.map((a) => a.type)] },
  ];
  const project = c.types.map((type, index): Expr => ({ kind: 'col', index, type }));
  const filter: Predicate[] = c.keep ? [{ kind: 'compare', op: '<', left: project[c.keep[0]]!, right: project[c.keep[1]]! }] : [];
  const kernel: KirKernel =
    way === 'sorted'
      ? { kind: 'aggregate', id: 0, input: 0, output: 1, groupBy, aggregates: aggs }
      : { kind: 'pipeline', id: 0, input: 0, output: 1, filter, probes: [], check: [], project, aggregate: { groupBy, aggregates: aggs }, fused: [0] };
  return { kernel, variables, aggs };
}

async function onGpu(c: Case, way: Way = 'sorted'): Promise<V[][]> {
  const { kernel, variables, aggs } = plan(c, way);
  const outTypes = variables[1]!.columns;
  const input = uploadRelation(gpu, Uint32Array.from(c.rows.flatMap((row) => row.flatMap((v, k) => words(c.types[k]!, v)))), rowWords(c.types), c.rows.length);
  try {
    const out = await runKernel(gpu, kernel, generateKernelShaders(kernel, variables), [input], new Uint32Array(0), variables);
    const w = Array.from(await downloadRelation(gpu, out));
    releaseRelation(gpu, out);
    expect(out.width).toBe(rowWords(outTypes));
    const rows: V[][] = [];
    for (let i = 0; i < out.count; i++) {
      let at = i * out.width;
      rows.push(
        outTypes.map((t) => {
          const v = decode(t, w, at);
          at += t === 'int64' || t === 'decimal' ? 2 : 1;
          return v;
        }),
      );
    }
    expect(rows.length).toBeGreaterThan(0);
    expect(aggs.length).toBe(c.aggregates.length);
    // Hashed groups come in no particular order: by key, as the reference gives them.
    return way === 'hashed' && !c.nullary ? rows.sort((a, b) => Number(a[0]) - Number(b[0])) : rows;
  } finally {
    releaseRelation(gpu, input);
  }
}

/** evalAggregate per group of adjacent equal keys (of the rows `keep` keeps), in input order. */
function reference(c: Case): V[][] {
  const { aggs } = plan(c);
  const out: V[][] = [];
  const rows = c.keep ? c.rows.filter((row) => Number(row[c.keep![0]]) < Number(row[c.keep![1]])) : c.rows;
  for (let i = 0; i < rows.length; ) {
    let j = i;
    while (j < rows.length && (c.nullary || rows[j]![0] === rows[i]![0])) j++;
    const group = rows.slice(i, j);
    const key = c.nullary ? [] : [group[0]![0]!];
    const values = aggs.map((a) => {
      const arg = a.column === undefined ? undefined : c.types[a.column]!;
      const v = evalAggregate(a.fn, arg, a.column === undefined ? [] : group.map((row) => row[a.column!]! as Value), group.length, a.fn) as V;
      return a.type === 'float32' ? Math.fround(Number(v)) : v;
    });
    out.push([...key, ...values]);
    i = j;
  }
  return out;
}

async function check(c: Case, way: Way = 'sorted'): Promise<void> {
  expect(await onGpu(c, way)).toEqual(reference(c));
}

const ALL = (column: number, type: ScalarType): Case['aggregates'] =>
  (['min', 'max', 'sum', 'avg'] as const).filter((fn) => aggregateType(fn, type) !== undefined).map((fn) => ({ fn, column }));

describe('sorted aggregation on the GPU', () => {
  it('one group of 200,000 rows: count, sums, min/max, averages', async () => {
    const types: ScalarType[] = ['int32', 'int32', 'int64', 'decimal', 'float32', 'uint32'];
    const c: Case = {
      types,
      rows: groupedRows(rng(1), types, [200_000]),
      aggregates: [{ fn: 'count' }, ...ALL(1, 'int32'), ...ALL(2, 'int64'), ...ALL(3, 'decimal'), ...ALL(4, 'float32'), ...ALL(5, 'uint32')],
    };
    const got = await onGpu(c);
    expect(got[0]![1]).toBe(200_000);
    expect(got).toEqual(reference(c));
  });

  it('a decimal sum whose running total leaves the 64-bit range but whose total fits', async () => {
    // 100,000 values of 2^62 - 1, then as many of -(2^62): running sums reach ~2^78; total = -100,000.
    const big = 2n ** 62n;
    const rows: V[][] = [...Array.from({ length: 100_000 }, () => [0, big - 1n]), ...Array.from({ length: 100_000 }, () => [0, -big])];
    const c: Case = { types: ['int32', 'decimal'], rows, aggregates: [{ fn: 'sum', column: 1 }, { fn: 'avg', column: 1 }, { fn: 'count' }] };
    expect(await onGpu(c)).toEqual([[0, -100_000n, 0n, 200_000]]);
    expect(reference(c)).toEqual([[0, -100_000n, 0n, 200_000]]);
  });

  it('a decimal sum just past the 64-bit range is a decimal overflow error', async () => {
    const max = 2n ** 63n - 1n;
    const rows: V[][] = [...Array.from({ length: 70_000 }, (_, i) => [0, i === 0 ? max : 0n]), [0, 1n], [1, 5n]];
    const fits: Case = { types: ['int32', 'decimal'], rows: rows.slice(0, 70_000), aggregates: [{ fn: 'sum', column: 1 }] };
    expect(await onGpu(fits)).toEqual([[0, max]]);
    const over: Case = { ...fits, rows };
    expect(() => reference(over)).toThrow(VixenError);
    await expect(onGpu(over)).rejects.toThrow(/decimal overflow/);
  });

  it('groups straddling tile and thread boundaries', async () => {
    const tile = AGG_ITEMS * gpu.limits.workgroupSize;
    const r = rng(2);
    const sizes = [1, AGG_ITEMS - 1, AGG_ITEMS + 1, tile - 1, 1, tile, tile + 1, 3 * tile + 5, 2, tile * 5, 7, 2 * tile - 3];
    for (let k = 0; k < 30; k++) sizes.push(1 + Math.floor(r() * 3 * tile));
    const types: ScalarType[] = ['int32', 'int64', 'decimal', 'int32', 'float32'];
    await check({
      types,
      rows: groupedRows(r, types, sizes),
      aggregates: [{ fn: 'count' }, ...ALL(1, 'int64'), ...ALL(2, 'decimal'), ...ALL(3, 'int32'), ...ALL(4, 'float32')],
    });
  });

  it('rows too wide to stage (read from the buffer), and two-word keys differing in either word', async () => {
    const tile = AGG_ITEMS * gpu.limits.workgroupSize;
    const r = rng(12);
    const sizes = [1, AGG_ITEMS + 1, tile - 1, tile + 1, 2, 3 * tile + 5, 7];
    for (let k = 0; k < 12; k++) sizes.push(1 + Math.floor(r() * tile));
    // Each key differs from the previous in one word only: the high word for odd groups, the low word for even ones.
    const key = (g: number): bigint => (BigInt(g % 2 === 1 ? g : Math.max(0, g - 1)) << 32n) | BigInt(g % 2 === 0 ? g : g - 1);
    const keyed = (types: ScalarType[]): V[][] => groupedRows(r, types, sizes).map(([g, ...rest]) => [key(Number(g)), ...rest]);
    // 2 + 8 x 2 words a row: past the 15 words a thread stages.
    const wide: ScalarType[] = ['int64', ...Array<ScalarType>(8).fill('decimal')];
    await check({ types: wide, rows: keyed(wide), aggregates: [{ fn: 'count' }, ...ALL(1, 'decimal'), ...ALL(8, 'decimal')] });
    const narrow: ScalarType[] = ['int64', 'decimal'];
    await check({ types: narrow, rows: keyed(narrow), aggregates: [{ fn: 'sum', column: 1 }, { fn: 'count' }] });
  });

  it('many tiny groups', async () => {
    const r = rng(3);
    const sizes = Array.from({ length: 40_000 }, () => 1 + Math.floor(r() * 3));
    const types: ScalarType[] = ['int32', 'decimal', 'int32'];
    await check({ types, rows: groupedRows(r, types, sizes), aggregates: [...ALL(1, 'decimal'), { fn: 'count' }, ...ALL(2, 'int32')] });
  });

  it('one row', async () => {
    const types: ScalarType[] = ['int32', 'int64', 'float32'];
    await check({ types, rows: [[7, -5n, 2.5]], aggregates: [{ fn: 'count' }, ...ALL(1, 'int64'), ...ALL(2, 'float32')] });
  });

  it('every argument type', async () => {
    const r = rng(4);
    const types: ScalarType[] = ['int32', 'int32', 'uint32', 'int64', 'decimal', 'float32', 'date', 'boolean', 'string'];
    const sizes = Array.from({ length: 60 }, () => 1 + Math.floor(r() * 700));
    await check({
      types,
      rows: groupedRows(r, types, sizes),
      aggregates: [{ fn: 'count' }, ...types.slice(1).flatMap((t, k) => ALL(k + 1, t))],
    });
  });

  it('float32 min and max with NaNs agree with the row-order fold', async () => {
    // The fold keeps a NaN first value and skips later NaNs: merging partial results must do the same.
    const r = rng(6);
    const sizes = Array.from({ length: 300 }, () => 1 + Math.floor(r() * 200));
    const rows = groupedRows(r, ['int32', 'float32'], sizes).map(([g, v]) => [g!, r() < 0.15 ? NaN : v!]);
    await check({ types: ['int32', 'float32'], rows, aggregates: [{ fn: 'min', column: 1 }, { fn: 'max', column: 1 }, { fn: 'count' }] });
  });

  it('a nullary group key over 150,000 rows is one group', async () => {
    const types: ScalarType[] = ['int32', 'int64', 'decimal'];
    const c: Case = { types, rows: groupedRows(rng(5), types, [50_000, 60_000, 40_000]), aggregates: [{ fn: 'count' }, ...ALL(1, 'int64'), ...ALL(2, 'decimal')], nullary: true };
    const got = await onGpu(c);
    expect(got).toHaveLength(1);
    expect(got[0]![0]).toBe(150_000);
    expect(got).toEqual(reference(c));
  });
});

/** `rows` in a random order. */
function shuffled(r: () => number, rows: readonly V[][]): V[][] {
  const out = [...rows];
  for (let i = out.length - 1; i > 0; i--) {
    const j = Math.floor(r() * (i + 1));
    [out[i], out[j]] = [out[j]!, out[i]!];
  }
  return out;
}

/** The aggregates of `c` a hash table can take (no float32 sums or averages, no two-word min or max). */
function hashable(c: Case): Case {
  return { ...c, aggregates: c.aggregates.filter((a) => hashableAggregate(a.fn, a.column === undefined ? undefined : c.types[a.column])) };
}

describe('hashed aggregation on the GPU (workgroup tables, then the global table)', () => {
  it('one group of 50,000 rows and a nullary key: count, sums, min/max, averages', async () => {
    const types: ScalarType[] = ['int32', 'int32', 'int64', 'decimal', 'uint32', 'date', 'string', 'boolean'];
    const aggregates = [{ fn: 'count' as const }, ...types.slice(1).flatMap((t, k) => ALL(k + 1, t))];
    const one = hashable({ types, rows: groupedRows(rng(11), types, [50_000]), aggregates });
    // int64 and decimal min and max stay sorted.
    expect(one.aggregates.length).toBe(aggregates.length - 4);
    expect(await onGpu(one, 'hashed')).toEqual(reference(one));
    const nullary = { ...one, rows: groupedRows(rng(12), types, [20_000, 10_000]), nullary: true };
    expect(await onGpu(nullary, 'hashed')).toEqual(reference(nullary));
  });

  it('every hashable argument type over groups of random sizes', async () => {
    const r = rng(13);
    const types: ScalarType[] = ['int32', 'int32', 'uint32', 'int64', 'decimal', 'date', 'boolean', 'string'];
    const sizes = Array.from({ length: 300 }, () => 1 + Math.floor(r() * 300));
    await check(hashable({ types, rows: groupedRows(r, types, sizes), aggregates: [{ fn: 'count' }, ...types.slice(1).flatMap((t, k) => ALL(k + 1, t))] }), 'hashed');
  });

  it('more groups than the first table holds (it runs again on a larger one), rows in shuffled order', async () => {
    const r = rng(14);
    const types: ScalarType[] = ['int32', 'decimal', 'int32'];
    const c = hashable({ types, rows: groupedRows(r, types, Array.from({ length: 6_000 }, () => 1 + Math.floor(r() * 2))), aggregates: [...ALL(1, 'decimal'), { fn: 'count' }, ...ALL(2, 'int32')] });
    expect(await onGpu({ ...c, rows: shuffled(r, c.rows) }, 'hashed')).toEqual(reference(c));
  });

  it('few groups in shuffled order: each thread sums its first groups in registers, the others in the tables', async () => {
    const r = rng(15);
    const types: ScalarType[] = ['int32', 'decimal', 'int32', 'int64', 'int32'];
    // Seven groups, more than a thread keeps in registers, one of them of two rows.
    const sizes = [20_000, 10_000, 10_000, 5_000, 2_500, 1_500, 2];
    const c = hashable({ types, rows: groupedRows(r, types, sizes), aggregates: [{ fn: 'count' }, ...ALL(1, 'decimal'), ...ALL(2, 'int32'), ...ALL(3, 'int64')] });
    expect(await onGpu({ ...c, rows: shuffled(r, c.rows) }, 'hashed')).toEqual(reference(c));
    // With a filter and no probes each thread aggregates the rows of its own filter bits.
    const kept = { ...c, keep: [2, 4] as [number, number] };
    expect(await onGpu({ ...kept, rows: shuffled(r, c.rows) }, 'hashed')).toEqual(reference(kept));
  });

  it('rows of an odd width are staged in workgroup memory; past 2^20 rows a workgroup strides over several tiles', async () => {
    const r = rng(16);
    // 5-word rows (an odd width: staged), filtered on column 2 < column 3.
    const types: ScalarType[] = ['int32', 'decimal', 'int32', 'int32'];
    const sizes = [600_000, 400_000, 150_000, 3];
    const c = hashable({ types, rows: groupedRows(r, types, sizes), aggregates: [{ fn: 'count' }, { fn: 'sum', column: 1 }, { fn: 'max', column: 2 }] });
    const kept = { ...c, keep: [2, 3] as [number, number] };
    const rows = shuffled(r, c.rows);
    expect(await onGpu({ ...kept, rows }, 'hashed')).toEqual(reference(kept));
    const nullary = { ...kept, nullary: true };
    expect(await onGpu({ ...nullary, rows }, 'hashed')).toEqual(reference(nullary));
  });

  it('few groups of decimals of every magnitude: sums in registers and in the tables stay exact', async () => {
    const r = rng(17);
    // Magnitudes up to 2^61 (a few of 2^40 rows would overflow 64 bits together), most near 2^46 on either side.
    const magnitude = (): bigint => {
      const e = r() < 0.8 ? 44 + Math.floor(r() * 4) : Math.floor(r() * 62);
      return BigInt(Math.floor(r() * 2 ** 20)) << BigInt(Math.max(0, e - 20));
    };
    const types: ScalarType[] = ['int32', 'decimal', 'decimal'];
    const rows = Array.from({ length: 60_000 }, (_, i): V[] => [i % 3, (r() < 0.5 ? -1n : 1n) * magnitude(), BigInt(i % 1000) * 10000n]);
    const c: Case = { types, rows: [...rows].sort((a, b) => Number(a[0]) - Number(b[0])), aggregates: [{ fn: 'count' }, { fn: 'sum', column: 1 }, { fn: 'avg', column: 1 }, { fn: 'sum', column: 2 }] };
    expect(await onGpu({ ...c, rows }, 'hashed')).toEqual(reference(c));
    // Rows of alternating sign, 2^61 and more in magnitude: every thread's (a thread's rows are a workgroup size
    // apart) have one sign, and four of them pass 2^63 together.
    const wide = Array.from({ length: 8192 }, (_, i): V[] => [0, (i % 2 === 0 ? 1n : -1n) * (2n ** 61n + BigInt(i))]);
    const w: Case = { types: ['int32', 'decimal'], rows: wide, aggregates: [{ fn: 'sum', column: 1 }, { fn: 'count' }] };
    expect(await onGpu(w, 'hashed')).toEqual(reference(w));
  });

  it('a decimal sum whose running total leaves the 64-bit range but whose total fits; one just past it is an error', async () => {
    const big = 2n ** 62n;
    const rows: V[][] = [...Array.from({ length: 100_000 }, () => [0, big - 1n]), ...Array.from({ length: 100_000 }, () => [0, -big])];
    const c: Case = { types: ['int32', 'decimal'], rows, aggregates: [{ fn: 'sum', column: 1 }, { fn: 'avg', column: 1 }, { fn: 'count' }] };
    expect(await onGpu(c, 'hashed')).toEqual([[0, -100_000n, 0n, 200_000]]);
    const max = 2n ** 63n - 1n;
    const over: Case = { types: ['int32', 'decimal'], rows: [[0, max], [1, 5n], [0, 1n]], aggregates: [{ fn: 'sum', column: 1 }] };
    await expect(onGpu(over, 'hashed')).rejects.toThrow(/decimal overflow/);
  });
});

describe('aggregates of large relations through the API', () => {
  it('count() and sum over 120,000 facts', async () => {
    const program = compile(`p(x, v) -> int32(x), decimal(v).
n[] = k <- agg<<k = count()>> p(_, _).
total[] = s <- agg<<s = sum(v)>> p(_, v).
byParity[y] = k <- agg<<k = count()>> p(x, _), y = x % 2.
`);
    const facts = { p: Array.from({ length: 120_000 }, (_, i) => [i, BigInt(i % 1000) * 10000n]) };
    const outputs = ['n', 'total', 'byParity'];
    const out = await program.run({ facts, gpu, outputs });
    expect(out.relations.get('n')).toEqual([[120_000]]);
    expect(out.relations.get('total')).toEqual([[120n * 499_500n * 10000n]]);
    expect(out.relations.get('byParity')).toEqual([
      [0, 60_000],
      [1, 60_000],
    ]);
    const reference = await program.interpret({ facts });
    for (const rel of outputs) expect(out.relations.get(rel)).toEqual(reference.get(rel));
  });
});
