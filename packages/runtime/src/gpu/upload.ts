/**
 * Host-to-device uploads of large data (facts, store columns, text chunks to parse). queue.writeBuffer in dawn.node
 * moved 1.1-3.0 GB/s on the lent H200: Dawn allocates a fresh staging buffer for every large write and copies into
 * it. The alternative here keeps a ring of MAP_WRITE staging buffers that live across uploads: each chunk is written
 * into a mapped staging buffer (or read from a file straight into it, no host copy), unmapped, copied on the
 * device with copyBufferToBuffer, and the buffer is mapped again for a later chunk while the next ones are filled,
 * several in flight. `vixen bench load` measures both (`upload` rows) on the device at hand.
 */
import { internals, type Gpu, type GpuImpl } from './device.js';

export type UploadMethod = 'write' | 'staging';

export interface UploadPlan {
  method: UploadMethod;
  /** Bytes per writeBuffer call ('write'; 0: one call per piece) or per staging buffer ('staging'). */
  chunkBytes: number;
  /** Staging buffers in the ring ('staging'). */
  inFlight: number;
}

/**
 * The plan uploads use unless told otherwise (UploadPlan). On the lent H200 (bench load, 1 GiB from host memory) the
 * ring of 4 x 16 MiB moved 5.55 GB/s, 4 x 64 MiB 4.92, 8 x 64 MiB 4.05, writeBuffer 2.4-3.0 (whole or in 16 or
 * 64 MiB calls), a buffer mapped at creation 2.35; from a file through the ring 4.26 GB/s against 1.44 through
 * writeBuffer. A CPU adapter writes in 4 MiB calls: there the device's memory is host memory, and llvmpipe's GL
 * moved 16-23 GB/s so against 0.5-4 GB/s through a staging ring.
 */
export function defaultUploadPlan(gpu: Gpu): UploadPlan {
  return gpu.software ? { method: 'write', chunkBytes: 4 * 2 ** 20, inFlight: 0 } : { method: 'staging', chunkBytes: 16 * 2 ** 20, inFlight: 4 };
}

/**
 * Fills `into` with the upload's bytes [at, at + into.length): a copy from host memory, or a read from a file.
 * A promise lets a file be read straight into a staging buffer.
 */
export type UploadFill = (into: Uint8Array, at: number) => void | Promise<void>;

interface Slot {
  buffer: GPUBuffer;
  /** Resolves once the buffer is mapped for writing again (its last copy done). */
  mapped: Promise<void>;
}

/** A device's staging ring, made on its first upload with its plan's sizes (and remade when a plan differs). */
class StagingRing {
  private readonly slots: Slot[] = [];
  private next = 0;
  /** The upload using the ring now: uploads take turns (two at once could take the same slot). */
  private turn: Promise<void> = Promise.resolve();

  constructor(
    private readonly g: GpuImpl,
    readonly chunkBytes: number,
    readonly size: number,
  ) {}

  /** Runs `upload` once the uploads before it are done. */
  exclusive(upload: () => Promise<void>): Promise<void> {
    const run = this.turn.then(upload);
    this.turn = run.catch(() => undefined);
    return run;
  }

  /** The next slot, mapped (a new buffer mapped at creation while the ring is not full). */
  async take(): Promise<Slot> {
    if (this.slots.length < this.size) {
      const slot = { buffer: this.create(), mapped: Promise.resolve() };
      this.slots.push(slot);
      return slot;
    }
    const slot = this.slots[this.next]!;
    this.next = (this.next + 1) % this.size;
    const mapped = await this.g.waitFor(slot.mapped.then(() => true, () => false));
    // One the device refused (found out since) is made again: its copies would fail every later upload.
    if (!mapped || this.g.pool.refused(slot.buffer)) {
      this.g.pool.destroyMapped(slot.buffer);
      slot.buffer = this.create();
    }
    return slot;
  }

  private create(): GPUBuffer {
    return this.g.pool.createMapped(this.chunkBytes);
  }

  /** Copies `bytes` of `slot` (filled, still mapped) to `dst` at `offset`, then maps it again for a later take. */
  send(slot: Slot, dst: GPUBuffer, offset: number, bytes: number): void {
    slot.buffer.unmap();
    this.g.batch.commands().copyBufferToBuffer(slot.buffer, 0, dst, offset, bytes);
    this.g.batch.flush();
    slot.mapped = slot.buffer.mapAsync(GPUMapMode.WRITE);
    // Awaited at the slot's next take; a device lost before then must not go unhandled.
    slot.mapped.catch(() => undefined);
  }

