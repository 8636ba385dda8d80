/**
 * Host driver of the aggregate kernel (see codegen-wgsl kernels/aggregate.ts): reduce each tile (group starts
 * and the state of its last group), scan the group starts, turn tile states into carries, read back the number
 * of groups, then reduce again with the carries and write each group's output row. The word after the output
 * rows is the overflow flag of decimal sums and averages; it is read back only when the kernel has one. Without
 * that readback, the output gets room for groups and keeps its group count on the device: a group per input row
 * where that is small enough and the kernel has no flag (or the run may start again: the flag is then a Guess),
 * and in a run that may start again, the groups of the kernel's last run and more (the group total a Guess too).
 */
import { VixenError, type Aggregate, type ScalarType } from '@vixen/queryplan';
import { aggregateScratchWords, AGG_ITEMS, type KernelShaders } from '@vixen/codegen-wgsl';
import type { GpuImpl } from './device.js';
import { encodeScan } from './kernels/scan.js';
import { CLAMP_PASSES, checkGuessAtSync, guessedRoom, mayGuess, noteTotal, Recorder, type Bound } from './recorder.js';
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
  // Room for groups without a readback: in a run that may start again, the groups of the kernel's last run and
  // more (roomFor), where a sync read them (later kernels size their work by the room: TPC-H Q18 has 4.5M groups
  // of 18M rows); else a group per input row where that is small enough.
  const run = g.guessing;
  const guessed = run !== null && mayGuess(shaders) ? guessedRoom(shaders, n, n) : n;
  const bytes = (groups: number): number => (groups * outWidth + 2) * 4;
  const room =
    guessed < n && bytes(guessed) <= g.limits.maxStorageBufferBindingSize
      ? guessed
      : (!checked || run !== null) && bytes(n) <= Math.min(BOUNDED_BYTES, g.limits.maxStorageBufferBindingSize)
        ? n
        : undefined;
  try {
    const counting = new Recorder(g, shaders);
    // A pending input: n is a bound, the passes read the row count on the device, and tiles past its rows count
    // no group starts.
    const size = sizeOf(input);
    if (input.pending) counting.clear(offsets.buffer, (tiles + 1) * 4);
    counting.dispatch('flags', [rows, offsets], [size, 0, tiles], tiles * wg);
    encodeScan(counting, offsets, tiles + 1);
    counting.dispatch('aggCarry', [offsets], [size, 0, tiles], wg);
    if (room !== undefined) {
      // Rows for `room` groups, the scatter's overflow flag (it writes no group past the room), then the group
      // count: pending on the device, no readback. A guess (the flag, a guessed room) is checked in a run that
      // may start again; one that fails runs again without guesses, where the readback below reports an overflow.
      const words = room * outWidth + 2;
      const buffer = g.pool.acquire(bindingBytes(words), relationUsage());
      counting.clear(buffer, 4, room * outWidth * 4);
      counting.dispatch('scatter', [rows, offsets, { buffer, words }], [size, room, tiles], tiles * wg);
      const pending = { buffer, offset: (room * outWidth + 1) * 4 };
      // The group total, for the next guess's room (and checked against a guessed room).
      const total = run !== null ? acquireBound(g, 1, 'group total') : undefined;
      if (total) counting.copy(offsets.buffer, tiles * 4, total.buffer, 0, 4);
      if (room === n) counting.copy(offsets.buffer, tiles * 4, buffer, pending.offset, 4);
      else counting.using(CLAMP_PASSES).dispatch('countClamp', [{ buffer, words }], [{ buffer: total!.buffer, offset: 0 }, room, pending.offset / 4], 1);
      let flag: Bound | undefined;
      if (checked) {
        flag = acquireBound(g, 1, 'decimal overflow flag');
        counting.copy(buffer, room * outWidth * 4, flag.buffer, 0, 4);
      }
      await counting.submit();
      if (total) checkGuessAtSync(g, run!, total.buffer, shaders, room, n);
      if (flag) g.guesses.push({ buffer: flag.buffer, words: 1, run: run!, holds: ([overflow]) => overflow === 0 });
      g.pending.add(pending);
      return { buffer, count: room, width: outWidth, pending };
    }
    await counting.submit();
    const groups = (await syncCounts(g, [{ buffer: offsets.buffer, offset: tiles * 4, words: 1 }]))[0]![0]!;
    noteTotal(g, shaders, groups, n);
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
