/**
 * What the `.tbl` query benchmarks (TPC-H, SSB) share: a folder of `schema.logic` and query files, `.tbl` data read
 * once on the host, each query run on only the tables it reads, and geometric means of the times.
 */
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { kernelInputs } from '@vixen/kernel-ir';
import { VixenError, type RelationDecl, type Row, type ScalarType } from '@vixen/queryplan';
import { loadFactsDir } from '../facts/index.js';
import type { Gpu } from '../gpu/index.js';
import { compileFile, type Program } from '../program.js';
import { median } from './operators.js';
import { TblDuckDb, type DuckValue } from './tbl-duckdb.js';

/** The relations of `dir/schema.logic` named `tables`; `suite` names the benchmark when one is missing. */
export function suiteSchema(queriesDir: string, tables: readonly string[], suite: string): RelationDecl[] {
  const program = compileFile(join(queriesDir, 'schema.logic'));
  return tables.map((t) => {
    const rel = program.relations.find((r) => r.name === t);
    if (!rel) throw new VixenError({ severity: 'error', message: `the ${suite} schema has no relation ${t}` });
    return rel;
  });
}

/** Host rows of the schema's tables from `dataDir/<table>.tbl`; a missing file is a user error. */
export async function loadTblFacts(dataDir: string, schema: readonly RelationDecl[]): Promise<Record<string, Row[]>> {
  for (const { name } of schema) {
    if (!existsSync(join(dataDir, `${name}.tbl`))) throw new VixenError({ severity: 'error', message: `missing ${name}.tbl in ${dataDir}` });
  }
  return loadFactsDir(dataDir, schema, schema.map((r) => r.name));
}

/**
 * The tables a query's kernels read. Every query declares all tables (it includes the schema), and a run uploads
 * and sorts every table it is given, read or not.
 */
export function factsFor(program: Program, facts: Record<string, Row[]>): Record<string, Row[]> {
  const read = new Set(program.kir.kernels.flatMap(kernelInputs));
  return Object.fromEntries(Object.entries(facts).filter(([name]) => read.has(program.kir.relationVars[name] ?? -1)));
}

/** Column types of the query's `result` relation, as the answer comparison takes them. */
export function resultTypes(program: Program): ScalarType[] {
  return program.relations.find((r) => r.name === 'result')!.columns.map((c) => c.type);
}

export const geomean = (xs: readonly number[]): number => (xs.length === 0 ? NaN : Math.exp(xs.reduce((a, x) => a + Math.log(Math.max(x, 1e-6)), 0) / xs.length));

/** DuckDB's answer to `sql` and its median time over `runs` runs after `warmup` untimed ones. */
export async function timeDuckQuery(duck: TblDuckDb, sql: string, warmup: number, runs: number): Promise<{ ms: number; rows: DuckValue[][] }> {
  const times: number[] = [];
  let rows: DuckValue[][] = [];
  for (let i = 0; i < warmup + runs; i++) {
    const r = await duck.query(sql);
    if (i >= warmup) times.push(r.milliseconds);
    rows = r.rows;
  }
  return { ms: median(times), rows };
}

/**
 * A query's `result` and the medians over `runs` runs after `warmup` untimed ones of its device query time (a
 * run's time once its facts are on the device) and of its load time (uploading the facts and sorting them).
 */
export async function timeVixenQuery(
  program: Program,
  facts: Record<string, Row[]>,
  gpu: Gpu,
  warmup: number,
  runs: number,
): Promise<{ queryMs: number; loadMs: number; rows: Row[] }> {
  const input = factsFor(program, facts);
  const queryTimes: number[] = [];
  const loadTimes: number[] = [];
  let rows: Row[] = [];
  for (let i = 0; i < warmup + runs; i++) {
    const r = await program.run({ facts: input, gpu, outputs: ['result'] });
    if (i >= warmup) {
      queryTimes.push(r.stats.milliseconds - r.stats.loadMilliseconds);
      loadTimes.push(r.stats.loadMilliseconds);
    }
    rows = r.relations.get('result')!;
  }
  return { queryMs: median(queryTimes), loadMs: median(loadTimes), rows };
}

