/**
 * Interprets the kernel CFG on the device (Red Fox §3.6): runs each block's commands in order, keeps every
 * managed variable's buffer and row count, frees what liveness says is dead, and evaluates branches from the
 * row counts. Counts may stay pending on the device (gpu/relations.ts); the branches, limits and outputs read
 * them in as few host syncs as they can. Only output relations are read back in full.
 */
import { generateKernelShaders, kernelConstants, kernelTables, sortKeyWords, type KernelShaders, type TableSpec } from '@vixen/codegen-wgsl';
import {
  kernelInputs,
  smallLoopPlan,
  kirSuccessors,
  type KirKernel,
  type KirOrigin,
  type KirProgram,
  type KirVariable,
  type VarId,
} from '@vixen/kernel-ir';
import { printOrigin, rowWords, VixenError, type RuleOrigin } from '@vixen/queryplan';
// The device modules themselves, not gpu/index.ts: that barrel also opens Dawn, which a browser build lacks.
import { downloadRelation, downloadRelations, releaseRelation, uploadRelation, type DeviceRelation } from './gpu/relations.js';
import { runKernel } from './gpu/kernels/run-kernel.js';
import { selectHashed } from './gpu/kernels/select.js';
import type { RowsOrder } from './gpu/kernels/rows-order.js';
import { canonicalOnDevice, keptColumns, uploadLoaded } from './canonical-load.js';
import { internals, noWork, workMark, workSince, type Gpu, type RunWork } from './gpu/device.js';
import { keyPrefix, precompileLoad } from './load-passes.js';
import { encodeValue, runInWorker, StringDictionary, type SortedStrings } from '@vixen/io';
import { DeviceLimitError, exactCount, GuessMissed, OutputRoomError, settle, syncCounts, type GuessingRun } from './gpu/relations.js';
import { leaves } from './gpu/chunks.js';
import { deviceRowsRelation } from './gpu/parsed-rows.js';
import type { EncodedFacts } from '@vixen/io';
import { ResultTable } from './result-table.js';
import { checkDeclaredKeys, checkDeclaredKeysOnHost } from './keys.js';
import { formatBytes, RunLimitError } from './limits.js';
import { Spills, type SpilledRelation } from './spill.js';
import { allWords, concatRows, deviceBytes as rowsDeviceBytes, PartitionLimit, pickWords, runPartitioned, sliceRows, sortRows, sortWords, uniqueSorted, type HostRows, type PartitionDevice } from './partitioned.js';
import { dictionaryOfFacts, kernelTableWords } from './tables.js';
import { batchableLoop, LoopBatch } from './loop-control.js';
import { SmallLoop, smallLoopConstantWords } from './small-loop.js';
import { releaseReplays, replayBytes } from './gpu/replay.js';
import type { Recording, Replays } from './replay.js';

export interface ExecuteOptions {
  /** Relations to read back (default: those marked output). */
  outputs?: readonly string[];
  /** Upper bound on executed blocks, so a runaway loop ends with an error instead of hanging. */
  maxBlockSteps?: number;
  /** Most iterations one run of a fixpoint loop may take; one more fails with a RunLimitError. */
  maxIterations?: number;
  /**
   * Device memory budget: most bytes the variables' device buffers may hold at once (default: the device's memory
   * less a margin, where known). Past it, relations the current kernel does not read are spilled to host memory
   * and uploaded again when read; a kernel whose own relations do not fit runs in partitions (partitioned.ts), and
   * fails with a RunLimitError only where one of its steps cannot fit.
   */
  maxDeviceMemory?: number;
  /**
   * Most rows any one base or derived relation (not temporaries or deltas) may hold; a relation that would hold
   * more fails with a RunLimitError. Per relation, so the message can name the one that grew.
   */
  maxTuples?: number;
  /**
   * Wall-clock limit in milliseconds from `startedAt`. Checked before every block and kernel launch, so a
   * launch in flight completes (the device stays usable) and the run may overshoot by one kernel's time.
   */
  timeoutMs?: number;
  /** performance.now() when the run began, for `timeoutMs` (default: when executeKir starts). */
  startedAt?: number;
  /** Waits for the device after every kernel, so per-kernel times are device times (slower runs). */
  profile?: boolean;
  /**
   * Called after every fixpoint iteration whose exit test the host decides (for progress displays): each iteration,
   * or the last of each batch where loop control runs several per host decision (loop-control.ts).
   */
  onProgress?: (progress: FixpointProgress) => void;
  /** Base relations kept on the device across runs (database.ts). */
  resident?: ResidentRelations;
  /** false: every fixpoint iteration's exit test is decided on the host (loop-control.ts batches none). */
  loopBatches?: boolean;
  /** false: no loop runs iterations inside one dispatch (small-loop.ts). */
  smallLoops?: boolean;
  /** false: the run neither replays the device work of an earlier run of the program nor is recorded (replay.ts). */
  replay?: boolean;
}

/**
 * Canonical base relations that outlive a run. The run reads them in place of facts and never frees or writes
 * their buffers (kernels treat inputs as read-only; a kernel that passes an input through shares its buffer).
 */
export interface ResidentRelations {
  /** The strings the resident relations' words refer to: they join the run's dictionary. */
  strings: Iterable<string>;
  /**
   * More of them as sorted lists (a relation's strings, in the order of their ids in its dictionary): merged into the
   * run's dictionary rather than sorted, each list's new ids handed to `adopt`.
   */
  lists?: readonly SortedStrings[];
  /**
   * A dictionary to use as it is instead of building one (sorting every string again): given when it holds every
   * string the run loads or can meet (a superset keeps ids in order).
   */
  dictionary?: StringDictionary;
  /**
   * Rewrites the resident string words to `dict`'s ids (order-preserving), then gives the relations by name.
   * `listIds`, where known: per list of `lists`, its strings' ids in `dict`.
   */
  adopt(dict: StringDictionary, listIds?: readonly Uint32Array[]): Promise<ReadonlyMap<string, DeviceRelation>>;
  /** Offered each relation the run loads, once canonical; true when the owner keeps it beyond the run. */
  keep(name: string, rel: DeviceRelation): boolean;
  /** Whether keep() would keep relation `name`: only those need an exact row count before it is offered. */
  keeps(name: string): boolean;
  /**
   * A kernel's string built-in tables over `dict` (kernelTableWords) on the device, uploaded by `make` when the
   * owner has none for them and that dictionary yet; the owner frees them.
   */
  table?(specs: readonly TableSpec[], dict: StringDictionary, make: () => DeviceRelation): DeviceRelation;
  /** The owner's records of runs to replay (replay.ts); without them, runs are neither recorded nor replayed. */
  replays?: Replays;
}

export interface FixpointProgress {
  /** Label of the loop's branching block. */
  loop: string;
  relations: string[];
  /** Iterations of this run of the loop so far (1 after the first). */
  iteration: number;
  /** Row counts of the variables the loop's exit test reads (the deltas). */
  deltas: Array<{ name: string; rows: number }>;
  elapsedMs: number;
}

/**
 * Traffic of launches: rows and bytes read (all inputs) and written. Exact with `profile`; otherwise a
 * relation whose count was still pending on the device at the launch counts its bound (its buffer's room).
 */
interface Traffic {
  launches: number;
  rowsIn: number;
  rowsOut: number;
  bytesIn: number;
  bytesOut: number;
  milliseconds: number;
}

export interface KernelProfile extends Traffic {
  /** Host wall time of the launches (with `profile`, up to the device's completion): shows host overhead beside
   * `milliseconds` when those are timestamp-query device times. */
  wallMilliseconds: number;
  kernel: number;
  kind: KirKernel['kind'];
  origin?: KirOrigin;
  /** The source rules the kernel computes (KirKernel's), for the profile's table. */
  rules?: RuleOrigin[];
  /** Its launches' device work besides their compute passes (as ExecuteStats.work), and the buffers they created. */
  work: RunWork;
  buffersCreated: number;
}

/**
 * One QP command: its kernels' launches summed, except rows and bytes, which count only the QP relations the
 * command reads and writes (not the temporaries between its kernels). `launches` is how often the command ran.
 */
export interface OperatorProfile extends Traffic {
  block: string;
  command: number;
  kernels: number[];
}

export interface LoopStats {
  /** Label of the loop's branching block. */
  block: string;
  /** Non-temporary relations the loop body writes. */
  relations: string[];
  /** Iterations over all runs of the loop. */
  iterations: number;
  /**
   * Times the loop's exit test was decided on the host: each ends a batch of iterations the device ran without
   * the host deciding in between (one iteration each unless loop control ran several per batch).
   */
  batches: number;
  /** Host round trips while the loop's blocks ran (its exit tests' and its kernels' own). */
  hostSyncs: number;
  /** Compute dispatches encoded while the loop's blocks ran. */
  dispatches: number;
  /**
   * Iterations a batch ran past the loop's stop, on empty deltas (loop-control.ts): not counted in `iterations` nor
   * in the block's executions and blockSteps, but their dispatches are in `dispatches`.
   */
  overshoot: number;
  /** Iterations run inside the small-loop kernel (small-loop.ts), counted in `iterations` too. */
  inKernel: number;
}

