/**
 * Device relations: row-major u32 buffers plus a row count, host-known or pending on the device (see
 * DeviceRelation.pending); upload, download, release, and the host syncs that read pending counts.
 */
import { internals, type Gpu, type GpuImpl } from './device.js';
import type { Bound, Recorder } from './recorder.js';
import { chunkedDownload, chunkedOf, chunkedRelease, chunkPieces, fitsOneChunk, settleChunks } from './chunks.js';
import { uploadWords } from './upload.js';

export interface DeviceRelation {
  /** null when count == 0, or when the rows are `chunks`. */
  buffer: GPUBuffer | null;
  count: number;
  /** Words per row. */
  width: number;
  /**
   * Known to be sorted by all columns (the order a sort on every column gives) and duplicate-free: a unique
   * kernel's output, since its input is always so sorted. Kernels that would only restore this form skip work.
   */
  canonical?: boolean;
  /**
   * Set while the row count lives only on the device: `count` is then an upper bound (the rows `buffer` has
   * room for) and the true count is the u32 this points at, until a host sync (syncCounts) resolves it.
   */
  pending?: DeviceWord;
  /** Once a sync settled a pending count: the bound `count` was while pending (for lookup order, kernels/lookup-order.ts). */
  bound?: number;
  /**
   * A relation larger than one storage binding (gpu/chunks.ts): its rows are these relations' rows, in order;
   * `count` is their sum and `pending` one of their pending count words while any is pending.
   */
  chunks?: DeviceRelation[];
  /**
   * With `chunks`: the row word offsets (most significant first) they are range-partitioned by (a chunked sort's
   * or load's): rows of a chunk come before those of later chunks in that order and rows with equal such words
   * share a chunk, so a sort with these leading key words, or a unique, may run per chunk.
   */
  ranged?: readonly number[];
  /**
   * With `chunks`: where each chunk after the first begins, known on the host (a merge past one binding keeps them,
   * so a fixpoint's union need not read the chunks' first rows back each iteration): `keys[i]`, the row words at
   * `order` (compared as u32), is at or after every key of chunks 0..i and at or before every key of the later ones.
   */
  splits?: { order: readonly number[]; keys: readonly Uint32Array[] };
}

/** A u32 in device memory at byte `offset` of `buffer` (a row count, a key mask); `value` once a host sync read it. */
export interface DeviceWord {
  buffer: GPUBuffer;
  offset: number;
  value?: number;
}

/**
 * Words that work run on a guess (a group table sized for the groups of the kernel's last run) wrote for the next
 * host sync to check: `holds` says whether the guess held, and the sync releases `buffer`. Work after such a
 * kernel goes on without waiting; a guess that failed marks its run `missed`, and the run starts again.
 */
export interface Guess {
  buffer: GPUBuffer;
  words: number;
  holds(words: Uint32Array): boolean;
  run: GuessingRun;
}

/** A run whose kernels may guess (executor.ts): one at a time per device, and only a run that can start again. */
export interface GuessingRun {
  /** Set by the sync that found one of its guesses failed: what the run computed since is wrong. */
  missed: boolean;
}

/** A guess of the run failed (see Guess): the executor runs the program again. */
export class GuessMissed extends Error {
  override name = 'GuessMissed';
}

/** A pass size or constant: a host number, or a device word the device copies into the uniform before the pass. */
export type Size = number | DeviceWord;

/** Makes `rel` exact when a sync has read its pending count (objects may share one count word). */
export function settle(rel: DeviceRelation): DeviceRelation {
  if (rel.chunks) return settleChunks(rel);
  if (rel.pending?.value !== undefined) {
    rel.bound = rel.count;
    rel.count = rel.pending.value;
    delete rel.pending;
  }
  return rel;
}

/** The row count as a pass size: the host number, or the device word while it is pending. */
export function sizeOf(rel: DeviceRelation): Size {
  return settle(rel).pending ?? rel.count;
}