  destroy(): void {
    for (const s of this.slots) this.g.pool.destroyMapped(s.buffer);
    this.slots.length = 0;
  }
}

const rings = new WeakMap<GpuImpl, StagingRing>();

function ringFor(g: GpuImpl, plan: UploadPlan): StagingRing {
  let ring = rings.get(g);
  if (!ring || ring.chunkBytes !== plan.chunkBytes || ring.size !== plan.inFlight) {
    ring?.destroy();
    ring = new StagingRing(g, plan.chunkBytes, plan.inFlight);
    rings.set(g, ring);
  }
  return ring;
}

/**
 * Writes `bytes` bytes (a multiple of 4) into `dst` at byte `offset` (a multiple of 4), `fill` supplying them in
 * pieces of at most the plan's chunk. Resolves once every byte was handed to the device (whose copies run in order
 * before later submissions), not once they landed.
 */
export async function uploadBytes(gpu: Gpu, dst: GPUBuffer, offset: number, bytes: number, fill: UploadFill, plan: UploadPlan = defaultUploadPlan(gpu)): Promise<void> {
  const g = internals(gpu);
  if (bytes % 4 !== 0 || offset % 4 !== 0) throw new Error(`internal: upload of ${bytes} bytes at ${offset} is not in whole words`);
  if (plan.method === 'write') {
    // writeBuffer copies at once, so one host buffer serves every chunk.
    const step = plan.chunkBytes > 0 ? Math.min(plan.chunkBytes, bytes) : bytes;
    const host = new Uint8Array(step);
    for (let at = 0; at < bytes; at += step) {
      const n = Math.min(step, bytes - at);
      await fill(host.subarray(0, n), at);
      g.writeBuffer(dst, offset + at, new Uint32Array(host.buffer, 0, n / 4));
    }
    return;
  }
  const ring = ringFor(g, plan);
  await ring.exclusive(async () => {
    for (let at = 0; at < bytes; at += ring.chunkBytes) {
      const n = Math.min(ring.chunkBytes, bytes - at);
      const slot = await ring.take();
      try {
        await fill(new Uint8Array(slot.buffer.getMappedRange(0, n)), at);
      } catch (e) {
        // The slot's range stays handed out (a second getMappedRange of it would fail): the next upload gets a new ring.
        rings.delete(g);
        ring.destroy();
        throw e;
      }
      ring.send(slot, dst, offset + at, n);
    }
  });
}

/** An UploadFill of `pieces` (of words, or of bytes) back to back. */
export function fromWords(pieces: readonly ArrayBufferView[]): UploadFill {
  const starts: number[] = [];
  let total = 0;
  for (const p of pieces) {
    starts.push(total);
    total += p.byteLength;
  }
  return (into, at) => {
    // The first piece holding byte `at`, then on until `into` is full.
    let k = 0;
    while (k + 1 < pieces.length && starts[k + 1]! <= at) k++;
    for (let done = 0; done < into.length; k++) {
      const p = pieces[k]!;
      const from = at + done - starts[k]!;
      const n = Math.min(p.byteLength - from, into.length - done);
      into.set(new Uint8Array(p.buffer, p.byteOffset + from, n), done);
      done += n;
    }
  };
}

/** Uploads smaller than this go through one writeBuffer whatever the plan: a staging round trip would cost more. */
const SMALL_UPLOAD_BYTES = 2 ** 20;

/** uploadBytes of `pieces` of words back to back; 'write' writes views of them, no host copy. */
export async function uploadWords(gpu: Gpu, dst: GPUBuffer, offset: number, pieces: readonly Uint32Array[], plan: UploadPlan = defaultUploadPlan(gpu)): Promise<void> {
  const bytes = pieces.reduce((n, p) => n + p.byteLength, 0);
  if (plan.method === 'staging' && bytes >= SMALL_UPLOAD_BYTES) return uploadBytes(gpu, dst, offset, bytes, fromWords(pieces), plan);
  const g = internals(gpu);
  const step = plan.method === 'write' && plan.chunkBytes > 0 ? plan.chunkBytes / 4 : Infinity;
  let at = offset;
  for (const p of pieces) {
    for (let w = 0; w < p.length; w += step) g.writeBuffer(dst, at + 4 * w, p.subarray(w, Math.min(p.length, w + step)));
    at += p.byteLength;
  }
}
