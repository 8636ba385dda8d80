/**
 * The TPC-H benchmark: the 22 queries on Vixen and on DuckDB over the same data in one process. Vixen runs on a
 * Database (database.ts): each table is loaded once first, with the columns the queries read (tbl-suite.ts
 * loadTables), and a query's first run makes the relations it reads (pruneColumns) from those on the device; they
 * stay resident, for this query's timed runs and for later queries that read the same columns. That first run's
 * load is reported apart from the timed query time.
 * Answers are checked against DuckDB's as the test does.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { RelationDecl } from '@vixen/queryplan';
import { compareAnswers } from '../answers.js';
import {
  columnReadMs,
  firstLine,
  fmt,
  geomean,
  runTblSuite,
  reportHeader,
  resultOrder,
  resultTypes,
  suiteSchema,
  timeDuckQuery,
  timeVixenQuery,
  type DeviceMemoryHeld,
  type SlowRunCauses,
  type TblBenchOptions,
  type TblBenchReportBase,
  type TblSuiteData,
} from '../tbl-suite.js';
import type { ExecuteStats } from '@vixen/runtime';
import type { Gpu } from '@vixen/runtime/gpu';
import { compileFile, type Program } from '@vixen/runtime';
import { TPCH_TABLES } from './dbgen.js';

export const TPCH_QUERIES: readonly number[] = Array.from({ length: 22 }, (_, i) => i + 1);

/** The schema's relations (the eight tables), from `dir/schema.logic`. */
export function tpchSchema(queriesDir: string): RelationDecl[] {
  return suiteSchema(queriesDir, TPCH_TABLES, 'TPC-H');
}

export function tpchQuerySql(queriesDir: string, q: number): string {
  return readFileSync(join(queriesDir, 'sql', `q${q}.sql`), 'utf8');
}

/** Query `q`, compiled to return only `result` (its other relations are intermediates), without the passes `disable` names. */
export function compileTpchQuery(queriesDir: string, q: number, disable: readonly string[] = []): Program {
  return compileFile(join(queriesDir, `q${q}.logic`), { outputs: ['result'], ...(disable.length > 0 ? { passes: { disable } } : {}) });
}

export interface TpchBenchOptions extends TblBenchOptions<TpchQueryResult> {
  queries?: readonly number[];
}

export interface TpchQueryResult {
  query: number;
  /** 'ok': answers equal; 'mismatch': they differ; 'error': Vixen failed (compile or run). */
  status: 'ok' | 'mismatch' | 'error';
  /** Median query time of the timed runs on resident data: a run's time once its facts are on the device. */
  vixenMs: number;
  /**
   * The first run's load of the tables it read that were not resident yet: host parse of their files (or projection
   * of the kept columns from the host cache), upload and sort, or a projection on the device of a resident table's
   * columns (0 when earlier queries made them all resident).
   */
  vixenLoadMs: number;
  /** The tables the first run made on the device from resident columns. */
  vixenProjected: string[];
  /** Median whole-run time of the timed runs (with the run's dictionary and readback). */
  vixenWallMs: number;
  /** Each timed run's query time, in run order, and of it the time it waited for the device. */
  vixenRunsMs: number[];
  vixenRunsWaitMs: number[];
  /** Of vixenMs: the median time the host waited for the device (the rest is host work). */
  vixenWaitMs: number;
  /** Of vixenMs: the host's work, vixenMs less vixenWaitMs (what bounds small queries on a fast GPU). */
  vixenHostMs: number;
  /** Of vixenHostMs: the median time Dawn took the run's submissions (ExecuteStats.submitMilliseconds). */
  vixenSubmitMs: number;
  /** Compute dispatches and queue submissions of a timed run. */
  dispatches: number;
  submissions: number;
  /** A timed run replayed the device work recorded from an earlier run (ExecuteStats.replayed). */
  replayed: boolean;
  /** Host round trips of a timed run (the final readback's included). */
  hostSyncs: number;
  /** What the first run uploaded: rows and words per row of each table. */
  uploads: ExecuteStats['uploads'];
  duckdbMs: number;
  /** duckdbMs / vixenMs: above 1 when Vixen is faster. */
  speedup: number;
  /** Time to read the run's input columns once at the run's copy bandwidth (columnReadMs). */
  readMs: number;
  /** vixenMs / readMs: 1 would be a scan of those columns at the copy bandwidth. */
  readRatio: number;
  rows: number;
  /** What made the timed runs slower than their kernels need (absent when Vixen failed). */
  causes?: SlowRunCauses;
  /** Device memory held as the timed runs began (absent when Vixen failed). */
  held?: DeviceMemoryHeld;
  /** The GPU's SM clock and its most (MHz) right after the timed runs (VixenTiming.smClock), where nvidia-smi says. */
  smClock?: { sm: number; max: number };
  /** Most bytes of device buffers at once in the query's runs (VixenTiming.peakDeviceBytes; NaN when Vixen failed). */
  peakDeviceBytes: number;
  /** Resident relations the Database freed during or after the query's runs (VixenTiming.evictions). */
  evictions: number;
  message?: string;
}

export interface TpchBenchReport extends TblBenchReportBase {
  queries: TpchQueryResult[];
  /** Geometric means over the queries with status ok. */
  geomeanVixenMs: number;
  geomeanDuckdbMs: number;
  geomeanSpeedup: number;
  /** TPC-H power-style metric 3600 * SF / geometric mean (seconds), as queries per hour. */
  powerVixen: number;
  powerDuckdb: number;
}

