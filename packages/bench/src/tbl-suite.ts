/**
 * What the `.tbl` query benchmarks (TPC-H, SSB) share: a folder of `schema.logic` and query files, `.tbl` data
 * served by a Database (database.ts: a query's first run parses the columns it reads, uploads and sorts them, and
 * they stay resident on the device for its timed runs and later queries), DuckDB on the same files, and geometric
 * means of the times. A first run's load is reported apart from the timed query time.
 */
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { constants, PerformanceObserver, type PerformanceEntry } from 'node:perf_hooks';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { variablesRead } from '@vixen/kernel-ir';
import { VixenError, type OutputOrder, type RelationDecl, type Row, type ScalarType } from '@vixen/queryplan';
import { compile, compileFile, Database, type Program, type ResidentRelation } from '@vixen/runtime';
import type { ExecuteStats, ParseMode } from '@vixen/runtime';
import { loadFactsDir } from '@vixen/io';
import { deviceMemoryUsed, gpuClockMHz, internals, replayBytes, type Gpu } from '@vixen/runtime/gpu';
import { copyBandwidth, GPU_WARM_MS, median, warmUp } from './operators.js';
import { TblDuckDb, type DuckValue } from './tbl-duckdb.js';

/**
 * The relations of `dir/schema.logic` named `tables`, with all their facts columns (schema.logic reads no column,
 * so pruneColumns narrowed every table); `suite` names the benchmark when one is missing.
 */
export function suiteSchema(queriesDir: string, tables: readonly string[], suite: string): RelationDecl[] {
  const program = compileFile(join(queriesDir, 'schema.logic'));
  return tables.map((t) => {
    const rel = program.relations.find((r) => r.name === t);
    if (!rel) throw new VixenError({ severity: 'error', message: `the ${suite} schema has no relation ${t}` });
    const { pruned, ...whole } = rel;
    return { ...whole, columns: pruned?.sourceColumns ?? rel.columns };
  });
}

/** A missing `<table>.tbl` is a user error. */
function requireTblFiles(dataDir: string, schema: readonly RelationDecl[]): void {
  for (const { name } of schema) {
    if (!existsSync(join(dataDir, `${name}.tbl`))) throw new VixenError({ severity: 'error', message: `missing ${name}.tbl in ${dataDir}` });
  }
}

/** Host rows of the schema's tables from `dataDir/<table>.tbl`; a missing file is a user error. */
export async function loadTblFacts(dataDir: string, schema: readonly RelationDecl[]): Promise<Record<string, Row[]>> {
  requireTblFiles(dataDir, schema);
  return loadFactsDir(dataDir, schema, schema.map((r) => r.name));
}

/**
 * The tables a query reads (kernels or branches). Every query declares all tables (it includes the schema), and a run uploads
 * and sorts every table it is given, read or not.
 */
export function factsFor(program: Program, facts: Record<string, Row[]>): Record<string, Row[]> {
  const read = variablesRead(program.kir);
  return Object.fromEntries(Object.entries(facts).filter(([name]) => read.has(program.kir.relationVars[name] ?? -1)));
}

/**
 * The columns (by position) of each table that any of `programs` reads: what a load for those queries needs.
 * Text columns no query reads, such as TPC-H's comments, hold most of the distinct strings.
 */
export function columnsRead(programs: readonly Program[], schema: readonly RelationDecl[]): Map<string, number[]> {
  const out = new Map<string, Set<number>>();
  for (const program of programs) {
    const read = variablesRead(program.kir);
    for (const table of schema) {
      if (!read.has(program.kir.relationVars[table.name] ?? -1)) continue;
      const decl = program.relations.find((r) => r.name === table.name)!;
      const columns = decl.pruned?.loadColumns ?? table.columns.map((_, i) => i);
      const set = out.get(table.name) ?? new Set<number>();
      for (const c of columns) set.add(c);
      out.set(table.name, set);
    }
  }
  return new Map([...out].map(([t, set]) => [t, [...set].sort((a, b) => a - b)]));
}

/**
 * A program reading, of each table `r` of `queriesDir/schema.logic` given, its `columns` (facts positions), and
 * keeping no row: its run on a Database loads them, and they stay resident. Each table's filter, on its first integer
 * column (a key, at least 0, in TPC-H's and SSB's tables), holds for none, so nothing is read back.
 */
export function tableLoadProgram(queriesDir: string, tables: ReadonlyArray<readonly [RelationDecl, readonly number[]]>): Program {
  const rules = tables.map(([r, columns]) => {
    const args = r.columns.map((_, i) => (columns.includes(i) ? `v${i}` : '_')).join(', ');
    const int = columns.find((c) => r.columns[c]!.type === 'int32' || r.columns[c]!.type === 'int64');
    return `load_${r.name}(${columns.map((i) => `v${i}`).join(', ')}) <- ${r.name}(${args})${int !== undefined ? `, v${int} < -1` : ''}.`;
  });
  return compile(`${readFileSync(join(queriesDir, 'schema.logic'), 'utf8')}\n${rules.join('\n')}\n`, { filename: `load-${tables.map(([r]) => r.name).join('-')}.logic` });
}

/** Column types of the query's `result` relation, as the answer comparison takes them. */
export function resultTypes(program: Program): ScalarType[] {
  return program.relations.find((r) => r.name === 'result')!.columns.map((c) => c.type);
}

/** The declared order of the query's `result` relation (`order result by ...`), as the answer comparison takes it. */
export function resultOrder(program: Program): OutputOrder | undefined {
  return program.kir.orders?.result;
}

export const geomean = (xs: readonly number[]): number => (xs.length === 0 ? NaN : Math.exp(xs.reduce((a, x) => a + Math.log(Math.max(x, 1e-6)), 0) / xs.length));

/**
 * DuckDB's answer to `sql` and its median time over `runs` runs after warm-up (`warmup` untimed runs, for at least
 * data.warmMs, as Vixen's).
 */
