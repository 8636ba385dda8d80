/** Device relations: row-major u32 buffers plus a host-known row count; upload, download, release. */
import { internals, type Gpu, type GpuImpl } from './device.js';

export interface DeviceRelation {
  /** null when count == 0. */
  buffer: GPUBuffer | null;
  count: number;
  /** Words per row. */
  width: number;
  /**
   * Known to be sorted by all columns (the order a sort on every column gives) and duplicate-free: a unique
   * kernel's output, since its input is always so sorted. Kernels that would only restore this form skip work.
   */
  canonical?: boolean;
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

/** A buffer a kernel needs is larger than the device allows (the executor names the kernel and relation). */
export class DeviceLimitError extends Error {
  override name = 'DeviceLimitError';
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
 * `count` is needed only for zero-width rows (nullary relations), where words cannot tell it. `words` may come in
 * pieces (rows back to back), so a large host relation needs no contiguous copy.
 */
export function uploadRelation(gpu: Gpu, words: Uint32Array | readonly Uint32Array[], width: number, count?: number): DeviceRelation {
  const g = internals(gpu);
  g.check();
  if (width === 0 && count === undefined) throw new Error('uploadRelation: a zero-width relation needs an explicit count');
  const pieces = words instanceof Uint32Array ? [words] : words;
  const total = pieces.reduce((n, p) => n + p.length, 0);
  const rows = count ?? total / width;
  if (!Number.isInteger(rows) || rows * width !== total) {
    throw new Error(`uploadRelation: ${total} words is not ${count ?? 'a whole number of'} rows of ${width} words`);
  }
  const rel = allocRelation(g, rows, width);
  let at = 0;
  for (const p of pieces) {
    if (rel.buffer && p.length > 0) g.device.queue.writeBuffer(rel.buffer, at * 4, p);
    at += p.length;
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
  const chunk = Math.min(total, chunkBytes);
  const staging = [g.pool.acquire(chunk, stagingUsage()), g.pool.acquire(chunk, stagingUsage())];
  const copy = (done: number, to: GPUBuffer): Promise<void> => {
    const encoder = g.device.createCommandEncoder();
    encoder.copyBufferToBuffer(buffer, offset + done, to, 0, Math.min(chunk, total - done));
    g.device.queue.submit([encoder.finish()]);
    return g.orLost(to.mapAsync(GPUMapMode.READ, 0, Math.min(chunk, total - done)));
  };
  try {
    let pending = copy(0, staging[0]!);
    for (let done = 0, k = 0; done < total; done += chunk, k ^= 1) {
      const bytes = Math.min(chunk, total - done);
      await pending;
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
  const g = internals(gpu);
  g.check();
  const words = rel.count * rel.width;
  if (!rel.buffer || words === 0) return new Uint32Array(0);
  const buffer = rel.buffer;
  return g.scoped('downloadRelation', () => readWords(g, buffer, 0, words));
}

export function releaseRelation(gpu: Gpu, rel: DeviceRelation): void {
  if (rel.buffer) internals(gpu).pool.release(rel.buffer);
}