export interface ExecuteStats {
  /** Blocks executed, the iterations run inside the small-loop kernel (small-loop.ts) included. */
  blockSteps: number;
  launches: number;
  /** Wall time of the whole run: loading, evaluation and readback. */
  milliseconds: number;
  /** Of which: building the run's string dictionary and mapping the facts' strings to it (before the load). */
  dictionaryMilliseconds: number;
  /** Of which: encoding and uploading the facts and making them canonical (sorted, duplicate-free). */
  loadMilliseconds: number;
  /**
   * The relations uploaded from facts (rows and words per row); resident ones are not. `parsedOnDevice`: rows that
   * the device parsed from their file (RunOptions.parse); `inOrder`: rows loaded in canonical order (not sorted again);
   * `ms`: the host's wall time making them canonical and checking their keys (of loadMilliseconds; the device may
   * finish later). On a GPU the load passes of every relation compile together as the load starts, so the first
   * relation's time includes waiting for all of them.
   */
  uploads: Array<{ name: string; rows: number; width: number; ms: number; parsedOnDevice?: true; inOrder?: true }>;
  /** The base relations taken from `resident` instead. */
  residentRelations: string[];
  /** Every relation the run started from, resident or uploaded: rows and device words per row (its bytes in). */
  inputs: Array<{ name: string; rows: number; width: number }>;
  /** The run kept the dictionary `resident` offered instead of building one. */
  residentDictionary: boolean;
  /** A kernel's guess failed (gpu/relations.ts Guess), and the program ran again without guesses: these figures are that run's. */
  startedAgain: boolean;
  /**
   * The run replayed the device work recorded from an earlier run of the program (replay.ts): every kernel ran, no
   * kernel was planned. The figures of launches, blocks, kernels and rows are the recorded run's.
   */
  replayed: boolean;
  /** Of which: copying the output relations back to the host (and waiting for the kernels before that copy). */
  readbackMilliseconds: number;
  /**
   * Of which: the host waiting for the device (row counts, flags and outputs mapped back). The rest of
   * `milliseconds` is host work: planning, encoding and submitting kernels, decoding the outputs.
   */
  waitMilliseconds: number;
  /**
   * Of the rest: Dawn taking the run's submissions (GPU commands recorded natively, uniforms written); what is left
   * is the host's own work.
   */
  submitMilliseconds: number;
  /** Queue submissions and compute dispatches of the run. */
  submissions: number;
  dispatches: number;
  /** Most bytes the variables' device buffers held at once (kernel scratch buffers not included). */
  peakDeviceBytes: number;
  /**
   * Most bytes of storage buffers in use at once (BufferPool.inUseBytes): relations and kernels' scratch, not the
   * pool's free buffers; where runs share the device at once, theirs too.
   */
  peakStorageBytes: number;
  /**
   * Most bytes of device buffers allocated at once during the run (BufferPool.allocatedBytes): besides the storage
   * buffers in use, the pool's free ones, staging buffers and resident relations the run does not read. What the
   * device held for Vixen, less Dawn's own.
   */
  peakAllocatedBytes: number;
  /** The device memory budget the run kept to (ExecuteOptions.maxDeviceMemory or the default), if any. */
  deviceMemoryBudget?: number;
  /** Bytes of relations spilled to host memory to stay within the budget, in how many spills, and uploaded again. */
  spilledBytes: number;
  spills: number;
  reloadedBytes: number;
  /**
   * Kernels whose own relations did not fit the budget together, run in steps over partitions of their inputs
   * (partitioned.ts), and the steps those runs took.
   */
  partitionedLaunches: number;
  partitions: number;
  /** Bytes of host rows their steps uploaded (inputs that steps share, once). */
  partitionUploadBytes: number;
  /**
   * Those launches by kernel kind: launches, steps, bytes their steps uploaded, and work done on their host rows
   * instead (PartitionDevice.onHost).
   */
  partitionedKinds: Array<{ kind: KirKernel['kind']; launches: number; steps: number; uploadBytes: number; onHost: number }>;
  /** Times each block ran, in program order. */
  blocks: Array<{ label: string; executions: number }>;
  loops: LoopStats[];
  /** Every kernel of the program, launched or not. */
  kernels: KernelProfile[];
  /** Every QP command that has kernels (programs lowered from a plan), in program order. */
  operators: OperatorProfile[];
  /** True when kernel times were taken with a device wait after each kernel (`profile`). */
  profiled: boolean;
  /** True when those times are the kernels' compute passes as timestamp queries measured them. */
  timestamps: boolean;
  /** Bytes read back from the device by the run: row counts and sort key masks, then the output relations. */
  readbackBytes: number;
  /**
   * Host round trips: each read of row counts, sort key masks or flags (every pending row count resolved in the
   * same one), a limit kernel's rows where the host limits them (float32 rows), and the read of the outputs at the
   * end (with the counts still pending).
   */
  hostSyncs: number;
  /** GPU buffers the run created because the pool had none to reuse (scratch buffers included). */
  buffersCreated: number;
  /**
   * String built-in tables (LIKE, strlen...) the run made and uploaded: none where a Database's earlier run with the
   * same dictionary made them.
   */
  tablesBuilt: number;
  /**
   * Why a run that could have replayed (a Database's, replay on) did not (replay.ts): no record yet, or the reason
   * its program's record was not made, released or dropped. Absent where it replayed or could not.
   */
  replayMissed?: string;
  /**
   * Device work of the run that a profile's kernel times (compute passes) leave out: buffer copies and clears, the
   * bytes of the buffers created (each an allocation and Dawn's zero fill), and readbacks (host round trips, the host
   * syncs and the reads of rows, such as a chunked sort's samples, among them).
   */
  work: RunWork;
  /** Rows of each base and derived relation when the run ended (or stopped), in program order. */
  relationRows: Array<{ name: string; rows: number }>;
}

export interface ExecuteResult {
  /** The relations read back, in output order when the program orders them. */
  relations: Map<string, ResultTable>;
  stats: ExecuteStats;
}

/**
 * Every string the run can meet: facts, kernel constants and what the substring built-ins make of them. The
 * facts' string words are rewritten from their load-time ids to this dictionary's.
 */
async function buildDictionary(
  program: KirProgram,
  initial: EncodedFacts,
  specs: readonly TableSpec[],
  resident?: ResidentRelations,
): Promise<{ dict: StringDictionary; residentIds?: Uint32Array[] }> {
  const interner = initial.strings;
  const strings: string[] = [...interner.strings, ...(resident?.strings ?? [])];
  for (const k of program.kernels) {
    for (const c of kernelConstants(k)) if (c.type === 'string') strings.push(c.value as string);
  }
  // The interner's strings and lists come first: their ids, where known, map the facts' words without lookups.
  const lists = interner.lists.map((l) => l.list);
  const { dict, listIds } = await dictionaryOfFacts(initial, strings, specs, [...lists, ...(resident?.lists ?? [])]);
  return listIds ? { dict, residentIds: listIds.slice(lists.length) } : { dict };
}

function constantWords(kernel: KirKernel, dict: StringDictionary): Uint32Array {
  const consts = kernelConstants(kernel);
  const out = new Uint32Array(consts.reduce((n, c) => n + rowWords([c.type]), 0));
  let at = 0;
  for (const c of consts) at = encodeValue(c.type, c.value, dict, out, at);
  return out;
}

interface FixpointLoop {
  /** Blocks on a cycle through the branching block. */
  body: Set<string>;
  relations: string[];
}

/** fixpointLoops' answer per program: a program is not changed once compiled, and a run asks every time. */
const loopsByProgram = new WeakMap<KirProgram, Map<string, FixpointLoop>>();

/** Branching blocks that lie on a cycle of the CFG (the fixpoint loops of recursive strata), by label. */
function fixpointLoops(program: KirProgram): Map<string, FixpointLoop> {
  let loops = loopsByProgram.get(program);
  if (!loops) loopsByProgram.set(program, (loops = findFixpointLoops(program)));
  return loops;
}

function findFixpointLoops(program: KirProgram): Map<string, FixpointLoop> {
  const succ = new Map(program.blocks.map((b) => [b.label, kirSuccessors(b.terminator)]));
  const reach = (from: string): Set<string> => {
    const seen = new Set<string>();
    const stack = [...(succ.get(from) ?? [])];
    for (let l = stack.pop(); l !== undefined; l = stack.pop()) {
      if (seen.has(l)) continue;
      seen.add(l);
      stack.push(...(succ.get(l) ?? []));
    }
    return seen;
  };
  const kindOf = new Map(program.relations.map((r) => [r.name, r.kind]));
  const loops = new Map<string, FixpointLoop>();
  for (const b of program.blocks) {
    if (b.terminator.kind !== 'branch' || !reach(b.label).has(b.label)) continue;
    const body = new Set([...reach(b.label)].filter((l) => reach(l).has(b.label)));
    const written = new Set<string>();
    for (const bb of program.blocks) {
      if (!body.has(bb.label)) continue;
      for (const c of bb.commands) {
        if (c.kind !== 'launch') continue;
        const rel = program.variables[program.kernels[c.kernel]!.output]!.relation;
        if (rel !== undefined && kindOf.get(rel) !== 'temp') written.add(rel);
      }
    }
    const relations = written.size > 0 ? [...written] : b.terminator.condition.vars.map((v) => program.variables[v]!.name);
    loops.set(b.label, { body, relations });
  }
  return loops;
}

/**
 * Input rows from which a kernel's commands are submitted right after it is encoded, not with the run's next
 * readback: its device time (tens of microseconds and up) then hides the host's encoding of the kernels after it,
 * and is longer than the submission costs the host.
 */
const EARLY_SUBMIT_ROWS = 2 ** 22;

/** Host words of the facts a run that may start again keeps through the run at most (executeKir). */
const KEPT_HOST_WORDS = 2 ** 16;

const noTraffic = (): Traffic => ({ launches: 0, rowsIn: 0, rowsOut: 0, bytesIn: 0, bytesOut: 0, milliseconds: 0 });

/** Operators in program order, one per (block, command) that some kernel came from. */
function operatorProfiles(program: KirProgram): { operators: OperatorProfile[]; byKernel: Map<number, OperatorProfile> } {
  const byKey = new Map<string, OperatorProfile>();
  const byKernel = new Map<number, OperatorProfile>();
  for (const k of program.kernels) {
    if (!k.origin) continue;
    const key = `${k.origin.command}@${k.origin.block}`;
    let op = byKey.get(key);
    if (!op) byKey.set(key, (op = { block: k.origin.block, command: k.origin.command, kernels: [], ...noTraffic() }));
    op.kernels.push(k.id);
    byKernel.set(k.id, op);
  }
  const blockIndex = new Map(program.blocks.map((b, i) => [b.label, i]));
  const operators = [...byKey.values()].sort(
    (a, b) => (blockIndex.get(a.block) ?? Infinity) - (blockIndex.get(b.block) ?? Infinity) || a.command - b.command,
  );
  return { operators, byKernel };
}

