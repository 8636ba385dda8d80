/**
 * The TPC-H benchmark: the 22 queries on Vixen and on DuckDB over the same data in one process. Vixen runs on a
 * Database (database.ts): a query's first run parses the columns it reads (pruneColumns), uploads them and sorts
 * them into canonical form, and they stay resident on the device, for this query's timed runs and for later
 * queries that read the same columns. That first run's load is reported apart from the timed query time.
 * Answers are checked against DuckDB's as the test does.
 */
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { kernelInputs } from '@vixen/kernel-ir';
import type { RelationDecl, Row } from '@vixen/queryplan';
import { median } from '../bench/operators.js';
import { Database } from '../database.js';
import type { ExecuteStats } from '../executor.js';
import { loadFactsDir } from '../facts/index.js';
import type { Gpu } from '../gpu/index.js';
import { compileFile, type Program } from '../program.js';
import { compareTpchAnswers } from './compare.js';
import { TPCH_TABLES } from './dbgen.js';
import { TpchDuckDb } from './duckdb.js';

export const TPCH_QUERIES: readonly number[] = Array.from({ length: 22 }, (_, i) => i + 1);

/** The schema's relations (the eight tables), from `dir/schema.logic`. */
export function tpchSchema(queriesDir: string): RelationDecl[] {
  const program = compileFile(join(queriesDir, 'schema.logic'));
  // schema.logic reads no column, so pruneColumns narrowed every table: the schema is their facts columns.
  return program.relations
    .filter((r) => (TPCH_TABLES as readonly string[]).includes(r.name))
    .map(({ pruned, ...r }) => ({ ...r, columns: pruned?.sourceColumns ?? r.columns }));
}

/** Host rows of the eight tables from `.tbl` files. */
export async function loadTpchFacts(dataDir: string, schema: readonly RelationDecl[]): Promise<Record<string, Row[]>> {
  return loadFactsDir(dataDir, schema, [...TPCH_TABLES]);
}

export function tpchQuerySql(queriesDir: string, q: number): string {
  return readFileSync(join(queriesDir, 'sql', `q${q}.sql`), 'utf8');
}

export function compileTpchQuery(queriesDir: string, q: number): Program {
  return compileFile(join(queriesDir, `q${q}.logic`));
}

/**
 * The tables a query's kernels read. Every query declares all eight (it includes the schema), and a run uploads
 * and sorts every table it is given, read or not.
 */
export function factsFor(program: Program, facts: Record<string, Row[]>): Record<string, Row[]> {
  const read = new Set(program.kir.kernels.flatMap(kernelInputs));
  return Object.fromEntries(Object.entries(facts).filter(([name]) => read.has(program.kir.relationVars[name] ?? -1)));
}

export interface TpchBenchOptions {
  sf: number;
  dataDir: string;
  /** Folder with schema.logic, q1.logic ... q22.logic and sql/q1.sql ... */
  queriesDir: string;
  queries?: readonly number[];
  /** Timed runs per query (median reported); default 3. */
  runs?: number;
  /** Untimed runs first; default 1. */
  warmup?: number;
  /** DuckDB threads (default: DuckDB's choice, all cores). */
  duckdbThreads?: number;
  /** Device memory resident tables may keep between queries (Database maxResidentBytes; default: no limit). */
  maxResidentBytes?: number;
  onQuery?: (r: TpchQueryResult) => void;
}

export interface TpchQueryResult {
  query: number;
  /** 'ok': answers equal; 'mismatch': they differ; 'error': Vixen failed (compile or run). */
  status: 'ok' | 'mismatch' | 'error';
  /** Median query time of the timed runs on resident data: a run's time once its facts are on the device. */
  vixenMs: number;
  /**
   * The first run's load of the tables it read that were not resident yet: host parse of the kept columns, upload
   * and sort (0 when earlier queries made them all resident).
   */
  vixenLoadMs: number;
  /** Median whole-run time of the timed runs (with the run's dictionary and readback). */
  vixenWallMs: number;
  /** What the first run uploaded: rows and words per row of each table. */
  uploads: ExecuteStats['uploads'];
  duckdbMs: number;
  /** duckdbMs / vixenMs: above 1 when Vixen is faster. */
  speedup: number;
  rows: number;
  message?: string;
}

export interface TpchBenchReport {
  sf: number;
  adapter: string;
  date: string;
  runs: number;
  warmup: number;
  /** Parsing the `.tbl` files on the host: the kept columns of each table, once per set of columns. */
  hostLoadMs: number;
  duckdbLoadMs: number;
  queries: TpchQueryResult[];
  /** Geometric means over the queries with status ok. */
  geomeanVixenMs: number;
  geomeanDuckdbMs: number;
  geomeanSpeedup: number;
  /** TPC-H power-style metric 3600 * SF / geometric mean (seconds), as queries per hour. */
  powerVixen: number;
  powerDuckdb: number;
  /** The tables resident on the device at the end: columns kept (absent: all), rows and words per row. */
  resident: Array<{ name: string; loadColumns?: readonly number[]; rows: number; width: number }>;
}

const geomean = (xs: readonly number[]): number => (xs.length === 0 ? NaN : Math.exp(xs.reduce((a, x) => a + Math.log(Math.max(x, 1e-6)), 0) / xs.length));