export async function timeDuckQuery(data: TblSuiteData, sql: string, warmup: number, runs: number): Promise<{ ms: number; rows: DuckValue[][] }> {
  let rows: DuckValue[][] = [];
  const run = async (): Promise<number> => {
    const r = await data.duck.query(sql);
    rows = r.rows;
    return r.milliseconds;
  };
  await warmUp(warmup, data.warmMs, run);
  const times: number[] = [];
  for (let i = 0; i < runs; i++) times.push(await run());
  return { ms: median(times), rows };
}

/** A query timed on resident tables (timeVixenQuery). */
export interface VixenTiming {
  /** Median query time of the timed runs: a run's time once its facts are on the device. */
  queryMs: number;
  /** Each timed run's query time, in run order (their spread says how far the median can be trusted). */
  queryRunsMs: number[];
  /** Of each: the time it waited for the device. */
  queryRunsWaitMs: number[];
  /** Median time the timed runs waited for the device (ExecuteStats.waitMilliseconds); the rest is host work. */
  waitMs: number;
  /** Of the rest: median time Dawn took the timed runs' submissions (ExecuteStats.submitMilliseconds). */
  submitMs: number;
  /** Compute dispatches and queue submissions of the last timed run. */
  dispatches: number;
  submissions: number;
  /** Host round trips of the last timed run (ExecuteStats.hostSyncs), the final readback's included. */
  hostSyncs: number;
  /** The last timed run replayed the device work recorded from an earlier run (ExecuteStats.replayed). */
  replayed: boolean;
  /**
   * The first run's load of the tables it read that were not resident yet: host parse, upload and sort, or a
   * projection on the device of a resident table's columns.
   */
  loadMs: number;
  /** The tables the first run made on the device from resident columns of theirs (Database projectedOnDevice). */
  projectedOnDevice: string[];
  /** Median whole-run time of the timed runs (with the run's dictionary and readback). */
  wallMs: number;
  /** What the first run uploaded: rows and words per row of each table. */
  uploads: ExecuteStats['uploads'];
  /** Bytes of the relations a run starts from (ExecuteStats.inputs): the columns it reads, as the device holds them. */
  inputBytes: number;
  rows: Row[];
  /** What made timed runs slower than their kernels need, summed over them (slowRunCauses). */
  causes: SlowRunCauses;
  /** Device memory held as the timed runs began. */
  held: DeviceMemoryHeld;
  /** The GPU's SM clock and its most (MHz) right after the timed runs (gpuClockMHz), where nvidia-smi says. */
  smClock?: { sm: number; max: number };
  /**
   * Most bytes of device buffers at once in any of its runs (ExecuteStats.peakAllocatedBytes: resident relations,
   * free buffers and staging included), and the resident relations its runs freed (Database evictions).
   */
  peakDeviceBytes: number;
  evictions: number;
}

/**
 * Host work a timed run on resident tables should not need, summed over the timed runs: what to look at when a
 * query's time is far from its kernels' (TPC-H Q16 took 32.6 ms in one SF 10 run on the H200 and 2.6 ms in another).
 */
export interface SlowRunCauses {
  /** Runs that started again because a guess failed (ExecuteStats.startedAgain): twice the work. */
  startedAgain: number;
  /** Runs that built a dictionary (and string tables) instead of keeping the resident relations' one. */
  dictionaryBuilt: number;
  /** GPU buffers created because the pool had none to reuse (each an allocation and Dawn's zero fill), and their bytes. */
  buffersCreated: number;
  createdBytes: number;
  /** Trims of the pool that destroyed its free buffers (a run near its device memory budget): later runs create them again. */
  poolTrims: number;
  /** String built-in tables (LIKE...) made and uploaded: none where the run keeps its dictionary. */
  tablesBuilt: number;
  /** Milliseconds the runs took for their dictionaries (ExecuteStats.dictionaryMilliseconds). */
  dictionaryMs: number;
  /** Runs that did not replay their program's record, by why (ExecuteStats.replayMissed; replay on). */
  notReplayed: Record<string, number>;
  /** Bytes spilled to host memory to stay within the device memory budget. */
  spilledBytes: number;
  /** Milliseconds of host garbage collection during the timed runs. */
  gcMs: number;
}

/**
 * Device memory held when a query's timed runs begin: resident relations (all, not only the query's), the pool's free
 * buffers and replay records' buffers. Runs size their room within the budget less these.
 */
export interface DeviceMemoryHeld {
  residentBytes: number;
  poolFreeBytes: number;
  recordBytes: number;
}

const mib = (bytes: number): string => (bytes / 2 ** 20).toFixed(1);

/** `; timed runs: ...` naming each cause that occurred, or nothing. */
export function formatSlowRunCauses(c: SlowRunCauses | undefined, runs: number): string {
  if (!c) return '';
  const said = [
    c.startedAgain > 0 ? `${c.startedAgain} started again` : '',
    c.dictionaryBuilt > 0 ? `${c.dictionaryBuilt} built a dictionary` : '',
    c.buffersCreated > 0 ? `${c.buffersCreated} buffer${c.buffersCreated === 1 ? '' : 's'} created (${mib(c.createdBytes)} MiB)` : '',
    c.poolTrims > 0 ? `${c.poolTrims} pool trim${c.poolTrims === 1 ? '' : 's'}` : '',
    c.tablesBuilt > 0 ? `${c.tablesBuilt} string table${c.tablesBuilt === 1 ? '' : 's'} built` : '',
    ...Object.entries(c.notReplayed).map(([why, n]) => `${n} not replayed (${why})`),
    c.spilledBytes > 0 ? `${mib(c.spilledBytes)} MiB spilled` : '',
    c.gcMs >= 0.05 * runs ? `host GC ${(c.gcMs / runs).toFixed(1)} ms a run` : '',
  ].filter((x) => x !== '');
  return said.length > 0 ? `; timed runs: ${said.join(', ')}` : '';
}