function describeVariable(program: KirProgram, id: VarId): string {
  const v = program.variables[id]!;
  return v.relation === undefined ? `temporary ${v.name}` : v.relation === v.name ? `relation ${v.name}` : `${v.name} (relation ${v.relation})`;
}

/**
 * Descriptions made once per kernel: a launch names its kernel and output in GpuImpl.activity before it runs, and
 * building those strings (the rules printed, the kernel found by its origin) allocated ~25 KB a run of TPC-H Q12
 * and cost host time at every launch.
 */
const outputDescriptions = new WeakMap<KirProgram, WeakMap<KirKernel, string>>();
const kernelDescriptions = new WeakMap<KirKernel, string>();

/** A kernel's output, with the relation its plan command computes when the output is a temporary. */
function describeOutput(program: KirProgram, k: KirKernel): string {
  let byKernel = outputDescriptions.get(program);
  if (!byKernel) outputDescriptions.set(program, (byKernel = new WeakMap()));
  let text = byKernel.get(k);
  if (text === undefined) byKernel.set(k, (text = findOutputDescription(program, k)));
  return text;
}

function findOutputDescription(program: KirProgram, k: KirKernel): string {
  const own = describeVariable(program, k.output);
  if (program.variables[k.output]!.relation !== undefined || !k.origin) return own;
  const { block, command } = k.origin;
  const target = program.kernels.find(
    (o) => o.origin?.block === block && o.origin.command === command && program.variables[o.output]!.relation !== undefined,
  );
  return target ? `${own} for ${describeVariable(program, target.output)}` : own;
}

/** `kernel k5 (join, from block b2 command 3, rule tc.logic:3: path(x, z) <- ...)`: where its errors come from. */
function describeKernel(k: KirKernel): string {
  let text = kernelDescriptions.get(k);
  if (text === undefined) kernelDescriptions.set(k, (text = kernelDescription(k)));
  return text;
}

function kernelDescription(k: KirKernel): string {
  const from = k.origin ? `, from block ${k.origin.block} command ${k.origin.command}` : '';
  const rules = k.rules?.length ? `, rule${k.rules.length > 1 ? 's' : ''} ${k.rules.map(printOrigin).join('; ')}` : '';
  return `kernel k${k.id} (${k.kind}${from}${rules})`;
}

/**
 * Runs a KIR program on the device: its kernels all inside one set of GPU error scopes (GpuImpl.runScoped), so a
 * GPU error anywhere in the run rejects it rather than letting it hand out rows. A run that loads no facts (all
 * its relations resident) lets kernels guess (see Guess); when a guess failed, the program runs once more
 * without guesses.
 */
export async function executeKir(
  gpu: Gpu,
  program: KirProgram,
  shaders: readonly KernelShaders[],
  /** The facts, encoded; their string words are remapped to the run's dictionary (so they serve one run). */
  initial: EncodedFacts,
  options: ExecuteOptions = {},
): Promise<ExecuteResult> {
  const started = performance.now();
  const tableSpecs = program.kernels.map(kernelTables);
  const kept = options.resident?.dictionary;
  const built = kept ? undefined : await buildDictionary(program, initial, tableSpecs.flat(), options.resident);
  const dict = kept ?? built!.dict;
  // The resident lists' new ids, known from the dictionary's merge, go with its adoption.
  const residentIds = built?.residentIds;
  const given = options.resident;
  const runOptions = given && residentIds ? { ...options, resident: { ...given, adopt: (d: StringDictionary) => given.adopt(d, residentIds) } } : options;
  // The run's own strings (per-run facts) are all in a kept dictionary: their temporary ids become its ids.
  if (kept) await initial.remapStrings(kept, runInWorker);
  const dictionaryMilliseconds = performance.now() - started;
  // Loading hands facts' host words over to the device: such a run could not start again. A Database's run keeps
  // the few host rows of relations loaded for it alone (inline facts, such as TPC-H Q22's country codes) instead.
  const resident = options.resident;
  const restartable = [...initial.relations].every(([name, r]) => r.empty || (resident !== undefined && !resident.keeps(name) && r.device.length === 0 && r.count * r.width <= KEPT_HOST_WORDS));
  // Runs that may start again on resident relations replay or are recorded (replay.ts); not profiled ones, whose
  // times are per kernel, nor those reporting progress between iterations.
  const replays = restartable && options.replay !== false && !options.profile && !options.onProgress ? resident?.replays : undefined;
  let replayMissed: string | undefined;
  try {
    if (replays) {
      const replayed = await replays.replay(gpu, program, dict, initial, runOptions, (valueOf, submitted) =>
        readOutputs(gpu, program, options.outputs, dict, valueOf, submitted, () => undefined),
      );
      if (replayed) {
        replayed.stats.milliseconds = performance.now() - started;
        replayed.stats.dictionaryMilliseconds = dictionaryMilliseconds;
        return replayed;
      }
      replayMissed = replays.missed(program);
    }
    for (let again = false; ; again = true) {
      const run: GuessingRun | null = restartable && !again ? { missed: false } : null;
      const recording = replays && !again ? replays.recording(program, dict, initial, options) : undefined;
      try {
        const result = await internals(gpu).runScoped('running the program', (endScopes) =>
          evaluate(gpu, program, shaders, initial, dict, tableSpecs, { run, startedAgain: again, endScopes, restartable, recording }, runOptions),
        );
        recording?.keep(result.stats);
        // The run's time includes settling its error scopes.
        result.stats.milliseconds = performance.now() - started;
        result.stats.dictionaryMilliseconds = dictionaryMilliseconds;
        if (replayMissed !== undefined) result.stats.replayMissed = replayMissed;
        return result;
      } catch (e) {
        recording?.discard();
        // Whatever stopped a run whose guess failed (GuessMissed, or a limit met on wrong rows), running again decides.
        if (!run?.missed) throw e;
      }
    }
  } finally {
    // Kept until the run's error scopes are popped: their errors name what ran last.
    internals(gpu).activity = '';
    // Rows parsed on the device for relations the run never loaded.
    initial.releaseDevice();
  }
}

