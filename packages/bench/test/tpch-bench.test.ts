/**
 * The TPC-H bench loads each table once, with the columns its queries read, before the queries; each query's first
 * run makes the relations it reads from those on the device. Tiny scale (llvmpipe), real WebGPU, DuckDB's answers.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { openGpu, type Gpu } from '@vixen/runtime';
import { internals } from '@vixen/runtime/gpu';
import { benchTpch, columnsRead, compileTpchQuery, dbgen, examplesDir, formatTimedRuns, formatTpchReport, TPCH_TABLES, tpchSchema, type TpchQueryResult } from '../src/index.js';

const queriesDir = examplesDir('tpch');
const queries = [3, 6, 12];
let gpu: Gpu;
let dataDir: string;
beforeAll(async () => {
  gpu = await openGpu();
  dataDir = mkdtempSync(join(tmpdir(), 'vixen-tpch-bench-'));
  dbgen({ sf: 0.002, out: dataDir, seed: 10 });
});
afterAll(() => {
  gpu?.dispose();
  if (dataDir) rmSync(dataDir, { recursive: true, force: true });
});

/** The tables a query's first run uploaded (not its own facts, as Q12's ship modes). */
const tablesUploaded = (q: TpchQueryResult): string[] => q.uploads.map((u) => u.name).filter((n) => (TPCH_TABLES as readonly string[]).includes(n));

const options = () => ({ sf: 0.002, dataDir, queriesDir, queries, runs: 1, warmup: 0 });

