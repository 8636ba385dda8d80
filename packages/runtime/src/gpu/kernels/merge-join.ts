/**
 * Host driver of mergeJoin (codegen-wgsl kernels/merge-join.ts): joinCount writes per-row counts (and where each
 * left row's matches start), an exclusive scan turns the counts into output offsets, and joinWrite writes the rows. The total is read back to size the output, unless
 * the longest run of equal keys on the right side (rightRun) bounds it closely enough: then the output has room for
 * that bound and its count stays pending on the device, so a fixpoint's iterations need no host sync for the join,
 * or, in a run that may start again, the room is guessed (the total it had last time) and checked at the next sync.
 */
import { JOIN_ROWS, type KernelShaders, type PassName } from '@vixen/codegen-wgsl';
import type { GpuImpl } from '../device.js';
import { CLAMP_PASSES, checkGuessAtSync, guessedRoom, mayGuess, noteTotal, Recorder, type Bound } from '../recorder.js';
import { acquireBound, allocPending, allocRelation, bound, checkResultSize, DeviceLimitError, OutputRoomError, submitAndSync, type DeviceRelation, type GuessingRun, type Size } from '../relations.js';
import { addBlockTotals, scanTotals } from './scan.js';

interface Compaction {
  /** Pass writing per-row counts, after the buffers it reads. */
  count: { pass: PassName; inputs: Bound[] };
  /** Pass writing rows at their offsets, after the buffers it reads (then offsets, output). */
  write: { pass: PassName; inputs: Bound[] };
  /** Host bound on the left rows (one thread and count each). */
  rows: number;
  /** Row counts of the inputs (left, then right), host-known or pending. */
  sizes: Size[];
  /** Host bound on the right input's rows (a join writes at most rows * right rows). */
  right: number;
  constants: Uint32Array;
  outWidth: number;
  /** The kernel's string built-in tables, bound to both passes. */
  tables?: Bound;
  /** The most right rows one left row can match (rightRun), when known: rows * rightRun bounds the output. */
  rightRun?: number;
  /** The write pass runs a thread per output row (joinWritesPerOutputRow), else one per left row. */
  perOutputRow: boolean;
}

/** Threads for `rows` rows taken JOIN_ROWS a thread, a tile of them a workgroup (see codegen's joinCount). */
const tiledThreads = (g: GpuImpl, rows: number): number => Math.ceil(rows / (JOIN_ROWS * g.limits.workgroupSize)) * g.limits.workgroupSize;

/** Threads of the write pass for an output with room for `rows` rows. */
const writeThreads = (g: GpuImpl, c: Compaction, rows: number): number => (c.perOutputRow ? tiledThreads(g, rows) : c.rows);

/** The passes' sizes: both inputs' counts, then the host bound on left rows (u0.z). */
const passSizes = (c: Compaction): Size[] => [c.sizes[0]!, c.sizes[1]!, c.rows];

/**
 * Records joinCount and the scan that turns its counts into output offsets (offsets[rows] is the total). `wraps`:
 * then offsets[rows + 1], zeroed first, is set where the running sum wrapped past 32 bits (scanWrapped: per-row join
 * counts can sum past u32).
 */
function encodeCounts(g: GpuImpl, rec: Recorder, c: Compaction, offsets: Bound, starts: Bound, wraps: boolean): void {
  if (wraps) rec.clear(offsets.buffer, 4, (c.rows + 1) * 4);
  const totals = scanTotals(rec, c.rows + 1);
  rec.dispatch(c.count.pass, [...c.count.inputs, offsets, starts, totals], passSizes(c), tiledThreads(g, c.rows + 1), c.constants, c.tables);
  addBlockTotals(rec, offsets, c.rows + 1, totals);
  if (wraps) rec.dispatch('scanWrapped', [offsets], [c.rows + 1], c.rows + 1);
}

/**
 * Records joinWrite into `out`, which has room for `room` rows (u0.w: rows past it are not written); a write per
 * output row writes the join's rows from `first` (u0.z) on.
 */
function encodeWrite(g: GpuImpl, rec: Recorder, c: Compaction, offsets: Bound, starts: Bound, out: DeviceRelation, room: number, first = 0): void {
  rec.dispatch(c.write.pass, [...c.write.inputs, offsets, starts, bound(out)], [c.sizes[0]!, c.sizes[1]!, first, room], writeThreads(g, c, room), c.constants, c.tables);
}

/**
 * Output rows a join may allocate by its bound (left rows times the longest right run) rather than by its total read
 * back, unless the bound is at most twice the left rows: small outputs, or a bound close to what they need.
 */
const BOUNDED_JOIN_ROWS = 2 ** 16;

/** Per join's passes, per right relation: its longest run of equal keys, or 'seen' after its first join. */
const rightRuns = new WeakMap<KernelShaders, WeakMap<DeviceRelation, number | 'seen'>>();

