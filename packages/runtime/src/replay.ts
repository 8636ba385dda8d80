/**
 * Runs of a program on a Database's resident relations that replay the device work of its last run (gpu/replay.ts
 * holds the device side) instead of planning each kernel again: on a GPU, small queries are bound by that host work.
 *
 * A run is traced when it may start again (a Database run loading no relation to keep) and no other run is in
 * progress. It is recorded when its one host sync was the final readback (every size it planned by was known on the
 * host, or stayed on the device and went into uniforms by copies the trace holds), it spilled and partitioned
 * nothing, and its outputs are single buffers. A later run replays the record when it is of the same program with the
 * same options, on the same resident relations (the same objects: a Database replaces a relation whose words change,
 * and drops its records when a relation or its string tables change), with the same string dictionary and the same
 * run-only facts (inline facts: their words are compared), once a run planned as the one before it. The replay
 * encodes the recorded commands, submitted where the recorded run's submissions began (the last with the readback's
 * copies), then reads the outputs back and decodes them as a run does. The guesses the traced run made (a table sized
 * by the run before it) are read with the outputs and checked: where one failed, the replay's answer is dropped with
 * the record, and the program runs as usual. A run that needs device memory releases every record (executor.ts
 * makeRoom), as does a device fault.
 */
import type { KirProgram, VarId } from '@vixen/kernel-ir';
import { concatWords, type EncodedFacts, type StringDictionary } from '@vixen/io';
import { internals, workMark, workSince, type Gpu, type GpuImpl } from './gpu/device.js';
import { ReplayRecord, Trace } from './gpu/replay.js';
import { syncCounts, type DeviceRelation, type DeviceWord, type Guess } from './gpu/relations.js';
import type { ExecuteOptions, ExecuteResult, ExecuteStats } from './executor.js';
import type { ResultTable } from './result-table.js';

/**
 * Records a Database keeps: programs run in turn keep theirs; past this many, or past RECORDS_SHARE of the device
 * memory budget together, the least recently run ones go.
 */
const MAX_RECORDS = 8;

/**
 * The share of a run's device memory budget a Database's records may hold: the budget bounds the run's relations and
 * the pool's free buffers, not the resident relations the run does not read, which share the device with them.
 */
const RECORDS_SHARE = 1 / 8;

/** Run-only facts as a run loads them (words in the run's dictionary), for the replay's comparison. */
type FactsPrint = ReadonlyArray<{ name: string; width: number; count: number; words: Uint32Array }>;

interface Recorded {
  record: ReplayRecord;
  key: string;
  dict: StringDictionary;
  facts: FactsPrint;
  resident: ReadonlyMap<string, DeviceRelation>;
  /** The outputs as the readback found them, counts pending on the device. */
  outputs: ReadonlyMap<VarId, DeviceRelation>;
  guesses: ReadonlyArray<Pick<Guess, 'buffer' | 'words' | 'holds'>>;
  /**
   * Per relation of ExecuteStats.relationRows (in its order), the row counts of its parts at the cut: a pending one's
   * word, read again by the replay's sync, or a count the host knew. Undefined for one in host memory.
   */
  rows: ReadonlyArray<ReadonlyArray<{ count: number; pending?: DeviceWord }> | undefined>;
  /** The recorded run's device memory budget, if it had one. */
  limit: number | undefined;
  stats: ExecuteStats;
}

/** The options a recorded run's plan depends on. */
function optionsKey(o: ExecuteOptions): string {
  return JSON.stringify([o.outputs, o.maxDeviceMemory, o.maxTuples, o.maxIterations, o.maxBlockSteps, o.loopBatches, o.smallLoops]);
}

/** The facts a run loads, or undefined where some are rows on the device (parsed there: not compared). */
function factsPrint(initial: EncodedFacts): FactsPrint | undefined {
  const out: Array<{ name: string; width: number; count: number; words: Uint32Array }> = [];
  for (const [name, rel] of initial.relations) {
    if (rel.empty) continue;
    if (rel.device.length > 0) return undefined;
    out.push({ name, width: rel.width, count: rel.count, words: concatWords(rel.pieces()) });
  }
  return out;
}

function sameFacts(a: FactsPrint, b: FactsPrint | undefined): boolean {
  return (
    b !== undefined &&
    a.length === b.length &&
    a.every((r, i) => {
      const s = b[i]!;
      return r.name === s.name && r.width === s.width && r.count === s.count && r.words.length === s.words.length && r.words.every((w, j) => w === s.words[j]);
    })
  );
}