/**
 * A relation with room for `capacity` rows whose row count a pass will write to the word after the rows
 * (registered until a sync reads it).
 */
export function allocPending(g: GpuImpl, capacity: number, width: number): DeviceRelation {
  checkBindingSize(g, capacity * width, `relation of ${capacity} rows x ${width} words`);
  return pendingRelation(g, g.pool.acquire(bindingBytes(capacity * width + 1), relationUsage()), capacity, width);
}

/** `buffer` as a relation of room for `capacity` rows whose count is the word after them (registered until a sync reads it). */
export function pendingRelation(g: GpuImpl, buffer: GPUBuffer, capacity: number, width: number): DeviceRelation {
  const pending: DeviceWord = { buffer, offset: capacity * width * 4 };
  g.pending.add(pending);
  return { buffer, count: capacity, width, pending };
}

/** Words of a buffer read back (syncCounts); `keep`: how many of them the caller wants, given the ranges before. */
export interface ReadRange {
  buffer: GPUBuffer;
  offset: number;
  words: number;
  keep?: (before: readonly Uint32Array[]) => number;
}

/**
 * One host round trip: copies every registered pending count word, every guess's words and the `extra` ranges
 * (buffer, byte offset, words) into one staging buffer, maps it, resolves the pending counts, checks the guesses
 * (marking the runs of those that failed) and returns the extra words.
 */
export async function syncCounts(
  g: GpuImpl,
  /**
   * Words read along with the counts; `keep`, asked once the counts are resolved and given the words kept of the
   * ranges before, says how many of a range's words the caller wants (the rest are not copied out of the mapped
   * staging buffer).
   */
  extra: ReadonlyArray<ReadRange> = [],
  /** Called once the copies and the map request are queued, before the wait. */
  submitted?: () => void,
): Promise<Uint32Array[]> {
  const pending = [...g.pending];
  const guesses = g.guesses.splice(0);
  const ranges = [
    ...pending.map((p) => ({ buffer: p.buffer, offset: p.offset, words: 1 })),
    ...guesses.map((q) => ({ buffer: q.buffer, offset: 0, words: q.words })),
    ...extra,
  ];
  const total = ranges.reduce((n, r) => n + r.words, 0);
  if (total === 0) return [];
  g.hostSyncs += 1;
  g.readbackBytes += total * 4;
  g.work.readbacks += 1;
  const staging = g.pool.acquire(total * 4, stagingUsage());
  try {
    // The copies join the commands encoded so far (the kernels writing these words): one submission.
    const encoder = g.batch.commands();
    let at = 0;
    for (const r of ranges) {
      encoder.copyBufferToBuffer(r.buffer, r.offset, staging, at * 4, r.words * 4);
      at += r.words;
    }
    g.batch.flush();
    const mapped = staging.mapAsync(GPUMapMode.READ, 0, total * 4);
    submitted?.();
    await g.waitFor(mapped);
    // Copied out before unmap: the counts and guesses, then of each extra range what its caller keeps (a speculative
    // read of an output's room holds far more words than its rows, 4 MiB of room for TPC-H Q12's 2 rows at SF 3).
    const mappedWords = new Uint32Array(staging.getMappedRange(0, total * 4));
    const out: Uint32Array[] = [];
    try {
      const words = mappedWords.slice(0, pending.length + guesses.reduce((n, q) => n + q.words, 0));
      pending.forEach((p, i) => {
        p.value = words[i]!;
        g.pending.delete(p);
      });
      at = pending.length;
      for (const q of guesses) {
        if (!q.holds(words.subarray(at, at + q.words))) q.run.missed = true;
        at += q.words;
      }
      for (const r of extra) {
        out.push(mappedWords.slice(at, at + Math.min(r.words, r.keep?.(out) ?? r.words)));
        at += r.words;
      }
    } finally {
      staging.unmap();
    }
    return out;
  } finally {
    g.pool.release(staging);
    for (const q of guesses) g.pool.release(q.buffer);
  }
}

