/**
 * Reads land in mapped upload buffers (MAP_WRITE, COPY_SRC): the file's bytes go from the page cache straight into
 * memory the device copies from, on libuv's threads, and never through the main thread. Buffers of the usual size
 * are mapped again once their chunk's copy is done, for later reads of the file. The device text parser
 * (parse-text.ts) and the store loader (store-columns.ts) read through it.
 */
import type { GpuImpl } from './device.js';
import type { ReadMemory } from './text-chunks.js';

export class MappedReads implements ReadMemory<GPUBuffer> {
  /** Mapped buffers to read into again, with their mapped range (a second getMappedRange of a mapping fails). */
  private readonly spare: Array<{ buffer: GPUBuffer; bytes: Uint8Array }> = [];
  private readonly ranges = new Map<GPUBuffer, Uint8Array>();
  private readonly all = new Set<GPUBuffer>();
  private usual = 0;
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
    const reused = bytes <= this.usual ? this.spare.pop() : undefined;
    if (reused) return reused;
    const buffer = this.g.device.createBuffer({ size: Math.max(bytes, this.usual), usage: GPUBufferUsage.MAP_WRITE | GPUBufferUsage.COPY_SRC, mappedAtCreation: true });
    this.all.add(buffer);
    return { buffer, bytes: this.range(buffer) };
  }

  private range(buffer: GPUBuffer): Uint8Array {
    const bytes = new Uint8Array(buffer.getMappedRange());
    this.ranges.set(buffer, bytes);
    return bytes;
  }

  give(buffer: GPUBuffer): void {
    if (buffer.size !== this.usual || !this.all.has(buffer)) {
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

  private drop(buffer: GPUBuffer): void {
    this.all.delete(buffer);
    this.ranges.delete(buffer);
    buffer.destroy();
  }

  /** Every buffer destroyed (the file is read; a buffer still being mapped is destroyed too). */
  destroy(): void {
    for (const b of this.all) b.destroy();
    this.all.clear();
    this.ranges.clear();
    this.spare.length = 0;
  }
}
