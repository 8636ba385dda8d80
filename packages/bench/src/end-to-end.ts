/**
 * From files to answers (`vixen bench tpch|ssb --end-to-end`): each query in a fresh Database, its facts read from
 * `.tbl` files, from a columnar store (`vixen import`) or from Parquet, against DuckDB loading the same files and
 * running the same query, in the same process. Every time counts from the files to the answer: Vixen's compile,
 * facts read, upload, canonical sort and query; DuckDB's load of the tables the query reads, and its query.
 * A Database without its host cache, so nothing read for one query serves the next. Before the queries, each
 * engine loads every table alone, the columns the queries read.
 */
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import type { RelationDecl, Row } from '@vixen/queryplan';
import { EncodedFacts, importStore, loadFactsDirInto } from '@vixen/io';
import { Database, factsLoader, type Program } from '@vixen/runtime';
import { internals, loadStoreOnDevice, releaseRelation, uploadRelationStaged, type DeviceRelation, type Gpu } from '@vixen/runtime/gpu';
import { compareAnswers } from './answers.js';
import { columnsRead, firstLine, fmt, geomean, resultOrder, resultTypes } from './tbl-suite.js';
import { TblDuckDb } from './tbl-duckdb.js';

export const END_TO_END_FORMATS = ['tbl', 'store', 'parquet'] as const;
export type EndToEndFormat = (typeof END_TO_END_FORMATS)[number];

export interface EndToEndQuery {
  label: string;
  compile: () => Program;
  sql: string;
}

export interface EndToEndOptions {
  sf: number;
  /** Folder of the `.tbl` files; the store and the Parquet files are written beside them, under `workDir`. */
  dataDir: string;
  workDir: string;
  schema: readonly RelationDecl[];
  queries: readonly EndToEndQuery[];
  formats: readonly EndToEndFormat[];
  duckdbThreads?: number;
  /** A line of progress per step. */
  onStep?: (line: string) => void;
}

export interface EndToEndQueryResult {
  query: string;
  format: EndToEndFormat;
  /** 'ok': answers equal; 'mismatch': they differ; 'error': Vixen failed. */
  status: 'ok' | 'mismatch' | 'error';
  /** From the files to the answer, compile included. */
  vixenMs: number;
  /** DuckDB: load of the columns the query reads from the same files, then the query. */
  duckdbMs: number;
  /** duckdbMs / vixenMs. */
  speedup: number;
  rows: number;
  message?: string;
}

export interface EndToEndReport {
  sf: number;
  adapter: string;
  date: string;
  /** Making each format's files from the `.tbl` files (the store: `vixen import --columns read` of the queries' columns; Parquet: DuckDB's COPY). */
  prepareMs: Partial<Record<EndToEndFormat, number>>;
  /**
   * Every table, the columns the queries read, from the files into device memory (Vixen: read and upload) or into
   * DuckDB tables.
   */
  loadAll: Array<{ format: EndToEndFormat; vixenMs: number; duckdbMs: number; message?: string }>;
  queries: EndToEndQueryResult[];
}

/** What DuckDB reads for `format`: it has no reader of the store, so there it reads the store's source, the .tbl files. */
const duckFormat = (format: EndToEndFormat): 'tbl' | 'parquet' => (format === 'parquet' ? 'parquet' : 'tbl');

/** Where the formats' files are: the `.tbl` files, and the folders the others are written into. */
export type FormatDirs = Pick<EndToEndOptions, 'dataDir' | 'workDir' | 'schema' | 'duckdbThreads'>;

/** The `.tbl` folder, or the folder `format` was written into. */
export const formatDir = (o: FormatDirs, format: EndToEndFormat): string => (format === 'tbl' ? o.dataDir : join(o.workDir, format));

/** Writes `format`'s files; the store holds only the `keep` columns (those the queries read) of the tables it lists. */
export async function prepareFormat(o: FormatDirs, format: EndToEndFormat, keep: ReadonlyMap<string, readonly number[]>): Promise<void> {
  const out = formatDir(o, format);
  if (format === 'store') {
    const relations = o.schema.map((r) => {
      const kept = keep.get(r.name);
      return kept ? { ...r, columns: kept.map((c) => r.columns[c]!), pruned: { sourceColumns: r.columns, loadColumns: [...kept] } } : r;
    });
    await importStore({ relations, factsDir: o.dataDir, out, columns: 'read' });
  } else if (format === 'parquet') {
    mkdirSync(out, { recursive: true });
    const duck = await TblDuckDb.open(o.dataDir, o.schema, o.duckdbThreads);
    try {
      await duck.writeParquet(out, o.schema.map((r) => r.name));
    } finally {
      duck.close();
    }
  }
}