export interface TblBenchOptions<Result> {
  sf: number;
  dataDir: string;
  /** Folder with schema.logic, the query files and sql/ with the same queries in SQL. */
  queriesDir: string;
  /** Timed runs per measurement (median reported); default 3. */
  runs?: number;
  /** Untimed runs first; default 1. */
  warmup?: number;
  /** DuckDB threads (default: DuckDB's choice, all cores). */
  duckdbThreads?: number;
  onQuery?: (r: Result) => void;
}

/** What every `.tbl` bench report starts with. */
export interface TblBenchReportBase {
  sf: number;
  adapter: string;
  date: string;
  runs: number;
  warmup: number;
  /** Parsing the `.tbl` files on the host once. */
  hostLoadMs: number;
  duckdbLoadMs: number;
}

function reportBase<R>(gpu: Gpu, options: TblBenchOptions<R>, data: TblSuiteData): TblBenchReportBase {
  return {
    sf: options.sf,
    adapter: gpu.adapterName,
    date: new Date().toISOString(),
    runs: options.runs ?? 3,
    warmup: options.warmup ?? 1,
    hostLoadMs: data.hostLoadMs,
    duckdbLoadMs: data.duckdbLoadMs,
  };
}

/** The data of one bench run: host rows for Vixen, the same tables in DuckDB, and how long each took to load. */
export interface TblSuiteData {
  facts: Record<string, Row[]>;
  duck: TblDuckDb;
  /** Parsing the `.tbl` files on the host once. */
  hostLoadMs: number;
  duckdbLoadMs: number;
}

export async function loadTblSuite(dataDir: string, schema: readonly RelationDecl[], duckdbThreads?: number): Promise<TblSuiteData> {
  let t0 = performance.now();
  const facts = await loadTblFacts(dataDir, schema);
  const hostLoadMs = performance.now() - t0;
  t0 = performance.now();
  const duck = await TblDuckDb.open(dataDir, schema, duckdbThreads);
  return { facts, duck, hostLoadMs, duckdbLoadMs: performance.now() - t0 };
}

/** The first line of a failure's message, for a report's table. */
export const firstLine = (e: unknown): string => (e instanceof Error ? e.message.split('\n')[0]! : String(e));

export const fmt = (x: number, digits = 1): string => (Number.isFinite(x) ? x.toFixed(digits) : '-');

/** The two lines a bench report table starts with: what ran where, and the load times. */
export function reportHeader(suite: string, r: TblBenchReportBase): string[] {
  return [
    `${suite} SF ${r.sf} on ${r.adapter}; median of ${r.runs} runs after ${r.warmup} warm-up`,
    `host parse of .tbl files ${fmt(r.hostLoadMs, 0)} ms; DuckDB load ${fmt(r.duckdbLoadMs, 0)} ms`,
  ];
}

/**
 * One bench run: loads the data, measures each query in order (reporting each result through `onQuery`) and
 * closes DuckDB; the report's common part and the results.
 */
export async function runTblSuite<Q, R>(
  gpu: Gpu,
  options: TblBenchOptions<R>,
  schema: readonly RelationDecl[],
  queries: readonly Q[],
  measure: (q: Q, data: TblSuiteData) => Promise<R>,
): Promise<{ base: TblBenchReportBase; results: R[] }> {
  const data = await loadTblSuite(options.dataDir, schema, options.duckdbThreads);
  const results: R[] = [];
  try {
    for (const q of queries) {
      const result = await measure(q, data);
      results.push(result);
      options.onQuery?.(result);
    }
  } finally {
    data.duck.close();
  }
  return { base: reportBase(gpu, options, data), results };
}
