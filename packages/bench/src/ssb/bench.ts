/**
 * The Star Schema Benchmark: the 13 queries on Vixen and on DuckDB over the same data in one process, each Vixen
 * query compiled twice, with the default options and with kernel fusion off, and timed side by side. As in the
 * TPC-H bench the tables are resident on the device (bench/tbl-suite.ts), so a first run's load is reported apart
 * from query time. Both Vixen answers are checked against DuckDB's.
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
  type TblBenchOptions,
  type TblBenchReportBase,
  type TblSuiteData,
} from '../tbl-suite.js';
import type { Gpu } from '@vixen/runtime/gpu';
import type { ExecuteStats } from '@vixen/runtime';
import { compileFile, type Program } from '@vixen/runtime';
import { SSB_TABLES } from './dbgen.js';

/** The query flights 1..4; query `f.n` is `q<f.n>.logic` and `sql/q<f.n>.sql`. */
export const SSB_QUERIES = ['1.1', '1.2', '1.3', '2.1', '2.2', '2.3', '3.1', '3.2', '3.3', '3.4', '4.1', '4.2', '4.3'] as const;
export type SsbQuery = (typeof SSB_QUERIES)[number];

/** Compile options of a query; `fusion: false` turns the KIR kernel fusion off. */
export type SsbCompileOptions = NonNullable<Parameters<typeof compileFile>[1]>;

/** The five tables, from `dir/schema.logic`. */
export function ssbSchema(queriesDir: string): RelationDecl[] {
  return suiteSchema(queriesDir, SSB_TABLES, 'SSB');
}

export function ssbQuerySql(queriesDir: string, q: SsbQuery): string {
  return readFileSync(join(queriesDir, 'sql', `q${q}.sql`), 'utf8');
}

/** Query `q`, compiled to return only `result` (its other relations are intermediates). */
export function compileSsbQuery(queriesDir: string, q: SsbQuery, options: SsbCompileOptions = {}): Program {
  return compileFile(join(queriesDir, `q${q}.logic`), { outputs: ['result'], ...options });
}

export interface SsbBenchOptions extends TblBenchOptions<SsbQueryResult> {
  queries?: readonly SsbQuery[];
}

export interface SsbQueryResult {
  query: SsbQuery;
  /** 'ok': both Vixen answers equal DuckDB's; 'mismatch': one differs; 'error': Vixen failed (compile or run). */
  status: 'ok' | 'mismatch' | 'error';
  /** Median device query time with the default compile options (fusion on). */
  fusedMs: number;
  /** The same with `{ fusion: false }`. */
  unfusedMs: number;
  /** Each timed run's time, fused and unfused. */
  fusedRunsMs: number[];
  unfusedRunsMs: number[];
  /** Of fusedMs: the median time the host waited for the device (the rest is host work). */
  fusedWaitMs: number;
  /** Host round trips of a timed fused run (the final readback's included). */
  fusedHostSyncs: number;
  /** The fused variant's first run: loading the tables it read that were not resident yet. */
  loadMs: number;
  duckdbMs: number;
  /** duckdbMs / fusedMs: above 1 when Vixen is faster. */
  ratio: number;
  /** Time to read the fused run's input columns once at the run's copy bandwidth (columnReadMs). */
  readMs: number;
  /** fusedMs / readMs: 1 would be a scan of those columns at the copy bandwidth. */
  readRatio: number;
  /** Most bytes of device buffers at once in either variant's runs (VixenTiming.peakDeviceBytes; NaN where none ran). */
  peakDeviceBytes: number;
  /** Resident relations the Database freed during or after the query's runs (VixenTiming.evictions). */
  evictions: number;
  rows: number;
  message?: string;
}

export interface SsbBenchReport extends TblBenchReportBase {
  queries: SsbQueryResult[];
  /** Geometric means over the queries with status ok. */
  geomeanFusedMs: number;
  geomeanUnfusedMs: number;
  geomeanDuckdbMs: number;
  geomeanRatio: number;
}

const VARIANTS: readonly { name: 'fused' | 'unfused'; options: SsbCompileOptions }[] = [
  { name: 'fused', options: {} },
  { name: 'unfused', options: { fusion: false } },
];

/** A variant's compile options, also without the passes the bench's options disable. */
function withDisabled(options: SsbCompileOptions, disable: readonly string[] = []): SsbCompileOptions {
  return disable.length > 0 ? { ...options, passes: { ...options.passes, disable: [...(options.passes?.disable ?? []), ...disable] } } : options;
}