/**
 * The `keep` columns of every table read and uploaded as a run loads them (text parsed where `auto` says, a store
 * read straight into device memory, host rows through the staging ring), until the device's queue has done the copies.
 */
async function vixenLoadAll(gpu: Gpu, o: EndToEndOptions, format: EndToEndFormat, keep: ReadonlyMap<string, readonly number[]>): Promise<number> {
  const t0 = performance.now();
  const facts = new EncodedFacts();
  const names = o.schema.map((r) => r.name);
  // Narrowed as pruneColumns narrows a program's base relations: the kept columns, read from all the source's.
  const decls = o.schema.map((r) => {
    const kept = keep.get(r.name) ?? r.columns.map((_, i) => i);
    return { ...r, columns: kept.map((c) => r.columns[c]!), pruned: { sourceColumns: r.columns, loadColumns: [...kept] } };
  });
  const uploaded: DeviceRelation[] = [];
  try {
    await loadFactsDirInto(formatDir(o, format), decls, names, [], facts, factsLoader(gpu, 'auto'), undefined, false, (read, strings, step) =>
      loadStoreOnDevice(gpu, read, strings, step),
    );
    for (const rel of facts.relations.values()) if (rel.count > 0) uploaded.push(await uploadRelationStaged(gpu, rel.pieces(), rel.width, rel.count));
    await internals(gpu).device.queue.onSubmittedWorkDone();
    return performance.now() - t0;
  } finally {
    facts.releaseDevice();
    for (const rel of uploaded) releaseRelation(gpu, rel);
  }
}

async function duckLoadAll(o: EndToEndOptions, format: EndToEndFormat, keep: ReadonlyMap<string, readonly number[]>): Promise<number> {
  const t0 = performance.now();
  const duck = await TblDuckDb.open(formatDir(o, format), o.schema, o.duckdbThreads, duckFormat(format), keep);
  const ms = performance.now() - t0;
  duck.close();
  return ms;
}

/**
 * Query `q` from `format`; `keep` the columns it reads (undefined where it does not compile: DuckDB then loads
 * every column, and Vixen's run reports the error).
 */
async function measure(
  gpu: Gpu,
  o: EndToEndOptions,
  q: EndToEndQuery,
  keep: ReadonlyMap<string, readonly number[]> | undefined,
  format: EndToEndFormat,
): Promise<EndToEndQueryResult> {
  const read = keep ? o.schema.filter((r) => keep.has(r.name)) : o.schema;
  const d0 = performance.now();
  const duck = await TblDuckDb.open(formatDir(o, duckFormat(format)), read, o.duckdbThreads, duckFormat(format), keep);
  const answer = await duck.query(q.sql).finally(() => duck.close());
  const duckdbMs = performance.now() - d0;
  const db = new Database(gpu, formatDir(o, format), { hostCache: false });
  try {
    const v0 = performance.now();
    const compiled = q.compile();
    const run = await db.run(compiled, { outputs: ['result'] });
    const vixenMs = performance.now() - v0;
    const rows: Row[] = run.relations.get('result')!;
    const diffs = compareAnswers(rows, resultTypes(compiled), answer.rows, resultOrder(compiled));
    return {
      query: q.label,
      format,
      status: diffs.length === 0 ? 'ok' : 'mismatch',
      vixenMs,
      duckdbMs,
      speedup: duckdbMs / vixenMs,
      rows: rows.length,
      ...(diffs.length > 0 ? { message: diffs.join('; ') } : {}),
    };
  } catch (e) {
    return { query: q.label, format, status: 'error', vixenMs: NaN, duckdbMs, speedup: NaN, rows: answer.rows.length, message: firstLine(e) };
  } finally {
    db.clear();
  }
}

