import { MERGE_ROWS, MERGE_TILE, type KernelShaders } from '@vixen/codegen-wgsl';
import type { GpuImpl } from '../device.js';
import { Recorder } from '../recorder.js';
import { allocPending, allocRelation, bound, settle, sizeOf, syncCounts, type DeviceRelation } from '../relations.js';
import { concatenate } from './concat.js';

/**
 * Two relations sorted by the same keys merged into one (codegen-wgsl kernels/merge.ts): mergeSplits finds where
 * each output tile starts in both inputs, then a thread per MERGE_ROWS output rows writes them.
 */
export async function mergeRows(g: GpuImpl, shaders: KernelShaders, a: DeviceRelation, b: DeviceRelation, outWidth: number): Promise<DeviceRelation> {
  if (a.count === 0 || b.count === 0) return concatenate(g, [a, b], outWidth);
  // Bounds add up over a fixpoint's iterations: when room for both would pass one binding, the true counts may not.
  if ((settle(a).pending || settle(b).pending) && ((a.count + b.count) * outWidth + 1) * 4 > g.limits.maxStorageBufferBindingSize) {
    await syncCounts(g);
    [a, b].forEach(settle);
  }
  const [na, nb] = [sizeOf(a), sizeOf(b)];
  // With a pending input count, so is the output's: their sum, on the device.
  const pending = typeof na !== 'number' || typeof nb !== 'number';
  const capacity = a.count + b.count;
  const out = pending ? allocPending(g, capacity, outWidth) : allocRelation(g, capacity, outWidth);
  const rec = new Recorder(g, shaders);
  const tiles = Math.ceil(capacity / MERGE_TILE);
  const splits = rec.scratch(tiles + 1);
  rec.dispatch('mergeSplits', [bound(a), bound(b), splits], [na, nb], tiles + 1);
  rec.dispatch('merge', [bound(a), bound(b), splits, bound(out)], [na, nb], tiles * (MERGE_TILE / MERGE_ROWS));
  if (out.pending) rec.dispatch('countSum', [{ buffer: out.buffer!, words: capacity * outWidth + 1 }], [na, nb, out.pending.offset / 4], 1);
  await rec.submit();
  return out;
}
