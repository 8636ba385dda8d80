/**
 * Base relations resident on the device across runs: a Database loads a base relation from its facts directory
 * the first time a program reads it, keeps the canonical (sorted, duplicate-free) device copy (of the columns the
 * program keeps on the device, RelationDecl.deviceColumns), and later runs of any program that reads the same
 * relation with the same kept columns (pruneColumns, deviceColumns) and types use that copy instead of parsing,
 * uploading and sorting again.
 *
 * String words are ids of an order-preserving dictionary built per run (executor.ts buildDictionary). Each
 * resident relation remembers the strings it holds and the dictionary its words refer to; those strings join
 * every run that reads it, so the run's dictionary is the one a fresh run would build. When another program's
 * strings shift the ids, the relation's string words are rewritten through the old -> new id map: read back,
 * mapped on the host and uploaded again (not parsed or sorted again: the map keeps the order, so the rows stay
 * canonical). Runs never write or free resident buffers (executor.ts ResidentRelations). A program that declares a
 * key no run checked on a resident relation's facts has it checked first, as its own load would (Database.checkKeys).
 *
 * Loading a relation with other kept columns than the resident ones does not read its file again. Where a resident
 * relation of the table holds every column it loads, it is made from that one on the device (project-resident.ts:
 * gathered, sorted, made distinct and key-checked as a load is), within the run's device memory budget; where none
 * does but other column sets of the table are resident, one relation of their columns and its own is loaded first
 * (loadWide) and it is made from that, so a table is read again only for a column no program read before (on a GPU
 * adapter; DatabaseOptions.project). Otherwise the host cache (facts/host-cache.ts), which holds every file read so
 * far with all columns parsed, projects the columns a run keeps.
 */
import { kernelConstants, kernelTables } from '@vixen/codegen-wgsl';
import { closedUnder, tablesKey } from './tables.js';
import { variablesRead, type KirProgram, type VarId } from '@vixen/kernel-ir';
import { VixenError, type DeclaredKey, type RelationDecl } from '@vixen/queryplan';
import { addApiFacts, addInlineFacts, columnTypes, EncodedFacts, factsColumns, FactsCache, loadFactsDirInto, loadKeptColumns, StringDictionary, stringWordOffsets, type FactRelation, type FactsFileLoader, type StoreDeviceLoader } from '@vixen/io';
import { loadStoreOnDevice, type StoreReadPlan } from './gpu/store-columns.js';
import { checkDatabaseOptions } from './api-options.js';
import { factsLoader } from './facts-parse.js';
import type { ParseMode } from './parse-mode.js';
import type { ResidentRelations } from './executor.js';
import { downloadRelation, releaseRelation, uploadRelationStaged, type DeviceRelation, type Gpu } from './gpu/index.js';
import { runLimits, type Program, type RunOptions, type RunResult } from './program.js';
import { leaves } from './gpu/chunks.js';
import { DeviceFault } from './gpu/device-fault.js';
import { internals } from './gpu/device.js';
import { dropIdleReads } from './gpu/mapped-reads.js';
import { dropBuildCounts } from './gpu/kernels/lookup-order.js';
import { heldColumns, heldTypes, loadedBytes, loadedColumns, loadedStringColumns, projectionFrom, projectResident, sameFacts, uploadCanonical } from './project-resident.js';
import { dictionaryOfFacts } from './tables.js';
import { checkDeclaredKeys } from './keys.js';
import { Replays } from './replay.js';

export interface ResidentRelation {
  name: string;
  /** The facts columns it holds (`pruned.loadColumns`), or undefined for all of them. */
  loadColumns?: readonly number[];
  relation: DeviceRelation;
}

interface Entry {
  /**
   * The declaration it was loaded by: its name, the facts columns it holds (`pruned.loadColumns`) and the columns its
   * words hold (project-resident.ts heldColumns).
   */
  decl: RelationDecl;
  relation: DeviceRelation;
  /** The dictionary its string words are ids of. */
  dictionary: StringDictionary;
  /** The distinct strings it holds: their ids in `dictionary`, ascending, where its loader noted them, else the strings. */
  ids?: Uint32Array;
  strings?: Iterable<string>;
  /** The run that used it last (for eviction). */
  lastRun: number;
  /** Loaded for projections of it (loadWide), not for a program's relation. */
  wide?: boolean;
}

export type DatabaseRunOptions = Omit<RunOptions, 'facts' | 'factsDir' | 'gpu' | 'backend'>;