export async function benchEndToEnd(gpu: Gpu, o: EndToEndOptions): Promise<EndToEndReport> {
  const step = o.onStep ?? (() => {});
  const prepareMs: EndToEndReport['prepareMs'] = {};
  const ready: EndToEndFormat[] = [];
  const loadAll: EndToEndReport['loadAll'] = [];
  // Each query compiled once, untimed, for the columns it reads; its timed runs compile it again.
  const programs = o.queries.map((q) => {
    try {
      return q.compile();
    } catch {
      return undefined;
    }
  });
  const keepOf = programs.map((p) => (p ? columnsRead([p], o.schema) : undefined));
  const keep = columnsRead(programs.filter((p): p is Program => p !== undefined), o.schema);
  for (const format of o.formats) {
    const t0 = performance.now();
    try {
      await prepareFormat(o, format, keep);
      if (format !== 'tbl') prepareMs[format] = performance.now() - t0;
      ready.push(format);
    } catch (e) {
      loadAll.push({ format, vixenMs: NaN, duckdbMs: NaN, message: `preparing ${format}: ${firstLine(e)}` });
      continue;
    }
    step(`${format}: ready${format === 'tbl' ? '' : ` in ${fmt(prepareMs[format]!, 0)} ms`}`);
  }
  for (const format of ready) {
    const duckdbMs = format === 'store' ? NaN : await duckLoadAll(o, format, keep);
    try {
      loadAll.push({ format, vixenMs: await vixenLoadAll(gpu, o, format, keep), duckdbMs });
    } catch (e) {
      loadAll.push({ format, vixenMs: NaN, duckdbMs, message: firstLine(e) });
    }
    const last = loadAll[loadAll.length - 1]!;
    step(`${format}: all tables loaded, vixen ${fmt(last.vixenMs, 0)} ms, duckdb ${fmt(last.duckdbMs, 0)} ms`);
  }
  const queries: EndToEndQueryResult[] = [];
  for (const [i, q] of o.queries.entries()) {
    for (const format of ready) {
      const r = await measure(gpu, o, q, keepOf[i], format);
      queries.push(r);
      step(`${q.label} from ${format}: ${r.status}, vixen ${fmt(r.vixenMs, 0)} ms, duckdb ${fmt(r.duckdbMs, 0)} ms`);
    }
  }
  return { sf: o.sf, adapter: gpu.adapterName, date: new Date().toISOString(), prepareMs, loadAll, queries };
}

export function formatEndToEndReport(suite: string, r: EndToEndReport): string {
  const lines = [
    `${suite} SF ${r.sf} from files to answers on ${r.adapter} (each query in a fresh Database; DuckDB loads the columns it reads, then queries)`,
    'load of every table: the columns the queries read, into device memory (vixen) or DuckDB tables',
    ...Object.entries(r.prepareMs).map(([f, ms]) => `prepared ${f} from .tbl in ${fmt(ms, 0)} ms`),
    'load                 vixen ms  duckdb ms  speedup',
    ...r.loadAll.map((l) => `${l.format.padEnd(19)}  ${fmt(l.vixenMs, 0).padStart(8)}  ${fmt(l.duckdbMs, 0).padStart(9)}  ${fmt(l.duckdbMs / l.vixenMs, 2).padStart(7)}${l.message ? `  ${l.message}` : ''}`),
    '(the store is DuckDB-less: its DuckDB column is blank; per query DuckDB reads the .tbl files the store came from)',
    'query  format   status    vixen ms  duckdb ms  speedup  rows',
  ];
  for (const q of r.queries) {
    lines.push(
      `${q.query.padEnd(5)}  ${q.format.padEnd(7)}  ${q.status.padEnd(8)}  ${fmt(q.vixenMs, 0).padStart(8)}  ${fmt(q.duckdbMs, 0).padStart(9)}  ` +
        `${fmt(q.speedup, 2).padStart(7)}  ${String(q.rows).padStart(4)}${q.message ? `  ${q.message}` : ''}`,
    );
  }
  for (const format of END_TO_END_FORMATS) {
    const ok = r.queries.filter((q) => q.format === format && q.status === 'ok');
    if (ok.length === 0) continue;
    const gv = geomean(ok.map((q) => q.vixenMs));
    const gd = geomean(ok.map((q) => q.duckdbMs));
    lines.push(`${format}: geometric mean over ${ok.length} matching queries: vixen ${fmt(gv, 0)} ms, duckdb ${fmt(gd, 0)} ms, speedup ${fmt(gd / gv, 2)}`);
  }
  return lines.join('\n');
}