/**
 * The most rows of `right` (sorted by the join's right keys, count host-known) that share one key, when the join
 * `shaders` has joined it before: the relation is then likely loop-invariant (a fixpoint's base relation, or a
 * Database's resident table) and the one pass that finds it pays off over the launches after. undefined on a first
 * join. In a run that guesses (GpuImpl.guessing: a query on resident tables) the pass's word is read at the run's
 * next sync, for the joins after it, instead of in a host round trip of its own; a fixpoint's run reads it at once.
 */
export async function rightRun(g: GpuImpl, shaders: KernelShaders, right: DeviceRelation): Promise<number | undefined> {
  if (right.pending || right.chunks || shaders.joinRuns === undefined) return undefined;
  let runs = rightRuns.get(shaders);
  if (!runs) rightRuns.set(shaders, (runs = new WeakMap()));
  const known = runs.get(right);
  if (known === undefined) runs.set(right, 'seen');
  if (known !== 'seen') return known;
  const most = acquireBound(g, 1, 'longest key run');
  const rec = new Recorder(g, shaders);
  rec.clear(most.buffer, 4);
  rec.dispatch('joinRuns', [bound(right), most], [right.count], right.count);
  const run = g.guessing;
  if (run !== null) {
    await rec.submit();
    // Never fails: a note for later joins, released by the sync that reads it (or the run's end).
    g.guesses.push({ buffer: most.buffer, words: 1, run, holds: ([longest]) => (runs.set(right, longest!), true) });
    return undefined;
  }
  try {
    const longest = (await submitAndSync(g, rec, [{ buffer: most.buffer, offset: 0, words: 1 }]))[0]![0]!;
    runs.set(right, longest);
    return longest;
  } finally {
    g.pool.release(most.buffer);
  }
}

/** Whether an output of `bytes` (`exact`: counted) may be allocated (GpuImpl.storageCap); one of a few rows always may. */
const fitsCap = (g: GpuImpl, bytes: number, exact = false): boolean =>
  bytes <= SMALL_OUTPUT_BYTES || g.pool.inUseBytes + bytes <= g.storageCap + (exact ? g.spillableBytes : 0);
const SMALL_OUTPUT_BYTES = 4096;

/**
 * Joins: per-row counts, an exclusive scan into offsets, one host sync that reads the total (and resolves every
 * pending count), then the output gets exactly that many rows. Without the sync where the output's room is a
 * bound (boundedCompact) or, in a run that may start again, a guess (guessedCompact).
 */
export async function compact(g: GpuImpl, shaders: KernelShaders, c: Compaction): Promise<DeviceRelation> {
  const n = c.rows;
  const bounded = c.rightRun === undefined ? undefined : n * c.rightRun;
  const boundBytes = bounded === undefined ? Infinity : (bounded * c.outWidth + 1) * 4;
  if (bounded !== undefined && (bounded <= BOUNDED_JOIN_ROWS || bounded <= 2 * n) && boundBytes <= g.limits.maxStorageBufferBindingSize && fitsCap(g, boundBytes)) {
    return boundedCompact(g, shaders, c, bounded);
  }
  // Per-row counts (at most n * m rows, or n times the longest key run on the right where known) and an overflow flag.
  const wraps = n * (c.rightRun ?? c.right) > 0xffffffff;
  const run = g.guessing;
  if (run !== null && mayGuess(shaders)) {
    // A run that may start again guesses the room: the total this join had last time and more (roomFor; not the
    // left rows, far more than a selective join's total), or a row per left row at a first join. A total that may
    // pass 32 bits is checked on the device too: TPC-H Q20 at SF 10 joins 8M partsupp rows with room for some 80K
    // sums, and synced for it.
    const capacity = guessedRoom(shaders, n);
    const guessBytes = (capacity * c.outWidth + 1) * 4;
    if (guessBytes <= g.limits.maxStorageBufferBindingSize && fitsCap(g, guessBytes)) return guessedCompact(g, shaders, c, capacity, run, wraps);
  }
  const words = n + 1 + (wraps ? 1 : 0);
  const offsets = acquireBound(g, words, `offsets for ${n} rows`);
  const starts = acquireBound(g, n, `match starts of ${n} rows`);
  try {
    const rec = new Recorder(g, shaders);
    encodeCounts(g, rec, c, offsets, starts, wraps);
    const [read] = await submitAndSync(g, rec, [{ buffer: offsets.buffer, offset: n * 4, words: wraps ? 2 : 1 }]);
    const [total, wrapped] = read!;
    if (wrapped) {
      throw new DeviceLimitError(
        `joining ${n} rows with up to ${c.right} rows each gives more than ${0xffffffff} rows, ` +
          `past the 32-bit row offsets of one relation`,
      );
    }
    // Rows of one chunk (gpu/chunks.ts chunkRows): an output past it is written window by window into chunks, from
    // the offsets this sync counted, where a write runs per output row; else the caller splits the left rows.
    const chunk = Math.floor((g.limits.maxStorageBufferBindingSize / 4 - 1) / Math.max(1, c.outWidth));
    // Not a wrapped total: a guess sized by it would pass any binding and never be tried.
    noteTotal(g, shaders, total!, n);
    if (!(c.perOutputRow && c.outWidth > 0 && total! > chunk)) checkResultSize(g, total! * c.outWidth, `relation of ${total} rows x ${c.outWidth} words`, total);
    if (!fitsCap(g, total! * c.outWidth * 4, true)) throw new OutputRoomError(`a join's ${total} rows need more than the device memory budget leaves`);
    if (c.perOutputRow && total! > chunk && c.outWidth > 0) return await writeWindows(g, shaders, c, offsets, starts, total!, chunk);
    const out = allocRelation(g, total!, c.outWidth);
    if (total === 0) return out;
    const writing = new Recorder(g, shaders);
    encodeWrite(g, writing, c, offsets, starts, out, total!);
    await writing.submit();
    return out;
  } finally {
    g.pool.release(offsets.buffer);
    g.pool.release(starts.buffer);
  }
}