it('loads each table its queries read once, with the columns they read, and answers as DuckDB does', async () => {
  const report = await benchTpch(gpu, options());
  expect(report.queries.map((q) => `Q${q.query} ${q.status} ${q.message ?? ''}`)).toEqual(queries.map((q) => `Q${q} ok `));
  const keep = columnsRead(queries.map((q) => compileTpchQuery(queriesDir, q)), tpchSchema(queriesDir));
  // Q3, Q6 and Q12 read customer, orders and lineitem: each loaded once, resident with all the columns they read.
  expect(report.tableLoads!.map((t) => [t.name, t.columns, t.resident])).toEqual([...keep].map(([name, columns]) => [name, columns, true]));
  for (const t of report.tableLoads!) expect(t.rows > 0 && t.readMs >= 0 && t.ms >= t.readMs && t.duckdbMs > 0).toBe(true);
  // The queries read no table's file and upload none (Q12's own facts excepted): their relations are made on the
  // device from the tables' loads.
  for (const q of report.queries) expect([q.query, tablesUploaded(q)]).toEqual([q.query, []]);
  // Customer's load holds just Q3's columns of it, so Q3 reads it as it is.
  expect(report.queries.find((q) => q.query === 3)!.vixenProjected.sort()).toEqual(['lineitem', 'orders']);
  expect(report.wideLoads).toEqual([]);
  // One run loads them all (their files read at once): its wall time holds each table's read and device load.
  for (const t of report.tableLoads!) expect(t.ms).toBeLessThanOrEqual(report.tablesLoadMs!);
  expect(formatTpchReport(report)).toMatch(/^tables loaded once before the queries \(the columns they read\) in \d+ ms \(the longest read of a file \d+ ms\)/m);
  // Where a run's time went, for planning one within a time limit.
  expect(report.wallMs.queries.length).toBe(queries.length);
  expect(report.wallMs.tables).toBeGreaterThanOrEqual(report.tablesLoadMs! + report.tablesDuckdbLoadMs!);
  expect(formatTpchReport(report)).toMatch(/^wall time: opening \(copy bandwidth, DuckDB\) [\d.]+ s, tables [\d.]+ s, queries [\d.]+ s /m);
  expect(formatTpchReport(report)).toMatch(/^ {2}lineitem: \d+ columns, vixen \d+ ms \(read \d+\), duckdb \d+ ms; resident \d+x\d+$/m);
  // Device memory: each query's peak of all buffers holds at least its tables' resident rows; after each query, Vixen's
  // count of its buffers holds the resident relations' words.
  for (const q of report.queries) expect(q.peakDeviceBytes).toBeGreaterThan(0);
  for (const t of report.tableLoads!) expect(t.peakDeviceBytes).toBeGreaterThan(0);
  for (const t of report.tableLoads!) expect(t.peakMappedBytes).toBeLessThanOrEqual(t.peakDeviceBytes);
  expect(report.memoryAfterQueries.length).toBe(queries.length);
  for (const m of report.memoryAfterQueries) expect(m.allocatedBytes).toBeGreaterThanOrEqual(m.residentBytes);
  expect(formatTpchReport(report)).toMatch(/^device memory after each query: Vixen's buffers at most [\d.]+ GiB \(resident relations at most [\d.]+ GiB\)/m);
}, 120_000);

it('leaves a table past the device memory budget to the queries, with the same answers, and frees what they made', async () => {
  // lineitem's 15 columns (about 12,000 rows of 19 words) do not fit 256 KiB; orders' and customer's do.
  const report = await benchTpch(gpu, { ...options(), maxDeviceMemory: 256 * 2 ** 10, maxResidentBytes: 0 });
  expect(report.queries.map((q) => `Q${q.query} ${q.status} ${q.message ?? ''}`)).toEqual(queries.map((q) => `Q${q} ok `));
  expect(report.tableLoads!.map((t) => [t.name, t.resident])).toEqual([['customer', true], ['orders', true], ['lineitem', false]]);
  expect(report.tableLoads!.find((t) => t.name === 'lineitem')!.message).toMatch(/device memory budget/);
  // Each query loaded lineitem itself; the relations made for one query were freed after it (a limit of 0).
  for (const q of report.queries) expect(tablesUploaded(q)).toContain('lineitem');
  expect(report.releasedRelations).toBeGreaterThan(0);
  expect(report.resident.map((r) => r.name).sort()).toEqual(['customer', 'orders']);
  expect(formatTpchReport(report)).toMatch(/^ {2}lineitem: .*not resident \(.*device memory budget.*\): its queries load it$/m);
}, 120_000);

it('reports the device buffers a failed table load held, and its queries load the table themselves', async () => {
  // A real refusal of a buffer of lineitem's load (as the SF 30 run's out of memory), on a device of its own.
  const refusing = await openGpu();
  try {
    internals(refusing).pool.refuseWhile = { activity: 'loading the facts of lineitem', bytes: 2 * refusing.limits.maxBufferSize };
    const report = await benchTpch(refusing, { ...options(), queries: [6] });
    const [load] = report.tableLoads!;
    expect([load!.name, load!.resident]).toEqual(['lineitem', false]);
    expect(load!.message).toMatch(/lineitem/);
    // Its buffers before the refusal are counted: the SF 30 run printed 0.00 GiB here.
    expect(load!.peakDeviceBytes).toBeGreaterThan(0);
    expect(load!.memoryAtFailure!.allocatedBytes).toBeGreaterThanOrEqual(load!.memoryAtFailure!.residentBytes);
    expect(report.queries.map((q) => q.status)).toEqual(['ok']);
  } finally {
    refusing.dispose();
  }
}, 120_000);

it('keeps the error of a failed run loading every table, then loads each table alone', async () => {
  // One real refusal (refuseWhile serves once) of lineitem's buffer in the run loading all three tables.
  const refusing = await openGpu();
  try {
    internals(refusing).pool.refuseWhile = { activity: 'loading the facts of lineitem', bytes: 2 * refusing.limits.maxBufferSize };
    const heard: string[] = [];
    const report = await benchTpch(refusing, { ...options(), onTablesTogetherFailure: (m: string) => heard.push(m) });
    expect(report.tablesTogetherFailure).toMatch(/lineitem/);
    expect(heard).toEqual([report.tablesTogetherFailure]);
    // The refusal served once: each table's own run loads it, and the queries answer.
    expect(report.tableLoads!.map((t) => [t.name, t.resident])).toEqual([['customer', true], ['orders', true], ['lineitem', true]]);
    expect(report.queries.map((q) => q.status)).toEqual(queries.map(() => 'ok'));
    expect(formatTpchReport(report)).toMatch(/^ {2}one run loading every table failed \(.*lineitem.*\); each table was then loaded by a run of its own$/m);
  } finally {
    refusing.dispose();
  }
}, 120_000);

it('loads per query instead when asked', async () => {
  const report = await benchTpch(gpu, { ...options(), queries: [6], perQueryLoads: true });
  expect(report.queries.map((q) => q.status)).toEqual(['ok']);
  expect(report.tableLoads).toBeUndefined();
  expect(tablesUploaded(report.queries[0]!)).toEqual(['lineitem']);
}, 60_000);

it("says the GPU's SM clock after a query's timed runs where nvidia-smi gave it", () => {
  const held = { residentBytes: 2 ** 30, poolFreeBytes: 0, recordBytes: 0 };
  expect(formatTimedRuns([5.9, 5.8], [4.8, 4.8], held, { sm: 345, max: 1980 })).toBe(
    '; runs 5.9/5.8 ms (waiting 4.8/4.8; SM clock 345 of 1980 MHz after them); held: resident 1.00 GiB, pool 0.00 GiB, records 0.00 GiB',
  );
  expect(formatTimedRuns([5.9], [4.8], held)).toBe('; runs 5.9 ms (waiting 4.8); held: resident 1.00 GiB, pool 0.00 GiB, records 0.00 GiB');
});