export async function benchSsb(gpu: Gpu, options: SsbBenchOptions): Promise<SsbBenchReport> {
  const runs = options.runs ?? 3;
  const warmup = options.warmup ?? 1;
  const schema = ssbSchema(options.queriesDir);
  const measure = async (q: SsbQuery, data: TblSuiteData): Promise<SsbQueryResult> => {
    const expected = await timeDuckQuery(data, ssbQuerySql(options.queriesDir, q), warmup, runs);
    const times = { fused: NaN, unfused: NaN };
    const runTimes: Record<'fused' | 'unfused', number[]> = { fused: [], unfused: [] };
    let fusedWaitMs = NaN;
    let fusedHostSyncs = NaN;
    let loadMs = NaN;
    let readMs = NaN;
    let peakDeviceBytes = NaN;
    let evictions = 0;
    let rows = expected.rows.length;
    const diffs: string[] = [];
    let error: string | undefined;
    for (const v of VARIANTS) {
      try {
        const program = compileSsbQuery(options.queriesDir, q, withDisabled(v.options, options.disablePasses));
        const profile = v.name === 'fused' && options.onProfile ? (stats: ExecuteStats) => options.onProfile!(q, stats, program) : undefined;
        const r = await timeVixenQuery(program, data, warmup, runs, profile);
        times[v.name] = r.queryMs;
        runTimes[v.name] = r.queryRunsMs;
        peakDeviceBytes = Number.isNaN(peakDeviceBytes) ? r.peakDeviceBytes : Math.max(peakDeviceBytes, r.peakDeviceBytes);
        evictions += r.evictions;
        if (v.name === 'fused') {
          loadMs = r.loadMs;
          fusedWaitMs = r.waitMs;
          fusedHostSyncs = r.hostSyncs;
          readMs = columnReadMs(r.inputBytes, data.copyGbps);
        }
        rows = r.rows.length;
        diffs.push(...compareAnswers(r.rows, resultTypes(program), expected.rows, resultOrder(program)).map((d) => `${v.name}: ${d}`));
      } catch (e) {
        error ??= `${v.name}: ${firstLine(e)}`;
      }
    }
    return {
      query: q,
      status: error !== undefined ? 'error' : diffs.length === 0 ? 'ok' : 'mismatch',
      fusedMs: times.fused,
      unfusedMs: times.unfused,
      fusedRunsMs: runTimes.fused,
      unfusedRunsMs: runTimes.unfused,
      fusedWaitMs,
      fusedHostSyncs,
      loadMs,
      duckdbMs: expected.ms,
      ratio: expected.ms / times.fused,
      readMs,
      readRatio: times.fused / readMs,
      peakDeviceBytes,
      evictions,
      rows,
      ...(error !== undefined || diffs.length > 0 ? { message: [error, ...diffs].filter((x) => x !== undefined).join('; ') } : {}),
    };
  };
  // The columns the tables' loads read: those of either variant (one that does not compile is measure's to report).
  const programsOf = (q: SsbQuery): Program[] =>
    VARIANTS.flatMap((v) => {
      try {
        return [compileSsbQuery(options.queriesDir, q, withDisabled(v.options, options.disablePasses))];
      } catch {
        return [];
      }
    });
  const { base, results } = await runTblSuite(gpu, options, schema, options.queries ?? SSB_QUERIES, measure, programsOf);
  const ok = results.filter((r) => r.status === 'ok');
  const gf = geomean(ok.map((r) => r.fusedMs));
  const gd = geomean(ok.map((r) => r.duckdbMs));
  return {
    ...base,
    queries: results,
    geomeanFusedMs: gf,
    geomeanUnfusedMs: geomean(ok.map((r) => r.unfusedMs)),
    geomeanDuckdbMs: gd,
    geomeanRatio: gd / gf,
  };
}

export function formatSsbReport(r: SsbBenchReport): string {
  const lines = [
    ...reportHeader('SSB', r),
    'query  status    fused ms  unfused ms  load ms  duckdb ms  ratio  x read  syncs  rows',
  ];
  for (const q of r.queries) {
    lines.push(
      `${`Q${q.query}`.padEnd(5)}  ${q.status.padEnd(8)}  ${fmt(q.fusedMs).padStart(8)}  ${fmt(q.unfusedMs).padStart(10)}  ` +
        `${fmt(q.loadMs).padStart(7)}  ${fmt(q.duckdbMs).padStart(9)}  ${fmt(q.ratio, 3).padStart(5)}  ${fmt(q.readRatio, 2).padStart(6)}  ` +
        `${String(q.fusedHostSyncs).padStart(5)}  ${String(q.rows).padStart(4)}` +
        (q.message ? `  ${q.message}` : ''),
    );
  }
  const n = r.queries.filter((q) => q.status === 'ok').length;
  lines.push(
    `geometric mean over ${n} matching queries: fused ${fmt(r.geomeanFusedMs)} ms, unfused ${fmt(r.geomeanUnfusedMs)} ms, ` +
      `duckdb ${fmt(r.geomeanDuckdbMs)} ms, ratio (duckdb/fused) ${fmt(r.geomeanRatio, 3)}`,
  );
  return lines.join('\n');
}
