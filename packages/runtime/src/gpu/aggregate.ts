/**
 * Host driver of the aggregate kernel (see codegen-wgsl kernels/aggregate.ts): reduce each tile (group starts
 * and the state of its last group), scan the group starts, turn tile states into carries, read back the number
 * of groups, then reduce again with the carries and write each group's output row. The word after the output
 * rows is the overflow flag of decimal sums and averages; it is read back only when the kernel has one.
 */
import { VixenError, type Aggregate, type ScalarType } from '@vixen/queryplan';
import { aggregateStateWords, AGG_ITEMS, type KernelShaders } from '@vixen/codegen-wgsl';
import type { GpuImpl } from './device.js';
import { encodeScan } from './kernels/scan.js';
import { Recorder, type Bound } from './recorder.js';
import { acquireBound, bindingBytes, checkBindingSize, relationUsage, syncCounts, type DeviceRelation } from './relations.js';

export async function aggregateRows(
  g: GpuImpl,
  shaders: KernelShaders,
  input: DeviceRelation,
  aggregates: readonly Aggregate[],
  argTypes: readonly (ScalarType | undefined)[],
  outWidth: number,
  what: string,
): Promise<DeviceRelation> {
  const n = input.count;
  if (n === 0 || !input.buffer) return { buffer: null, count: 0, width: outWidth };
  const rows: Bound = { buffer: input.buffer, words: n * input.width };
  const wg = g.limits.workgroupSize;
  const tiles = Math.ceil(n / (AGG_ITEMS * wg));
  // Group starts per tile (scanned into ranks), then one state per tile.
  const words = tiles + 1 + tiles * aggregateStateWords(aggregates, argTypes);
  const offsets = acquireBound(g, words, `group starts and tile states of ${n} rows`);
  try {
    const counting = new Recorder(g, shaders);
    counting.dispatch('flags', [rows, offsets], [n], tiles * wg);
    encodeScan(counting, offsets, tiles + 1);
    counting.dispatch('aggCarry', [offsets], [n], wg);
    await counting.submit();
    const groups = (await syncCounts(g, [{ buffer: offsets.buffer, offset: tiles * 4, words: 1 }]))[0]![0]!;
    const outWords = groups * outWidth + 1;
    checkBindingSize(g, outWords, `aggregate of ${groups} groups x ${outWidth} words`);
    const buffer = g.pool.acquire(bindingBytes(outWords), relationUsage());
    g.writeBuffer(buffer, groups * outWidth * 4, new Uint32Array(1));
    const reducing = new Recorder(g, shaders);
    reducing.dispatch('scatter', [rows, offsets, { buffer, words: outWords }], [n, groups], tiles * wg);
    await reducing.submit();
    const checked = aggregates.some((a, i) => (a.fn === 'sum' || a.fn === 'avg') && argTypes[i] !== 'float32' && (a.fn === 'avg' || argTypes[i] === 'decimal'));
    if (checked && (await syncCounts(g, [{ buffer, offset: groups * outWidth * 4, words: 1 }]))[0]![0] !== 0) {
      g.pool.release(buffer);
      throw new VixenError({ severity: 'error', message: `decimal overflow: a decimal sum or average (${what}) is outside the 64-bit decimal range` });
    }
    return { buffer, count: groups, width: outWidth };
  } finally {
    g.pool.release(offsets.buffer);
  }
}