async function evaluate(
  gpu: Gpu,
  program: KirProgram,
  shaders: readonly KernelShaders[],
  initial: EncodedFacts,
  dict: StringDictionary,
  tableSpecs: readonly (readonly TableSpec[])[],
  /**
   * `run`: the run kernels may guess for (null: no guesses); `endScopes` pops the run's error scopes once its last
   * commands are queued (GpuImpl.runScoped).
   */
  attempt: { run: GuessingRun | null; startedAgain: boolean; endScopes: () => void; restartable: boolean; recording?: Recording | undefined },
  options: ExecuteOptions,
): Promise<ExecuteResult> {
  const started = performance.now();
  const g = internals(gpu);
  const readbackStart = g.readbackBytes;
  const syncStart = g.hostSyncs;
  const waitStart = g.waitMilliseconds;
  const createdStart = g.pool.created;
  let tablesBuilt = 0;
  const workStart = workMark(g);
  // The run's storage buffers at once, from what it starts with (resident relations of others included).
  g.pool.peakInUseBytes = g.pool.inUseBytes;
  g.pool.peakAllocatedBytes = g.pool.allocatedBytes;
  const encodersAtStart = g.batch.opened;
  const { dispatched: dispatchStart, submitted: submitStart, submitMilliseconds: submitMsStart } = g.batch;
  const variables = program.variables;
  const values = new Map<VarId, DeviceRelation>();
  const emptyOf = (v: KirVariable): DeviceRelation => ({ buffer: null, count: 0, width: rowWords(v.columns) });
  /** A variable's relation; a spilled one's only tells its rows (kernels reload it first: reloadInputs). */
  const valueOf = (id: VarId): DeviceRelation => {
    const s = spilled.get(id);
    return settle(values.get(id) ?? (s ? { buffer: null, count: s.count, width: s.width } : emptyOf(variables[id]!)));
  };
  const constWords = program.kernels.map((k) => constantWords(k, dict));
  // String built-in tables, built and uploaded at a kernel's first launch; they live until the run ends, or as
  // long as the resident relations' owner keeps them (the same dictionary's runs share them).
  const tables = new Map<number, DeviceRelation>();
  const tablesOf = (kernel: KirKernel): DeviceRelation | undefined => {
    const specs = tableSpecs[kernel.id]!;
    if (specs.length === 0) return undefined;
    let t = tables.get(kernel.id);
    if (!t) {
      const upload = (): DeviceRelation => {
        tablesBuilt += 1;
        return uploadRelation(gpu, kernelTableWords(specs, dict), 1);
      };
      tables.set(kernel.id, (t = options.resident?.table ? options.resident.table(specs, dict, upload) : upload()));
    }
    return t;
  };
  const kernelProfiles: KernelProfile[] = program.kernels.map((k) => ({
    kernel: k.id,
    kind: k.kind,
    ...(k.origin ? { origin: k.origin } : {}),
    ...(k.rules ? { rules: k.rules } : {}),
    ...noTraffic(),
    wallMilliseconds: 0,
    work: noWork(),
    buffersCreated: 0,
  }));
  const { operators, byKernel } = operatorProfiles(program);
  const loops = fixpointLoops(program);
  const loopStats = new Map<string, LoopStats>(
    [...loops].map(([block, l]) => [block, { block, relations: [...l.relations], iterations: 0, batches: 0, hostSyncs: 0, dispatches: 0, overshoot: 0, inKernel: 0 }]),
  );
  /** Loop control of the loops that may run several iterations per host decision (loop-control.ts); not with a profile. */
  const batches = new Map<string, LoopBatch>();
  if (!options.profile && options.loopBatches !== false) for (const [label, l] of loops) if (batchableLoop(program, label, l.body)) batches.set(label, new LoopBatch(g));
  /** Loops whose small-delta iterations may run inside one dispatch (small-loop.ts); not with a profile. */
  const smallLoops = new Map<string, SmallLoop>();
  if (!options.profile && options.smallLoops !== false) {
    for (const [label, l] of loops) {
      const plan = smallLoopPlan(program, label, l.body);
      if (plan) smallLoops.set(label, new SmallLoop(g, program, plan, shaders, smallLoopConstantWords(plan, constWords)));
    }
  }
  /** The loop whose body holds each block (the first found), for the loop statistics. */
  const loopOfBlock = new Map<string, LoopStats>();
  for (const [block, l] of loops) for (const b of l.body) if (!loopOfBlock.has(b)) loopOfBlock.set(b, loopStats.get(block)!);
  /** Iterations of the current run of each loop. */
  const loopRun = new Map<string, number>();
  const executions = new Map(program.blocks.map((b) => [b.label, 0]));
  let steps = 0;
  /** Block executions the small-loop kernel ran: in blockSteps, but not held against maxBlockSteps (maxIterations bounds them). */
  let inKernelSteps = 0;
  let launches = 0;
  let loadMs = 0;
  const uploads: ExecuteStats['uploads'] = [];
  const residentRelations: string[] = [];
  const inputs: ExecuteStats['inputs'] = [];
  /** Buffers of resident relations: assign() never returns them to the pool. */
  const pinned = new Set<GPUBuffer>();
  let readbackMs = 0;
  const timer = options.profile && g.startTiming() ? g.timer : null;
  const timestamps = timer !== null;

  // Device memory: variables may share a buffer, so buffers are counted once, by how many variables hold them.
  const holders = new Map<GPUBuffer, number>();
  let liveBytes = 0;
  let peakBytes = 0;
  const limit = options.maxDeviceMemory ?? g.memoryBudget;
  const spills = new Spills(gpu);
  /** Variables whose rows are in host memory (spilled), not on the device. */
  const spilled = new Map<VarId, SpilledRelation>();
  /** When each variable was last read or written by a kernel: the least recently used spill first. */
  const lastUse = new Map<VarId, number>();
  let uses = 0;
  /** Variables holding a whole base or derived relation, the ones maxTuples bounds. */
  const relationIds = new Map<VarId, string>();
  for (const r of program.relations) {
    const id = program.relationVars[r.name];
    if (r.kind !== 'temp' && id !== undefined) relationIds.set(id, r.name);
  }
  const runStart = options.startedAt ?? started;

  /** The loop the blocks since the last account() belong to, and the device counters then. */
  let accounted: LoopStats | undefined;
  let syncMark = g.hostSyncs;
  let dispatchMark = g.batch.dispatched;
  /** Adds the host syncs and dispatches since the last call to the loop that ran them; `label`'s loop runs next. */
  const account = (label?: string): void => {
    if (accounted) {
      accounted.hostSyncs += g.hostSyncs - syncMark;
      accounted.dispatches += g.batch.dispatched - dispatchMark;
    }
    accounted = label === undefined ? undefined : loopOfBlock.get(label);
    syncMark = g.hostSyncs;
    dispatchMark = g.batch.dispatched;
  };

  const stats = (): ExecuteStats => {
    account();
    return statsNow();
  };
  const statsNow = (): ExecuteStats => ({
    blockSteps: steps + inKernelSteps,
    launches,
    milliseconds: performance.now() - started,
    // Set by execute, which builds the dictionary before evaluation.
    dictionaryMilliseconds: 0,
    loadMilliseconds: loadMs,
    uploads,
    residentRelations,
    inputs,
    residentDictionary: options.resident?.dictionary !== undefined,
    startedAgain: attempt.startedAgain,
    replayed: false,
    readbackMilliseconds: readbackMs,
    waitMilliseconds: g.waitMilliseconds - waitStart,
    submitMilliseconds: g.batch.submitMilliseconds - submitMsStart,
    submissions: g.batch.submitted - submitStart,
    dispatches: g.batch.dispatched - dispatchStart,
    peakDeviceBytes: peakBytes,
    peakStorageBytes: g.pool.peakInUseBytes,
    peakAllocatedBytes: g.pool.peakAllocatedBytes,
    ...(limit !== undefined ? { deviceMemoryBudget: limit } : {}),
    spilledBytes: spills.bytes,
    spills: spills.relations,
    reloadedBytes: spills.reloadedBytes,
    partitionedLaunches,
    partitions: partitionDevice?.steps ?? 0,
    partitionUploadBytes,
    partitionedKinds: [...partitionedKinds.values()],
    blocks: program.blocks.map((b) => ({ label: b.label, executions: executions.get(b.label)! })),
    loops: [...loopStats.values()],
    kernels: kernelProfiles,
    operators,
    profiled: options.profile === true,
    timestamps,
    readbackBytes: g.readbackBytes - readbackStart,
    hostSyncs: g.hostSyncs - syncStart,
    buffersCreated: g.pool.created - createdStart,
    tablesBuilt,
    work: workSince(g, workStart),
    relationRows: [...relationIds].map(([id, name]) => ({ name, rows: valueOf(id).count })),
  });

  /** Stops a run whose guess a sync found failed: it computed on wrong rows since. */
  const checkGuesses = (): void => {
    if (attempt.run?.missed) throw new GuessMissed('a kernel guessed from its last run, and the guess failed');
  };
  /** Whether a guess of this run awaits a sync. */
  const guessesOpen = (): boolean => g.guesses.some((q) => q.run === attempt.run);

  /** One host sync resolving every row count still pending on the device (none when nothing is pending). */
  const resolveCounts = async (): Promise<void> => {
    await syncCounts(g);
    checkGuesses();
  };

  /** A RunLimitError whose stats hold exact row counts (resolved first, unless the device cannot). */
  const limitError = async (message: string): Promise<RunLimitError> => {
    await resolveCounts().catch(() => undefined);
    return new RunLimitError(message, stats());
  };

  const checkTimeout = async (): Promise<void> => {
    const elapsed = performance.now() - runStart;
    if (options.timeoutMs !== undefined && elapsed > options.timeoutMs) {
      throw await limitError(`timed out after ${(elapsed / 1000).toFixed(2)} s; the limit is ${options.timeoutMs / 1000} s (timeout / --timeout)`);
    }
  };

  /** Replaces a variable's value, returning the old buffer to the pool unless another variable still holds it. */
  const assign = (id: VarId, next: DeviceRelation | undefined): void => {
    const old = values.get(id);
    // Per buffer: a chunked relation (gpu/chunks.ts) has one per chunk.
    for (const { buffer } of leaves(next)) {
      const n = holders.get(buffer!) ?? 0;
      if (n === 0) g.heldBytes = liveBytes += buffer!.size;
      holders.set(buffer!, n + 1);
      peakBytes = Math.max(peakBytes, liveBytes);
    }
    if (next) values.set(id, next);
    else values.delete(id);
    spilled.delete(id);
    for (const part of leaves(old)) {
      const buffer = part.buffer!;
      const n = holders.get(buffer)! - 1;
      if (n > 0) holders.set(buffer, n);
      else {
        holders.delete(buffer);
        g.heldBytes = liveBytes -= buffer.size;
        if (!pinned.has(buffer)) releaseRelation(gpu, part);
      }
    }
  };

  /** `the limit is 2.0 GiB (...)`, saying where a budget nobody gave comes from. */
  const budgetText = (bytes: number): string =>
    options.maxDeviceMemory !== undefined
      ? `the limit is ${formatBytes(bytes)} (maxDeviceMemory / --max-device-memory)`
      : `the budget is ${formatBytes(bytes)}, the device's memory less a margin (maxDeviceMemory / --max-device-memory)`;
  /** What spilling did so far, for the budget's errors. */
  const spillSummary = (): string =>
    (spills.relations > 0 ? ` (after spilling ${formatBytes(spills.bytes)} to host memory in ${spills.relations} spill${spills.relations === 1 ? '' : 's'})` : '') +
    (hostFull ? '; host memory has no room for more spilling' : '');
  let hostFull = false;
  /** Bytes the last makeRoom could not spill (the kernel's own relations, shared and resident ones). */
  let unspillable = 0;
  /** Why `bytes` more do not fit: alone, or beside what could not be spilled. */
  const beside = (bytes: number): string =>
    bytes > limit! ? 'more than the whole budget' : `while ${formatBytes(unspillable)} were live that could not be spilled`;

  /**
   * Makes room on the device for `bytes` more of relations within the budget: frees the pool's free buffers, then
   * spills the least recently used variables outside `keep` (and not holding a buffer of `reserved`, nor one another
   * variable or a resident relation shares) to host memory. False when that is not enough.
   */
  const makeRoom = async (bytes: number, keep: ReadonlySet<VarId>, reserved: ReadonlySet<GPUBuffer> = new Set()): Promise<boolean> => {
    if (limit === undefined || liveBytes + g.pool.freeBytes + replayBytes(g) + bytes <= limit) return true;
    // Records of runs to replay hold device memory a run needs more.
    releaseReplays(g);
    g.pool.trim();
    const spillable = (id: VarId): boolean =>
      !keep.has(id) && leaves(values.get(id)).every(({ buffer }) => holders.get(buffer!) === 1 && !pinned.has(buffer!) && !reserved.has(buffer!));
    const victims = [...values.keys()].filter(spillable).sort((a, b) => (lastUse.get(a) ?? -1) - (lastUse.get(b) ?? -1));
    const bytesOf = (id: VarId): number => leaves(values.get(id)).reduce((n, l) => n + l.buffer!.size, 0);
    unspillable = liveBytes - victims.reduce((n, id) => n + bytesOf(id), 0);
    // Spilling that cannot make the room would only cost time.
    if (unspillable + bytes > limit) return false;
    for (const id of victims) {
      if (liveBytes + bytes <= limit) break;
      const rel = values.get(id)!;
      const deviceBytes = bytesOf(id);
      if (!spills.fits(deviceBytes)) {
        hostFull = true;
        break;
      }
      const s = await spills.spill(rel, deviceBytes);
      assign(id, undefined);
      spilled.set(id, s);
    }
    // The spilled relations' buffers went to the pool: give their memory back to the device.
    g.pool.trim();
    await g.reclaim();
    return liveBytes + bytes <= limit;
  };

  /** Uploads the kernel's spilled inputs again, making room for them first. */
  const reloadInputs = async (ids: readonly VarId[], kernel: KirKernel): Promise<void> => {
    const keep = new Set(ids);
    for (const id of keep) {
      const s = spilled.get(id);
      if (!s) continue;
      if (!(await makeRoom(s.deviceBytes, keep))) {
        throw await limitError(
          `device memory limit exceeded: ${describeKernel(kernel)} reads ${describeVariable(program, id)} of ${s.count} rows, ` +
            `${formatBytes(s.deviceBytes)}, ${beside(s.deviceBytes)}${spillSummary()}; ${budgetText(limit!)}`,
        );
      }
      assign(id, spills.reload(s));
    }
  };

  let partitionedLaunches = 0;
  let partitionUploadBytes = 0;
  /** Host rows uploaded for a partitioned step, counted. */
  const uploadStep = (r: HostRows): DeviceRelation => {
    partitionUploadBytes += r.count * r.width * 4;
    return uploadRelation(gpu, r.words, r.width, r.count);
  };
  const partitionedKinds = new Map<KirKernel['kind'], ExecuteStats['partitionedKinds'][number]>();
  /** The device side of partitioned kernels (partitioned.ts); its room is set per kernel. */
  let partitionDevice: PartitionDevice | undefined;
  /** Device bytes variable `id` takes, on the device or (once reloaded) from host memory. */
  const deviceBytesOf = (id: VarId): number => spilled.get(id)?.deviceBytes ?? leaves(values.get(id)).reduce((n, l) => n + l.buffer!.size, 0);
  /**
   * The most storage bytes a kernel of each kind held beyond its inputs (its output and scratch) per byte of its
   * inputs, in this run's launches and steps.
   */
  // A sort's radix passes hold its output and a copy of its rows and keys beside its inputs: about 3.6 times them
  // on llvmpipe, before any launch teaches it.
  const beyondInputs = new Map<KirKernel['kind'], number>([['sort', 4]]);
  /** Bytes a kernel of `kind` reading `inBytes` needs beyond them: as learned, or at least `least` of them. */
  const needBeyond = (kind: KirKernel['kind'], inBytes: number, least: number): number => Math.ceil(Math.max(least, beyondInputs.get(kind) ?? 0) * inBytes);
  /**
   * Runs `f` (a kernel of `kind` reading `inBytes`, on the device), learning what it held beyond them (beyondInputs);
   * an output by a bound or guess may be allocated while the storage buffers in use stay within the budget, an exact
   * one within it and `spillable` bytes (GpuImpl.storageCap: store() spills them for it).
   */
  const measured = async <T>(kind: KirKernel['kind'], inBytes: number, spillable: number, f: () => Promise<T>): Promise<T> => {
    const runPeak = g.pool.peakInUseBytes;
    const base = g.pool.inUseBytes;
    g.pool.peakInUseBytes = base;
    if (limit !== undefined) [g.storageCap, g.spillableBytes] = [limit, spillable];
    try {
      return await f();
    } finally {
      [g.storageCap, g.spillableBytes] = [Infinity, 0];
      const beyond = g.pool.peakInUseBytes - base;
      // Less a few buffers of the least size; small launches' outputs (a join's room for a bound of rows) are no
      // measure of larger ones', and past MAX_BEYOND an output is store()'s to find room for, as it was.
      if (inBytes >= SMALL_STEP_BYTES) beyondInputs.set(kind, Math.min(MAX_BEYOND, Math.max(beyondInputs.get(kind) ?? 0, (beyond - SMALL_STEP_BYTES / 2) / inBytes)));
      g.pool.peakInUseBytes = Math.max(runPeak, g.pool.peakInUseBytes);
    }
  };
  /** Whether a kernel's inputs and an output half their size (or what it held before) cannot share the budget: it runs in partitions. */
  const tooLarge = (kernel: KirKernel, ids: readonly VarId[]): boolean => {
    if (limit === undefined) return false;
    const inBytes = [...new Set(ids)].reduce((n, id) => n + deviceBytesOf(id), 0);
    return inBytes + needBeyond(kernel.kind, inBytes, 0.5) > limit;
  };
  /** Variable `id`'s rows in host memory: spilled there first where they are on the device. */
  const toHost = async (id: VarId, kernel: KirKernel): Promise<HostRows> => {
    const s = spilled.get(id);
    if (s) return s;
    const rel = values.get(id);
    if (leaves(rel).length === 0) return { words: new Uint32Array(0), count: valueOf(id).count, width: valueOf(id).width };
    const bytes = deviceBytesOf(id);
    if (!spills.fits(bytes)) {
      hostFull = true;
      throw await limitError(
        `device memory limit exceeded: ${describeKernel(kernel)} reads ${describeVariable(program, id)}, ${formatBytes(bytes)}, which does not fit the ` +
          `budget with its other relations${spillSummary()}; ${budgetText(limit!)}`,
      );
    }
    const spill = await spills.spill(rel!, bytes);
    assign(id, undefined);
    spilled.set(id, spill);
    return spill;
  };
  /** The device side of partitioned work, its room what the budget leaves now. */
  const partitionsWithin = (): PartitionDevice => {
    g.pool.trim();
    const device = (partitionDevice ??= { room: 0, steps: 0, onHost: 0, step, partition, keep, drop });
    device.room = limit! - liveBytes;
    return device;
  };
  /** Shaders of kernels partitioned.ts makes up, by kernel. */
  const madeShaders = new WeakMap<KirKernel, KernelShaders>();
  const buffers = (rs: readonly DeviceRelation[]): Set<GPUBuffer> => new Set(rs.flatMap((r) => leaves(r).map((l) => l.buffer!)));
  /** Host rows that steps share, on the device (PartitionDevice.keep), counted in liveBytes. */
  const keptRows = new Map<HostRows, DeviceRelation>();
  const keep: PartitionDevice['keep'] = (r) => {
    if (keptRows.has(r)) return false;
    const rel = uploadStep(r);
    const bytes = [...buffers([rel])].reduce((n, b) => n + b.size, 0);
    if (liveBytes + bytes > limit!) {
      releaseRelation(gpu, rel);
      return false;
    }
    keptRows.set(r, rel);
    g.heldBytes = liveBytes += bytes;
    peakBytes = Math.max(peakBytes, liveBytes);
    return true;
  };
  const drop: PartitionDevice['drop'] = (r) => {
    const rel = keptRows.get(r)!;
    keptRows.delete(r);
    g.heldBytes = liveBytes -= [...buffers([rel])].reduce((n, b) => n + b.size, 0);
    releaseRelation(gpu, rel);
  };
  /**
   * One step of a partitioned kernel: its inputs uploaded (unless kept), counted against the budget with its output,
   * read back.
   */
  const step: PartitionDevice['step'] = async (k, ins, vars, smaller) => {
    // A kernel in many steps is checked against the time limit between them.
    await checkTimeout();
    // What it would hold beyond its inputs, by the kind's earlier launches: a step uploading more than a few rows
    // that would pass the budget so, and can be made smaller, is refused before anything is uploaded.
    const inBytes = ins.reduce((n, r) => n + rowsDeviceBytes(r), 0);
    const newBytes = ins.reduce((n, r) => n + (keptRows.has(r) ? 0 : rowsDeviceBytes(r)), 0);
    if (smaller && newBytes >= SMALL_STEP_BYTES && liveBytes + newBytes + needBeyond(k.kind, inBytes, 1) > limit!) return undefined;
    const uploaded = new Map(ins.filter((r) => !keptRows.has(r)).map((r) => [r, uploadStep(r)]));
    const rels = ins.map((r) => keptRows.get(r) ?? uploaded.get(r)!);
    // Not the output's: its inputs' buffers, kept ones included (a kernel may hand an input on as its output).
    const owned = buffers(rels);
    /** Bytes of this step counted in liveBytes, given back when it ends. */
    let held = 0;
    const hold = (bytes: number): void => {
      g.heldBytes = liveBytes += bytes;
      held += bytes;
      peakBytes = Math.max(peakBytes, liveBytes);
    };
    try {
      const upBytes = [...buffers([...uploaded.values()])].reduce((n, b) => n + b.size, 0);
      if (liveBytes + upBytes > limit!) return undefined;
      hold(upBytes);
      const own = program.kernels[k.id] === k;
      let made = own ? shaders[k.id]! : madeShaders.get(k);
      if (!made) madeShaders.set(k, (made = generateKernelShaders(k, vars)));
      const table = kernelTables(k).length > 0 ? tablesOf(program.kernels[k.id]!) : undefined;
      const out = await measured(k.kind, inBytes, 0, () =>
        runKernel(gpu, k, made, rels, own ? constWords[k.id]! : constantWords(k, dict), vars, table?.buffer ? { buffer: table.buffer, words: table.count } : undefined),
      ).catch((e: unknown) => {
        // An output past the room: a smaller step.
        if (e instanceof OutputRoomError) return undefined;
        throw e;
      });
      if (!out) return undefined;
      let words: Uint32Array | undefined;
      try {
        const outBytes = [...buffers([out])].filter((b) => !owned.has(b)).reduce((n, b) => n + b.size, 0);
        if (liveBytes + outBytes > limit!) return undefined;
        hold(outBytes);
        words = await downloadRelation(gpu, out);
      } finally {
        for (const l of leaves(out)) if (!owned.has(l.buffer!)) releaseRelation(gpu, l);
      }
      // The steps' outputs gather in host memory, which must keep its reserve.
      if (!spills.fits(words.byteLength)) {
        hostFull = true;
        throw await limitError(`device memory limit exceeded: ${g.activity}: its partitions' output does not fit host memory${spillSummary()}; ${budgetText(limit!)}`);
      }
      return { words, count: settle(out).count, width: out.width };
    } finally {
      for (const r of uploaded.values()) releaseRelation(gpu, r);
      g.heldBytes = liveBytes -= held;
    }
  };
  /**
   * Hash partitions of host rows made on the device: a range of rows uploaded, one select per partition read back
   * (each has room for the whole range), the ranges halved where a range and a partition do not fit the budget.
   */
  const partition: PartitionDevice['partition'] = async (r, keys, parts, round) => {
    const pieces: HostRows[][] = Array.from({ length: parts }, () => []);
    // A range and a select's output as large beside it, in buffers up to twice the size asked.
    let rows = Math.max(1, Math.floor(partitionDevice!.room / 4 / Math.max(4, r.width * 4)));
    for (let start = 0; start < r.count; ) {
      const end = Math.min(r.count, start + rows);
      const range = uploadStep(sliceRows(r, start, end));
      const inBytes = leaves(range).reduce((n, l) => n + l.buffer!.size, 0);
      const got: HostRows[] = [];
      try {
        if (liveBytes + inBytes > limit! || range.chunks) {
          if (end - start === 1) return undefined;
          rows = Math.ceil((end - start) / 2);
          continue;
        }
        g.heldBytes = liveBytes += inBytes;
        try {
          for (let p = 0; p < parts; p++) {
            const out = await selectHashed(g, range, keys, parts, p, round);
            const outBytes = leaves(out).reduce((n, l) => n + l.buffer!.size, 0);
            const fits = liveBytes + outBytes <= limit!;
            if (fits) {
              peakBytes = Math.max(peakBytes, liveBytes + outBytes);
              got.push({ words: await downloadRelation(gpu, out), count: settle(out).count, width: r.width });
            }
            releaseRelation(gpu, out);
            if (!fits) break;
          }
        } finally {
          g.heldBytes = liveBytes -= inBytes;
        }
      } finally {
        releaseRelation(gpu, range);
      }
      if (got.length < parts) {
        if (end - start === 1) return undefined;
        rows = Math.ceil((end - start) / 2);
        continue;
      }
      got.forEach((piece, p) => pieces[p]!.push(piece));
      partitionDevice!.steps += 1;
      start = end;
    }
    return pieces.map((ps) => concatRows(ps.length > 0 ? ps : [{ words: new Uint32Array(0), count: 0, width: r.width }], r.width));
  };
  /**
   * Runs `kernel` in steps over partitions of its inputs, which go to host memory (partitioned.ts), as do its output's
   * rows; the steps have the budget less what could not be spilled.
   */
  const launchPartitioned = async (kernel: KirKernel, inputIds: readonly VarId[]): Promise<{ inputs: HostRows[]; output: HostRows }> => {
    partitionedLaunches += 1;
    const host: HostRows[] = [];
    for (const id of inputIds) host.push(await toHost(id, kernel));
    await makeRoom(Math.ceil(limit! / 2), new Set());
    const device = partitionsWithin();
    const [steps, onHost, uploaded] = [device.steps, device.onHost, partitionUploadBytes];
    let out: HostRows;
    try {
      out = await runPartitioned(device, kernel, host, variables);
      let kind = partitionedKinds.get(kernel.kind);
      if (!kind) partitionedKinds.set(kernel.kind, (kind = { kind: kernel.kind, launches: 0, steps: 0, uploadBytes: 0, onHost: 0 }));
      kind.launches += 1;
      kind.steps += device.steps - steps;
      kind.uploadBytes += partitionUploadBytes - uploaded;
      kind.onHost += device.onHost - onHost;
    } catch (e) {
      if (!(e instanceof PartitionLimit)) throw e;
      const id = inputIds[e.input]!;
      const whole = host[e.input]!;
      throw await limitError(
        `device memory limit exceeded: ${describeKernel(kernel)} reads ${describeVariable(program, id)} of ${whole.count} rows, ` +
          `${formatBytes(whole.count * whole.width * 4)}; its smallest partition, ${e.rows} row${e.rows === 1 ? '' : 's'}, ${formatBytes(e.bytes)}, with the rows it meets is ` +
          `more than the whole budget${spillSummary()}; ${budgetText(limit!)}`,
      );
    } finally {
      g.pool.trim();
    }
    assign(kernel.output, undefined);
    spilled.set(kernel.output, spills.kept(out, false));
    return { inputs: host, output: out };
  };

  /** Releases the buffers of a value store() refuses that no variable holds (nor a resident relation). */
  const releaseRefused = (next: DeviceRelation): void => {
    for (const part of leaves(next)) if (!holders.has(part.buffer!) && !pinned.has(part.buffer!)) releaseRelation(gpu, part);
  };

  /**
   * assign() for a freshly computed value, failing first when its buffer would break the memory limit (a
   * pending count's buffer has room for its bound) or the relation would pass maxTuples. A pending count
   * is resolved only when its bound passes maxTuples, so the check costs no host sync until then.
   */
  const store = async (id: VarId, next: DeviceRelation, by: string, orElse?: () => Promise<void>): Promise<void> => {
    const reused = new Set(leaves(next).map((l) => l.buffer!));
    // The old value is freed only after: both were on the device while the kernel ran.
    const extra = [...reused].reduce((n, buffer) => n + (holders.has(buffer) ? 0 : buffer.size), 0);
    const relation = relationIds.get(id);
    if (relation !== undefined && options.maxTuples !== undefined && next.count > options.maxTuples && next.pending) {
      await resolveCounts();
      settle(next);
    }
    if (limit !== undefined && !(await makeRoom(extra, new Set([id]), reused))) {
      if (orElse) {
        releaseRefused(next);
        return orElse();
      }
      // The message names the exact rows (the buffer may have room for more).
      await resolveCounts().catch(() => undefined);
      const rows = settle(next).count;
      releaseRefused(next);
      throw await limitError(
        `device memory limit exceeded: ${by} made ${describeVariable(program, id)} of ${rows} rows, ` +
          `${formatBytes(extra)}, ${beside(extra)}${spillSummary()}; ${budgetText(limit)}`,
      );
    }
    if (relation !== undefined && options.maxTuples !== undefined && next.count > options.maxTuples) {
      releaseRefused(next);
      throw await limitError(
        `tuple limit exceeded: ${by} made relation ${relation} hold ${next.count} tuples; ` +
          `the limit is ${options.maxTuples} per relation (maxTuples / --max-tuples)`,
      );
    }
    assign(id, next);
  };

  // Kernels' commands go to the queue together, when the run reads something back (see CommandBatch).
  const batch = g.batch;
  attempt.recording?.start(g);
  batch.beginDeferring();
  // A guess is checked by its own run: kernels guess only while one run is in progress.
  g.runsInProgress += 1;
  // A trace holds one run's commands.
  if (g.runsInProgress > 1) batch.trace?.stop('another run started');
  g.guessing = g.runsInProgress === 1 ? attempt.run : null;
  try {
    if (options.resident) {
      const adopted = await options.resident.adopt(dict);
      attempt.recording?.adopted(adopted);
      for (const [name, rel] of adopted) {
        const id = program.relationVars[name];
        if (id === undefined || leaves(rel).length === 0) continue;
        // Pinned before store(), whose failure paths release a new buffer unless it is pinned.
        for (const part of leaves(rel)) pinned.add(part.buffer!);
        residentRelations.push(name);
        inputs.push({ name, rows: rel.count, width: rel.width });
        await store(id, rel, `the resident relation ${name}`);
      }
    }
    const keep = options.resident ? options.resident.keep.bind(options.resident) : () => false;
    /** When the relation being loaded started (relations load one after another). */
    let since = performance.now();
    await loadInitialRelations(gpu, program, initial, dict, async (id, rel, by, name, parsedOnDevice, inOrder) => {
      // A relation kept resident outlives the run's syncs: its count must be exact before the Database keeps it.
      if (rel.pending && options.resident?.keeps(name)) {
        await resolveCounts();
        settle(rel);
      }
      const ms = performance.now() - since;
      uploads.push({ name, rows: rel.count, width: rel.width, ms, ...(parsedOnDevice ? { parsedOnDevice } : {}), ...(inOrder ? { inOrder } : {}) });
      inputs.push({ name, rows: rel.count, width: rel.width });
      await store(id, rel, by);
      if (leaves(rel).length > 0 && keep(name, rel)) for (const part of leaves(rel)) pinned.add(part.buffer!);
      since = performance.now();
    }, attempt.restartable, limit === undefined ? undefined : {
      limit,
      store: async (id, rows, by, name, parsedOnDevice) => {
        if (options.maxTuples !== undefined && relationIds.has(id) && rows.count > options.maxTuples) {
          throw await limitError(`tuple limit exceeded: ${by} made relation ${name} hold ${rows.count} tuples; the limit is ${options.maxTuples} per relation (maxTuples / --max-tuples)`);
        }
        uploads.push({ name, rows: rows.count, width: rows.width, ms: performance.now() - since, ...(parsedOnDevice ? { parsedOnDevice } : {}) });
        inputs.push({ name, rows: rows.count, width: rows.width });
        assign(id, undefined);
        spilled.set(id, spills.kept(rows, !program.relations.find((r) => r.name === name)?.deviceColumns));
        since = performance.now();
      },
      sort: async (rows, keys) => {
        await makeRoom(Math.ceil(limit / 2), new Set());
        return sortWords(partitionsWithin(), rows, keys);
      },
    });
    // Loading is timed to the device's completion so evaluation time does not include it. A run that encoded no
    // commands to load (resident relations alone, or with a few host rows written as they are) need not wait.
    if (g.batch.opened !== encodersAtStart) await g.idle();
    await timer?.collect();
    loadMs = performance.now() - started;

    const blocks = new Map(program.blocks.map((b) => [b.label, b]));
    const maxSteps = options.maxBlockSteps ?? 1_000_000;
    let label = program.entry;
    for (;;) {
      const block = blocks.get(label);
      if (!block) throw new Error(`internal: no block labelled ${label}`);
      await checkTimeout();
      if (++steps > maxSteps) {
        throw await limitError(`evaluation did not reach a fixpoint within ${maxSteps} block steps`);
      }
      executions.set(label, executions.get(label)! + 1);
      account(label);
      const loop = loops.get(label);
      if (loop) {
        const iteration = (loopRun.get(label) ?? 0) + 1;
        if (options.maxIterations !== undefined && iteration > options.maxIterations) {
          throw await limitError(
            `the fixpoint loop computing ${loop.relations.join(', ')} (block ${label}) did not converge within ` +
              `${options.maxIterations} iteration${options.maxIterations === 1 ? '' : 's'} (maxIterations / --max-iterations)`,
          );
        }
        loopRun.set(label, iteration);
        loopStats.get(label)!.iterations += 1;
        const small = smallLoops.get(label);
        const most = (options.maxIterations ?? 2 ** 31) - iteration;
        const spare = limit === undefined ? Infinity : limit - liveBytes;
        if (small && most > 0 && !guessesOpen() && small.awaitsCounts(iteration, valueOf, spare)) await resolveCounts();
        if (small && most > 0 && !guessesOpen() && small.ready(iteration, valueOf, spare) && (await small.available())) {
          g.activity = `the small-delta kernel of the fixpoint loop computing ${loop.relations.join(', ')}`;
          // Past the time limit the kernel hands back at its next sync; the next launch's check stops the run, with
          // the kernel's iterations and rows in the statistics.
          const timedOut = (): boolean => options.timeoutMs !== undefined && performance.now() - runStart > options.timeoutMs;
          const ran = await small.run(gpu, valueOf, iteration, { most, maxTuples: options.maxTuples, stop: timedOut });
          checkGuesses();
          for (const [id, rel] of ran.values) {
            lastUse.set(id, ++uses);
            await store(id, rel, `the small-delta kernel of block ${label}`);
          }
          // The kernel ran iterations from this one on; the block now runs the one after them.
          loopRun.set(label, iteration + ran.iterations);
          const stat = loopStats.get(label)!;
          stat.iterations += ran.iterations;
          stat.inKernel += ran.iterations;
          executions.set(label, executions.get(label)! + ran.iterations);
          inKernelSteps += ran.iterations;
        }
      }
      for (const cmd of block.commands) {
        switch (cmd.kind) {
          case 'launch': {
            await checkTimeout();
            const kernel = program.kernels[cmd.kernel]!;
            const inputIds = kernelInputs(kernel);
            const p = kernelProfiles[kernel.id]!;
            /** The kernel in partitions, its output in host memory (partitioned.ts). */
            const partitioned = async (): Promise<void> => {
              const t = performance.now();
              g.activity = `${describeKernel(kernel)} computing ${describeOutput(program, kernel)} in partitions`;
              const ran = await launchPartitioned(kernel, inputIds);
              // Its steps read their outputs back: a guess one of them found failed makes the rows wrong.
              checkGuesses();
              // Device times of the steps are in the wall time: the timer's queries are dropped.
              await timer?.collect();
              p.milliseconds += performance.now() - t;
              p.wallMilliseconds += performance.now() - t;
              for (const r of ran.inputs) {
                p.rowsIn += r.count;
                p.bytesIn += r.count * r.width * 4;
              }
              p.rowsOut += ran.output.count;
              p.bytesOut += ran.output.count * ran.output.width * 4;
            };
            // In partitions where its inputs cannot share the budget with an output half their size, or (once on the
            // device, past a few rows) spilling cannot make room for an output and scratch as large as them each, or
            // for what the kind held beyond its inputs before: the budget then holds while the kernel runs, not only
            // between kernels (a guess: a kind's first launch may need more; store() checks the real output).
            let inParts = tooLarge(kernel, inputIds);
            let inBytes = 0;
            if (!inParts) {
              await reloadInputs(inputIds, kernel);
              inBytes = [...new Set(inputIds)].reduce((n, v) => n + leaves(values.get(v)).reduce((m, l) => m + l.buffer!.size, 0), 0);
              inParts = !(await makeRoom(needBeyond(kernel.kind, inBytes, 2), new Set(inputIds))) && inBytes >= SMALL_STEP_BYTES;
            }
            const inPartsNow = async (): Promise<void> => {
              for (const id of [...inputIds, kernel.output]) lastUse.set(id, ++uses);
              await partitioned();
              launches += 1;
              p.launches += 1;
            };
            if (inParts) {
              await inPartsNow();
              break;
            }
            for (const id of [...inputIds, kernel.output]) lastUse.set(id, ++uses);
            const inputs = inputIds.map(valueOf);
            const t0 = performance.now();
            const [workStart, createdStart] = [workMark(g), g.pool.created];
            g.activity = `${describeKernel(kernel)} computing ${describeOutput(program, kernel)}`;
            const table = tablesOf(kernel);
            const bound = table?.buffer ? { buffer: table.buffer, words: table.count } : undefined;
            // Its output may take what spilling can free: all but its inputs.
            const out = await measured(kernel.kind, inBytes, liveBytes - inBytes, () => runKernel(gpu, kernel, shaders[kernel.id]!, inputs, constWords[kernel.id]!, variables, bound)).catch(
              async (e: unknown) => {
                // Its output does not fit what the budget leaves: in partitions.
                if (e instanceof OutputRoomError) return undefined;
                if (!(e instanceof DeviceLimitError)) throw e;
                throw await limitError(`${describeKernel(kernel)} computing ${describeOutput(program, kernel)}: ${e.message}`);
              },
            );
            if (!out) {
              await inPartsNow();
              break;
            }
            // Its own work, not a profile's sync below.
            const work = workSince(g, workStart);
            for (const key of Object.keys(work) as Array<keyof RunWork>) p.work[key] += work[key];
            p.buffersCreated += g.pool.created - createdStart;
            // A kernel over many rows goes to the device at once, to run while the host encodes the ones after it.
            if (inputs.reduce((n, r) => n + r.count, 0) >= EARLY_SUBMIT_ROWS) batch.flush();
            // A profile counts exact rows (and times the kernel with its count): resolve now.
            if (options.profile) {
              await resolveCounts();
              settle(out);
              await g.idle();
            }
            const wall = performance.now() - t0;
            const ms = timer ? (await timer.collect()).nanoseconds / 1e6 : wall;
            launches += 1;
            const bytes = (r: DeviceRelation): number => r.count * r.width * 4;
            p.milliseconds += ms;
            p.wallMilliseconds += wall;
            p.launches += 1;
            for (const r of inputs) {
              p.rowsIn += r.count;
              p.bytesIn += bytes(r);
            }
            p.rowsOut += out.count;
            p.bytesOut += bytes(out);
            const op = byKernel.get(kernel.id);
            if (op) {
              op.milliseconds += ms;
              if (op.kernels[0] === kernel.id) op.launches += 1;
              // Only QP relations count for the operator, not the temporaries between its kernels.
              inputIds.forEach((v, i) => {
                if (variables[v]!.relation === undefined) return;
                op.rowsIn += inputs[i]!.count;
                op.bytesIn += bytes(inputs[i]!);
              });
              if (variables[kernel.output]!.relation !== undefined) {
                op.rowsOut += out.count;
                op.bytesOut += bytes(out);
              }
            }
            // An output that does not fit beside what cannot be spilled: the kernel again, in partitions.
            await store(kernel.output, out, describeKernel(kernel), partitioned);
            // The kernel's own syncs may have found a guess failed: its rows are wrong.
            checkGuesses();
            break;
          }
          case 'free':
            for (const v of cmd.vars) assign(v, undefined);
            break;
          case 'clear':
            assign(cmd.var, undefined);
            break;
        }
      }
      const t = block.terminator;
      if (t.kind === 'halt') {
        // One sync reads the outputs and resolves every pending count (relationRows' too); it reports any device
        // error of the run before handing out rows.
        const readStart = performance.now();
        if (attempt.recording) {
          const ids = (options.outputs ?? program.relations.filter((r) => r.output).map((r) => r.name)).map((name) => program.relationVars[name]);
          const outputs = new Map(ids.flatMap((id) => (id === undefined || spilled.has(id) ? [] : [[id, valueOf(id)] as const])));
          const why =
            g.hostSyncs !== syncStart ? 'a host sync before the final readback'
            : spills.relations > 0 || partitionedLaunches > 0 ? 'it spilled or ran in partitions'
            : outputs.size !== new Set(ids).size ? 'an output in host memory'
            : g.runsInProgress !== 1 ? 'another run was in progress'
            : undefined;
          const relations = [...relationIds.keys()].map((id) => (spilled.has(id) ? undefined : valueOf(id)));
          attempt.recording.cut(g, outputs, g.guesses.filter((q) => q.run === attempt.run), relations, why, limit);
        }
        g.activity = 'reading back the output relations';
        const relations = await readOutputs(gpu, program, options.outputs, dict, valueOf, attempt.endScopes, (id) => spilled.get(id)?.words);
        // Rows handed out must not rest on a guess that no sync checked (an output-less run reads nothing back).
        if (guessesOpen()) await resolveCounts();
        checkGuesses();
        readbackMs = performance.now() - readStart;
        return { relations, stats: stats() };
      }
      if (t.kind === 'jump') {
        label = t.target;
        continue;
      }
      const control = batches.get(block.label);
      if (control && !guessesOpen()) {
        const iteration = loopRun.get(block.label)!;
        const step = control.step(iteration, t.condition.vars.map(valueOf), options.maxIterations ?? Infinity);
        if (step === 'continue') {
          label = t.ifFalse;
          continue;
        }
      }
      // The empty test needs the deltas' exact counts: the loop's one host sync when the body ran without one (with
      // a batch's exit tests recorded on the device). Open guesses too: a branch must not follow counts of a failed
      // guess's rows.
      const history = control?.ranges() ?? [];
      let recorded: Uint32Array | undefined;
      if (t.condition.vars.some((v) => valueOf(v).pending) || guessesOpen() || history.length > 0) {
        [recorded] = await syncCounts(g, history);
        checkGuesses();
      }
      const stopped = control?.finish(recorded);
      label = stopped !== undefined || t.condition.vars.every((v) => valueOf(v).count === 0) ? t.ifTrue : t.ifFalse;
      if (loop) {
        const loopStat = loopStats.get(block.label)!;
        loopStat.batches += 1;
        if (stopped !== undefined) {
          // The iterations after the stop ran on empty deltas (loop-control.ts): they do not count.
          const past = loopRun.get(block.label)! - stopped;
          loopStat.iterations -= past;
          loopStat.overshoot += past;
          executions.set(block.label, executions.get(block.label)! - past);
          steps -= past;
          loopRun.set(block.label, stopped);
        }
        const iteration = loopRun.get(block.label)!;
        if (!loop.body.has(label)) loopRun.delete(block.label);
        options.onProgress?.({
          loop: block.label,
          relations: loop.relations,
          iteration,
          deltas: t.condition.vars.map((v) => ({ name: variables[v]!.name, rows: valueOf(v).count })),
          elapsedMs: performance.now() - started,
        });
      }
    }
  } finally {
    attempt.recording?.stop(g);
    g.runsInProgress -= 1;
    if (g.guessing === attempt.run) g.guessing = null;
    // Guesses of a run that failed are never checked.
    for (let i = g.guesses.length - 1; i >= 0; i--) {
      if (g.guesses[i]!.run === attempt.run) g.pool.release(g.guesses.splice(i, 1)[0]!.buffer);
    }
    for (const id of [...values.keys()]) assign(id, undefined);
    if (!options.resident?.table) for (const t of tables.values()) releaseRelation(gpu, t);
    for (const b of batches.values()) b.release();
    batch.endDeferring();
    if (timer) g.stopTiming();
  }
}