export interface DatabaseRunResult extends RunResult {
  /** Reading the facts of relations that were not resident: parse, or projection from the host cache (host time, before the run). */
  hostLoadMilliseconds: number;
  /**
   * Relations that were not resident made on the device from a resident relation of their table holding their
   * columns, before the run (no facts read, nothing uploaded): each with the facts columns it loads and those of
   * the relation it came from (absent: all), and its rows and words per row.
   */
  projectedOnDevice: Array<{ name: string; loadColumns?: readonly number[]; from?: readonly number[]; rows: number; width: number }>;
  /** Making them, device time waited for included. */
  deviceProjectMilliseconds: number;
  /**
   * Relations loaded from the facts to project others from (Database.loadWide), before the run: the facts columns
   * each holds (absent: all), its rows and words per row, and its load's time (in hostLoadMilliseconds).
   */
  wideLoads: Array<{ name: string; loadColumns?: readonly number[]; rows: number; width: number; milliseconds: number }>;
  /**
   * Resident relations freed during the run and after it to keep the device within its budget and the resident ones
   * within maxResidentBytes (Database.evictions), and their bytes: later runs that read one load it again.
   */
  evictions: { relations: number; bytes: number };
}

/** Device bytes of a resident relation's buffers. */
const entryBytes = (e: Entry): number => leaves(e.relation).reduce((n, l) => n + l.buffer!.size, 0);

/** As `Database.resident` lists it. */
const residentOf = ({ decl, relation }: Entry): ResidentRelation => ({ name: decl.name, ...(decl.pruned ? { loadColumns: decl.pruned.loadColumns } : {}), relation });

/** Residency key: a relation is reusable with the same name, loaded and device columns (deviceColumns) and column types. */
function keyOf(r: RelationDecl): string {
  return `${r.name}/${r.pruned?.loadColumns.join(',') ?? '*'}/${r.deviceColumns?.join(',') ?? '*'}/${r.columns.map((c) => c.type).join(',')}`;
}

/** A declared key by its columns (indices into the loaded columns, which keyOf fixes), in any order. */
const keyText = (key: DeclaredKey): string => [...key.columns].sort((a, b) => a - b).join(',');

/** variablesRead of each program run so far: a program runs many times on a Database. */
const readByProgram = new WeakMap<KirProgram, Set<VarId>>();

/** Base relations a run needs: those its kernels or branches read, and those it returns. */
function neededBase(kir: KirProgram, outputs: readonly string[]): RelationDecl[] {
  let read = readByProgram.get(kir);
  if (!read) readByProgram.set(kir, (read = variablesRead(kir)));
  return kir.relations.filter((r) => r.kind === 'edb' && (read.has(kir.relationVars[r.name] ?? -1) || outputs.includes(r.name)));
}

export interface DatabaseOptions {
  /**
   * Most bytes resident relations may hold after a run: past it the least recently used ones that run did not
   * read are freed, those that can be made again from another resident one first (default: half the device's memory
   * budget, GpuOptions.maxDeviceMemory; Infinity: no limit). Each set of kept columns of a table is its own resident
   * relation. Whatever the limit, a buffer a run or load needs past the device's budget frees idle ones first.
   */
  maxResidentBytes?: number;
  /**
   * Keep every facts file read so far parsed on the host (all its columns), so a later program that keeps other
   * columns of a table projects them instead of reading its file again (default: on). Costs host memory of about
   * the files' encoded size, strings included.
   */
  hostCache?: boolean;
  /**
   * Where facts files are parsed (RunOptions.parse; default `auto`). Files parsed on the device skip the host cache:
   * their relations stay resident on the device, and another column set of the table parses the file again.
   */
  parse?: ParseMode;
  /**
   * Where a relation is made whose columns resident relations of its table hold, or can hold (loadWide): `device`,
   * from those (project-resident.ts), or `host`, from the facts (the host cache's projection, or a parse of the
   * file). `auto` (the default): the device on a GPU adapter; the host on a CPU adapter (llvmpipe), whose device
   * sorts cost more than the host's projection.
   */
  project?: ParseMode;
  /** How a store's column files are read: bytes per read and reads in flight (default STORE_READ_PLAN; benches vary it). */
  storeReads?: StoreReadPlan;
  /**
   * Facts given through the API (rows or columns, as `RunOptions.facts`) for some base relations: these are not
   * read from the facts directory; the first run that reads one loads it from here, and it stays resident.
   */
  facts?: Record<string, FactRelation>;
  /**
   * Opens a new device for a Database whose device is lost or failed (DeviceFault.failsDevice): the next run
   * uses it, its base relations loaded again. A device opened so is disposed by the Database (by the next one it
   * opens, or by clear()). Without it, every run on a failed device fails.
   */
  reopen?: () => Promise<Gpu>;
}

/**
 * A resident relation holding more than 1/SEEK_ALL of its dictionary's strings is remapped by a walk over that whole
 * dictionary (StringDictionary.seek), one holding fewer by lookups of its own strings.
 */
const SEEK_ALL = 8;

/**
 * A resident relation holding at most this many distinct strings gives its string columns to a relation loaded to
 * project from (Database.loadWide); one with more (TPC-H orders' comments) only its other columns, so that a
 * program that never reads them does not parse and sort its strings again.
 */
const WIDE_STRINGS = 2 ** 16;

/**
 * A run that starts with device buffers past HEADROOM_HIGH of the device's budget first frees the pool's free ones
 * down to HEADROOM_LOW and lets the device free their memory: a creation at the budget's edge frees buffers that Dawn
 * gives back only at a later device tick, while the new one needs the memory at once (the margin below the device's
 * memory is all it has).
 */