/** Bytes in GiB, to two places (no unit). */
const gib = (bytes: number): string => (bytes / 2 ** 30).toFixed(2);

/**
 * `; runs a/b/c ms (waiting d/e/f; SM clock ...); held: ...`: each timed run's time and device wait, the GPU's clock
 * after them, and the device memory held as they began, to tell a query slowed by its device (or its clock) from one
 * slowed by its host or by a full device.
 */
export function formatTimedRuns(ms: readonly number[], waitMs: readonly number[], held: DeviceMemoryHeld | undefined, smClock?: { sm: number; max: number }): string {
  if (ms.length === 0 || !held) return '';
  return (
    `; runs ${ms.map((x) => x.toFixed(1)).join('/')} ms (waiting ${waitMs.map((x) => x.toFixed(1)).join('/')}` +
    `${smClock ? `; SM clock ${smClock.sm} of ${smClock.max} MHz after them` : ''}); ` +
    `held: resident ${gib(held.residentBytes)} GiB, pool ${gib(held.poolFreeBytes)} GiB, records ${gib(held.recordBytes)} GiB`
  );
}

/**
 * A full garbage collection now: what a query's first run left (the parse of its tables' files, hundreds of MB at
 * SF 10) is then not collected during its timed runs (on llvmpipe, without a warm-up period, it cost TPC-H Q3's
 * timed runs at SF 0.05 47 ms each).
 */
function collectGarbage(): void {
  setFlagsFromString('--expose-gc');
  (runInNewContext('gc') as () => void)();
}

/** The host's garbage collection pauses: all, and the major (mark-compact) ones. */
export interface GcPauses {
  ms: number;
  count: number;
  majorMs: number;
  major: number;
}

/** Starts summing the host's garbage collection pauses; the function returned stops and gives them. */
export function observeGc(): () => GcPauses {
  const pauses: GcPauses = { ms: 0, count: 0, majorMs: 0, major: 0 };
  const add = (entries: readonly PerformanceEntry[]): void => {
    for (const e of entries) {
      pauses.ms += e.duration;
      pauses.count++;
      if (((e as { detail?: unknown }).detail as { kind?: number } | undefined)?.kind === constants.NODE_PERFORMANCE_GC_MAJOR) {
        pauses.majorMs += e.duration;
        pauses.major++;
      }
    }
  };
  const observer = new PerformanceObserver((list) => add(list.getEntries()));
  observer.observe({ entryTypes: ['gc'] });
  return () => {
    add(observer.takeRecords());
    observer.disconnect();
    return pauses;
  };
}

/**
 * Milliseconds reading `bytes` once takes at the copy bandwidth (copyBandwidth: bytes read plus written per
 * second), the bound a query that reads its columns once cannot beat: a bench reports query time over it.
 */
export const columnReadMs = (bytes: number, copyGbps: number): number => bytes / copyGbps / 1e6;

/**
 * A query's `result` and times: a first run that makes its tables resident (its load counted in `data.hostLoadMs`
 * and `loadMs`), then medians over `runs` runs on the resident tables after `warmup` untimed ones, repeated for
 * at least data.warmMs.
 */
