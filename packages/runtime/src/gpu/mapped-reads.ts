/**
 * Reads land in mapped upload buffers (MAP_WRITE, COPY_SRC): the file's bytes go from the page cache straight into
 * memory the device copies from, on libuv's threads, and never through the main thread. Buffers of the usual size
 * are mapped again once their chunk's copy is done, for later reads of the file. The device text parser
 * (parse-text.ts) and the store loader (store-columns.ts) read through it, each load holding a device's kept buffers
 * (holdReads).
 */
import type { GpuImpl } from './device.js';
import type { ReadMemory } from './text-chunks.js';

export class MappedReads implements ReadMemory<GPUBuffer> {
  /** Mapped buffers to read into again, with their mapped range (a second getMappedRange of a mapping fails). */
  private readonly spare: Array<{ buffer: GPUBuffer; bytes: Uint8Array }> = [];
  private readonly ranges = new Map<GPUBuffer, Uint8Array>();
  private readonly all = new Set<GPUBuffer>();
  private usual = 0;
  /** Bytes of the buffers made and not destroyed. */
  private made = 0;
  /** Buffers being mapped again. */
  private readonly remapping = new Set<Promise<void>>();

  /** `limit`: buffers of the usual size past which a take waits for one being mapped again (if any is). */
  constructor(
    private readonly g: GpuImpl,
    private readonly limit = Infinity,
  ) {}

  async take(size: number): Promise<{ buffer: GPUBuffer; bytes: Uint8Array }> {
    const bytes = Math.ceil(size / 4) * 4;
    this.usual ||= bytes;
    while (bytes <= this.usual && this.spare.length === 0 && this.all.size >= this.limit && this.remapping.size > 0) await Promise.race(this.remapping);
    let reused = bytes <= this.usual ? this.spare.pop() : undefined;
    // One the device refused (found out since it was kept) is dropped: its copies would fail every later load.
    while (reused && this.g.pool.refused(reused.buffer)) {
      this.drop(reused.buffer);
      reused = this.spare.pop();
    }
    if (reused) return reused;
    const buffer = this.g.pool.createMapped(Math.max(bytes, this.usual));
    this.all.add(buffer);
    this.made += buffer.size;
    return { buffer, bytes: this.range(buffer) };
  }

  private range(buffer: GPUBuffer): Uint8Array {
    const bytes = new Uint8Array(buffer.getMappedRange());
    this.ranges.set(buffer, bytes);
    return bytes;
  }

  give(buffer: GPUBuffer): void {
    if (buffer.size !== this.usual || !this.all.has(buffer) || this.g.pool.refused(buffer)) {
      this.drop(buffer);
      return;
    }
    const mapped = this.ranges.get(buffer);
    if (buffer.mapState === 'mapped' && mapped) {
      this.spare.push({ buffer, bytes: mapped });
      return;
    }
    this.ranges.delete(buffer);
    const remap = buffer.mapAsync(GPUMapMode.WRITE).then(
      () => void (this.all.has(buffer) ? this.spare.push({ buffer, bytes: this.range(buffer) }) : undefined),
      () => this.drop(buffer),
    );
    this.remapping.add(remap);
    void remap.then(() => this.remapping.delete(remap));
  }

  /** Bytes of its buffers, mapped or being copied from. */
  get bytes(): number {
    return this.made;
  }

  private drop(buffer: GPUBuffer): void {
    if (this.all.delete(buffer)) this.made -= buffer.size;
    this.ranges.delete(buffer);
    this.g.pool.destroyMapped(buffer);
  }

  /** Every buffer destroyed (the file is read; a buffer still being mapped is destroyed too). */
  destroy(): void {
    for (const b of this.all) this.g.pool.destroyMapped(b);
    this.all.clear();
    this.made = 0;
    this.ranges.clear();
    this.spare.length = 0;
  }
}

/** A device's kept read buffers are destroyed once no load has read through them for this long. */
const IDLE_READS_MS = 5000;

/** A device's read buffers of one read size and limit, kept from one load to the next. */
interface KeptReads {
  memory: MappedReads;
  readBytes: number;
  limit: number;
  /** Loads reading through them. */
  users: number;
  idle?: ReturnType<typeof setTimeout>;
}

const keptOf = new WeakMap<GpuImpl, KeptReads>();

/**
 * Read buffers for a load of `readBytes` reads (`limit`: as MappedReads takes it), and what to call once it is done
 * with them. A new mapped buffer costs the host its allocation, zeroing and page faults, so a device's buffers are kept
 * from one load to the next (bench load reads eight tables one after another) and destroyed once no load has used them
 * for IDLE_READS_MS (or by dropIdleReads); a load of another read size or limit while they are in use gets buffers of
 * its own, destroyed when it is done.
 */
export function holdReads(g: GpuImpl, readBytes: number, limit = Infinity): { memory: MappedReads; letGo: () => void } {
  let kept = keptOf.get(g);
  const fits = (k: KeptReads): boolean => k.readBytes === readBytes && k.limit === limit;
  if (kept && !fits(kept) && kept.users === 0) {
    clearTimeout(kept.idle);
    kept.memory.destroy();
    kept = undefined;
  }
  if (!kept) keptOf.set(g, (kept = { memory: new MappedReads(g, limit), readBytes, limit, users: 0 }));
  if (!fits(kept)) {
    const own = new MappedReads(g, limit);
    return { memory: own, letGo: () => own.destroy() };
  }
  const k = kept;
  k.users++;
  clearTimeout(k.idle);
  const letGo = (): void => {
    if (--k.users > 0) return;
    k.idle = setTimeout(() => dropKept(g, k), IDLE_READS_MS);
    k.idle.unref();
  };
  return { memory: k.memory, letGo };
}

function dropKept(g: GpuImpl, k: KeptReads): void {
  clearTimeout(k.idle);
  k.memory.destroy();
  if (keptOf.get(g) === k) keptOf.delete(g);
}

/** Destroys a device's kept read buffers now, unless a load is reading through them (Database.clear). */
export function dropIdleReads(g: GpuImpl): void {
  const k = keptOf.get(g);
  if (k && k.users === 0) dropKept(g, k);
}

/** Bytes of a device's kept read buffers (host memory, mapped for writing). */
export function keptReadBytes(g: GpuImpl): number {
  return keptOf.get(g)?.memory.bytes ?? 0;
}
