/**
 * `vixen bench load`: the TPC-H tables from their `.tbl` files into device memory, all eight with every column that
 * one of the 22 queries reads, with facts parsed on the host and on the device (RunOptions.parse), against DuckDB
 * loading the same columns of the same files (read_csv) in the same run; then the same columns from a store
 * (`vixen import --columns read`, read straight into device memory) and from Parquet files DuckDB wrote, against
 * DuckDB's read_parquet of them; and first, host-to-device upload bandwidth by method (upload.ts). Each Vixen run is
 * a fresh Database (without the host cache, as `vixen run` reads files) running a program per table that reads those
 * columns and keeps no row (its filter holds for none), one table after another, so its time is the load: reading or
 * parsing, upload, the sort and duplicate removal that make relations canonical, and the key checks. The comment
 * columns no query reads are left out, and each table is its own run, as the queries load them.
 */
import { existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync, statSync } from 'node:fs';
import { open } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { byteSortTimes, parquetLoadTimes, STORE_MANIFEST, workerCount } from '@vixen/io';
import { Database, STORE_READ_PLAN, storeLoadTimes, textParseTimes, timeTextParseKernels, type Gpu, type ParseMode, type Program, type StoreReadPlan } from '@vixen/runtime';
import { internals } from '@vixen/runtime/gpu';
import type { RelationDecl } from '@vixen/queryplan';
import { END_TO_END_FORMATS, formatDir, prepareFormat, type EndToEndFormat, type FormatDirs } from '../end-to-end.js';
import { median } from '../operators.js';
import { TblDuckDb } from '../tbl-duckdb.js';
import { columnsRead, fmt, observeGc, tableLoadProgram, type GcPauses, type TblBenchOptions } from '../tbl-suite.js';
import { TPCH_TABLES } from './dbgen.js';
import { benchUpload, formatUploadReport, type UploadCase, type UploadReport } from '../upload.js';
import { compileTpchQuery, TPCH_QUERIES, tpchSchema } from './bench.js';

/** As the query benches take them (runs default 3, warmup 1); only schema.logic of the queries folder is read. */
export type LoadBenchOptions = Pick<TblBenchOptions<never>, 'sf' | 'dataDir' | 'queriesDir' | 'runs' | 'warmup' | 'duckdbThreads'> & {
  /** Bytes of the upload rows (benchUpload); default 1 GiB on a GPU, 16 MiB on a CPU adapter; 0: none. */
  uploadBytes?: number;
  /** Hears of each upload row as it is measured (progress). */
  onUpload?: (c: UploadCase) => void;
  /** The inputs loaded: tbl (parsed on the host and on the device), store, parquet; default all. */
  formats?: readonly EndToEndFormat[];
  /** The .tbl loads: parsed on the host or on the device only; default (auto) both. */
  parse?: ParseMode;
  /**
   * Where the store is kept: imported there when it holds no store, else read as it is (an SF 10 import takes
   * minutes; it must be of the same `dataDir`); default a temporary folder, removed after.
   */
  storeDir?: string;
  /** How the store's column files are read, each plan a store row (the first the `store` one); default STORE_READ_PLAN. */
  storeReads?: readonly StoreReadPlan[];
};