/**
 * The join's `total` rows (offsets counted) written `chunk` rows a chunk, each chunk by one write over its window of
 * output rows: a join past one binding without a count pass over each of the left side's parts, or copies of them.
 */
async function writeWindows(g: GpuImpl, shaders: KernelShaders, c: Compaction, offsets: Bound, starts: Bound, total: number, chunk: number): Promise<DeviceRelation> {
  const chunks: DeviceRelation[] = [];
  const writing = new Recorder(g, shaders);
  for (let first = 0; first < total; first += chunk) {
    const out = allocRelation(g, Math.min(chunk, total - first), c.outWidth);
    chunks.push(out);
    encodeWrite(g, writing, c, offsets, starts, out, out.count, first);
  }
  await writing.submit();
  return { buffer: null, count: total, width: c.outWidth, chunks };
}

/**
 * compact() into an output with room for `capacity` rows, a guess of a run that may start again (GpuImpl.guessing):
 * the total, clamped to the room, becomes the output's pending count, and the total is a Guess the run's next sync
 * checks (rows past the room are lost, and the run starts again). `wraps`: the total may pass 32 bits, so the guess
 * also fails where the scan wrapped (the run without guesses then reports it). No host sync.
 */
async function guessedCompact(g: GpuImpl, shaders: KernelShaders, c: Compaction, capacity: number, run: GuessingRun, wraps: boolean): Promise<DeviceRelation> {
  const n = c.rows;
  const offsets = acquireBound(g, n + 1 + (wraps ? 1 : 0), `offsets for ${n} rows`);
  const starts = acquireBound(g, n, `match starts of ${n} rows`);
  const total = acquireBound(g, wraps ? 2 : 1, 'join total');
  try {
    const out = allocPending(g, capacity, c.outWidth);
    const rec = new Recorder(g, shaders);
    encodeCounts(g, rec, c, offsets, starts, wraps);
    encodeWrite(g, rec, c, offsets, starts, out, capacity);
    rec.copy(offsets.buffer, n * 4, total.buffer, 0, wraps ? 8 : 4);
    rec.using(CLAMP_PASSES).dispatch('countClamp', [{ buffer: out.buffer!, words: capacity * c.outWidth + 1 }], [{ buffer: total.buffer, offset: 0 }, capacity, out.pending!.offset / 4], 1);
    await rec.submit();
    checkGuessAtSync(g, run, total.buffer, shaders, capacity, c.rows, wraps);
    return out;
  } catch (e) {
    g.pool.release(total.buffer);
    throw e;
  } finally {
    g.pool.release(offsets.buffer);
    g.pool.release(starts.buffer);
  }
}

/**
 * compact() into an output with room for `capacity` rows (a bound on the total, under 2^32): the scanned total is
 * copied to the output's count word, which stays pending. No host sync.
 */
async function boundedCompact(g: GpuImpl, shaders: KernelShaders, c: Compaction, capacity: number): Promise<DeviceRelation> {
  const n = c.rows;
  const offsets = acquireBound(g, n + 1, `offsets for ${n} rows`);
  const starts = acquireBound(g, n, `match starts of ${n} rows`);
  try {
    const out = allocPending(g, capacity, c.outWidth);
    const rec = new Recorder(g, shaders);
    encodeCounts(g, rec, c, offsets, starts, false);
    encodeWrite(g, rec, c, offsets, starts, out, capacity);
    rec.copy(offsets.buffer, n * 4, out.buffer!, out.pending!.offset, 4);
    await rec.submit();
    return out;
  } finally {
    g.pool.release(offsets.buffer);
    g.pool.release(starts.buffer);
  }
}
