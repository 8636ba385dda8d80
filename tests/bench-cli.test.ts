/** `vixen bench operators` end to end on a tiny size: the table, the JSON report, and option errors. */
import { mkdtempSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect, test } from 'vitest';
import { cli } from './helpers/cli.js';

test('bench operators --operators/--selectivities/--json', async () => {
  const json = join(mkdtempSync(join(tmpdir(), 'vixen-bench-')), 'report.json');
  const r = await cli('bench', 'operators', '--sizes', '10', '--runs', '1', '--warmup', '0', '--operators', 'hashProbe,groupBy,mapFilter', '--selectivities', '0.1,0.9', '--json', json);
  expect(r.err).not.toMatch(/error/i);
  expect(r.code).toBe(0);
  expect(r.out).toMatch(/hashProbe .*probes\/s/);
  const report = JSON.parse(readFileSync(json, 'utf8')) as { subgroups: boolean; results: Array<{ operator: string; variant: string; copyRatio: number }> };
  expect(report.results.map((x) => x.operator)).toEqual(['copy', ...Array<string>(6).fill('mapFilter'), 'hashProbe', ...Array<string>(8).fill('groupBy')]);
  expect(report.results.filter((x) => x.operator === 'mapFilter').map((x) => x.variant)).toEqual([
    '10% of int32 values',
    '10% of int32 values, any order',
    '10% of (int32, int32), swapped',
    '90% of int32 values',
    '90% of int32 values, any order',
    '90% of (int32, int32), swapped',
  ]);
  expect(typeof report.subgroups).toBe('boolean');
});

test('bench operators --groups sets the group counts of groupBy', async () => {
  const json = join(mkdtempSync(join(tmpdir(), 'vixen-bench-')), 'report.json');
  const r = await cli('bench', 'operators', '--sizes', '10', '--runs', '1', '--warmup', '0', '--operators', 'groupBy', '--groups', '1,5,300', '--json', json);
  expect(r.code).toBe(0);
  const report = JSON.parse(readFileSync(json, 'utf8')) as { results: Array<{ operator: string; variant: string; outputRows: number }> };
  const groupBys = report.results.filter((x) => x.operator === 'groupBy');
  // Each count as the hashed group-by and as the aggregating pipeline, then the two Q1-shaped cases (4 groups), the
  // Q4-shaped one (5 groups) and the Q13-shaped one (n / 16 groups).
  expect(groupBys.map((x) => x.variant)).toEqual([
    ...[1, 5, 300].flatMap((g) => [`int32 key, ${g} groups: count, sum64, max of int32`, `int32 key, ${g} groups: count, sum, max of int32 (pipeline)`]),
    'int32 key, 4 groups as TPC-H Q1: decimal sums and averages of 4 columns and 2 products, count (pipeline)',
    'int32 key, 4 groups as TPC-H Q1: decimal sums and averages of 4 columns, count, no products (pipeline)',
    'int32 key, 5 groups as TPC-H Q4: 3.8% of rows by date, semi-join into 0.92n keys, count (pipeline)',
    'int32 key, 64 groups as TPC-H Q13: anti-join with 1% of the rows, count (pipeline)',
  ]);
  expect(groupBys.map((x) => x.outputRows)).toEqual([1, 1, 5, 5, 300, 300, 4, 4, 5, 64]);
});

test.each([
  [['--operators', 'hashProbe,nope'], /--operators/],
  [['--selectivities', '0'], /--selectivities/],
  [['--selectivities', '0.5,x'], /--selectivities/],
  [['--groups', '0'], /--groups/],
  [['--groups', '16,2.5'], /--groups/],
])('bench operators rejects %j', async (args, pattern) => {
  const r = await cli('bench', 'operators', '--sizes', '10', ...args);
  expect(r.code).not.toBe(0);
  expect(r.err).toMatch(pattern);
  expect(r.err).not.toMatch(/\n\s+at /);
});