export async function timeVixenQuery(
  program: Program,
  data: TblSuiteData,
  warmup: number,
  runs: number,
  /** When given, one more run with a device profile after the timed ones, handed here. */
  profile?: (stats: ExecuteStats) => void,
): Promise<VixenTiming> {
  const budget = data.maxDeviceMemory !== undefined ? { maxDeviceMemory: data.maxDeviceMemory } : {};
  const replay = data.replay === false ? { replay: false } : {};
  const run = (options: { profile?: boolean } = {}) => data.db.run(program, { outputs: ['result'], ...budget, ...replay, ...options });
  const setup = await run();
  data.hostLoadMs += setup.hostLoadMilliseconds;
  data.deviceProjectMs += setup.deviceProjectMilliseconds;
  data.deviceProjections.push(...setup.projectedOnDevice.map((p) => p.name));
  data.wideLoads.push(...setup.wideLoads.map((w) => w.name));
  const queryTimes: number[] = [];
  const wallTimes: number[] = [];
  const waitTimes: number[] = [];
  const submitTimes: number[] = [];
  // Rows are decoded from the last run alone: decoding each timed run's (27,840 rows with strings for TPC-H Q16)
  // left garbage whose collections fell inside later runs (25 ms a run at SF 10 on the H200).
  let last = setup;
  let { hostSyncs, dispatches, submissions, replayed } = setup.stats;
  let peakDeviceBytes = setup.stats.peakAllocatedBytes;
  let evictions = setup.evictions.relations;
  // Collected before the warm-up, not after it: on the H200 a query's first runs after a full collection ran
  // 1.5-3x slower (TPC-H Q12 at SF 3: 10-20 ms against 5-7), which 3-5 timed runs right after it took as their median.
  collectGarbage();
  // By wall time, as DuckDB's: counting the runs' evaluation alone, a query of 2 ms whose runs take 20 ms on the host
  // warmed up for 20 s (TPC-H Q13 at SF 10 on the H200: 10 s more than its runs needed).
  await warmUp(warmup, data.warmMs, async () => {
    const t0 = performance.now();
    const r = await run();
    evictions += r.evictions.relations;
    return performance.now() - t0;
  });
  const causes: SlowRunCauses = {
    startedAgain: 0,
    dictionaryBuilt: 0,
    buffersCreated: 0,
    createdBytes: 0,
    poolTrims: 0,
    tablesBuilt: 0,
    dictionaryMs: 0,
    notReplayed: {},
    spilledBytes: 0,
    gcMs: 0,
  };
  const pool = internals(data.db.gpu).pool;
  const held: DeviceMemoryHeld = {
    residentBytes: data.db.resident.reduce((n, r) => n + residentBytes(r), 0),
    poolFreeBytes: pool.freeBytes,
    recordBytes: replayBytes(internals(data.db.gpu)),
  };
  const { trims, createdBytes } = pool;
  const gcMs = observeGc();
  for (let i = 0; i < runs; i++) {
    const r = await run();
    queryTimes.push(r.stats.milliseconds - r.stats.loadMilliseconds);
    wallTimes.push(r.stats.milliseconds);
    waitTimes.push(r.stats.waitMilliseconds);
    submitTimes.push(r.stats.submitMilliseconds);
    last = r;
    ({ hostSyncs, dispatches, submissions, replayed } = r.stats);
    peakDeviceBytes = Math.max(peakDeviceBytes, r.stats.peakAllocatedBytes);
    evictions += r.evictions.relations;
    causes.startedAgain += r.stats.startedAgain ? 1 : 0;
    causes.dictionaryBuilt += r.stats.residentDictionary ? 0 : 1;
    causes.buffersCreated += r.stats.buffersCreated;
    causes.tablesBuilt += r.stats.tablesBuilt;
    causes.dictionaryMs += r.stats.dictionaryMilliseconds;
    if (r.stats.replayMissed !== undefined) causes.notReplayed[r.stats.replayMissed] = (causes.notReplayed[r.stats.replayMissed] ?? 0) + 1;
    causes.spilledBytes += r.stats.spilledBytes;
  }
  // Before the profile's run and DuckDB's, while the device has just worked: the clock the timed runs ended at.
  const smClock = gpuClockMHz(data.db.gpu.cpuAdapter);
  causes.gcMs = gcMs().ms;
  causes.poolTrims = pool.trims - trims;
  causes.createdBytes = pool.createdBytes - createdBytes;
  const rows = last.relations.get('result')!;
  if (profile) profile((await run({ profile: true })).stats);
  return {
    queryMs: median(queryTimes),
    queryRunsMs: queryTimes,
    queryRunsWaitMs: waitTimes,
    waitMs: median(waitTimes),
    submitMs: median(submitTimes),
    dispatches,
    submissions,
    hostSyncs,
    replayed,
    loadMs: setup.hostLoadMilliseconds + setup.deviceProjectMilliseconds + setup.stats.loadMilliseconds,
    projectedOnDevice: setup.projectedOnDevice.map((p) => p.name),
    wallMs: median(wallTimes),
    uploads: setup.stats.uploads,
    inputBytes: setup.stats.inputs.reduce((n, r) => n + 4 * r.rows * r.width, 0),
    rows,
    causes,
    held,
    ...(smClock ? { smClock } : {}),
    peakDeviceBytes,
    evictions,
  };
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
  /**
   * Device memory resident tables may keep between queries (default: half the device's memory budget). With the
   * tables loaded first, the relations made for queries are freed past it, oldest first, and the tables' own loads
   * are kept; otherwise it is the Database's maxResidentBytes. Under pressure the Database frees idle ones itself.
   */
  maxResidentBytes?: number;
  /**
   * Device memory budget of each run (RunOptions.maxDeviceMemory): tables past it stay in host memory and kernels
   * whose relations do not fit it run in partitions (default: the device's less a margin). The CLI opens the device
   * with it as the device's budget too (GpuOptions.maxDeviceMemory), as if the device had that much memory.
   */
  maxDeviceMemory?: number;
  /** Where the Database parses the `.tbl` files (DatabaseOptions.parse; default auto). */
  parse?: ParseMode;
  /** Optional compiler passes the queries are compiled without (CompilePassOptions.disable): A/B runs of one build. */
  disablePasses?: readonly string[];
  /** false: no run replays the device work recorded from an earlier one (RunOptions.replay; default true). */
  replay?: boolean;
  /**
   * Milliseconds each engine runs a query untimed at least (default: GPU_WARM_MS on a GPU, 0 on a CPU adapter): less
   * fits a run of every query into a short slot on the device.
   */
  warmMs?: number;
  /**
   * Where the Database makes column sets that resident ones hold (DatabaseOptions.project; default auto, and with the
   * tables loaded first, the device: each query's relations are made from the tables' loads).
   */
  project?: ParseMode;
  /**
   * Each query's first run loads the columns it reads that are not resident (the Database reading a table again for
   * columns no earlier query read), instead of every table being loaded once, with the columns the queries read,
   * before the queries (loadTables).
   */
  perQueryLoads?: boolean;
  /**
   * Opens a new device where the bench's is lost or failed (DatabaseOptions.reopen): the queries after go on there,
   * loading what they read.
   */
  reopen?: () => Promise<Gpu>;
  /** Hears of each query's result, with the device memory after it (TblBenchReportBase.memoryAfterQueries). */
  onQuery?: (r: Result, memory: MemoryAfterQuery) => void;
  /** Hears of each table loaded before the queries, as it is. */
  onTableLoad?: (t: TableLoad) => void;
  /** Hears of the one run loading every table failing, with its error's first line, before each table loads alone. */
  onTablesTogetherFailure?: (message: string) => void;
  /** Profiles one more run of each query (its label, e.g. `Q6`) after the timed ones (fused plans only for SSB). */
  onProfile?: (query: string, stats: ExecuteStats, program: Program) => void;
}

/**
 * A table loaded before the queries, once, with the columns they read: by Vixen (a run of tableLoadProgram, after
 * which the relation stays resident, for each query's relations to be projected from on the device) and by DuckDB
 * (the same columns of the same file, into its in-memory database).
 */