const HEADROOM_HIGH = 0.9;
const HEADROOM_LOW = 0.8;

export class Database {
  private readonly entries = new Map<string, Entry>();
  private runs = 0;
  private readonly cache: FactsCache | undefined;
  /** Files read without the host cache. */
  private uncachedReads = 0;
  /** Tables whose facts did not load as a relation to project from (loadWide): each column set loads its own. */
  private readonly noWide = new Set<string>();
  /**
   * String built-in tables on the device (ResidentRelations.table), for one dictionary: runs that reuse it
   * reuse them (uploading a table over Q22's 1.5M phone numbers took longer than its kernels on the H100).
   */
  private tables: { dict: StringDictionary; byKey: Map<string, DeviceRelation> } | undefined;
  /**
   * Per residency key (keyOf), the declared keys (keyText) its facts were checked against: a program reusing a
   * resident relation may declare keys the program that loaded it did not, and those are checked before it runs.
   * Kept past eviction: the facts do not change.
   */
  private readonly checkedKeys = new Map<string, Set<string>>();
  /**
   * Records of runs to replay (replay.ts): released whenever a resident relation or the string tables change, which
   * their runs read (a record also checks the relations it was made on before it replays).
   */
  private readonly replays = new Replays();
  /** Runs in progress, by number: relations they use (lastRun at least the oldest's) are never evicted. */
  private readonly inProgress = new Set<number>();
  /** Resident relations freed so far to stay within the device memory budget or maxResidentBytes, and their bytes. */
  readonly evictions = { relations: 0, bytes: 0 };

  /** The device the runs use: the one given, or one `options.reopen` opened after it failed. */
  private device: Gpu;
  /** A device this Database opened (options.reopen), to dispose. */
  private opened: Gpu | undefined;

  constructor(
    gpu: Gpu,
    /**
     * Where `<relation>.csv|.tsv|.facts|.tbl|.parquet|.arrow|.feather` files (or a columnar store) are read from, as
     * for `RunOptions.factsDir`.
     */
    readonly factsDir: string,
    readonly options: DatabaseOptions = {},
  ) {
    checkDatabaseOptions(options);
    this.device = gpu;
    this.cache = options.hostCache === false ? undefined : new FactsCache();
    this.listen(gpu);
  }

  /** Becomes a reliever of `gpu`'s pool (BufferPool.relievers): its idle resident relations give way under pressure. */
  private listen(gpu: Gpu): void {
    // Held weakly: a Database nobody holds frees nothing and is not kept alive by its device; nor one that reopened.
    const pool = internals(gpu).pool;
    const self = new WeakRef(this);
    const relieve = (bytes: number): number => {
      const db = self.deref();
      if (db?.gpu === gpu) return db.relieve(bytes);
      pool.relievers.delete(relieve);
      return 0;
    };
    pool.relievers.add(relieve);
  }

  /** The device the runs use (see DatabaseOptions.reopen). */
  get gpu(): Gpu {
    return this.device;
  }

  /**
   * A new device in place of a failed one (DatabaseOptions.reopen): what the Database kept on the old one is gone
   * with it (relations, string tables, replay records), so runs load their relations again.
   */
  private async reopen(reopen: () => Promise<Gpu>): Promise<void> {
    this.entries.clear();
    this.tables = undefined;
    this.replays.clear('the device was lost and opened again');
    this.opened?.dispose();
    this.device = this.opened = await reopen();
    this.listen(this.device);
  }

  /** Facts files read from the facts directory so far. */
  get fileReads(): number {
    return this.cache?.reads ?? this.uncachedReads;
  }

  /** The relations now resident, in load order. */
  get resident(): ResidentRelation[] {
    return [...this.entries.values()].map(residentOf);
  }

  /**
   * Frees the resident relations `which` picks (a later run that reads one loads it again): for a caller that knows
   * which relations its later runs need, where maxResidentBytes frees the least recently used ones (the TPC-H bench
   * keeps each table's relation of every column its queries read, and frees those made from them per query).
   */
  release(which: (r: ResidentRelation) => boolean): void {
    for (const [key, e] of [...this.entries]) if (which(residentOf(e))) this.drop(key);
  }

  /**
   * Runs `program` on this database's facts: resident relations are used as they are, the other base relations
   * it reads are loaded from the facts directory and stay resident. Relations with inline facts in the program
   * are loaded for the run only (their contents depend on the program).
   */
  async run(program: Program, options: DatabaseRunOptions = {}): Promise<DatabaseRunResult> {
    const startedAt = performance.now();
    const limits = runLimits(options, startedAt);
    const outputs = program.checkOutputs(options.outputs);
    if (program.souffleIo) {
      throw new VixenError({ severity: 'error', message: 'a Database runs LogiQL programs; a Soufflé program names its own input files' });
    }
    if (this.options.reopen && internals(this.gpu).failed) await this.reopen(this.options.reopen);
    const run = ++this.runs;
    this.inProgress.add(run);
    const evictedBefore = { ...this.evictions };
    // The run's peak of device buffers counts its loads and projections too (the executor's starts at its evaluation).
    const pool = internals(this.gpu).pool;
    pool.peakAllocatedBytes = pool.allocatedBytes;
    pool.peakMappedBytes = pool.mappedBytes;
    try {
      return await this.runNumbered(program, options, run, startedAt, limits, outputs, evictedBefore);
    } finally {
      this.inProgress.delete(run);
      this.evict(run);
    }
  }