export interface LoadTiming {
  /** Median wall time from files to canonical device relations. */
  ms: number;
  /** Median time in facts loaders (the host parse, or the device parse with its reads). */
  parseMs: number;
  /** Median time building each run's string dictionary and mapping the loaded strings to it. */
  dictionaryMs: number;
  /** Median time uploading, sorting and checking the parsed relations (the executor's load). */
  deviceLoadMs: number;
  /**
   * The rest of `ms`: the programs' evaluation and readback (they keep no row) and the Database's work between
   * runs (its dictionary of kept relations, evicting); with the three above it makes up the whole.
   */
  otherMs: number;
  /** Tables whose files the device parsed (the others fell back to the host parser). */
  parsedOnDevice: string[];
  /** Tables whose rows loaded in canonical order (found so on the device, not sorted again). */
  inOrder: string[];
  /** The device parser's host time by phase over the timed loads, per load (gpu/parse-text.ts textParseTimes). */
  deviceParse?: typeof textParseTimes;
  /** The byte string sorts' time by phase over the timed loads, per load (io ByteStringSort, runtime gpu/string-sort.ts). */
  byteSort: typeof byteSortTimes;
  /** The Parquet loader's host time by phase over the timed loads, per load (io facts/parquet.ts parquetLoadTimes). */
  parquetLoad?: typeof parquetLoadTimes;
  /** The store loader's host time by phase over the timed loads, per load (gpu/store-columns.ts storeLoadTimes). */
  storeLoad?: typeof storeLoadTimes;
  /** Per table of the last timed load, the executor's load of it (ExecuteStats.uploads ms). */
  tables: Array<{ name: string; ms: number; inOrder: boolean }>;
  /** Per table of the last timed load, its run's wall time: the table from its files into device memory. */
  tableMs: Array<{ name: string; ms: number }>;
  /** Compute pipelines compiled per timed load, and the wall time in which one was compiling. */
  compiled: { pipelines: number; milliseconds: number };
  /** The host's garbage collection pauses per timed load. */
  gc: GcPauses;
}

export interface LoadBenchReport {
  sf: number;
  adapter: string;
  /** Threads of the host's worker pool (parsing, Parquet decodes, string sorts). */
  workers: number;
  bytes: number;
  rows: number;
  /** DuckDB loading the same columns of the .tbl files (read_csv): the peer of the .tbl and store rows. */
  duckdbMs: number;
  /** Rows of the formats below (absent: a format not asked for). */
  host?: LoadTiming;
  device?: LoadTiming;
  /** The same columns from a store (`vixen import --columns read` of the .tbl files; prepareMs 0: one kept from before). */
  store?: LoadTiming & { bytes: number; prepareMs: number; floor: ReadFloor; reads: StoreReadPlan };
  /** The store read by the other plans of `storeReads`. */
  storePlans?: Array<LoadTiming & { reads: StoreReadPlan }>;
  /** The same columns from Parquet files DuckDB wrote from its .tbl load, and DuckDB's read_parquet of them. */
  parquet?: LoadTiming & { bytes: number; prepareMs: number; duckdbMs: number };
  /** Host-to-device upload bandwidth by method, measured first. */
  upload?: UploadReport;
}