export interface TableLoad {
  name: string;
  /** The facts columns loaded (columnsRead of the queries), by position. */
  columns: number[];
  /**
   * Vixen's time: the file read (parsed on the host or the device), then uploaded, sorted and its keys checked
   * (ExecuteStats.uploads); a load of all tables in one run also builds their dictionary, in none of them.
   */
  ms: number;
  /**
   * Of ms: reading and parsing the file (DatabaseRunResult.hostLoadMilliseconds; where one run loads every table, it
   * reads their files at once, and this is the time from the run's start to the file's last load progress).
   */
  readMs: number;
  /** The resident relation's rows and words per row (0 when it did not stay resident). */
  rows: number;
  width: number;
  /** Whether it stayed resident; where not, the queries that read the table load it themselves. */
  resident: boolean;
  /** Why it did not: the load's error, or its rows past the device memory budget. */
  message?: string;
  /**
   * Most bytes of device buffers at once during the run that loaded it (ExecuteStats.peakAllocatedBytes; where it
   * failed, the pool's peak since the run or its evaluation began, the refused buffer counted), and of them mapped staging buffers' (reads and
   * uploads: BufferPool.peakMappedBytes).
   */
  peakDeviceBytes: number;
  peakMappedBytes: number;
  /** Where the load failed, the device memory right after (the driver's count against Vixen's, as after a query). */
  memoryAtFailure?: MemoryAfterQuery;
  duckdbMs: number;
}

/** Device memory after a query: Vixen's count of its buffers, its resident relations' words, the driver's count. */
export interface MemoryAfterQuery {
  allocatedBytes: number;
  residentBytes: number;
  deviceUsedBytes?: number;
}

/** `device buffers at most 1.20 GiB, 3 resident relations evicted`, for a progress line. */
export function formatDevicePeak(peakBytes: number, evictions = 0, mappedBytes = 0): string {
  return `device buffers at most ${gib(peakBytes)} GiB${mappedBytes > 0 ? ` (mapped staging at most ${gib(mappedBytes)})` : ''}${evictions > 0 ? `, ${evictions} resident relations evicted` : ''}`;
}

/** `Vixen's buffers 1.20 GiB (resident 0.80), the driver's count 1.50 GiB`, for a query's progress line. */
export function formatMemoryAfterQuery(m: MemoryAfterQuery): string {
  return `Vixen's buffers ${gib(m.allocatedBytes)} GiB (resident ${gib(m.residentBytes)})${m.deviceUsedBytes !== undefined ? `, the driver's count ${gib(m.deviceUsedBytes)} GiB` : ''}`;
}

/** What every `.tbl` bench report starts with. */
export interface TblBenchReportBase {
  sf: number;
  adapter: string;
  date: string;
  runs: number;
  warmup: number;
  /** Milliseconds of warm-up per engine and query at least (TblSuiteData.warmMs). */
  warmMs: number;
  /** The tables loaded once before the queries (absent with perQueryLoads), in load order. */
  tableLoads?: TableLoad[];
  /** Their load time in all: Vixen's (its wall time: one run loads them all) and DuckDB's. */
  tablesLoadMs?: number;
  tablesDuckdbLoadMs?: number;
  /** Where the one run loading every table failed, its error's first line (each table was then loaded alone). */
  tablesTogetherFailure?: string;
  /**
   * Host load of the `.tbl` files by the queries' first runs: each table's file parsed once, then each set of kept
   * columns projected (those resident columns hold excepted: see deviceProjectMs); with the tables loaded first, only
   * tables that did not stay resident.
   */
  hostLoadMs: number;
  /** Sets of kept columns made on the device from resident ones instead (Database projectedOnDevice): their time, and their tables. */
  deviceProjectMs: number;
  deviceProjections: string[];
  /** Of the host loads, the tables loaded with the columns of several column sets to project from (Database wideLoads). */
  wideLoads: string[];
  /** Relations made for queries that were freed to keep resident memory within maxResidentBytes (tables loaded first). */
  releasedRelations: number;
  /**
   * Resident relations the Database freed itself (Database.evictions): under device memory pressure, or past its
   * maxResidentBytes after a run; their bytes. Later runs that read one made it again.
   */
  evictedRelations: number;
  evictedBytes: number;
  /** The device's memory budget (GpuOptions.maxDeviceMemory or the device's less a margin), where known. */
  deviceBudgetBytes?: number;
  /** DuckDB's load of every table (with the tables loaded first, the same columns as Vixen's: tablesDuckdbLoadMs). */
  duckdbLoadMs: number;
  /** The device's copy bandwidth, measured at the start of the run (copyBandwidth). */
  copyGbps: number;
  /**
   * Wall time of the run's parts: opening (the copy bandwidth, DuckDB), the tables' loads (both engines), and each
   * query in order (both engines: first run, warm-up, timed runs), for planning runs within a time limit.
   */
  wallMs: { open: number; tables: number; queries: number[] };
  /**
   * After each query (in order), the bytes of device buffers Vixen holds (BufferPool.allocatedBytes), of which its
   * resident relations', and the driver's count of device memory in use (nvidia-smi, all processes; absent elsewhere):
   * the accounting against what the device reports.
   */
  memoryAfterQueries: MemoryAfterQuery[];
  /** The tables resident on the device at the end: columns kept (absent: all), rows and words per row. */
  resident: Array<{ name: string; loadColumns?: readonly number[]; rows: number; width: number }>;
}

function reportBase<R>(
  gpu: Gpu,
  options: TblBenchOptions<R>,
  data: TblSuiteData,
  wallMs: TblBenchReportBase['wallMs'],
  memoryAfterQueries: TblBenchReportBase['memoryAfterQueries'],
): TblBenchReportBase {
  return {
    sf: options.sf,
    adapter: gpu.adapterName,
    date: new Date().toISOString(),
    runs: options.runs ?? 3,
    warmup: options.warmup ?? 1,
    warmMs: data.warmMs,
    ...(data.tableLoads
      ? {
          tableLoads: data.tableLoads,
          tablesLoadMs: data.tablesLoadMs!,
          tablesDuckdbLoadMs: data.tableLoads.reduce((n, t) => n + t.duckdbMs, 0),
          ...(data.tablesTogetherFailure !== undefined ? { tablesTogetherFailure: data.tablesTogetherFailure } : {}),
        }
      : {}),
    hostLoadMs: data.hostLoadMs,
    deviceProjectMs: data.deviceProjectMs,
    deviceProjections: data.deviceProjections,
    wideLoads: data.wideLoads,
    releasedRelations: data.releasedRelations,
    evictedRelations: data.db.evictions.relations,
    evictedBytes: data.db.evictions.bytes,
    ...(internals(gpu).memoryBudget !== undefined ? { deviceBudgetBytes: internals(gpu).memoryBudget } : {}),
    duckdbLoadMs: data.duckdbLoadMs,
    copyGbps: data.copyGbps,
    wallMs,
    memoryAfterQueries,
    resident: data.db.resident.map((r) => ({ name: r.name, ...(r.loadColumns ? { loadColumns: r.loadColumns } : {}), rows: r.relation.count, width: r.relation.width })),
  };
}