  private async runNumbered(
    program: Program,
    options: DatabaseRunOptions,
    run: number,
    startedAt: number,
    limits: ReturnType<typeof runLimits>,
    outputs: readonly string[],
    evictedBefore: { relations: number; bytes: number },
  ): Promise<DatabaseRunResult> {
    const kir = program.kir;
    const g = internals(this.gpu);
    if (g.pool.allocatedBytes > HEADROOM_HIGH * g.pool.budget) {
      g.pool.trimTo(HEADROOM_LOW * g.pool.budget);
      await g.reclaim();
    }
    const used: Entry[] = [];
    const missing: RelationDecl[] = [];
    const perRun: RelationDecl[] = [];
    for (const r of neededBase(kir, outputs)) {
      if (kir.facts[r.name]?.length) perRun.push(r);
      else {
        const e = this.entries.get(keyOf(r));
        const unchecked = this.uncheckedKeys(r);
        // A relation narrowed to fewer columns than it loaded (deviceColumns) may lack a key's: it loads again, checked.
        if (e && unchecked.length > 0 && e.decl.deviceColumns) {
          this.drop(keyOf(r));
          missing.push(r);
        } else if (e) {
          if (unchecked.length > 0) await this.checkKeys(kir, { ...r, keys: unchecked }, e);
          e.lastRun = run;
          used.push(e);
        } else missing.push(r);
      }
    }
    const host: FactsFileLoader = this.cache?.load ?? ((decl, path, into) => (this.uncachedReads++, loadKeptColumns(decl, path, into)));
    const loadFile = factsLoader(this.gpu, this.options.parse ?? 'auto', host);
    // A store's columns go straight to the device (gpu/store-columns.ts).
    const storeOnDevice: StoreDeviceLoader = (read, strings, step) => loadStoreOnDevice(this.gpu, read, strings, step, this.options.storeReads);
    const projectStart = performance.now();
    const wideLoads: DatabaseRunResult['wideLoads'] = [];
    const limit = limits.maxDeviceMemory ?? internals(this.gpu).memoryBudget;
    const mode = this.options.project ?? 'auto';
    const onDevice = mode === 'device' || (mode === 'auto' && !this.gpu.software);
    const projected = !onDevice ? [] : await this.projectFromResident(kir, missing, run, limit, async (decl) => {
      const t0 = performance.now();
      const wide = await this.loadWide(decl, run, limit, loadFile, storeOnDevice, options.onLoadProgress);
      if (!wide) return false;
      const { relation, ...named } = residentOf(wide);
      wideLoads.push({ ...named, rows: relation.count, width: relation.width, milliseconds: performance.now() - t0 });
      return true;
    });
    // Wide loads read facts: host load time, not projection time.
    const wideMilliseconds = wideLoads.reduce((n, w) => n + w.milliseconds, 0);
    const deviceProjectMilliseconds = performance.now() - projectStart - wideMilliseconds;
    for (const p of projected) {
      missing.splice(missing.indexOf(p.decl), 1);
      used.push(p.entry);
    }
    const facts = new EncodedFacts();
    const hostStart = performance.now();
    try {
      // A run on resident relations alone lists no directory: two file system round trips, each a turn of the event loop.
      const given = this.options.facts ?? {};
      const fromApi = missing.filter((r) => Object.hasOwn(given, r.name));
      if (fromApi.length > 0) addApiFacts(facts, new Map(fromApi.map((r) => [r.name, r])), Object.fromEntries(fromApi.map((r) => [r.name, given[r.name]!])));
      const fromDir = missing.filter((r) => !Object.hasOwn(given, r.name));
      if (fromDir.length + perRun.length > 0) {
        await loadFactsDirInto(this.factsDir, kir.relations, fromDir.map((r) => r.name), perRun.map((r) => r.name), facts, loadFile, options.onLoadProgress, false, storeOnDevice);
      }
    } catch (e) {
      facts.releaseDevice();
      throw e;
    }
    addInlineFacts(facts, kir.relations, kir.facts);
    // The strings of each relation that will stay resident, read before the run rewrites the temporary ids.
    const fresh = new Map(
      missing.map((r) => {
        const rel = facts.relations.get(r.name);
        const ids = rel?.usedIds();
        return [r.name, ids ? { decl: r, ids } : { decl: r, strings: rel?.usedStrings(facts.strings) ?? [] }];
      }),
    );
    const hostLoadMilliseconds = performance.now() - hostStart + wideMilliseconds;

    // Strings loaded for this run only (inline facts, e.g. Q22's country codes) may be in the kept dictionary too.
    const reusable = missing.length === 0 ? this.reusableDictionary(kir, used, facts.strings.texts()) : undefined;
    let runDictionary: StringDictionary | undefined;
    /** Resident relations the run moved to its dictionary (remap): their words read back and rewritten by it, so only as good as it. */
    const rewritten: Entry[] = [];
    const resident: ResidentRelations = {
      // Read only when the run builds a dictionary: copying them all (a dimension's names) cost a resident SSB
      // query more host time than its kernels.
      strings: { *[Symbol.iterator]() { for (const e of used) if (!e.ids) yield* e.strings ?? []; } },
      // A relation's strings in the order of its ids are sorted: merged into the run's dictionary, not sorted again.
      // Their bytes where the dictionary has them (device-parsed files, stores): compared, not decoded.
      lists: used.filter((e) => e.ids).map(({ ids, dictionary }) => {
        const ascii = dictionary.asciiOf(ids!);
        return { size: ids!.length, text: (i: number) => dictionary.text(ids![i]!), ...(ascii ? { ascii } : {}) };
      }),
      ...(reusable ? { dictionary: reusable } : {}),
      adopt: async (dict, listIds) => {
        runDictionary = dict;
        let k = 0;
        for (const e of used) {
          if (e.dictionary !== dict) rewritten.push(e);
          await this.remap(e, dict, e.ids && listIds ? listIds[k++] : undefined);
        }
        return new Map(used.map((e) => [e.decl.name, e.relation]));
      },
      keeps: (name) => fresh.has(name),
      keep: (name, relation) => {
        const f = fresh.get(name);
        if (!f || !runDictionary) return false;
        // Its load checked the keys it declares.
        this.noteKeys(f.decl);
        this.entries.set(keyOf(f.decl), {
          decl: f.decl,
          // One that keeps fewer columns than it loaded is no longer canonical by its own columns.
          relation: { ...relation, canonical: f.decl.deviceColumns === undefined },
          dictionary: runDictionary,
          ...(f.ids ? { ids: facts.dictionaryIds(f.ids) } : { strings: f.strings }),
          lastRun: run,
        });
        return true;
      },
      table: (specs, dict, make) => {
        if (this.tables?.dict !== dict) {
          this.releaseTables();
          this.tables = { dict, byKey: new Map() };
        }
        const key = tablesKey(specs);
        let t = this.tables.byKey.get(key);
        if (!t) this.tables.byKey.set(key, (t = make()));
        return t;
      },
      replays: this.replays,
    };
    const projectedOnDevice = projected.map(({ decl, entry, from }) => ({
      name: decl.name,
      ...(decl.pruned ? { loadColumns: decl.pruned.loadColumns } : {}),
      ...(from.pruned ? { from: from.pruned.loadColumns } : {}),
      rows: entry.relation.count,
      width: entry.relation.width,
    }));
    // Resident relations the run does not read hold device memory it cannot use: the default budget (the device's) is
    // what they leave (a run counts those it reads itself). A budget given is the run's own.
    const idle = [...this.entries.values()].filter((e) => !used.includes(e)).reduce((n, e) => n + entryBytes(e), 0);
    const budget = limits.maxDeviceMemory === undefined && limit !== undefined && idle > 0 ? { ...limits, maxDeviceMemory: Math.max(0, limit - idle) } : limits;
    try {
      const loadPeak = internals(this.gpu).pool.peakAllocatedBytes;
      const result = await program.execute(this.gpu, facts, outputs, budget, resident, options.countsOnly);
      result.stats.peakAllocatedBytes = Math.max(loadPeak, result.stats.peakAllocatedBytes);
      const evictions = { relations: this.evictions.relations - evictedBefore.relations, bytes: this.evictions.bytes - evictedBefore.bytes };
      return Object.assign(result, { hostLoadMilliseconds, projectedOnDevice, deviceProjectMilliseconds, wideLoads, evictions });
    } catch (e) {
      // A relation loaded by a run the device failed may sit in a buffer it refused: it is not kept, nor is a
      // resident one whose string words the run rewrote (read back and uploaded by a run whose device work failed),
      // nor the string tables it made.
      if (e instanceof DeviceFault) {
        for (const d of [...fresh.values(), ...projected, ...rewritten].map((f) => f.decl)) this.drop(keyOf(d));
        this.releaseTables();
        this.replays.clear('a run faulted the device');
      }
      throw e;
    }
  }