async function timeLoad(gpu: Gpu, programs: readonly Program[], o: LoadBenchOptions, parse: ParseMode, storeReads?: StoreReadPlan): Promise<{ timing: LoadTiming; rows: number }> {
  const walls: number[] = [];
  const parses: number[] = [];
  const dictionaries: number[] = [];
  const loads: number[] = [];
  let parsedOnDevice: string[] = [];
  let inOrder: string[] = [];
  let tables: LoadTiming['tables'] = [];
  let tableMs: LoadTiming['tableMs'] = [];
  let rows = 0;
  const parseTimes = { ...textParseTimes };
  const storeTimes = { ...storeLoadTimes };
  const parquetTimes = { ...parquetLoadTimes };
  const sortTimes = { ...byteSortTimes };
  const compiled = internals(gpu).compiled;
  const compiledBefore = { ...compiled };
  let gcPauses: (() => GcPauses) | undefined;
  for (let i = 0; i < (o.warmup ?? 1) + (o.runs ?? 3); i++) {
    if (i === (o.warmup ?? 1)) {
      Object.assign(parseTimes, textParseTimes);
      Object.assign(storeTimes, storeLoadTimes);
      Object.assign(parquetTimes, parquetLoadTimes);
      Object.assign(sortTimes, byteSortTimes);
      Object.assign(compiledBefore, compiled);
      gcPauses = observeGc();
    }
    // No host cache: it would parse every column of each file for later programs (comments included), where a run
    // of a program parses the columns it reads.
    const db = new Database(gpu, o.dataDir, { parse, hostCache: false, ...(storeReads ? { storeReads } : {}) });
    try {
      const t0 = performance.now();
      const runs = [];
      const perTable: LoadTiming['tableMs'] = [];
      for (const program of programs) {
        const outputs = program.relations.filter((r) => r.name.startsWith('load_')).map((r) => r.name);
        const t1 = performance.now();
        runs.push(await db.run(program, { outputs }));
        perTable.push({ name: outputs.map((n) => n.slice('load_'.length)).join(', '), ms: performance.now() - t1 });
      }
      const wall = performance.now() - t0;
      if (i < (o.warmup ?? 1)) continue;
      walls.push(wall);
      parses.push(runs.reduce((n, r) => n + r.hostLoadMilliseconds, 0));
      dictionaries.push(runs.reduce((n, r) => n + r.stats.dictionaryMilliseconds, 0));
      loads.push(runs.reduce((n, r) => n + r.stats.loadMilliseconds, 0));
      const uploads = runs.flatMap((r) => r.stats.uploads);
      parsedOnDevice = uploads.filter((u) => u.parsedOnDevice).map((u) => u.name);
      inOrder = uploads.filter((u) => u.inOrder).map((u) => u.name);
      tables = uploads.map((u) => ({ name: u.name, ms: u.ms, inOrder: u.inOrder ?? false }));
      tableMs = perTable;
      rows = uploads.reduce((n, u) => n + u.rows, 0);
    } finally {
      db.clear();
    }
  }
  const runs = o.runs ?? 3;
  const perLoad = <T extends Record<string, number>>(now: T, before: T): T => Object.fromEntries(Object.entries(now).map(([k, v]) => [k, (v - before[k]!) / runs])) as T;
  const deviceParse = perLoad(textParseTimes, parseTimes);
  const storeLoad = perLoad(storeLoadTimes, storeTimes);
  const parquetLoad = perLoad(parquetLoadTimes, parquetTimes);
  const compiledPerLoad = perLoad(compiled, compiledBefore);
  const byteSort = perLoad(byteSortTimes, sortTimes);
  const gc = perLoad({ ...gcPauses!() }, { ms: 0, count: 0, majorMs: 0, major: 0 });
  const [ms, parseMs, dictionaryMs, deviceLoadMs] = [walls, parses, dictionaries, loads].map(median) as [number, number, number, number];
  const otherMs = ms - parseMs - dictionaryMs - deviceLoadMs;
  return {
    timing: { ms, parseMs, dictionaryMs, deviceLoadMs, otherMs, parsedOnDevice, inOrder, tables, tableMs, compiled: compiledPerLoad, gc, byteSort, ...(deviceParse.chunks > 0 ? { deviceParse } : {}), ...(storeLoad.relations > 0 ? { storeLoad } : {}), ...(parquetLoad.files > 0 ? { parquetLoad } : {}) },
    rows,
  };
}