/** The data of one bench run: the Database Vixen runs on, the same tables in DuckDB, and load times. */
export interface TblSuiteData {
  db: Database;
  duck: TblDuckDb;
  /** The tables loaded before the queries (absent with perQueryLoads), and Vixen's wall time loading them. */
  tableLoads?: TableLoad[];
  tablesLoadMs?: number;
  /** The error of the one run loading every table, where it failed (TblBenchReportBase.tablesTogetherFailure). */
  tablesTogetherFailure?: string;
  /** Host load of `.tbl` files so far (the Database parses a file at first use and projects kept columns). */
  hostLoadMs: number;
  /** Kept columns made on the device from resident ones so far: time, and the table of each. */
  deviceProjectMs: number;
  deviceProjections: string[];
  /** Tables loaded with several column sets' columns to project from, so far (one entry a load). */
  wideLoads: string[];
  /** Resident relations freed so far (trimResident). */
  releasedRelations: number;
  /** Bytes resident relations may hold after a query (trimResident; with the tables loaded first). */
  residentCap?: number;
  duckdbLoadMs: number;
  /** The device's copy bandwidth in GB/s (copyBandwidth), measured before the data were loaded. */
  copyGbps: number;
  /**
   * Milliseconds each engine runs a query untimed at least, before timing it (on a GPU, GPU_WARM_MS: the device's
   * clocks drop while DuckDB runs; 0 on a CPU adapter).
   */
  warmMs: number;
  /** The runs' device memory budget (TblBenchOptions.maxDeviceMemory). */
  maxDeviceMemory?: number;
  /** Wall time of the tables' loads, both engines'. */
  tablesWallMs: number;
  /** TblBenchOptions.replay. */
  replay?: boolean;
}

/** Words of a resident relation, in bytes. */
const residentBytes = (r: ResidentRelation): number => 4 * r.relation.count * r.relation.width;

/** Vixen's count of its device buffers now, its resident relations' words and the driver's count (nvidia-smi). */
function memoryNow(db: Database): MemoryAfterQuery {
  const used = deviceMemoryUsed(db.gpu.cpuAdapter);
  const held = db.resident.reduce((n, r) => n + residentBytes(r), 0);
  return { allocatedBytes: internals(db.gpu).pool.allocatedBytes, residentBytes: held, ...(used !== undefined ? { deviceUsedBytes: used } : {}) };
}

/** Whether resident relation `r` is the load of a table (TableLoad), which queries project from. */
const isTableLoad = (r: ResidentRelation, loads: readonly TableLoad[]): boolean =>
  loads.some((t) => t.resident && t.name === r.name && (r.loadColumns ?? t.columns).join() === t.columns.join());

/**
 * Loads each table of `schema` that `programs` read, once, with the columns they read (columnsRead): Vixen through
 * one run of tableLoadProgram on `db` for them all (the relations then stay resident, their strings in one
 * dictionary, which the relations made from them share: a query's run then builds no dictionary and remaps no
 * string), then DuckDB into `duck`, one table after the other. Where that run fails, each table is loaded by a run of
 * its own (the run's error kept as togetherFailure); a table whose load fails or does not stay resident (past the device memory budget) is reported so, and
 * the queries load it themselves.
 */
async function loadTables<R>(
  db: Database,
  duck: TblDuckDb,
  options: TblBenchOptions<R>,
  schema: readonly RelationDecl[],
  programs: readonly Program[],
): Promise<{ loads: TableLoad[]; vixenMs: number; togetherFailure?: string }> {
  const keep = columnsRead(programs, schema);
  const tables = schema.flatMap((r) => (keep.has(r.name) ? [[r, keep.get(r.name)!] as const] : []));
  const t0 = performance.now();
  const together = await loadTogether(db, options, tables);
  const vixen = 'failure' in together ? [] : together;
  if ('failure' in together) options.onTablesTogetherFailure?.(together.failure);
  for (const [r, columns] of tables.slice(vixen.length)) {
    const alone = await loadTogether(db, options, [[r, columns]]);
    vixen.push(...('failure' in alone ? [] : alone));
  }
  const vixenMs = performance.now() - t0;
  const loads: TableLoad[] = [];
  for (const [[r, columns], load] of tables.map((t, i) => [t, vixen[i]!] as const)) {
    const d0 = performance.now();
    await duck.load(options.dataDir, r, 'tbl', columns);
    const t = { ...load, duckdbMs: performance.now() - d0 };
    loads.push(t);
    options.onTableLoad?.(t);
  }
  return { loads, vixenMs, ...('failure' in together ? { togetherFailure: together.failure } : {}) };
}

/**
 * One run loading `tables` on `db`: each table's load (its time the read of its file, to the load's last progress of
 * it, and its upload, sort and key checks), or undefined where the run failed with several tables (each then loads
 * alone), with the first line of its error: the failure that sent the tables to runs of their own.
 */
