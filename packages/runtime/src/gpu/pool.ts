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

  /** A buffer of at least `bytes` (contents undefined). */
  acquire(bytes: number, usage: GPUBufferUsageFlags): GPUBuffer {
    let size = sizeClass(bytes);
    if (size > this.maxBufferSize) size = Math.ceil(bytes / 4) * 4;
    const list = this.free.get(`${usage}:${size}`);
    const reused = list?.pop();
    if (reused) {
      this.pooled.delete(reused);
      this.pooledBytes -= reused.size;
      return reused;
    }
    return this.device.createBuffer({ size, usage });
  }

  /** Returns a buffer for reuse. Safe while GPU work using it is queued: later submissions run after it. */
  release(buffer: GPUBuffer): void {
    if (this.pooled.has(buffer)) throw new Error('internal: GPU buffer released twice');
    if (this.pooledBytes + buffer.size > this.maxPooledBytes) {
      buffer.destroy();
      return;
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