export async function benchLoad(gpu: Gpu, o: LoadBenchOptions): Promise<LoadBenchReport> {
  const schema = tpchSchema(o.queriesDir);
  const keep = columnsRead(TPCH_QUERIES.map((q) => compileTpchQuery(o.queriesDir, q)), schema);
  const programs = schema.map((r) => tableLoadProgram(o.queriesDir, [[r, keep.get(r.name) ?? [0]]]));
  const bytes = TPCH_TABLES.reduce((n, t) => n + statSync(join(o.dataDir, `${t}.tbl`)).size, 0);
  const uploadSize = o.uploadBytes ?? (gpu.cpuAdapter ? 16 : 1024) * 2 ** 20;
  const upload = uploadSize > 0 ? await benchUpload(gpu, uploadSize, o.runs ?? 3, o.warmup ?? 1, o.onUpload) : undefined;
  const formats = new Set(o.formats ?? END_TO_END_FORMATS);
  const host = formats.has('tbl') && o.parse !== 'device' ? await timeLoad(gpu, programs, o, 'host') : undefined;
  let device: Awaited<ReturnType<typeof timeLoad>> | undefined;
  if (formats.has('tbl') && o.parse !== 'host') {
    // The parse's device time beside the host's wait for it (its timestamps cost a readback per file).
    timeTextParseKernels(true);
    try {
      device = await timeLoad(gpu, programs, o, 'device');
    } finally {
      timeTextParseKernels(false);
    }
  }
  const duckdbMs = await timeDuckLoad(o, o.dataDir, 'tbl', schema, keep);
  const report: LoadBenchReport = { sf: o.sf, adapter: gpu.adapterName, workers: workerCount(), bytes, rows: device?.rows ?? host?.rows ?? 0, duckdbMs, ...(upload ? { upload } : {}) };
  if (host) report.host = host.timing;
  if (device) report.device = device.timing;
  const work = mkdtempSync(join(tmpdir(), 'vixen-load-'));
  try {
    const dirs: FormatDirs = { dataDir: o.dataDir, workDir: work, schema, ...(o.duckdbThreads !== undefined ? { duckdbThreads: o.duckdbThreads } : {}) };
    for (const format of ['store', 'parquet'] as const) {
      if (!formats.has(format)) continue;
      // A kept store is read as it is; otherwise imported (into the kept folder, or the temporary one).
      const kept = format === 'store' && o.storeDir !== undefined;
      const made: FormatDirs = kept ? { ...dirs, workDir: o.storeDir! } : dirs;
      let prepareMs = 0;
      if (!kept || !existsSync(join(formatDir(made, format), STORE_MANIFEST))) {
        const t0 = performance.now();
        mkdirSync(made.workDir, { recursive: true });
        await prepareFormat(made, format, keep);
        prepareMs = performance.now() - t0;
      }
      const dir = formatDir(made, format);
      const [reads, ...others] = format === 'store' ? (o.storeReads ?? [STORE_READ_PLAN]) : [undefined];
      const { timing, rows } = await timeLoad(gpu, programs, { ...o, dataDir: dir }, 'auto', reads);
      report.rows ||= rows;
      const files = { ...timing, bytes: folderBytes(dir), prepareMs };
      if (format === 'parquet') report.parquet = { ...files, duckdbMs: await timeDuckLoad(o, dir, 'parquet', schema, keep) };
      else {
        report.store = { ...files, floor: await readFloor(dir, o), reads: reads! };
        if (others.length > 0) report.storePlans = [];
        for (const plan of others) report.storePlans!.push({ ...(await timeLoad(gpu, programs, { ...o, dataDir: dir }, 'auto', plan!)).timing, reads: plan! });
      }
    }
    return report;
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
}

/** Median time of DuckDB loading the `keep` columns of the tables' files in `dir`. */
async function timeDuckLoad(o: LoadBenchOptions, dir: string, format: 'tbl' | 'parquet', schema: readonly RelationDecl[], keep: ReadonlyMap<string, readonly number[]>): Promise<number> {
  const times: number[] = [];
  for (let i = 0; i < (o.warmup ?? 1) + (o.runs ?? 3); i++) {
    const t0 = performance.now();
    const db = await TblDuckDb.open(dir, schema, o.duckdbThreads, format, keep);
    if (i >= (o.warmup ?? 1)) times.push(performance.now() - t0);
    db.close();
  }
  return median(times);
}

/** The files under `dir`. */
const folderFiles = (dir: string): string[] =>
  readdirSync(dir, { recursive: true, withFileTypes: true })
    .filter((e) => e.isFile())
    .map((e) => join(e.parentPath, e.name));

/** Bytes of the files under `dir`. */
function folderBytes(dir: string): number {
  return folderFiles(dir).reduce((n, f) => n + statSync(f).size, 0);
}

/**
 * The floor of a store load: median ms to read every file of the store (all of them the load reads, the bench's
 * store holding only those columns) into host memory, warm in the page cache, no device: in 32 MiB reads, 8 in
 * flight as the store loader reads its columns (gpu/store-columns.ts), and one read at a time.
 */
export interface ReadFloor {
  bytes: number;
  inFlightMs: number;
  oneAtATimeMs: number;
}

const FLOOR_PIECE = 32 * 2 ** 20;

async function readFloor(dir: string, o: LoadBenchOptions): Promise<ReadFloor> {
  const files = folderFiles(dir).map((path) => ({ path, bytes: statSync(path).size }));
  const pieces = files.flatMap((f) => Array.from({ length: Math.ceil(f.bytes / FLOOR_PIECE) }, (_, k) => ({ path: f.path, at: k * FLOOR_PIECE, bytes: Math.min(FLOOR_PIECE, f.bytes - k * FLOOR_PIECE) })));
  const readAll = async (inFlight: number): Promise<number> => {
    const handles = new Map(await Promise.all(files.map(async (f) => [f.path, await open(f.path, 'r')] as const)));
    try {
      const t0 = performance.now();
      let next = 0;
      const lane = async (): Promise<void> => {
        const buffer = Buffer.allocUnsafe(FLOOR_PIECE);
        while (next < pieces.length) {
          const p = pieces[next++]!;
          for (let done = 0; done < p.bytes; ) {
            const { bytesRead } = await handles.get(p.path)!.read(buffer, done, p.bytes - done, p.at + done);
            if (bytesRead === 0) throw new Error(`bench: ${p.path} ended early`);
            done += bytesRead;
          }
        }
      };
      await Promise.all(Array.from({ length: inFlight }, lane));
      return performance.now() - t0;
    } finally {
      await Promise.all([...handles.values()].map((h) => h.close()));
    }
  };
  const inFlight: number[] = [];
  const oneAtATime: number[] = [];
  for (let i = 0; i < (o.warmup ?? 1) + (o.runs ?? 3); i++) {
    const [a, b] = [await readAll(8), await readAll(1)];
    if (i < (o.warmup ?? 1)) continue;
    inFlight.push(a);
    oneAtATime.push(b);
  }
  return { bytes: files.reduce((n, f) => n + f.bytes, 0), inFlightMs: median(inFlight), oneAtATimeMs: median(oneAtATime) };
}

/** A store read plan as the report names it: `32 MiB x 8` (bytes per read, reads in flight). */
const readsLabel = (p: StoreReadPlan): string => `${p.pieceBytes >= 2 ** 20 ? `${fmt(p.pieceBytes / 2 ** 20, 0)} MiB` : `${fmt(p.pieceBytes / 2 ** 10, 0)} KiB`} x ${p.inFlight}`;

export function formatLoadReport(r: LoadBenchReport): string {
  const mbps = (bytes: number, ms: number): string => fmt(bytes / 1e6 / (ms / 1000), 1);
  const cell = (t: LoadTiming | undefined, ms: (t: LoadTiming) => number, width: number): string => (t ? fmt(ms(t), 1) : '-').padStart(width);
  const line = (name: string, t: LoadTiming | undefined, ms: number, bytes: number, peer: number): string =>
    `${name.padEnd(16)}${fmt(ms, 1).padStart(11)}${cell(t, (t) => t.parseMs, 11)}${cell(t, (t) => t.dictionaryMs, 9)}${cell(t, (t) => t.deviceLoadMs, 13)}${cell(t, (t) => t.otherMs, 10)}${mbps(bytes, ms).padStart(8)}${fmt(ms / peer, 2).padStart(10)}`;
  const loads: Array<[string, LoadTiming | undefined]> = [['vixen host', r.host], ['vixen device', r.device], ['vixen store', r.store], ['vixen parquet', r.parquet]];
  const phases = (p: typeof textParseTimes, parseMs: number): string => {
    const other = parseMs - p.fillMs - p.readWaitMs - p.uploadMs - p.encodeMs - p.syncWaitMs - p.stringsMs - p.dictionaryMs;
    const kernels = p.kernelMs > 0 ? `; the parse's compute passes took ${fmt(p.kernelMs, 1)} ms of device time` : '';
    return `device parse, host ms per load: read ms ${fmt(parseMs, 1)} = issuing reads (a slot free) ${fmt(p.fillMs, 1)} + waiting for reads ${fmt(p.readWaitMs, 1)} + handing chunks to the device ${fmt(p.uploadMs, 1)} + encoding their passes ${fmt(p.encodeMs, 1)} (${fmt(p.buffersCreated, 0)} buffers created, ${fmt(p.createdBytes / 2 ** 20, 1)} MiB) + waiting for the device ${fmt(p.syncWaitMs, 1)} + chunk strings ${fmt(p.stringsMs, 1)} + sorting a file's strings ${fmt(p.dictionaryMs, 1)} (of which the sort ${fmt(p.sortMs, 1)}) + other ${fmt(other, 1)} (${fmt(p.chunks, 0)} chunks, of which ${fmt(p.oneTrip, 0)} counted and parsed in one round trip and ${fmt(p.roomMissed, 0)} parsed again at their count; ${fmt(p.bytes / 1e6, 1)} MB)${kernels}`;
  };
  const made = (what: string, f: { bytes: number; prepareMs: number } | undefined, how: string): string[] =>
    f ? [`${what}: ${(f.bytes / 1e6).toFixed(1)} MB (${how} in ${fmt(f.prepareMs, 0)} ms)`] : [];
  return [
    `TPC-H load at SF ${r.sf}: ${(r.bytes / 1e6).toFixed(1)} MB of .tbl (the columns the 22 queries read), ${r.rows} rows; adapter: ${r.adapter}`,
    ...(r.store ? [`store: ${(r.store.bytes / 1e6).toFixed(1)} MB (${r.store.prepareMs > 0 ? `vixen import --columns read in ${fmt(r.store.prepareMs, 0)} ms` : 'kept from before'})`] : []),
    ...made('Parquet', r.parquet, 'written by DuckDB'),
    `${'load'.padEnd(16)}${'total ms'.padStart(11)}${'read ms'.padStart(11)}${'dict ms'.padStart(9)}${'device ms'.padStart(13)}${'other ms'.padStart(10)}${'MB/s'.padStart(8)}${'x duckdb'.padStart(10)}`,
    ...(r.host ? [line('vixen host', r.host, r.host.ms, r.bytes, r.duckdbMs)] : []),
    ...(r.device ? [line('vixen device', r.device, r.device.ms, r.bytes, r.duckdbMs)] : []),
    line('duckdb', undefined, r.duckdbMs, r.bytes, r.duckdbMs),
    ...(r.store ? [line('vixen store', r.store, r.store.ms, r.store.bytes, r.duckdbMs)] : []),
    ...(r.store ? (r.storePlans ?? []).map((p) => line(`  ${readsLabel(p.reads)}`, p, p.ms, r.store!.bytes, r.duckdbMs)) : []),
    ...(r.parquet ? [line('vixen parquet', r.parquet, r.parquet.ms, r.parquet.bytes, r.parquet.duckdbMs), line('duckdb parquet', undefined, r.parquet.duckdbMs, r.parquet.bytes, r.parquet.duckdbMs)] : []),
    ...(r.device?.deviceParse ? [phases(r.device.deviceParse, r.device.parseMs)] : []),
    ...(r.store?.storeLoad
      ? [
          `store files into host memory (the floor: page cache, no device): ${fmt(r.store.floor.inFlightMs, 1)} ms (${mbps(r.store.floor.bytes, r.store.floor.inFlightMs)} MB/s) with 8 reads of 32 MiB in flight, ` +
            `${fmt(r.store.floor.oneAtATimeMs, 1)} ms (${mbps(r.store.floor.bytes, r.store.floor.oneAtATimeMs)} MB/s) one at a time; the store load: ${fmt(r.store.ms / (r.store.floor.inFlightMs || 1), 2)}x the floor`,
          `store, host ms per load (reads of ${readsLabel(r.store.reads)}): dictionaries ${fmt(r.store.storeLoad.dictionariesMs, 1)} (of which waiting for their reads ${fmt(r.store.storeLoad.dictionaryWaitMs, 1)}), opening files ${fmt(r.store.storeLoad.openMs, 1)}, ` +
            `reading and sending pieces ${fmt(r.store.storeLoad.piecesMs, 1)} (summed over the lanes in flight: reads ${fmt(r.store.storeLoad.readsMs, 1)}, handing to the device ${fmt(r.store.storeLoad.sendMs, 1)}, ` +
            `waiting for a mapped buffer ${fmt(r.store.storeLoad.bufferWaitMs, 1)}), waiting for checksums ${fmt(r.store.storeLoad.verifyWaitMs, 1)}, ` +
            `for the device ${fmt(r.store.storeLoad.deviceWaitMs, 1)} (${fmt(r.store.storeLoad.relations, 0)} relations, ${fmt(r.store.storeLoad.bytes / 1e6, 1)} MB of columns in ${fmt(r.store.storeLoad.pieces, 0)} pieces, ` +
            `${fmt(r.store.storeLoad.dictionaryBytes / 1e6, 1)} MB of dictionaries)`,
        ]
      : []),
    ...(r.parquet?.parquetLoad
      ? [
          `parquet, host ms per load: read ms ${fmt(r.parquet.parseMs, 1)}, of which the Parquet loader ${fmt(r.parquet.parquetLoad.ms, 1)} = waiting for tasks ${fmt(r.parquet.parquetLoad.waitMs, 1)} ` +
            `+ adding strings to the sort ${fmt(r.parquet.parquetLoad.stringsMs, 1)} + the sort ${fmt(r.parquet.parquetLoad.sortMs, 1)} + other; ${fmt(r.parquet.parquetLoad.files, 0)} files, ${fmt(r.parquet.parquetLoad.tasks, 0)} tasks on ${r.workers} workers ` +
            `taking ${fmt(r.parquet.parquetLoad.taskMs, 1)} ms summed (${fmt(r.parquet.parquetLoad.taskMs / Math.max(1, r.workers), 1)} per worker), the longest of each file's summed ${fmt(r.parquet.parquetLoad.longestTaskMs, 1)}`,
        ]
      : []),
    ...loads.flatMap(([name, t]) => (t ? [`${name}: tables in canonical order as loaded (not sorted again): ${t.inOrder.join(', ') || 'none'}`] : [])),
    ...loads.flatMap(([name, t]) => (t ? [`${name}: ms by table from its files into device memory (last load): ${t.tableMs.map((x) => `${x.name} ${fmt(x.ms, 1)}`).join(', ')}`] : [])),
    ...loads.flatMap(([name, t]) =>
      t
        ? [
            `${name}: device ms by table (last load): ${t.tables.map((x) => `${x.name} ${fmt(x.ms, 1)}${x.inOrder ? '' : ' sorted'}`).join(', ')}; ` +
              `per load ${fmt(t.compiled.pipelines, 0)} pipelines compiled, ${fmt(t.compiled.milliseconds, 1)} ms with one compiling; ` +
              `GC pauses ${fmt(t.gc.ms, 1)} ms (${fmt(t.gc.count, 0)}, of which ${fmt(t.gc.major, 0)} major ${fmt(t.gc.majorMs, 1)} ms)` +
              (t.byteSort.sorts > 0
                ? `; byte string sorts ${fmt(t.byteSort.sorts, 0)} of ${fmt(t.byteSort.strings, 0)} strings: binning ${fmt(t.byteSort.binMs, 1)} ms, sorting the bins ${fmt(t.byteSort.sortMs, 1)}, joining ${fmt(t.byteSort.joinMs, 1)}`
                : '') +
              (t.byteSort.deviceSorts > 0
                ? `; device string sorts ${fmt(t.byteSort.deviceSorts, 0)} of ${fmt(t.byteSort.deviceStrings, 0)} strings (${fmt(t.byteSort.deviceBytes / 2 ** 20, 1)} MiB): upload wait ${fmt(t.byteSort.deviceUploadMs, 1)} ms, ` +
                  `${fmt(t.byteSort.deviceRounds, 0)} rounds ${fmt(t.byteSort.deviceRoundsMs, 1)}, distinct and readback ${fmt(t.byteSort.deviceReadMs, 1)}`
                : ''),
          ]
        : [],
    ),
    ...(r.host && r.device
      ? [`parsed on the device: ${r.device.parsedOnDevice.length === TPCH_TABLES.length ? 'all tables' : r.device.parsedOnDevice.join(', ') || 'none'}; device vs host: ${fmt(r.host.ms / r.device.ms, 2)}x`]
      : []),
    'total = read (files parsed or read on the host) + dict (the string dictionary) + device (upload, sort, key checks) + other (evaluation, readback, between runs)',
    'MB/s: of the files read; x duckdb: over DuckDB\'s load of .tbl (for the store too) or of Parquet',
    ...(r.upload ? ['', formatUploadReport(r.upload)] : []),
  ].join('\n');
}
