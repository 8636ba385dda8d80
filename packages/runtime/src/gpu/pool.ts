/** Reuses released GPU buffers by (usage, size class) so the executor's many short-lived relations are cheap. */

/** Size classes 2^k and 1.5 * 2^k (at least 256 bytes): at most 33% slack. */
function sizeClass(bytes: number): number {
  if (bytes <= 256) return 256;
  const p = 2 ** Math.ceil(Math.log2(bytes));
  return (p / 4) * 3 >= bytes ? (p / 4) * 3 : p;
}

export class BufferPool {
  private readonly free = new Map<string, GPUBuffer[]>();
  private readonly pooled = new Set<GPUBuffer>();
  private pooledBytes = 0;

  constructor(
    private readonly device: GPUDevice,
    private readonly maxBufferSize: number,
    /** Bytes of free buffers kept for reuse; beyond this, released buffers are destroyed. */
    private readonly maxPooledBytes: number,
  ) {}

  /**
   * A buffer of at least `bytes` (contents undefined): a free one of the same size class, else the smallest free
   * one up to twice that size (sizes drift between fixpoint iterations), else a new one. New large buffers are
   * expensive: the driver allocates and Dawn zero-fills them.
   */
  acquire(bytes: number, usage: GPUBufferUsageFlags): GPUBuffer {
    let size = sizeClass(bytes);
    if (size > this.maxBufferSize) size = Math.ceil(bytes / 4) * 4;
    const reused = this.take(`${usage}:${size}`) ?? this.takeLarger(usage, size);
    return reused ?? this.device.createBuffer({ size, usage });
  }

  private take(key: string): GPUBuffer | undefined {
    const reused = this.free.get(key)?.pop();
    if (reused) {
      this.pooled.delete(reused);
      this.pooledBytes -= reused.size;
    }
    return reused;
  }

  private takeLarger(usage: GPUBufferUsageFlags, size: number): GPUBuffer | undefined {
    let best: number | undefined;
    for (const [key, list] of this.free) {
      if (list.length === 0 || !key.startsWith(`${usage}:`)) continue;
      const s = Number(key.slice(key.indexOf(':') + 1));
      if (s > size && s <= 2 * size && (best === undefined || s < best)) best = s;
    }
    return best === undefined ? undefined : this.take(`${usage}:${best}`);
  }

  /**
   * Returns a buffer for reuse, evicting the longest-pooled buffers beyond the byte budget. Safe while GPU work
   * using it is queued: later submissions run after it.
   */
  release(buffer: GPUBuffer): void {
    if (this.pooled.has(buffer)) throw new Error('internal: GPU buffer released twice');
    if (buffer.size > this.maxPooledBytes) {
      buffer.destroy();
      return;
    }
    for (const old of this.pooled) {
      if (this.pooledBytes + buffer.size <= this.maxPooledBytes) break;
      const list = this.free.get(`${old.usage}:${old.size}`)!;
      list.splice(list.indexOf(old), 1);
      this.pooled.delete(old);
      this.pooledBytes -= old.size;
      old.destroy();
    }
    const key = `${buffer.usage}:${buffer.size}`;
    let list = this.free.get(key);
    if (!list) this.free.set(key, (list = []));
    list.push(buffer);
    this.pooled.add(buffer);
    this.pooledBytes += buffer.size;
  }

  dispose(): void {
    for (const b of this.pooled) b.destroy();
    this.pooled.clear();
    this.free.clear();
    this.pooledBytes = 0;
  }
}