/**
 * Dictionaries a run's words can be compared under: the same one (a Database's runs keep theirs), or one a run built
 * again from the same strings (programs on run-only facts), compared while small.
 */
const sameDictionary = (a: StringDictionary, b: StringDictionary): boolean =>
  a === b || (a.size === b.size && a.size <= MAX_COMPARED_STRINGS && a.strings.every((s, i) => s === b.text(i)));

/** Strings of the largest dictionary compared by content (sameDictionary). */
const MAX_COMPARED_STRINGS = 2 ** 12;

const sameRelations = (a: ReadonlyMap<string, DeviceRelation>, b: ReadonlyMap<string, DeviceRelation>): boolean =>
  a.size === b.size && [...a].every(([name, rel]) => b.get(name) === rel);

/** An output's relation at the cut, its count pending on the device as then (the readback settles a copy). */
function template(rel: DeviceRelation): DeviceRelation {
  const { buffer, count, width, canonical, pending } = rel;
  return { buffer, count, width, ...(canonical !== undefined ? { canonical } : {}), ...(pending ? { pending: { buffer: pending.buffer, offset: pending.offset } } : {}) };
}

/** A relation like `t` whose pending count (if any) the next sync reads. */
function fresh(g: GpuImpl, t: DeviceRelation): DeviceRelation {
  if (!t.pending) return { ...t };
  const pending: DeviceWord = { buffer: t.pending.buffer, offset: t.pending.offset };
  g.pending.add(pending);
  return { ...t, pending };
}

/** The replay records of one Database (ResidentRelations.replays), by program. */
export class Replays {
  private readonly records = new Map<KirProgram, Recorded>();
  /** Replays in progress: their records must stay (a Database frees no resident relation meanwhile). */
  replaying = 0;
  /**
   * Per program, the plan of its last run that could have been recorded (Trace.plan): a run is recorded only when it
   * planned as that one did. A record keeps its run's sizes for good, and a program's first runs plan differently as
   * they learn from each other's totals (a first run sizes by bounds what it has no totals for, a group per row; on
   * llvmpipe at SF 0.1 TPC-H Q12 planned 36, 40, then 36 dispatches, and Q18 18, 19, 105, then 17).
   */
  readonly lastPlans = new WeakMap<KirProgram, string>();
  /** Per program without a record (or whose record did not replay), why: ExecuteStats.replayMissed. */
  private readonly why = new WeakMap<KirProgram, string>();

  /** Why `program`'s run did not replay, asked once replay() declined it. */
  missed(program: KirProgram): string {
    return this.why.get(program) ?? 'no record yet';
  }

  /** Notes why `program` has no record now. */
  note(program: KirProgram, why: string): void {
    this.why.set(program, why);
  }

  /**
   * A trace of a run of `program` about to start (executeKir), or undefined where its facts cannot be compared (rows
   * parsed on the device).
   */
  recording(program: KirProgram, dict: StringDictionary, initial: EncodedFacts, options: ExecuteOptions): Recording | undefined {
    const facts = factsPrint(initial);
    return facts && new Recording(this, program, optionsKey(options), dict, facts);
  }