/**
 * Submits what `rec` recorded and reads `extra` back (syncCounts) in one submission: a submission for the recorder
 * and another for the readback's copies would cost a second command buffer and queue submit of host time.
 */
export async function submitAndSync(g: GpuImpl, rec: Recorder, extra: ReadonlyArray<ReadRange>): Promise<Uint32Array[]> {
  g.batch.beginDeferring();
  try {
    await rec.submit();
    return await syncCounts(g, extra);
  } finally {
    g.batch.endDeferring();
  }
}

/** `rel`'s exact row count: a host sync (resolving every pending count) when it is pending. */
export function exactRows(gpu: Gpu, rel: DeviceRelation): Promise<number> {
  const g = internals(gpu);
  return g.scoped('exactRows', () => exactCount(g, rel));
}

/** Resolves `rel`'s count (and every other pending one) when it is pending: a host sync. */
export async function exactCount(g: GpuImpl, rel: DeviceRelation): Promise<number> {
  if (settle(rel).pending) await syncCounts(g);
  return settle(rel).count;
}

// GPUBufferUsage is a global only once openGpu() has installed the webgpu globals, hence functions.
export function relationUsage(): GPUBufferUsageFlags {
  return GPUBufferUsage.STORAGE | GPUBufferUsage.COPY_SRC | GPUBufferUsage.COPY_DST;
}

function stagingUsage(): GPUBufferUsageFlags {
  return GPUBufferUsage.MAP_READ | GPUBufferUsage.COPY_DST;
}

/** Bytes a storage binding of `words` u32 takes (bindings are never empty). */
export function bindingBytes(words: number): number {
  return Math.max(4, words * 4);
}

/** `rel`'s rows as a pass binding (its bound while the count is pending). */
export function bound(rel: DeviceRelation): Bound {
  if (rel.chunks) {
    throw new DeviceLimitError(
      `an operation that needs its input in one binding got ${rel.count} rows x ${rel.width} words, more than this device's maxStorageBufferBindingSize`,
    );
  }
  if (!rel.buffer) throw new Error('internal: binding an empty relation');
  return { buffer: rel.buffer, words: rel.count * rel.width };
}

/** A pooled storage buffer of `words` u32, after checking that it fits one binding (`what` names it if not). */
export function acquireBound(g: GpuImpl, words: number, what: string): Bound {
  checkBindingSize(g, words, what);
  return { buffer: g.pool.acquire(bindingBytes(words), relationUsage()), words };
}

/** A buffer a kernel needs is larger than the device allows (the executor names the kernel and relation). */
export class DeviceLimitError extends Error {
  override name = 'DeviceLimitError';
}

/** A kernel's output, its rows counted, needs more than GpuImpl.outputRoom: nothing of it was allocated. */
export class OutputRoomError extends Error {
  override name = 'OutputRoomError';
}

/**
 * A kernel's result (a join's rows) or working table (a hashed unique's) does not fit one binding though its
 * inputs do: gpu/chunks.ts runs the kernel again on parts of its row-wise input, or a hashed unique sorted.
 */
export class ResultLimitError extends DeviceLimitError {
  /** `rows`: the result's rows where counted (a join's total), so its parts can be sized at once. */
  constructor(message: string, readonly rows?: number) {
    super(message);
  }
}

/** Throws a ResultLimitError when a result of `words` u32 (`rows` rows, where counted) does not fit one storage binding. */
export function checkResultSize(g: GpuImpl, words: number, what: string, rows?: number): void {
  try {
    checkBindingSize(g, words, what);
  } catch (e) {
    throw new ResultLimitError((e as Error).message, rows);
  }
}

/** Throws a DeviceLimitError when `words` u32 do not fit one storage binding on this device. */
export function checkBindingSize(g: GpuImpl, words: number, what: string): void {
  const bytes = words * 4;
  if (bytes > g.limits.maxStorageBufferBindingSize) {
    throw new DeviceLimitError(
      `${what} needs ${bytes} bytes, more than this device's maxStorageBufferBindingSize (${g.limits.maxStorageBufferBindingSize} bytes)`,
    );
  }
}