  /**
   * Makes each relation of `missing` that a resident relation of its table can give (one holding every column it
   * loads: projectionFrom) resident, on the device (project-resident.ts), and returns those made, with the
   * declaration of the relation each came from. One whose loaded rows, sorted, would not fit `limit` (the run's
   * device memory budget) three times over is left to the facts, as the run's load keeps such rows in host memory.
   */
  private async projectFromResident(
    kir: KirProgram,
    missing: readonly RelationDecl[],
    run: number,
    limit: number | undefined,
    /** Loads a relation that holds the columns of `decl` and of other resident ones of its table (loadWide): whether it did. */
    loadWide: (decl: RelationDecl) => Promise<boolean>,
  ): Promise<Array<{ decl: RelationDecl; entry: Entry; from: RelationDecl }>> {
    const made: Array<{ decl: RelationDecl; entry: Entry; from: RelationDecl }> = [];
    for (const decl of missing) {
      if (kir.facts[decl.name]?.length) continue;
      // The narrowest relation holding the columns: the gather reads all of its words.
      const find = (): { e: Entry; at: number[] } | undefined => {
        let best: { e: Entry; at: number[] } | undefined;
        for (const e of this.entries.values()) {
          const at = projectionFrom(decl, e.decl);
          if (at && leaves(e.relation).length > 0 && (!best || e.relation.width < best.e.relation.width)) best = { e, at };
        }
        return best;
      };
      const best = find() ?? ((await loadWide(decl)) ? find() : undefined);
      if (!best) continue;
      const source = best.e;
      const bytes = loadedBytes(decl, source.relation.count);
      if (limit !== undefined && 3 * bytes > limit) continue;
      source.lastRun = run;
      // Every buffer the device holds counts against the budget (the pool's free ones, resident relations): room is
      // made before the projection's buffers, while Dawn can still be given the time to free what goes.
      if (limit !== undefined) await this.makeRoom(3 * bytes, limit);
      // Its strings: the source's when it loads the same string columns, none when it loads none, else found on the device.
      const strings = loadedStringColumns(decl);
      const same = strings.join() === loadedStringColumns(source.decl).join();
      const p = await projectResident(this.gpu, kir, decl, source.relation, source.decl, best.at, source.dictionary, !same && strings.length > 0);
      const entry: Entry = {
        decl,
        relation: { ...p.relation, canonical: decl.deviceColumns === undefined },
        dictionary: source.dictionary,
        ...(same ? (source.ids ? { ids: source.ids } : { strings: source.strings ?? [] }) : { ids: p.ids ?? new Uint32Array(0) }),
        lastRun: run,
      };
      this.entries.set(keyOf(decl), entry);
      this.noteKeys(decl);
      made.push({ decl, entry, from: source.decl });
    }
    return made;
  }