  /**
   * The outputs of `program` by a replay of its record, or undefined where it has none that holds for this run (the
   * run then goes as usual). `read` reads the outputs back as a run does (executor.ts readOutputs).
   */
  async replay(
    gpu: Gpu,
    program: KirProgram,
    dict: StringDictionary,
    initial: EncodedFacts,
    options: ExecuteOptions,
    read: (valueOf: (id: VarId) => DeviceRelation, submitted: () => void) => Promise<Map<string, ResultTable>>,
  ): Promise<ExecuteResult | undefined> {
    const r = this.records.get(program);
    const g = internals(gpu);
    // Another run in flight shares the device's counters and command batch: this one plans its kernels.
    if (!r) return undefined;
    if (g.runsInProgress > 0 || g.batch.trace) {
      this.note(program, 'another run was in progress');
      return undefined;
    }
    const changed = !r.record.live
      ? 'its record was released for device memory'
      : !sameDictionary(r.dict, dict)
        ? 'the string dictionary changed'
        : r.key !== optionsKey(options)
          ? 'its options changed'
          : !sameFacts(r.facts, factsPrint(initial))
            ? 'its run-only facts changed'
            : undefined;
    if (changed) {
      this.drop(program, changed);
      return undefined;
    }
    const adopted = (await options.resident?.adopt(dict)) ?? new Map<string, DeviceRelation>();
    if (!sameRelations(adopted, r.resident)) {
      this.drop(program, 'its resident relations changed');
      return undefined;
    }
    this.records.delete(program);
    this.records.set(program, r);
    const started = performance.now();
    const { hostSyncs, waitMilliseconds, readbackBytes } = g;
    const { submitted, submitMilliseconds, dispatched } = g.batch;
    const created = g.pool.created;
    const work = workMark(g);
    let readStart = 0;
    let relationRows = r.stats.relationRows;
    this.replaying++;
    const relations = await g.runScoped('replaying the program', async (endScopes) => {
      g.runsInProgress += 1;
      g.batch.beginDeferring();
      const outputs = new Map([...r.outputs].map(([id, t]) => [id, fresh(g, t)]));
      const word = (buffer: GPUBuffer, offset: number): DeviceWord => {
        const w = { buffer, offset };
        g.pending.add(w);
        return w;
      };
      const guessWords = r.guesses.map((q) => Array.from({ length: q.words }, (_, i) => word(q.buffer, 4 * i)));
      // Every relation's rows are counted again, as a run's readback counts them (ExecuteStats.relationRows).
      const rowWords = r.rows.map((parts) => parts?.map((p) => (p.pending ? word(p.pending.buffer, p.pending.offset) : p.count)));
      try {
        r.record.encode();
        readStart = performance.now();
        let read_: Map<string, ResultTable> | undefined;
        let failed: { error: unknown } | undefined;
        try {
          read_ = await read((id) => outputs.get(id)!, endScopes);
        } catch (error) {
          failed = { error };
        }
        // A readback of nothing (outputs known empty) read no guess or count either.
        if ([...guessWords, ...rowWords].some((ws) => ws?.some((w) => typeof w !== 'number' && w.value === undefined))) await syncCounts(g);
        // The answer is only as good as the guesses it rests on: a failed one drops it, whatever the readback did.
        if (!r.guesses.every((q, i) => q.holds(Uint32Array.from(guessWords[i]!, (w) => w.value!)))) return undefined;
        if (failed) throw failed.error;
        relationRows = r.stats.relationRows.map(({ name, rows }, i) => ({
          name,
          rows: rowWords[i]?.reduce<number>((n, w) => n + (typeof w === 'number' ? w : w.value!), 0) ?? rows,
        }));
        return read_;
      } finally {
        for (const w of [...guessWords, ...rowWords].flat()) if (w !== undefined && typeof w !== 'number') g.pending.delete(w);
        for (const o of outputs.values()) if (o.pending) g.pending.delete(o.pending);
        g.batch.endDeferring();
        g.runsInProgress -= 1;
      }
    }).finally(() => this.replaying--);
    if (!relations) {
      this.drop(program, 'a guess it rests on failed');
      return undefined;
    }
    const now = performance.now();
    const stats: ExecuteStats = {
      ...r.stats,
      replayed: true,
      milliseconds: now - started,
      loadMilliseconds: 0,
      readbackMilliseconds: now - readStart,
      residentDictionary: options.resident?.dictionary !== undefined,
      startedAgain: false,
      waitMilliseconds: g.waitMilliseconds - waitMilliseconds,
      submitMilliseconds: g.batch.submitMilliseconds - submitMilliseconds,
      submissions: g.batch.submitted - submitted,
      dispatches: g.batch.dispatched - dispatched,
      hostSyncs: g.hostSyncs - hostSyncs,
      readbackBytes: g.readbackBytes - readbackBytes,
      buffersCreated: g.pool.created - created,
      tablesBuilt: 0,
      work: workSince(g, work),
      relationRows,
    };
    delete stats.replayMissed;
    return { relations, stats };
  }

  /** Keeps `recorded` as `program`'s record, releasing the one it had and the least recently run ones past MAX_RECORDS. */
  store(program: KirProgram, recorded: Recorded): void {
    this.drop(program, '');
    this.why.delete(program);
    this.records.set(program, recorded);
    let bytes = [...this.records.values()].reduce((n, r) => n + r.record.bytes, 0);
    const most = recorded.limit === undefined ? Infinity : recorded.limit * RECORDS_SHARE;
    for (const [p, r] of this.records) {
      if (p === program || (this.records.size <= MAX_RECORDS && bytes <= most)) break;
      bytes -= r.record.bytes;
      this.drop(p, `released for a later record (at most ${MAX_RECORDS}, within ${RECORDS_SHARE * 100}% of the budget)`);
    }
  }

  /** Releases `program`'s record, noting `why`. */
  drop(program: KirProgram, why: string): void {
    const r = this.records.get(program);
    if (!r) return;
    r.record.release();
    this.records.delete(program);
    this.note(program, why);
  }