/** A new relation of `count` rows (contents undefined). */
export function allocRelation(g: GpuImpl, count: number, width: number): DeviceRelation {
  if (count === 0) return { buffer: null, count, width };
  checkBindingSize(g, count * width, `relation of ${count} rows x ${width} words`);
  return { buffer: g.pool.acquire(bindingBytes(count * width), relationUsage()), count, width };
}

/**
 * An output of `input`'s row count in rows of `width` words: host-known, or pending, `rec` copying the input's count
 * word after the output's rows.
 */
export function sameCount(g: GpuImpl, rec: Recorder, input: DeviceRelation, width: number): DeviceRelation {
  const pending = settle(input).pending;
  const out = pending ? allocPending(g, input.count, width) : allocRelation(g, input.count, width);
  if (pending) rec.copy(pending.buffer, pending.offset, out.buffer!, out.pending!.offset, 4);
  return out;
}

/** `words` as pieces and their row count, checked against `width` and `count` (see uploadRelation). */
function uploadRows(words: Uint32Array | readonly Uint32Array[], width: number, count?: number): { pieces: readonly Uint32Array[]; rows: number } {
  if (width === 0 && count === undefined) throw new Error('uploadRelation: a zero-width relation needs an explicit count');
  const pieces = words instanceof Uint32Array ? [words] : words;
  const total = pieces.reduce((n, p) => n + p.length, 0);
  const rows = count ?? total / width;
  if (!Number.isInteger(rows) || rows * width !== total) {
    throw new Error(`uploadRelation: ${total} words is not ${count ?? 'a whole number of'} rows of ${width} words`);
  }
  return { pieces, rows };
}

/**
 * `count` is needed only for zero-width rows (nullary relations), where words cannot tell it. `words` may come in
 * pieces (rows back to back), so a large host relation needs no contiguous copy. Written with queue.writeBuffer:
 * for small relations, or where the caller cannot wait; large ones go through uploadRelationStaged.
 */
export function uploadRelation(gpu: Gpu, words: Uint32Array | readonly Uint32Array[], width: number, count?: number): DeviceRelation {
  const g = internals(gpu);
  g.check();
  const { pieces, rows } = uploadRows(words, width, count);
  if (!fitsOneChunk(g, rows, width)) return chunkedOf(chunkPieces(g, pieces, width).map((group) => uploadRelation(g, group, width)), width);
  const rel = allocRelation(g, rows, width);
  let at = 0;
  for (const p of pieces) {
    if (rel.buffer && p.length > 0) g.writeBuffer(rel.buffer, at * 4, p);
    at += p.length;
  }
  return rel;
}

/** uploadRelation through the device's upload plan (gpu/upload.ts: a staging ring on a GPU), for large relations. */
export async function uploadRelationStaged(gpu: Gpu, words: Uint32Array | readonly Uint32Array[], width: number, count?: number): Promise<DeviceRelation> {
  const g = internals(gpu);
  g.check();
  const { pieces, rows } = uploadRows(words, width, count);
  if (!fitsOneChunk(g, rows, width)) {
    const parts: DeviceRelation[] = [];
    for (const group of chunkPieces(g, pieces, width)) parts.push(await uploadRelationStaged(g, group, width));
    return chunkedOf(parts, width);
  }
  const rel = allocRelation(g, rows, width);
  try {
    if (rel.buffer) await uploadWords(g, rel.buffer, 0, pieces);
  } catch (e) {
    releaseRelation(g, rel);
    throw e;
  }
  return rel;
}

/** Largest staging copy of one readback: big relations come back in pieces, not one buffer as large as they are. */
const READBACK_CHUNK_BYTES = 64 * 2 ** 20;

/**
 * Reads `words` u32 from `buffer` at byte `offset`, in chunks through two staging buffers so the copy of one chunk
 * overlaps the host's reading of the previous one.
 */
