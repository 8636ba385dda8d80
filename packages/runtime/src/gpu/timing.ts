/**
 * Device time of compute passes from timestamp queries (feature 'timestamp-query', where the adapter has it):
 * every pass encoded while timing is on writes a begin and an end timestamp; `collect` resolves them and sums the
 * pass durations. Profiling uses it for per-kernel GPU times; without the feature, profiles fall back to wall time.
 */

/** WebGPU caps a query set at 4096 queries: two per pass. */
const QUERIES = 4096;

export class PassTimer {
  private readonly querySet: GPUQuerySet;
  private readonly resolved: GPUBuffer;
  private readonly readback: GPUBuffer;
  private used = 0;
  /** Passes that found the query set full and went untimed since the last collect. */
  private missed = 0;

  constructor(private readonly device: GPUDevice) {
    this.querySet = device.createQuerySet({ type: 'timestamp', count: QUERIES });
    this.resolved = device.createBuffer({ size: QUERIES * 8, usage: GPUBufferUsage.QUERY_RESOLVE | GPUBufferUsage.COPY_SRC });
    this.readback = device.createBuffer({ size: QUERIES * 8, usage: GPUBufferUsage.MAP_READ | GPUBufferUsage.COPY_DST });
  }

  /** Timestamp writes for the next pass, or undefined when the set is full (collect() frees it). */
  passWrites(): GPUComputePassTimestampWrites | undefined {
    if (this.used + 2 > QUERIES) {
      this.missed += 1;
      return undefined;
    }
    const writes = { querySet: this.querySet, beginningOfPassWriteIndex: this.used, endOfPassWriteIndex: this.used + 1 };
    this.used += 2;
    return writes;
  }

  /** Nanoseconds the passes since the last collect ran on the device, and how many passes went untimed. */
  async collect(): Promise<{ nanoseconds: number; untimedPasses: number }> {
    const used = this.used;
    const untimedPasses = this.missed;
    this.used = 0;
    this.missed = 0;
    if (used === 0) return { nanoseconds: 0, untimedPasses };
    const encoder = this.device.createCommandEncoder();
    encoder.resolveQuerySet(this.querySet, 0, used, this.resolved, 0);
    encoder.copyBufferToBuffer(this.resolved, 0, this.readback, 0, used * 8);
    this.device.queue.submit([encoder.finish()]);
    await this.readback.mapAsync(GPUMapMode.READ, 0, used * 8);
    const stamps = new BigUint64Array(this.readback.getMappedRange(0, used * 8).slice(0));
    this.readback.unmap();
    let total = 0n;
    for (let i = 0; i + 1 < used; i += 2) if (stamps[i + 1]! > stamps[i]!) total += stamps[i + 1]! - stamps[i]!;
    return { nanoseconds: Number(total), untimedPasses };
  }

  destroy(): void {
    this.querySet.destroy();
    this.resolved.destroy();
    this.readback.destroy();
  }
}
