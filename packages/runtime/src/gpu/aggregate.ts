/**
 * Host driver of the aggregate kernel (see codegen-wgsl kernels/aggregate.ts): reduce each tile (group starts
 * and the state of its last group), scan the group starts, turn tile states into carries, read back the number
 * of groups, then reduce again with the carries and write each group's output row. The word after the output
 * rows is the overflow flag of decimal sums and averages; it is read back only when the kernel has one. A small
 * enough output instead gets room for a group per input row and keeps its group count on the device (no
 * readback), where the kernel has no flag or the run may start again (the flag is then a Guess).
 */
import { VixenError, type Aggregate, type ScalarType } from '@vixen/queryplan';
import { aggregateScratchWords, AGG_ITEMS, type KernelShaders } from '@vixen/codegen-wgsl';
import type { GpuImpl } from './device.js';
import { encodeScan } from './kernels/scan.js';
import { Recorder, type Bound } from './recorder.js';
import { acquireBound, bindingBytes, checkBindingSize, relationUsage, sizeOf, syncCounts, type DeviceRelation } from './relations.js';

/** Outputs up to this many bytes are sized by the input's rows rather than by a readback of the group count. */
const BOUNDED_BYTES = 2 ** 26;

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
  // Group starts per tile (scanned into ranks), one state per tile, then each thread's prefix.
  const words = aggregateScratchWords(n, wg, aggregates, argTypes);
  const offsets = acquireBound(g, words, `group starts and tile states of ${n} rows`);
  const checked = aggregates.some((a, i) => (a.fn === 'sum' || a.fn === 'avg') && argTypes[i] !== 'float32' && (a.fn === 'avg' || argTypes[i] === 'decimal'));
  // Rows for every input row (at most n groups), the overflow flag, then the group count.
  const boundWords = n * outWidth + 2;
  const run = g.guessing;
  try {
    const counting = new Recorder(g, shaders);
    // A pending input: n is a bound, the passes read the row count on the device, and tiles past its rows count
    // no group starts.
    const size = sizeOf(input);
    if (input.pending) counting.clear(offsets.buffer, (tiles + 1) * 4);
    counting.dispatch('flags', [rows, offsets], [size, 0, tiles], tiles * wg);
    encodeScan(counting, offsets, tiles + 1);
    counting.dispatch('aggCarry', [offsets], [size, 0, tiles], wg);
    if ((!checked || run !== null) && boundWords * 4 <= Math.min(BOUNDED_BYTES, g.limits.maxStorageBufferBindingSize)) {
      // Room for n groups: no readback, the group count stays pending on the device. The scatter's flag word goes
      // after that room (its group count is the bound), where a guess checks it in a run that may start again
      // (one that fails runs again without guesses: the readback below then reports the overflow).
      const buffer = g.pool.acquire(bindingBytes(boundWords), relationUsage());
      counting.clear(buffer, 4, n * outWidth * 4);
      counting.dispatch('scatter', [rows, offsets, { buffer, words: boundWords }], [size, n, tiles], tiles * wg);
      const pending = { buffer, offset: (n * outWidth + 1) * 4 };
      counting.copy(offsets.buffer, tiles * 4, buffer, pending.offset, 4);
      let flag: Bound | undefined;
      if (checked) {
        flag = acquireBound(g, 1, 'decimal overflow flag');
        counting.copy(buffer, n * outWidth * 4, flag.buffer, 0, 4);
      }
      await counting.submit();
      if (flag) g.guesses.push({ buffer: flag.buffer, words: 1, run: run!, holds: ([overflow]) => overflow === 0 });
      g.pending.add(pending);
      return { buffer, count: n, width: outWidth, pending };
    }
    await counting.submit();
    const groups = (await syncCounts(g, [{ buffer: offsets.buffer, offset: tiles * 4, words: 1 }]))[0]![0]!;
    const outWords = groups * outWidth + 1;
    checkBindingSize(g, outWords, `aggregate of ${groups} groups x ${outWidth} words`);
    const buffer = g.pool.acquire(bindingBytes(outWords), relationUsage());
    g.writeBuffer(buffer, groups * outWidth * 4, new Uint32Array(1));
    const reducing = new Recorder(g, shaders);
    reducing.dispatch('scatter', [rows, offsets, { buffer, words: outWords }], [size, groups, tiles], tiles * wg);
    await reducing.submit();
    if (checked && (await syncCounts(g, [{ buffer, offset: groups * outWidth * 4, words: 1 }]))[0]![0] !== 0) {
      g.pool.release(buffer);
      throw new VixenError({ severity: 'error', message: `decimal overflow: a decimal sum or average (${what}) is outside the 64-bit decimal range` });
    }
    return { buffer, count: groups, width: outWidth };
  } finally {
    g.pool.release(offsets.buffer);
  }
}