/**
 * Uploads facts and brings each relation into canonical form (sorted, duplicate-free) with the same
 * sort and unique kernels the plan uses, so the invariant holds from the first block on.
 */
async function loadInitialRelations(
  gpu: Gpu,
  program: KirProgram,
  initial: EncodedFacts,
  dict: StringDictionary,
  /** `inOrder`: the rows were loaded in canonical order (no sort ran). */
  store: (id: VarId, v: DeviceRelation, by: string, name: string, parsedOnDevice: boolean, inOrder: boolean) => Promise<void>,
  /** The run may start again: the host rows stay in `initial` for it. */
  keepHostWords: boolean,
  /**
   * Where a relation's loading (its rows sorted on the device) would not fit the device memory budget: made canonical
   * in host memory and kept there, for kernels to read in partitions. Undefined without a budget.
   */
  storeHost?: {
    limit: number;
    store: (id: VarId, rows: HostRows, by: string, name: string, parsedOnDevice: boolean) => Promise<void>;
    /** Rows sorted by the given words, in steps within the budget (partitioned.ts sortWords). */
    sort: (rows: HostRows, keys: readonly number[]) => Promise<HostRows>;
  },
): Promise<void> {
  const assumedEmpty = new Set(program.emptyOnEntry ?? []);
  const decls = new Map(program.relations.map((r) => [r.name, r]));
  // On a GPU every relation's load passes compile at once, not each stage's when it comes (a first load waited
  // 5.5 s for compiles over bench load --sf 3 on the H200); a CPU adapter compiles only the passes that run.
  if (!gpu.software) {
    for (const [name, rel] of initial.relations) {
      if (!rel.empty && decls.has(name)) precompileLoad(internals(gpu), decls.get(name)!, rel.count + rel.device.reduce((n, d) => n + d.count, 0));
    }
  }
  for (const [name, rel] of [...initial.relations]) {
    const id = program.relationVars[name];
    if (id === undefined || rel.empty) continue;
    if (assumedEmpty.has(name)) {
      // The compiled kernels rely on it (kernel-IR passes skip work on relations known empty at the start).
      throw new VixenError({ severity: 'error', message: `rows given for derived relation ${name}: this compiled program starts it empty` });
    }
    const decl = decls.get(name)!;
    internals(gpu).activity = `loading the facts of ${name} (${rel.count + rel.device.reduce((n, d) => n + d.count, 0)} rows)`;
    // The facts are made canonical and checked with every loaded column, those the device keeps or not.
    const variables = program.variables.map((v) => (v.id === id ? { ...v, columns: decl.columns.map((c) => c.type) } : v));
    const rows = rel.count + rel.device.reduce((n, d) => n + d.count, 0);
    // The raw rows, the sorted ones and the sort's scratch: past the budget, in host memory.
    if (storeHost && rows * rel.width * 4 * 3 > storeHost.limit) {
      const pieces = rel.count > 0 ? rel.pieces() : [];
      const parsedOnDevice = rel.device.length > 0;
      for (const parsed of rel.device.splice(0)) {
        const onDevice = await deviceRowsRelation(gpu, parsed, rel.types);
        pieces.push(await downloadRelation(gpu, onDevice));
        releaseRelation(gpu, onDevice);
      }
      if (!keepHostWords) initial.relations.delete(name);
      const types = decl.columns.map((c) => c.type);
      const all = concatRows(pieces.map((words) => ({ words, count: words.length / rel.width, width: rel.width })), rel.width);
      const canonical = uniqueSorted(await storeHost.sort(all, allWords(rel.width)));
      await checkDeclaredKeysOnHost(decl, canonical, dict, storeHost.sort);
      const kept = decl.deviceColumns ? pickWords(canonical, sortKeyWords(types, decl.deviceColumns)) : canonical;
      await storeHost.store(id, kept, `loading the facts of ${name}`, name, parsedOnDevice);
      continue;
    }
    const parsedOnDevice = rel.device.length > 0;
    let canonical: DeviceRelation;
    let order: RowsOrder | undefined;
    /** The most leading words adjacent canonical rows share, where known (canonicalOnDevice). */
    let shared: number | undefined;
    const canonicalOnHost = !parsedOnDevice && rel.width > 0 && rel.count * rel.width <= HOST_CANONICAL_WORDS;
    if (canonicalOnHost) {
      // A few host rows (inline facts, loaded by every run on resident tables): sorted and made distinct here.
      const host = concatRows(rel.pieces().map((words) => ({ words, count: words.length / rel.width, width: rel.width })), rel.width);
      const { words, count } = uniqueSorted(sortRows(host, allWords(rel.width)));
      canonical = { ...uploadRelation(gpu, words, rel.width, count), canonical: true };
    } else {
      ({ canonical, order, shared } = await canonicalOnDevice(gpu, variables, id, await uploadLoaded(gpu, rel), false, keyPrefix(decl)));
    }
    // The device has its copy: the host words need not live through the run, unless it may start again.
    if (!keepHostWords) initial.relations.delete(name);
    try {
      // Host rows were sorted by every column, device rows by the leading columns through the key (keyPrefix).
      const sortedBy = canonicalOnHost ? decl.columns.length : (keyPrefix(decl)?.length ?? decl.columns.length);
      await checkDeclaredKeys(gpu, { ...program, variables }, decl, id, canonical, dict, order?.ascending ? order.shared : shared, sortedBy);
    } catch (e) {
      releaseRelation(gpu, canonical);
      throw e;
    }
    await store(id, await keptColumns(gpu, variables, program.variables[id]!, decl, id, canonical), `loading the facts of ${name}`, name, parsedOnDevice, order?.ascending ?? false);
  }
}