export async function benchTpch(gpu: Gpu, options: TpchBenchOptions): Promise<TpchBenchReport> {
  const runs = options.runs ?? 3;
  const warmup = options.warmup ?? 1;
  const schema = tpchSchema(options.queriesDir);
  // Compiled once: for the columns the tables' loads read, and for the query's runs.
  const compiled = new Map<number, Program | Error>();
  const compileOnce = (q: number): Program | Error => {
    let p = compiled.get(q);
    if (!p) {
      try {
        p = compileTpchQuery(options.queriesDir, q, options.disablePasses);
      } catch (e) {
        p = e instanceof Error ? e : new Error(String(e));
      }
      compiled.set(q, p);
    }
    return p;
  };
  const measure = async (q: number, data: TblSuiteData): Promise<TpchQueryResult> => {
    const duckAnswer = await timeDuckQuery(data, tpchQuerySql(options.queriesDir, q), warmup, runs);
    const duckdbMs = duckAnswer.ms;
    const duckRows = duckAnswer.rows;
    try {
      const program = compileOnce(q);
      if (program instanceof Error) throw program;
      const { queryMs: vixenMs, queryRunsMs, queryRunsWaitMs, waitMs, submitMs, dispatches, submissions, replayed, hostSyncs, loadMs, projectedOnDevice, wallMs, uploads, inputBytes, rows, causes, held, smClock, peakDeviceBytes, evictions } = await timeVixenQuery(
        program,
        data,
        warmup,
        runs,
        options.onProfile && ((stats) => options.onProfile!(`Q${q}`, stats, program)),
      );
      const diffs = compareAnswers(rows, resultTypes(program), duckRows, resultOrder(program));
      const readMs = columnReadMs(inputBytes, data.copyGbps);
      return {
        query: q,
        status: diffs.length === 0 ? 'ok' : 'mismatch',
        vixenMs,
        vixenLoadMs: loadMs,
        vixenProjected: projectedOnDevice,
        vixenWallMs: wallMs,
        vixenRunsMs: queryRunsMs,
        vixenRunsWaitMs: queryRunsWaitMs,
        vixenWaitMs: waitMs,
        vixenHostMs: vixenMs - waitMs,
        vixenSubmitMs: submitMs,
        dispatches,
        submissions,
        replayed,
        hostSyncs,
        uploads,
        duckdbMs,
        speedup: duckdbMs / vixenMs,
        readMs,
        readRatio: vixenMs / readMs,
        rows: rows.length,
        causes,
        held,
        ...(smClock ? { smClock } : {}),
        peakDeviceBytes,
        evictions,
        ...(diffs.length > 0 ? { message: diffs.join('; ') } : {}),
      };
    } catch (e) {
      const failed = { vixenMs: NaN, vixenLoadMs: NaN, vixenProjected: [], vixenWallMs: NaN, vixenRunsMs: [], vixenRunsWaitMs: [], vixenWaitMs: NaN, vixenHostMs: NaN, vixenSubmitMs: NaN, dispatches: NaN, submissions: NaN, replayed: false, hostSyncs: NaN, uploads: [], speedup: NaN, readMs: NaN, readRatio: NaN, peakDeviceBytes: NaN, evictions: 0 };
      return { query: q, status: 'error', ...failed, duckdbMs, rows: duckRows.length, message: firstLine(e) };
    }
  };
  const programsOf = (q: number): Program[] => {
    const p = compileOnce(q);
    return p instanceof Error ? [] : [p];
  };
  const { base, results } = await runTblSuite(gpu, options, schema, options.queries ?? TPCH_QUERIES, measure, programsOf);
  const ok = results.filter((r) => r.status === 'ok');
  const gv = geomean(ok.map((r) => r.vixenMs));
  const gd = geomean(ok.map((r) => r.duckdbMs));
  return {
    ...base,
    queries: results,
    geomeanVixenMs: gv,
    geomeanDuckdbMs: gd,
    geomeanSpeedup: gd / gv,
    powerVixen: (3600 * options.sf) / (gv / 1000),
    powerDuckdb: (3600 * options.sf) / (gd / 1000),
  };
}

export function formatTpchReport(r: TpchBenchReport): string {
  const lines = [
    ...reportHeader('TPC-H', r),
    'host ms: of vixen ms, the host working (the rest waited for the device); submit ms: of host ms, Dawn taking submissions',
    'query  status    vixen ms  host ms  submit ms  load ms  duckdb ms  speedup  x read  syncs  dispatches  replay  rows',
  ];
  for (const q of r.queries) {
    lines.push(
      `${`Q${q.query}`.padEnd(5)}  ${q.status.padEnd(8)}  ${fmt(q.vixenMs).padStart(8)}  ${fmt(q.vixenHostMs).padStart(7)}  ${fmt(q.vixenSubmitMs).padStart(9)}  ` +
        `${fmt(q.vixenLoadMs).padStart(7)}  ${fmt(q.duckdbMs).padStart(9)}  ${fmt(q.speedup, 3).padStart(7)}  ${fmt(q.readRatio, 2).padStart(6)}  ${String(q.hostSyncs).padStart(5)}  ` +
        `${String(q.dispatches).padStart(10)}  ${(q.replayed ? 'yes' : 'no').padStart(6)}  ${String(q.rows).padStart(4)}` +
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