test('bench tpch --end-to-end: each query from .tbl and from the store, answers equal to DuckDB, times in the JSON', async () => {
  const json = join(mkdtempSync(join(tmpdir(), 'vixen-bench-')), 'report.json');
  const r = await cli('bench', 'tpch', '--sf', '0.01', '--queries', '6', '--end-to-end', '--formats', 'tbl,store', '--json', json);
  expect(r.code).toBe(0);
  expect(r.out).toMatch(/from files to answers/);
  const report = JSON.parse(readFileSync(json, 'utf8')) as {
    prepareMs: Record<string, number>;
    loadAll: Array<{ format: string; vixenMs: number }>;
    queries: Array<{ query: string; format: string; status: string; vixenMs: number; duckdbMs: number; rows: number }>;
  };
  expect(report.prepareMs.store).toBeGreaterThan(0);
  expect(report.loadAll.map((l) => l.format)).toEqual(['tbl', 'store']);
  expect(report.loadAll.every((l) => l.vixenMs > 0)).toBe(true);
  expect(report.queries.map((q) => `${q.query} ${q.format} ${q.status} ${q.rows}`)).toEqual(['Q6 tbl ok 1', 'Q6 store ok 1']);
  expect(report.queries.every((q) => q.vixenMs > 0 && q.duckdbMs > 0)).toBe(true);
});

test('bench tpch --data: a folder without .tbl files is generated into and kept; a later run reads it', async () => {
  const data = join(mkdtempSync(join(tmpdir(), 'vixen-bench-')), 'sf');
  const args = ['bench', 'tpch', '--sf', '0.01', '--queries', '6', '--runs', '1', '--warmup', '0', '--data', data];
  const first = await cli(...args);
  expect(first.code).toBe(0);
  expect(first.err).toMatch(/^generated SF 0\.01 /m);
  expect(readdirSync(data).filter((f) => f.endsWith('.tbl')).sort()).toEqual(['customer', 'lineitem', 'nation', 'orders', 'part', 'partsupp', 'region', 'supplier'].map((t) => `${t}.tbl`));
  const second = await cli(...args);
  expect(second.code).toBe(0);
  expect(second.err).not.toMatch(/generated SF/);
  expect(second.out).toMatch(/^Q6 +ok /m);
});

test('bench tpch --disable-pass compiles the queries without a pass; a misspelt one is a user error', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'vixen-bench-'));
  const data = join(dir, 'sf');
  const dispatches = async (...more: string[]): Promise<number> => {
    const json = join(dir, `q7${more.length}.json`);
    const r = await cli('bench', 'tpch', '--sf', '0.01', '--queries', '7', '--runs', '1', '--warmup', '0', '--data', data, '--json', json, ...more);
    expect(r.code).toBe(0);
    const report = JSON.parse(readFileSync(json, 'utf8')) as { queries: { status: string; dispatches: number }[] };
    expect(report.queries[0]!.status).toBe('ok');
    return report.queries[0]!.dispatches;
  };
  // Q7's order nations restricted to the two nations first (push-semi-joins) is a kernel more than without.
  expect(await dispatches()).not.toBe(await dispatches('--disable-pass', 'push-semi-joins'));
  const bad = await cli('bench', 'tpch', '--sf', '0.01', '--queries', '7', '--data', data, '--disable-pass', 'push-semi-join');
  expect(bad.code).toBe(1);
  expect(bad.err).toMatch(/^error: unknown pass push-semi-join \(known: push-semi-joins, /);
});