  /**
   * Where no resident relation holds the columns `decl` loads but others of its table are resident (so programs read
   * several column sets of it), loads from the facts, before the run, one relation of the columns of them all (of a
   * resident relation with many strings, its other columns only), canonical and with no keys of its own, for this
   * and later column sets to be projected from on the device: a table is then read again only for a column no
   * program read before. It replaces the relations it loaded so that it holds. Undefined where it loads nothing:
   * no other column set resident, one past the device memory budget (`limit`) three times over, or facts that do not
   * load (a bad value in a column `decl` does not read: its own load then says what it says).
   */
  private async loadWide(
    decl: RelationDecl,
    run: number,
    limit: number | undefined,
    loadFile: FactsFileLoader,
    storeOnDevice: StoreDeviceLoader,
    onLoadProgress: DatabaseRunOptions['onLoadProgress'],
  ): Promise<Entry | undefined> {
    const same = [...this.entries.values()].filter((e) => sameFacts(e.decl, decl));
    if (same.length === 0 || this.noWide.has(decl.name)) return undefined;
    const source = factsColumns(decl);
    const columns = new Set(loadedColumns(decl));
    for (const e of same) {
      const few = (e.ids?.length ?? Infinity) <= WIDE_STRINGS;
      for (const c of heldColumns(e.decl)) if (few || source[c]!.type !== 'string') columns.add(c);
    }
    const load = [...columns].sort((a, b) => a - b);
    const wide: RelationDecl = {
      name: decl.name,
      kind: 'edb',
      output: false,
      columns: load.map((c) => source[c]!),
      ...(load.length < source.length ? { pruned: { sourceColumns: source, loadColumns: load } } : {}),
    };
    const types = columnTypes(wide.columns);
    const rows = Math.max(...same.map((e) => e.relation.count));
    // Where it would be the relation itself, the run loads that, its keys checked.
    if (this.entries.has(keyOf(wide)) || keyOf(wide) === keyOf(decl) || (limit !== undefined && 3 * loadedBytes(wide, rows) > limit)) return undefined;
    if (limit !== undefined) await this.makeRoom(3 * loadedBytes(wide, rows), limit);
    const facts = new EncodedFacts();
    try {
      const given = this.options.facts ?? {};
      if (Object.hasOwn(given, decl.name)) addApiFacts(facts, new Map([[decl.name, wide]]), { [decl.name]: given[decl.name]! });
      else await loadFactsDirInto(this.factsDir, [wide], [decl.name], [], facts, loadFile, onLoadProgress, false, storeOnDevice);
    } catch (e) {
      facts.releaseDevice();
      if (!(e instanceof VixenError)) throw e;
      this.noWide.add(decl.name);
      return undefined;
    }
    const rel = facts.relation(decl.name, types);
    // Its strings, read before the dictionary rewrites the temporary ids; the dictionary holds just those.
    const usedIds = rel.usedIds();
    const strings = usedIds ? undefined : [...rel.usedStrings(facts.strings)];
    const { dict } = await dictionaryOfFacts(facts, [...facts.strings.strings], [], facts.strings.lists.map((l) => l.list));
    let relation: DeviceRelation;
    try {
      relation = await uploadCanonical(this.gpu, wide, rel);
    } finally {
      facts.releaseDevice();
    }
    // The relations it holds the columns of that were loaded so: they would only take memory.
    for (const [key, e] of this.entries) if (e.wide && e.lastRun < run && projectionFrom(e.decl, wide)) this.drop(key);
    const entry: Entry = {
      decl: wide,
      relation: { ...relation, canonical: true },
      dictionary: dict,
      ...(usedIds ? { ids: facts.dictionaryIds(usedIds) } : { strings: strings! }),
      lastRun: run,
      wide: true,
    };
    this.entries.set(keyOf(wide), entry);
    return entry;
  }