async function loadTogether<R>(
  db: Database,
  options: TblBenchOptions<R>,
  tables: ReadonlyArray<readonly [RelationDecl, readonly number[]]>,
): Promise<Array<Omit<TableLoad, 'duckdbMs'>> | { failure: string }> {
  const budget = options.maxDeviceMemory !== undefined ? { maxDeviceMemory: options.maxDeviceMemory } : {};
  // The run reads the files at once (loadFactsDirInto): each one's read ends with its last progress.
  const readEnd = new Map<string, number>();
  const pool = internals(db.gpu).pool;
  const t0 = performance.now();
  try {
    const run = await db.run(tableLoadProgram(options.queriesDir, tables), {
      outputs: tables.map(([r]) => `load_${r.name}`),
      onLoadProgress: (p) => readEnd.set(p.relation, performance.now()),
      ...budget,
    });
    const ms = performance.now() - t0;
    return tables.map(([r, columns]) => {
      const held = db.resident.find((x) => x.name === r.name && (x.loadColumns ?? r.columns.map((_, i) => i)).join() === columns.join());
      const readMs = tables.length === 1 ? run.hostLoadMilliseconds : (readEnd.get(r.name) ?? t0) - t0;
      const deviceMs = run.stats.uploads.find((u) => u.name === r.name)?.ms ?? 0;
      return {
        name: r.name,
        columns: [...columns],
        ms: tables.length === 1 ? ms : readMs + deviceMs,
        readMs,
        rows: held?.relation.count ?? 0,
        width: held?.relation.width ?? 0,
        resident: held !== undefined,
        peakDeviceBytes: run.stats.peakAllocatedBytes,
        peakMappedBytes: pool.peakMappedBytes,
        ...(held ? {} : { message: `not kept on the device (${run.stats.spilledBytes > 0 ? 'spilled: ' : ''}past the device memory budget)` }),
      };
    });
  } catch (e) {
    if (tables.length > 1) return { failure: firstLine(e) };
    const [[r, columns]] = tables as [readonly [RelationDecl, readonly number[]]];
    const peaks = { peakDeviceBytes: pool.peakAllocatedBytes, peakMappedBytes: pool.peakMappedBytes, memoryAtFailure: memoryNow(db) };
    return [{ name: r.name, columns: [...columns], ms: performance.now() - t0, readMs: (readEnd.get(r.name) ?? t0) - t0, rows: 0, width: 0, resident: false, ...peaks, message: firstLine(e) }];
  }
}

/**
 * After a query, with the tables loaded first: frees relations made for queries (never a table's load), oldest
 * first, while the resident relations hold more than data.residentCap; later queries that read one make it again.
 */
function trimResident(data: TblSuiteData): void {
  if (data.residentCap === undefined || !data.tableLoads) return;
  const resident = data.db.resident;
  let bytes = resident.reduce((n, r) => n + residentBytes(r), 0);
  const freed = new Set<ResidentRelation['relation']>();
  for (const r of resident) {
    if (bytes <= data.residentCap) break;
    if (isTableLoad(r, data.tableLoads)) continue;
    freed.add(r.relation);
    bytes -= residentBytes(r);
  }
  if (freed.size === 0) return;
  data.db.release((r) => freed.has(r.relation));
  data.releasedRelations += freed.size;
}

async function openTblSuite<R>(gpu: Gpu, options: TblBenchOptions<R>, schema: readonly RelationDecl[], programs: () => Program[]): Promise<TblSuiteData> {
  requireTblFiles(options.dataDir, schema);
  const copyGbps = await copyBandwidth(gpu);
  const first = options.perQueryLoads !== true;
  const db = new Database(gpu, options.dataDir, {
    ...(options.maxResidentBytes !== undefined && !first ? { maxResidentBytes: options.maxResidentBytes } : {}),
    ...(options.parse ? { parse: options.parse } : {}),
    ...(options.reopen ? { reopen: options.reopen } : {}),
    // Loaded first, a table is read once: queries make their relations of it on the device, not from a host copy.
    ...(first ? { project: options.project === 'host' ? 'host' : 'device', hostCache: options.project === 'host' } : options.project ? { project: options.project } : {}),
  });
  const t0 = performance.now();
  const duck = first ? await TblDuckDb.open(options.dataDir, [], options.duckdbThreads) : await TblDuckDb.open(options.dataDir, schema, options.duckdbThreads);
  let duckdbLoadMs = performance.now() - t0;
  let tableLoads: TableLoad[] | undefined;
  let tablesLoadMs = 0;
  let tablesTogetherFailure: string | undefined;
  const tablesStart = performance.now();
  if (first) {
    ({ loads: tableLoads, vixenMs: tablesLoadMs, togetherFailure: tablesTogetherFailure } = await loadTables(db, duck, options, schema, programs()));
    duckdbLoadMs += tableLoads.reduce((n, t) => n + t.duckdbMs, 0);
  }
  const budget = options.maxDeviceMemory ?? internals(gpu).memoryBudget;
  const residentCap = options.maxResidentBytes ?? (budget !== undefined ? budget / 2 : undefined);
  return {
    db,
    duck,
    ...(tableLoads ? { tableLoads, tablesLoadMs } : {}),
    ...(tablesTogetherFailure !== undefined ? { tablesTogetherFailure } : {}),
    hostLoadMs: 0,
    deviceProjectMs: 0,
    deviceProjections: [],
    wideLoads: [],
    releasedRelations: 0,
    ...(first && residentCap !== undefined ? { residentCap } : {}),
    duckdbLoadMs,
    copyGbps,
    warmMs: options.warmMs ?? (gpu.cpuAdapter ? 0 : GPU_WARM_MS),
    ...(options.maxDeviceMemory !== undefined ? { maxDeviceMemory: options.maxDeviceMemory } : {}),
    tablesWallMs: performance.now() - tablesStart,
    ...(options.replay !== undefined ? { replay: options.replay } : {}),
  };
}

/** The first line of a failure's message, for a report's table. */
export const firstLine = (e: unknown): string => (e instanceof Error ? e.message.split('\n')[0]! : String(e));

export const fmt = (x: number, digits = 1): string => (Number.isFinite(x) ? x.toFixed(digits) : '-');