  /** Bytes of the buffers its records alone hold. */
  get bytes(): number {
    let n = 0;
    for (const r of this.records.values()) n += r.record.bytes;
    return n;
  }

  /** Releases every record, noting `why` (a resident relation or the string tables changed, the Database is cleared). */
  clear(why: string): void {
    for (const program of [...this.records.keys()]) this.drop(program, why);
  }

  /** Whether `program` has a record (tests). */
  has(program: KirProgram): boolean {
    return this.records.get(program)?.record.live ?? false;
  }
}

/** The trace of one run (executor.ts evaluate), made a record at its final readback if the run is replayable. */
export class Recording {
  private readonly trace = new Trace();
  private resident: ReadonlyMap<string, DeviceRelation> = new Map();
  private made: Omit<Recorded, 'stats'> | undefined;

  constructor(
    private readonly replays: Replays,
    private readonly program: KirProgram,
    private readonly key: string,
    private readonly dict: StringDictionary,
    private readonly facts: FactsPrint,
  ) {}

  /** The run begins: its commands are traced from now on, unless another run is in progress. */
  start(g: GpuImpl): void {
    if (g.runsInProgress > 0 || g.batch.trace) {
      this.trace.stop('another run was in progress');
      return;
    }
    // Commands encoded before are not the run's.
    g.batch.flush();
    g.batch.trace = this.trace;
  }

  /** The resident relations the run adopted: a replay needs the same. */
  adopted(resident: ReadonlyMap<string, DeviceRelation>): void {
    this.resident = resident;
  }

  /**
   * The run reaches its final readback: the trace ends, and it becomes a record unless `why` says the run cannot be
   * replayed. `outputs`: the output relations now; `guesses`: the run's, unchecked (the readback checks them);
   * `limit`: the run's device memory budget (of which the Database's records may hold RECORDS_SHARE).
   */
  cut(
    g: GpuImpl,
    outputs: ReadonlyMap<VarId, DeviceRelation>,
    guesses: readonly Guess[],
    /** The relations of ExecuteStats.relationRows, in its order; undefined for one in host memory. */
    relations: ReadonlyArray<DeviceRelation | undefined>,
    why: string | undefined,
    limit: number | undefined,
  ): void {
    if (why) this.trace.stop(why);
    for (const rel of outputs.values()) if (rel.chunks) this.trace.stop('an output past one binding');
    if (g.batch.trace !== this.trace) {
      this.replays.note(this.program, `not recorded: ${this.trace.broken ?? 'not traced'}`);
      return;
    }
    this.trace.end(g.batch.openArena());
    if (!this.trace.broken) {
      const plan = this.trace.plan();
      if (this.replays.lastPlans.get(this.program) !== plan) this.trace.stop('its plan differs from the last run\'s');
      this.replays.lastPlans.set(this.program, plan);
    }
    const rows = relations.map((rel) => rel && (rel.chunks ?? [rel]).map(({ count, pending }) => ({ count, ...(pending ? { pending: { buffer: pending.buffer, offset: pending.offset } } : {}) })));
    const counted = rows.flatMap((parts) => parts?.flatMap((p) => (p.pending ? [p.pending.buffer] : [])) ?? []);
    const extra = [...[...outputs.values(), ...guesses].flatMap((x) => (x.buffer ? [x.buffer] : [])), ...counted];
    const record = ReplayRecord.make(g, this.trace, extra);
    if (typeof record === 'string') {
      this.replays.note(this.program, `not recorded: ${record}`);
      return;
    }
    if (limit !== undefined && record.bytes > limit * RECORDS_SHARE) {
      record.release();
      this.replays.note(this.program, `not recorded: its buffers hold more than ${RECORDS_SHARE * 100}% of the budget`);
      return;
    }
    this.made = {
      record,
      key: this.key,
      dict: this.dict,
      facts: this.facts,
      resident: this.resident,
      outputs: new Map([...outputs].map(([id, rel]) => [id, template(rel)])),
      guesses: guesses.map(({ buffer, words, holds }) => ({ buffer, words, holds })),
      rows,
      limit,
    };
  }

  /** The run ends (either way): nothing more is traced. */
  stop(g: GpuImpl): void {
    if (g.batch.trace === this.trace) g.batch.trace = null;
  }

  /** The run succeeded with `stats`: its record (if it made one) is the program's now. */
  keep(stats: ExecuteStats): void {
    if (this.made) this.replays.store(this.program, { ...this.made, stats });
    this.made = undefined;
  }

  /** The run failed: its record (if it made one) is released. */
  discard(): void {
    this.made?.record.release();
    this.made = undefined;
  }
}