  /** Keys `decl` declares that its facts were not checked against (a key of every column always holds). */
  private uncheckedKeys(decl: RelationDecl): DeclaredKey[] {
    const checked = this.checkedKeys.get(keyOf(decl));
    return (decl.keys ?? []).filter((k) => k.columns.length < decl.columns.length && !checked?.has(keyText(k)));
  }

  /** Notes that the facts of `decl` hold its declared keys. */
  private noteKeys(decl: RelationDecl): void {
    const key = keyOf(decl);
    let checked = this.checkedKeys.get(key);
    if (!checked) this.checkedKeys.set(key, (checked = new Set()));
    for (const k of decl.keys ?? []) checked.add(keyText(k));
  }

  /**
   * Checks the keys of `decl` (a base relation of `kir`) on resident relation `e`, which holds every column it loads,
   * as a load of its facts does (KeyViolationError), and notes them.
   */
  private async checkKeys(kir: KirProgram, decl: RelationDecl, e: Entry): Promise<void> {
    const g = internals(this.gpu);
    g.activity = `checking the keys of resident ${decl.name} (${e.relation.count} rows)`;
    await g.runScoped(`checking the keys of ${decl.name}`, () => checkDeclaredKeys(this.gpu, kir, decl, kir.relationVars[decl.name]!, e.relation, e.dictionary));
    this.noteKeys(decl);
  }

  /**
   * The dictionary every relation `used` refers to, when it also holds the program's string constants and the
   * strings the run `loads`, and was closed over the program's substring tables (their results need ids): the run
   * can keep it, and no resident relation needs a remap.
   */
  private reusableDictionary(kir: KirProgram, used: readonly Entry[], loads: readonly string[]): StringDictionary | undefined {
    const dict = used[0]?.dictionary;
    if (!dict || used.some((e) => e.dictionary !== dict) || loads.some((s) => !dict.has(s))) return undefined;
    // A table (LIKE, strlen...) is built over the whole dictionary: where it holds far more strings than the run's
    // relations (one that relations of many tables share, as the TPC-H bench's, 23M strings at SF 10, for a LIKE over
    // 2M part names), a dictionary of the run's own strings costs less than the table.
    const own = used.reduce((n, e) => n + (e.ids?.length ?? Infinity), 0);
    if (dict.size > SEEK_ALL * own && kir.kernels.some((k) => kernelTables(k).length > 0)) return undefined;
    for (const k of kir.kernels) {
      if (!closedUnder(dict, kernelTables(k))) return undefined;
      if (kernelConstants(k).some((c) => c.type === 'string' && !dict.has(c.value as string))) return undefined;
    }
    return dict;
  }

  /**
   * Frees idle relations (victims) while they hold more than maxResidentBytes (default: half the device's memory
   * budget) once run `run` is done.
   */
  private evict(run: number): void {
    const budget = internals(this.gpu).memoryBudget;
    const limit = this.options.maxResidentBytes ?? (budget === undefined ? undefined : budget / 2);
    if (limit === undefined) return;
    let total = [...this.entries.values()].reduce((n, e) => n + entryBytes(e), 0);
    // Most runs end within the limit: no victims to order.
    if (total <= limit) return;
    for (const [key, e] of this.victims(Math.min(run, ...this.inProgress))) {
      if (total <= limit) break;
      total -= entryBytes(e);
      this.evictEntry(key, e);
    }
  }

  /**
   * Resident relations no run in progress (nor one numbered `before` or later) uses, in the order to free them: those
   * another resident relation can give again on the device (projectionFrom) first, then the least recently used.
   */
  private victims(before = Math.min(Infinity, ...this.inProgress)): Array<[string, Entry]> {
    const all = [...this.entries.values()];
    const idle = [...this.entries].filter(([, e]) => e.lastRun < before);
    const remade = new Map(idle.map(([, e]) => [e, all.some((o) => o !== e && projectionFrom(e.decl, o.decl)) ? 0 : 1]));
    return idle.sort(([, a], [, b]) => remade.get(a)! - remade.get(b)! || a.lastRun - b.lastRun);
  }