/** Tables counted: `lineitem 12, orders 3`, or `none`. */
function formatProjections(tables: readonly string[]): string {
  const counts = new Map<string, number>();
  for (const t of tables) counts.set(t, (counts.get(t) ?? 0) + 1);
  return counts.size === 0 ? 'none' : [...counts].map(([t, n]) => `${t} ${n}`).join(', ');
}

/** Device memory after the queries: Vixen's own count of its buffers, and the driver's where it says. */
function memoryLine(r: TblBenchReportBase): string[] {
  const m = r.memoryAfterQueries;
  if (m.length === 0) return [];
  const used = m.flatMap((x) => (x.deviceUsedBytes !== undefined ? [x.deviceUsedBytes] : []));
  return [
    `device memory after each query: Vixen's buffers at most ${gib(Math.max(...m.map((x) => x.allocatedBytes)))} GiB (resident relations at most ${gib(Math.max(...m.map((x) => x.residentBytes)))} GiB)` +
      (used.length > 0 ? `, in use by the driver's count at most ${gib(Math.max(...used))} GiB` : '') +
      (r.tableLoads ? `; the tables' load held at most ${gib(Math.max(0, ...r.tableLoads.map((t) => t.peakDeviceBytes)))} GiB` : ''),
  ];
}

/** The lines a bench report table starts with: what ran where, and the load times. */
export function reportHeader(suite: string, r: TblBenchReportBase): string[] {
  const loads = r.tableLoads;
  return [
    `${suite} SF ${r.sf} on ${r.adapter}; median of ${r.runs} runs after ${r.warmup} warm-up${r.warmMs > 0 ? ` (for at least ${r.warmMs / 1000} s per engine and query)` : ''}`,
    ...(loads
      ? [
          `tables loaded once before the queries (the columns they read) in ${fmt(r.tablesLoadMs!, 0)} ms (the longest read of a file ${fmt(Math.max(0, ...loads.map((t) => t.readMs)), 0)} ms); ` +
            `DuckDB loaded the same columns in ${fmt(r.tablesDuckdbLoadMs!, 0)} ms`,
          ...(r.tablesTogetherFailure !== undefined ? [`  one run loading every table failed (${r.tablesTogetherFailure}); each table was then loaded by a run of its own`] : []),
          ...loads.map(
            (t) =>
              `  ${t.name}: ${t.columns.length} columns, vixen ${fmt(t.ms, 0)} ms (read ${fmt(t.readMs, 0)}), duckdb ${fmt(t.duckdbMs, 0)} ms; ` +
              (t.resident ? `resident ${t.rows}x${t.width}` : `not resident (${t.message ?? ''}): its queries load it`),
          ),
        ]
      : []),
    `host parse of .tbl files by the queries (each once; kept columns projected; of which loads of several column sets at once: ${formatProjections(r.wideLoads)}) ${fmt(r.hostLoadMs, 0)} ms; ` +
      `kept columns projected on the device from resident ones ${fmt(r.deviceProjectMs, 0)} ms (${formatProjections(r.deviceProjections)})` +
      (loads ? `; relations freed to keep resident memory within its limit: ${r.releasedRelations}` : `; DuckDB load ${fmt(r.duckdbLoadMs, 0)} ms`) +
      `; evicted by the Database (device memory pressure, resident limit): ${r.evictedRelations} (${gib(r.evictedBytes)} GiB)` +
      (r.deviceBudgetBytes !== undefined ? ` of a device budget of ${gib(r.deviceBudgetBytes)} GiB` : ''),
    `wall time: opening (copy bandwidth, DuckDB) ${fmt(r.wallMs.open / 1000)} s, tables ${fmt(r.wallMs.tables / 1000)} s, queries ${fmt(r.wallMs.queries.reduce((n, x) => n + x, 0) / 1000)} s ` +
      `(both engines: first runs, warm-ups, timed runs; the longest ${fmt(Math.max(0, ...r.wallMs.queries) / 1000)} s)`,
    ...memoryLine(r),
    'vixen ms: median query time on resident tables; load ms: the first run making its tables resident (parse, upload, sort; or projection on the device)',
    `x read: a query's time over the time to read its device columns once at the copy bandwidth measured in this run, ${fmt(r.copyGbps)} GB/s`,
  ];
}

/**
 * One bench run: loads the data (each table once, with the columns the programs of `compileAll` read, unless
 * perQueryLoads), measures each query in order (reporting each result through `onQuery`) and closes DuckDB; the
 * report's common part and the results.
 */
export async function runTblSuite<Q, R>(
  gpu: Gpu,
  options: TblBenchOptions<R>,
  schema: readonly RelationDecl[],
  queries: readonly Q[],
  measure: (q: Q, data: TblSuiteData) => Promise<R>,
  /** The programs of query q (those that fail to compile left out: measure reports them). */
  programsOf: (q: Q) => Program[],
): Promise<{ base: TblBenchReportBase; results: R[] }> {
  const t0 = performance.now();
  const data = await openTblSuite(gpu, options, schema, () => queries.flatMap(programsOf));
  const open = performance.now() - t0 - data.tablesWallMs;
  const results: R[] = [];
  const queryWallMs: number[] = [];
  const memory: TblBenchReportBase['memoryAfterQueries'] = [];
  try {
    for (const q of queries) {
      const q0 = performance.now();
      const result = await measure(q, data);
      queryWallMs.push(performance.now() - q0);
      results.push(result);
      trimResident(data);
      // The driver's count, once the device is idle and Dawn had its tick to free what was destroyed (on the device the
      // Database uses now: it may have reopened one; a failed one is not waited for).
      const device = internals(data.db.gpu);
      await device.reclaim().catch(() => undefined);
      const after = memoryNow(data.db);
      memory.push(after);
      options.onQuery?.(result, after);
    }
    return { base: reportBase(gpu, options, data, { open, tables: data.tablesWallMs, queries: queryWallMs }, memory), results };
  } finally {
    data.duck.close();
    data.db.clear();
  }
}