/**
 * Launches and steps reading fewer bytes run whatever their kind held beyond its inputs before, and teach nothing of
 * it: their scratch is a few buffers of the least size (half this, which the figures learned leave out).
 */
const SMALL_STEP_BYTES = 4096;
/** The most room beyond its inputs a launch makes first, per byte of them (a sort's radix scratch: about 3.6). */
const MAX_BEYOND = 4;

/**
 * Host rows of at most this many words are made canonical on the host (partitioned.ts sortRows and uniqueSorted,
 * in the device sort's order) instead of by the sort and unique kernels: for TPC-H Q19's three parameter tables
 * those were more launches per run than the query's own.
 */
const HOST_CANONICAL_WORDS = 2 ** 12;

async function readOutputs(
  gpu: Gpu,
  program: KirProgram,
  wanted: readonly string[] | undefined,
  dict: StringDictionary,
  valueOf: (id: VarId) => DeviceRelation,
  /** Called once the readback is queued, when one round trip reads all outputs (downloadRelations). */
  submitted: () => void,
  /** The rows of an output spilled to host memory (valueOf gives no buffer for it). */
  hostWords: (id: VarId) => Uint32Array | undefined,
): Promise<Map<string, ResultTable>> {
  const names = wanted ?? program.relations.filter((r) => r.output).map((r) => r.name);
  const ids = names.map((name) => {
    const id = program.relationVars[name];
    if (id === undefined) throw new VixenError({ severity: 'error', message: `no relation named ${name}` });
    return id;
  });
  const rels = ids.map(valueOf);
  const words = (await downloadRelations(gpu, rels, submitted)).map((w, i) => hostWords(ids[i]!) ?? w);
  // Rows of a nullary relation have no words: its count says whether it holds (a spilled one's is on the host).
  const counts = await Promise.all(rels.map((r) => (r.width === 0 ? exactCount(internals(gpu), r) : undefined)));
  return new Map(names.map((name, i) => [name, ResultTable.fromWords(program.variables[ids[i]!]!.columns, words[i]!, dict, program.orders?.[name], counts[i])]));
}