  private evictEntry(key: string, e: Entry): void {
    this.evictions.relations++;
    this.evictions.bytes += entryBytes(e);
    this.drop(key);
  }

  /**
   * The device's reliever (BufferPool.relievers): a buffer about to be created for one of this Database's runs does
   * not fit the budget beside the others; frees its replay records, then idle resident relations, until `bytes` are
   * released. None while one of its records is replayed (a replay frees nothing: its record holds the buffers it
   * encodes).
   */
  private relieve(bytes: number): number {
    // Outside its runs, a buffer is created for a caller that may be reading any resident relation (downloadRelation).
    if (this.replays.replaying > 0 || this.inProgress.size === 0) return 0;
    // Records go first: one run makes a record again, where a relation is loaded or projected again.
    let freed = this.replays.bytes;
    if (freed > 0) this.replays.clear('a buffer needed device memory past the budget');
    for (const [key, e] of this.victims()) {
      if (freed >= bytes) break;
      freed += entryBytes(e);
      this.evictEntry(key, e);
    }
    return freed;
  }

  /**
   * Room for `bytes` more buffers within `budget` before work that needs them: the pool's free buffers and idle
   * resident relations freed as needed, then the device given the time to free their memory (GpuImpl.reclaim).
   */
  private async makeRoom(bytes: number, budget: number): Promise<void> {
    const g = internals(this.gpu);
    if (g.pool.liveBytes + bytes <= budget) return;
    g.pool.trim();
    const over = g.pool.liveBytes + bytes - budget;
    if (over > 0) this.relieve(over);
    g.pool.trim();
    await g.reclaim();
  }

  private drop(key: string): void {
    const e = this.entries.get(key);
    if (!e) return;
    this.replays.clear(`resident ${e.decl.name} was freed`);
    releaseRelation(this.gpu, e.relation);
    this.entries.delete(key);
  }

  /**
   * Rewrites `e`'s string words from its dictionary's ids to `dict`'s, when any differs. `ids`, where the dictionary's
   * merge gave them: the new ids of `e.ids`.
   */
  private async remap(e: Entry, dict: StringDictionary, ids?: Uint32Array): Promise<void> {
    if (e.dictionary === dict) return;
    const map = new Uint32Array(e.dictionary.size);
    let changed = false;
    if (ids) {
      e.ids!.forEach((from, i) => {
        map[from] = ids[i]!;
        changed ||= ids[i] !== from;
      });
    } else {
      const own = e.ids ? undefined : [...(e.strings ?? [])];
      if ((e.ids?.length ?? own!.length) * SEEK_ALL > map.length) {
        // Both dictionaries are sorted: the old one's strings, in order, are found in the new one by galloping, not
        // through maps of both (millions of strings each). Strings the new one lacks (other relations') are skipped.
        for (let from = 0, at = 0; from < map.length; from++) {
          const id = dict.seek(e.dictionary.text(from), at);
          if (id < 0) continue;
          map[from] = at = id;
          changed ||= id !== from;
        }
      } else {
        for (const s of own ?? Array.from(e.ids!, (id) => e.dictionary.text(id))) {
          const from = e.dictionary.id(s);
          map[from] = dict.id(s);
          changed ||= map[from] !== from;
        }
      }
    }
    if (e.ids) e.ids = ids ?? e.ids.map((id) => map[id]!);
    const stringWords = stringWordOffsets(heldTypes(e.decl));
    if (changed && stringWords.length > 0 && e.relation.count > 0) {
      internals(this.gpu).activity = `rewriting the string ids of resident ${e.decl.name} (${e.relation.count} rows)`;
      const words = await downloadRelation(this.gpu, e.relation);
      const width = e.relation.width;
      for (const off of stringWords) for (let at = off; at < words.length; at += width) words[at] = map[words[at]!]!;
      const next = await uploadRelationStaged(this.gpu, words, width, e.relation.count);
      this.replays.clear(`resident ${e.decl.name}'s string ids were rewritten`);
      releaseRelation(this.gpu, e.relation);
      e.relation = { ...next, canonical: e.relation.canonical ?? false };
    }
    e.dictionary = dict;
  }

  /**
   * Returns every resident relation's buffer to the device's pool, drops the host cache, the device's kept read
   * buffers and the pipelines' last build counts, and disposes a device it opened (DatabaseOptions.reopen); the
   * database is empty afterwards.
   */
  clear(): void {
    dropIdleReads(internals(this.gpu));
    dropBuildCounts(internals(this.gpu));
    this.cache?.clear();
    this.noWide.clear();
    this.checkedKeys.clear();
    for (const e of this.entries.values()) releaseRelation(this.gpu, e.relation);
    this.entries.clear();
    this.releaseTables();
    // A device it opened goes too (a later run opens another: the given one had failed).
    this.opened?.dispose();
    this.opened = undefined;
  }

  private releaseTables(): void {
    this.replays.clear('the string tables were released (another dictionary)');
    for (const t of this.tables?.byKey.values() ?? []) releaseRelation(this.gpu, t);
    this.tables = undefined;
  }
}