export async function readWords(
  g: GpuImpl,
  buffer: GPUBuffer,
  offset: number,
  words: number,
  chunkBytes = READBACK_CHUNK_BYTES,
): Promise<Uint32Array> {
  const out = new Uint32Array(words);
  const total = words * 4;
  g.readbackBytes += total;
  g.work.readbacks += 1;
  const chunk = Math.min(total, chunkBytes);
  const staging = [g.pool.acquire(chunk, stagingUsage()), g.pool.acquire(chunk, stagingUsage())];
  const copy = (done: number, to: GPUBuffer): Promise<void> => {
    g.batch.commands().copyBufferToBuffer(buffer, offset + done, to, 0, Math.min(chunk, total - done));
    g.batch.flush();
    return to.mapAsync(GPUMapMode.READ, 0, Math.min(chunk, total - done));
  };
  try {
    let pending = copy(0, staging[0]!);
    for (let done = 0, k = 0; done < total; done += chunk, k ^= 1) {
      const bytes = Math.min(chunk, total - done);
      await g.waitFor(pending);
      if (done + chunk < total) pending = copy(done + chunk, staging[k ^ 1]!);
      out.set(new Uint32Array(staging[k]!.getMappedRange(0, bytes)), done / 4);
      staging[k]!.unmap();
    }
  } finally {
    for (const s of staging) g.pool.release(s);
  }
  // Words written by work that failed on the device mean nothing: report that work's error instead.
  await g.settle();
  return out;
}

export async function downloadRelation(gpu: Gpu, rel: DeviceRelation): Promise<Uint32Array> {
  return (await downloadRelations(gpu, [rel]))[0]!;
}

/** Room, in bytes, that downloadRelations reads along with the pending counts, before it knows the row counts. */
const SPECULATIVE_READ_BYTES = 4 * 2 ** 20;

/**
 * The rows of each relation. When all of them fit SPECULATIVE_READ_BYTES (pending ones by their room), one host
 * round trip reads their buffers together with every pending count, and the counts cut the rows; otherwise each
 * count is resolved first and each relation read on its own (in chunks).
 */
export async function downloadRelations(
  gpu: Gpu,
  rels: readonly DeviceRelation[],
  /** Called once the commands of that one round trip are submitted, before the wait (a run closes its error scopes). */
  submitted?: () => void,
): Promise<Uint32Array[]> {
  const g = internals(gpu);
  g.check();
  return g.scoped('downloadRelations', async () => {
    const held = rels.map(settle).filter((r) => r.buffer && r.count > 0);
    if (rels.every((r) => !r.chunks) && held.reduce((n, r) => n + r.count * r.width, 0) * 4 <= SPECULATIVE_READ_BYTES) {
      // Of each room, only the rows the resolved count says are copied out.
      const words = await syncCounts(g, held.map((r) => ({ buffer: r.buffer!, offset: 0, words: r.count * r.width, keep: () => settle(r).count * r.width })), submitted);
      // Words written by work that failed on the device mean nothing: report that work's error instead.
      await g.settle();
      return rels.map((r) => {
        const i = held.indexOf(r);
        return i < 0 ? new Uint32Array(0) : words[i]!;
      });
    }
    const out: Uint32Array[] = [];
    for (const rel of rels) {
      const words = (await exactCount(g, rel)) * rel.width;
      if (rel.chunks) out.push(await chunkedDownload(g, rel, words));
      else out.push(!rel.buffer || words === 0 ? new Uint32Array(0) : await readWords(g, rel.buffer, 0, words));
    }
    return out;
  });
}

export function releaseRelation(gpu: Gpu, rel: DeviceRelation): void {
  const g = internals(gpu);
  if (rel.chunks) return chunkedRelease(gpu, rel);
  // A count nobody can read any more must not be copied from a buffer handed out again.
  if (rel.pending) g.pending.delete(rel.pending);
  if (rel.buffer) g.pool.release(rel.buffer);
}