test('bench load times host and device parsing against DuckDB and writes JSON', async () => {
  const json = join(mkdtempSync(join(tmpdir(), 'vixen-bench-')), 'load.json');
  // SF 0.01: smaller scales repeat partsupp keys (4 suppliers per part out of too few), which the load rejects.
  const r = await cli('bench', 'load', '--sf', '0.01', '--runs', '1', '--warmup', '0', '--json', json);
  expect(r.err).not.toMatch(/error/i);
  expect(r.code).toBe(0);
  expect(r.out).toMatch(/^vixen host +[\d.]+/m);
  expect(r.out).toMatch(/^vixen device +[\d.]+/m);
  expect(r.out).toMatch(/^duckdb +[\d.]+/m);
  expect(r.out).toMatch(/parsed on the device: all tables/);
  expect(r.out).toMatch(/^vixen store +[\d.]+/m);
  expect(r.out).toMatch(/^vixen parquet +[\d.]+/m);
  expect(r.out).toMatch(/^duckdb parquet +[\d.]+/m);
  expect(r.out).toMatch(/^staging ring 4 MiB x 4 +memory +[\d.]+ +[\d.]+$/m);
  expect(r.out).toMatch(/^store, host ms per load \(reads of 32 MiB x 8\): dictionaries [\d.]+ \(of which waiting for their reads [\d.]+\), .* \(8 relations, [\d.]+ MB of columns in \d+ pieces, [\d.]+ MB of dictionaries\)$/m);
  expect(r.out).toMatch(/^vixen store: tables in canonical order as loaded \(not sorted again\): /m);
  expect(r.out).toMatch(/^parquet, host ms per load: read ms [\d.]+, of which the Parquet loader [\d.]+ = .*; 8 files, \d+ tasks on \d+ workers /m);
  type Timing = { ms: number; parsedOnDevice: string[] };
  const report = JSON.parse(readFileSync(json, 'utf8')) as {
    sf: number;
    rows: number;
    host: Timing;
    device: Timing;
    store: Timing & { bytes: number };
    parquet: Timing & { bytes: number; duckdbMs: number };
    duckdbMs: number;
    upload: { bytes: number; cases: Array<{ method: string; source: string; medianMs: number; gbPerSecond: number }> };
  };
  expect(report.sf).toBe(0.01);
  expect(report.device.parsedOnDevice.length).toBe(8);
  expect([report.host, report.device, report.store, report.parquet].every((t) => t.ms > 0) && report.duckdbMs > 0 && report.parquet.duckdbMs > 0).toBe(true);
  // Store rows are device rows: read straight into device memory.
  expect(report.store.parsedOnDevice.length).toBe(8);
  expect(report.store.bytes > 0 && report.parquet.bytes > 0).toBe(true);
  expect(report.upload.bytes).toBe(16 * 2 ** 20);
  expect(report.upload.cases.length).toBeGreaterThanOrEqual(8);
  for (const c of report.upload.cases) expect(c.gbPerSecond).toBeCloseTo(report.upload.bytes / c.medianMs / 1e6, 6);
}, 300_000);

test('bench load keeps a store for a later call, and prints its read floor and each table', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'vixen-bench-store-'));
  const load = (json: string, ...more: string[]) =>
    cli('bench', 'load', '--sf', '0.01', '--runs', '1', '--warmup', '0', '--formats', 'store', '--upload-bytes', '0', '--store-dir', dir, '--json', join(dir, json), ...more);
  const first = await load('first.json');
  expect(first.code).toBe(0);
  expect(first.out).toMatch(/^store: [\d.]+ MB \(vixen import --columns read in [\d,]+ ms\)$/m);
  expect(first.out).toMatch(/^store files into host memory \(the floor: page cache, no device\): [\d.]+ ms \([\d.]+ MB\/s\) with 8 reads of 32 MiB in flight, [\d.]+ ms \([\d.]+ MB\/s\) one at a time; /m);
  const tables = first.out.match(/^vixen store: ms by table from its files into device memory \(last load\): (.*)$/m)?.[1];
  expect(tables?.split(', ').map((t) => t.split(' ')[0])).toEqual(['region', 'nation', 'supplier', 'customer', 'part', 'partsupp', 'orders', 'lineitem']);
  const manifest = join(dir, 'store', 'vixen-store.json');
  const made = statSync(manifest).mtimeMs;
  // The second call reads the kept store: not imported again; a store row per read plan.
  const second = await load('second.json', '--store-reads', '1MiBx2,64KiBx3');
  expect(second.code).toBe(0);
  expect(second.out).toMatch(/^store: [\d.]+ MB \(kept from before\)$/m);
  expect(second.out).toMatch(/^store, host ms per load \(reads of 1 MiB x 2\): /m);
  expect(second.out).toMatch(/^ {2}64 KiB x 3 +[\d.]+ +[\d.]+/m);
  expect((await load('bad.json', '--store-reads', '16MiB')).err).toMatch(/option --store-reads: expected bytes per read x reads in flight, e.g. 16MiBx8, got 16MiB/);
  expect(statSync(manifest).mtimeMs).toBe(made);
  type Store = { ms: number; bytes: number; prepareMs: number; floor: { bytes: number; inFlightMs: number; oneAtATimeMs: number }; tableMs: Array<{ name: string; ms: number }> };
  const [a, b] = ['first.json', 'second.json'].map((f) => (JSON.parse(readFileSync(join(dir, f), 'utf8')) as { store: Store }).store);
  expect(a!.prepareMs > 0 && b!.prepareMs === 0).toBe(true);
  // The floor reads every file of the store: the bytes the report gives it.
  expect(a!.floor.bytes).toBe(a!.bytes);
  expect(b!.floor.inFlightMs > 0 && b!.floor.oneAtATimeMs > 0).toBe(true);
  expect(b!.tableMs.reduce((n, t) => n + t.ms, 0)).toBeLessThanOrEqual(b!.ms);
}, 300_000);
