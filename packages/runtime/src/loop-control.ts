/**
 * Loop control with fewer host syncs (issue 44): a fixpoint loop of one block may run several iterations without the
 * host deciding its exit test in between. Each such iteration copies its exit test's pending delta counts into a
 * history buffer on the device, and the host reads the history back with the next sync, which ends the batch: the
 * first iteration whose deltas were all empty is where the loop stopped. The iterations after it ran on empty
 * deltas and changed nothing (batchableLoop admits only loops where it shows that, and finish() checks that the deltas
 * stayed empty). The batch grows while deltas stay small and the iterations needed no
 * host sync of their own, and shrinks when deltas grow.
 */
import type { KirKernel, KirProgram, VarId } from '@vixen/kernel-ir';
import type { GpuImpl } from './gpu/device.js';
import { relationUsage, type DeviceRelation, type DeviceWord } from './gpu/relations.js';

/** What an iteration after the loop's stop holds in a variable: no rows, exactly relation variable `same`, or anything. */
type Overshoot = 'empty' | 'unknown' | { same: VarId };

/**
 * A kernel's output in an iteration after the stop, from what its inputs hold then. `grouped(v, k)`: relation v holds
 * one row per group of aggregate k (so k, a min or max, gives v back).
 */
function overshootOf(k: KirKernel, of: (v: VarId) => Overshoot, variables: KirProgram['variables'], grouped: (v: VarId, k: KirKernel) => boolean): Overshoot {
  const empty = (v: VarId): boolean => of(v) === 'empty';
  switch (k.kind) {
    case 'mapFilter':
    case 'limit':
      return empty(k.input) ? 'empty' : 'unknown';
    case 'sort': {
      // Sorted by all its columns in order, a canonical relation is itself.
      const all = k.keys.length === variables[k.input]!.columns.length && k.keys.every((c, i) => c === i);
      return empty(k.input) ? 'empty' : all && typeof of(k.input) === 'object' ? of(k.input) : 'unknown';
    }
    case 'unique':
    case 'copy':
      return empty(k.input) ? 'empty' : typeof of(k.input) === 'object' ? of(k.input) : 'unknown';
    case 'mergeJoin':
    case 'difference': {
      if (empty(k.left)) return 'empty';
      if (k.kind === 'mergeJoin') return empty(k.right) ? 'empty' : 'unknown';
      const [left, right] = [of(k.left), of(k.right)];
      // A relation less itself: a lattice loop's next delta after the stop.
      if (typeof left === 'object' && typeof right === 'object' && left.same === right.same) return 'empty';
      return empty(k.right) ? left : 'unknown';
    }
    case 'hashJoin':
      return empty(k.build) || empty(k.probe) ? 'empty' : 'unknown';
    case 'pipeline':
      // Without group columns an aggregate of no rows is a row.
      return empty(k.input) && (!k.aggregate || k.aggregate.groupBy.length > 0) ? 'empty' : 'unknown';
    case 'aggregate': {
      if (empty(k.input) && k.groupBy.length > 0) return 'empty';
      const input = of(k.input);
      return typeof input === 'object' && grouped(input.same, k) ? input : 'unknown';
    }
    case 'concat':
    case 'merge':
      if (empty(k.left)) return of(k.right);
      return empty(k.right) ? of(k.left) : 'unknown';
  }
}

/**
 * Whether the loop branching at `label` is one block that loops to itself and whose iterations after the stop change
 * nothing: at the stop its exit test's variables are empty, and so are the variables copied from them (the deltas
 * the next iteration reads). Run on that, every relation the block writes must come out as it was and those variables
 * empty again (then every further iteration is alike). Semi-naive loops of joins pass (their new rows are differences
 * of empty deltas' consequences), and so do lattice loops whose aggregates group rows (no rows in, none out).
 */
export function batchableLoop(program: KirProgram, label: string, body: ReadonlySet<string>): boolean {
  const block = program.blocks.find((b) => b.label === label);
  if (!block || body.size !== 1 || block.terminator.kind !== 'branch' || block.terminator.ifFalse !== label) return false;
  const temporary = new Set(program.relations.filter((r) => r.kind === 'temp').map((r) => r.name));
  const isRelation = (v: VarId): boolean => program.variables[v]!.relation !== undefined && !temporary.has(program.variables[v]!.relation!);
  // Variables empty at the stop: the exit test's, and those whose last write clears them or copies one of them that
  // is not written after the copy.
  const emptyAtStop = new Set(block.terminator.condition.vars);
  const lastWrite = new Map<VarId, { at: number; by: KirKernel | 'clear' }>();
  block.commands.forEach((c, at) => {
    if (c.kind === 'clear') lastWrite.set(c.var, { at, by: 'clear' });
    if (c.kind === 'launch') lastWrite.set(program.kernels[c.kernel]!.output, { at, by: program.kernels[c.kernel]! });
  });
  for (let grew = true; grew; ) {
    grew = false;
    for (const [v, { at, by }] of lastWrite) {
      if (emptyAtStop.has(v)) continue;
      const copied = by !== 'clear' && by.kind === 'copy' && emptyAtStop.has(by.input) && (lastWrite.get(by.input)?.at ?? -1) < at;
      if (by === 'clear' || copied) {
        emptyAtStop.add(v);
        grew = true;
      }
    }
  }
  // A lattice relation: its last write copies (or is) a min or max aggregate of the same groups, so at the stop it
  // holds one row per group and that aggregate gives it back.
  const grouped = (v: VarId, k: KirKernel): boolean => {
    if (k.kind !== 'aggregate' || k.groupBy.length === 0 || !k.aggregates.every((a) => a.fn === 'min' || a.fn === 'max')) return false;
    let w = lastWrite.get(v);
    if (w && w.by !== 'clear' && w.by.kind === 'copy') w = lastWrite.get(w.by.input);
    const by = w?.by;
    return by !== undefined && by !== 'clear' && by.kind === 'aggregate' && JSON.stringify([by.groupBy, by.aggregates]) === JSON.stringify([k.groupBy, k.aggregates]);
  };
  const state = new Map<VarId, Overshoot>();
  const of = (v: VarId): Overshoot => state.get(v) ?? (emptyAtStop.has(v) ? 'empty' : isRelation(v) ? { same: v } : 'unknown');
  for (const c of block.commands) {
    if (c.kind === 'clear') state.set(c.var, 'empty');
    if (c.kind === 'launch') {
      const k = program.kernels[c.kernel]!;
      state.set(k.output, overshootOf(k, of, program.variables, grouped));
    }
  }
  for (const v of lastWrite.keys()) {
    const end = of(v);
    if (isRelation(v) && !(typeof end === 'object' && end.same === v)) return false;
  }
  return [...emptyAtStop].every((v) => of(v) === 'empty');
}

