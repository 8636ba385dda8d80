/**
 * Host driver of the aggregate kernel (see codegen-wgsl kernels/aggregate.ts): count group starts per tile,
 * scan, read back the number of groups, then reduce each group into its output row. The word after the output
 * rows is the overflow flag of decimal sums and averages; it is read back only when the kernel has one. Inputs
 * larger than a chunk reduce in two such rounds when the kernel has the chunk and combine passes.
 */
import { VixenError, wordsOf, type Aggregate, type ScalarType } from '@vixen/queryplan';
import { AGGREGATE_CHUNK, aggregatePartialWords, COMPACT_ITEMS, type KernelShaders } from '@vixen/codegen-wgsl';
import type { GpuImpl } from './device.js';
import { encodeScan } from './kernels.js';
import { Recorder, type Bound } from './recorder.js';
import { bindingBytes, checkBindingSize, readWords, relationUsage, type DeviceRelation } from './relations.js';

/**
 * One reduction: `flags` marks group starts, the scan ranks them, `scatter` writes one row of `outWidth` words
 * per group (and may set the word after them). The caller releases the returned buffer.
 */
async function reduceGroups(g: GpuImpl, shaders: KernelShaders, rows: Bound, n: number, outWidth: number): Promise<{ buffer: GPUBuffer; groups: number }> {
  const wg = g.limits.workgroupSize;
  const tiles = Math.ceil(n / (COMPACT_ITEMS * wg));
  const words = tiles + 1 + (tiles * COMPACT_ITEMS * wg) / 32;
  checkBindingSize(g, words, `group starts of ${n} rows`);
  const offsets: Bound = { buffer: g.pool.acquire(bindingBytes(words), relationUsage()), words };
  try {
    const counting = new Recorder(g, shaders);
    counting.dispatch('flags', [rows, offsets], [n], tiles * wg);
    encodeScan(counting, offsets, tiles + 1);
    await counting.submit();
    const groups = (await readWords(g, offsets.buffer, tiles * 4, 1))[0]!;
    const outWords = groups * outWidth + 1;
    checkBindingSize(g, outWords, `aggregate of ${groups} groups x ${outWidth} words`);
    const buffer = g.pool.acquire(bindingBytes(outWords), relationUsage());
    g.device.queue.writeBuffer(buffer, groups * outWidth * 4, new Uint32Array(1));
    const reducing = new Recorder(g, shaders);
    reducing.dispatch('scatter', [rows, offsets, { buffer, words: outWords }], [n, groups], n);
    await reducing.submit();
    return { buffer, groups };
  } finally {
    g.pool.release(offsets.buffer);
  }
}

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
  let result: { buffer: GPUBuffer; groups: number };
  if (n > AGGREGATE_CHUNK && shaders.chunkScatter !== undefined) {
    // Two passes (see codegen's kernels/aggregate.ts): partials per chunk of rows, then one row per group.
    const { chunkFlags, chunkScatter, combineFlags, combineScatter } = shaders;
    const keyWords = outWidth - aggregates.reduce((w, a) => w + wordsOf(a.type), 0);
    const partialWidth = aggregatePartialWords(keyWords, aggregates, argTypes);
    const partial = await reduceGroups(g, { ...shaders, flags: chunkFlags!, scatter: chunkScatter }, rows, n, partialWidth);
    try {
      const partialRows: Bound = { buffer: partial.buffer, words: partial.groups * partialWidth };
      result = await reduceGroups(g, { ...shaders, flags: combineFlags!, scatter: combineScatter! }, partialRows, partial.groups, outWidth);
    } finally {
      g.pool.release(partial.buffer);
    }
  } else {
    result = await reduceGroups(g, shaders, rows, n, outWidth);
  }
  const { buffer, groups } = result;
  const checked = aggregates.some((a, i) => (a.fn === 'sum' || a.fn === 'avg') && argTypes[i] !== 'float32' && (a.fn === 'avg' || argTypes[i] === 'decimal'));
  if (checked && (await readWords(g, buffer, groups * outWidth * 4, 1))[0] !== 0) {
    g.pool.release(buffer);
    throw new VixenError({ severity: 'error', message: `decimal overflow: a decimal sum or average (${what}) is outside the 64-bit decimal range` });
  }
  return { buffer, count: groups, width: outWidth };
}