export async function benchTpch(gpu: Gpu, options: TpchBenchOptions): Promise<TpchBenchReport> {
  const runs = options.runs ?? 3;
  const warmup = options.warmup ?? 1;
  const schema = tpchSchema(options.queriesDir);
  for (const t of TPCH_TABLES) {
    if (!existsSync(join(options.dataDir, `${t}.tbl`))) throw new Error(`missing ${t}.tbl in ${options.dataDir}`);
  }
  let hostLoadMs = 0;
  const t0 = performance.now();
  const duck = await TpchDuckDb.open(options.dataDir, schema, options.duckdbThreads);
  const duckdbLoadMs = performance.now() - t0;
  const results: TpchQueryResult[] = [];
  const db = new Database(gpu, options.dataDir, options.maxResidentBytes !== undefined ? { maxResidentBytes: options.maxResidentBytes } : {});
  let resident: TpchBenchReport['resident'] = [];
  try {
    for (const q of options.queries ?? TPCH_QUERIES) {
      const sql = tpchQuerySql(options.queriesDir, q);
      const duckTimes: number[] = [];
      let duckRows: Awaited<ReturnType<TpchDuckDb['query']>>['rows'] = [];
      for (let i = 0; i < warmup + runs; i++) {
        const r = await duck.query(sql);
        if (i >= warmup) duckTimes.push(r.milliseconds);
        duckRows = r.rows;
      }
      const duckdbMs = median(duckTimes);
      let result: TpchQueryResult;
      try {
        const program = compileTpchQuery(options.queriesDir, q);
        const setup = await db.run(program, { outputs: ['result'] });
        hostLoadMs += setup.hostLoadMilliseconds;
        const queryTimes: number[] = [];
        const wallTimes: number[] = [];
        let rows: Row[] = setup.relations.get('result')!;
        for (let i = 0; i < warmup + runs; i++) {
          const r = await db.run(program, { outputs: ['result'] });
          if (i >= warmup) {
            queryTimes.push(r.stats.milliseconds - r.stats.loadMilliseconds);
            wallTimes.push(r.stats.milliseconds);
          }
          rows = r.relations.get('result')!;
        }
        const types = program.relations.find((r) => r.name === 'result')!.columns.map((c) => c.type);
        const diffs = compareTpchAnswers(rows, types, duckRows);
        const vixenMs = median(queryTimes);
        result = {
          query: q,
          status: diffs.length === 0 ? 'ok' : 'mismatch',
          vixenMs,
          vixenLoadMs: setup.hostLoadMilliseconds + setup.stats.loadMilliseconds,
          vixenWallMs: median(wallTimes),
          uploads: setup.stats.uploads,
          duckdbMs,
          speedup: duckdbMs / vixenMs,
          rows: rows.length,
          ...(diffs.length > 0 ? { message: diffs.join('; ') } : {}),
        };
      } catch (e) {
        const message = e instanceof Error ? e.message.split('\n')[0]! : String(e);
        result = { query: q, status: 'error', vixenMs: NaN, vixenLoadMs: NaN, vixenWallMs: NaN, uploads: [], duckdbMs, speedup: NaN, rows: duckRows.length, message };
      }
      results.push(result);
      options.onQuery?.(result);
    }
    resident = db.resident.map((r) => ({ name: r.name, ...(r.loadColumns ? { loadColumns: r.loadColumns } : {}), rows: r.relation.count, width: r.relation.width }));
  } finally {
    duck.close();
    db.clear();
  }
  const ok = results.filter((r) => r.status === 'ok');
  const gv = geomean(ok.map((r) => r.vixenMs));
  const gd = geomean(ok.map((r) => r.duckdbMs));
  return {
    sf: options.sf,
    adapter: gpu.adapterName,
    date: new Date().toISOString(),
    runs,
    warmup,
    hostLoadMs,
    duckdbLoadMs,
    queries: results,
    geomeanVixenMs: gv,
    geomeanDuckdbMs: gd,
    geomeanSpeedup: gd / gv,
    powerVixen: (3600 * options.sf) / (gv / 1000),
    powerDuckdb: (3600 * options.sf) / (gd / 1000),
    resident,
  };
}

const fmt = (x: number, digits = 1): string => (Number.isFinite(x) ? x.toFixed(digits) : '-');

export function formatTpchReport(r: TpchBenchReport): string {
  const lines = [
    `TPC-H SF ${r.sf} on ${r.adapter}; median of ${r.runs} runs after ${r.warmup} warm-up`,
    `host parse of .tbl files (kept columns) ${fmt(r.hostLoadMs, 0)} ms; DuckDB load ${fmt(r.duckdbLoadMs, 0)} ms`,
    'vixen ms: median query time on resident tables; load ms: the first run making its tables resident (parse, upload, sort)',
    'query  status    vixen ms  load ms  duckdb ms  speedup  rows',
  ];
  for (const q of r.queries) {
    lines.push(
      `${`Q${q.query}`.padEnd(5)}  ${q.status.padEnd(8)}  ${fmt(q.vixenMs).padStart(8)}  ${fmt(q.vixenLoadMs).padStart(7)}  ` +
        `${fmt(q.duckdbMs).padStart(9)}  ${fmt(q.speedup, 3).padStart(7)}  ${String(q.rows).padStart(4)}` +
        (q.message ? `  ${q.message}` : ''),
    );
  }
  const n = r.queries.filter((q) => q.status === 'ok').length;
  lines.push(
    `geometric mean over ${n} matching queries: vixen ${fmt(r.geomeanVixenMs)} ms, duckdb ${fmt(r.geomeanDuckdbMs)} ms, ` +
      `speedup ${fmt(r.geomeanSpeedup, 3)}`,
    `power (3600*SF/geomean s): vixen ${fmt(r.powerVixen)}, duckdb ${fmt(r.powerDuckdb)}`,
    `resident at the end: ${r.resident.map((t) => `${t.name}[${t.loadColumns?.join(',') ?? '*'}] ${t.rows}x${t.width}`).join(', ')}`,
  );
  return lines.join('\n');
}
