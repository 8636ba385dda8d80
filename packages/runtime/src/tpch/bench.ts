/**
 * The TPC-H benchmark: the 22 queries on Vixen and on DuckDB over the same data in one process. The facts are
 * parsed on the host once; each Vixen run then uploads them and sorts them into canonical form on the device
 * (the run API has no device-resident database yet), so a run's load time is reported apart from its query
 * time, which starts once the facts are on the device. Answers are checked against DuckDB's as the test does.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { RelationDecl } from '@vixen/queryplan';
import { compareAnswers } from '../bench/answers.js';
import {
  firstLine,
  fmt,
  geomean,
  runTblSuite,
  reportHeader,
  resultTypes,
  suiteSchema,
  timeDuckQuery,
  timeVixenQuery,
  type TblBenchOptions,
  type TblBenchReportBase,
  type TblSuiteData,
} from '../bench/tbl-suite.js';
import type { Gpu } from '../gpu/index.js';
import { compileFile, type Program } from '../program.js';
import { TPCH_TABLES } from './dbgen.js';

export const TPCH_QUERIES: readonly number[] = Array.from({ length: 22 }, (_, i) => i + 1);

/** The schema's relations (the eight tables), from `dir/schema.logic`. */
export function tpchSchema(queriesDir: string): RelationDecl[] {
  return suiteSchema(queriesDir, TPCH_TABLES, 'TPC-H');
}

export function tpchQuerySql(queriesDir: string, q: number): string {
  return readFileSync(join(queriesDir, 'sql', `q${q}.sql`), 'utf8');
}

export function compileTpchQuery(queriesDir: string, q: number): Program {
  return compileFile(join(queriesDir, `q${q}.logic`));
}

export interface TpchBenchOptions extends TblBenchOptions<TpchQueryResult> {
  queries?: readonly number[];
}

export interface TpchQueryResult {
  query: number;
  /** 'ok': answers equal; 'mismatch': they differ; 'error': Vixen failed (compile or run). */
  status: 'ok' | 'mismatch' | 'error';
  /** Median device query time: a run's time once its facts are on the device. */
  vixenMs: number;
  /** Median time a run spent uploading its facts and sorting them on the device. */
  vixenLoadMs: number;
  duckdbMs: number;
  /** duckdbMs / vixenMs: above 1 when Vixen is faster. */
  speedup: number;
  rows: number;
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
  const measure = async (q: number, { facts, duck }: TblSuiteData): Promise<TpchQueryResult> => {
    const duckAnswer = await timeDuckQuery(duck, tpchQuerySql(options.queriesDir, q), warmup, runs);
    const duckdbMs = duckAnswer.ms;
    const duckRows = duckAnswer.rows;
    try {
      const program = compileTpchQuery(options.queriesDir, q);
      const { queryMs: vixenMs, loadMs, rows } = await timeVixenQuery(program, facts, gpu, warmup, runs);
      const diffs = compareAnswers(rows, resultTypes(program), duckRows);
      return {
        query: q,
        status: diffs.length === 0 ? 'ok' : 'mismatch',
        vixenMs,
        vixenLoadMs: loadMs,
        duckdbMs,
        speedup: duckdbMs / vixenMs,
        rows: rows.length,
        ...(diffs.length > 0 ? { message: diffs.join('; ') } : {}),
      };
    } catch (e) {
      return { query: q, status: 'error', vixenMs: NaN, vixenLoadMs: NaN, duckdbMs, speedup: NaN, rows: duckRows.length, message: firstLine(e) };
    }
  };
  const { base, results } = await runTblSuite(gpu, options, schema, options.queries ?? TPCH_QUERIES, measure);
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
  );
  return lines.join('\n');
}