/** Iterations of the first batch; it doubles up to MAX_BATCH while iterations stay small and sync-free. */
const FIRST_BATCH = 4;
const MAX_BATCH = 1024;

/**
 * Most rows of pending deltas (their bounds) an iteration may leave for the next without the host looking. Bounds
 * grow through joins (twice a grid's delta each iteration), and passes are sized by them: kept where sorts of a few
 * times that many rows still rank in one pass (kernels/sort.ts), so a batch needs no radix sort's key-mask sync and
 * no large grid of idle threads (costly on a CPU adapter).
 */
const SMALL_DELTA_ROWS = 2 ** 12;
const SMALL_DELTA_ROWS_SOFTWARE = 2 ** 8;

/** What the exit test of a batched loop does: go on without the host (`continue`), or have the host decide. */
export type LoopStep = 'continue' | 'decide';

export class LoopBatch {
  /** Iterations the current batch may run without the host deciding. */
  private limit = FIRST_BATCH;
  /** Iterations run in the current batch. */
  private ran = 0;
  /** The iterations whose exit tests the device recorded: their iteration number, first history word and words. */
  private entries: Array<{ iteration: number; at: number; words: number }> = [];
  private history: GPUBuffer | null = null;
  private used = 0;
  /** Host syncs when the batch began (after the last decision's). */
  private syncsAtStart: number;
  /** The batch ended because its deltas grew past SMALL_DELTA_ROWS. */
  private large = false;

  constructor(private readonly g: GpuImpl) {
    this.syncsAtStart = g.hostSyncs;
  }

  /**
   * The exit test of iteration `iteration` on the deltas `vars` (settled): `continue` when the loop goes on without
   * the host, recording pending counts in the history; `decide` when the host must decide (with ranges() read back).
   * `last`: the last iteration the run may take (maxIterations), past which the host decides.
   */
  step(iteration: number, vars: readonly DeviceRelation[], last: number): LoopStep {
    const pending = vars.filter((v) => v.pending);
    // A known non-empty delta: the loop goes on, nothing to record.
    if (vars.some((v) => !v.pending && v.count > 0) && this.ran < this.limit && iteration < last) {
      this.ran += 1;
      return 'continue';
    }
    if (pending.length === 0 || this.ran >= this.limit || iteration >= last) return 'decide';
    if (pending.reduce((n, v) => n + v.count, 0) > (this.g.software ? SMALL_DELTA_ROWS_SOFTWARE : SMALL_DELTA_ROWS)) {
      this.large = true;
      return 'decide';
    }
    if (!this.history) this.history = this.g.pool.acquire(4 * this.limit * vars.length, relationUsage());
    const encoder = this.g.batch.commands();
    for (const v of pending) {
      const word: DeviceWord = v.pending!;
      encoder.copyBufferToBuffer(word.buffer, word.offset, this.history, 4 * this.used, 4);
      this.used += 1;
    }
    this.entries.push({ iteration, at: this.used - pending.length, words: pending.length });
    this.ran += 1;
    return 'continue';
  }

  /** The history words the deciding sync reads back (none when the batch recorded nothing). */
  ranges(): Array<{ buffer: GPUBuffer; offset: number; words: number }> {
    return this.history && this.used > 0 ? [{ buffer: this.history, offset: 0, words: this.used }] : [];
  }

  /**
   * Ends the batch with the history read back (`words`, ranges()' order): the iteration at which the loop stopped,
   * or undefined when it did not stop in the batch. Sizes the next batch.
   */
  finish(words: Uint32Array | undefined): number | undefined {
    let stopped: number | undefined;
    for (const e of this.entries) {
      const empty = words!.subarray(e.at, e.at + e.words).every((w) => w === 0);
      if (stopped === undefined && empty) stopped = e.iteration;
      else if (stopped !== undefined && !empty) throw new Error(`internal: a batched fixpoint loop derived rows in iteration ${e.iteration}, after it stopped at ${stopped}`);
    }
    // The deciding sync is the batch's one; more were kernels' own.
    const syncFree = this.g.hostSyncs - this.syncsAtStart <= 1;
    if (this.large) this.limit = Math.max(1, this.limit >> 1);
    else if (this.ran >= this.limit && syncFree) this.limit = Math.min(MAX_BATCH, 2 * this.limit);
    this.release();
    return stopped;
  }

  /** Forgets the batch (its history buffer back to the pool). */
  release(): void {
    if (this.history) this.g.pool.release(this.history);
    this.history = null;
    this.used = 0;
    this.entries = [];
    this.ran = 0;
    this.large = false;
    this.syncsAtStart = this.g.hostSyncs;
  }
}
