import { RADIX_BITS, radixItems, type KernelShaders } from '@vixen/codegen-wgsl';
import type { GpuImpl } from '../device.js';
import { Recorder, type Bound } from '../recorder.js';
import { acquireBound, bound, checkBindingSize, sameCount, settle, sizeOf, submitAndSync, type DeviceRelation, type Size } from '../relations.js';
import { concatenate } from './concat.js';
import { encodeScan } from './scan.js';

/** Trailing zero bits of a nonzero u32. */
function ctz(x: number): number {
  return 31 - Math.clz32(x & -x);
}

/**
 * Digit windows of one key word with varying bits `m`: the shifts of the RADIX_BITS-wide windows that cover
 * them (all windows when every bit may vary).
 */
function windows(m: number): number[] {
  const shifts: number[] = [];
  for (let s = 0; s < 32 && m >>> s !== 0; s += RADIX_BITS) {
    s += ctz(m >>> s);
    shifts.push(s);
  }
  return shifts;
}

/**
 * Rows * key words above which a sort on a CPU adapter reads its key mask back to plan only the windows that
 * vary: there a digit pass costs more than a host round trip. On a GPU the round trip costs more than the
 * passes up to far larger sorts than this one.
 */
const SOFTWARE_MASK_READBACK = 2 ** 12;

/**
 * LSD radix sort of (key word, row index) pairs, the last pass writing whole rows; one-word rows are sorted as
 * bare keys and two-word rows as the pairs themselves. radixMask finds which key bits vary (and counts the
 * first pass's digits); without a host round trip, every RADIX_BITS window of every key word gets a digit pass
 * that reads its key word's mask from a device word and copies where the window is constant. A large sort on a
 * CPU adapter (of rows whose count is known) reads the mask back instead and plans only the windows that vary.
 */
export async function radixSortRows(g: GpuImpl, shaders: KernelShaders, input: DeviceRelation, keyWords: readonly number[]): Promise<DeviceRelation> {
  const n = settle(input).count;
  checkBindingSize(g, Math.min(2, input.width) * n, `radix sort items for ${n} rows`);
  const tiles = Math.ceil(n / (radixItems(input.width) * g.limits.workgroupSize));
  // Blocks of consecutive tiles, one workgroup each: enough to fill the device (a CPU adapter runs a few
  // workgroups at a time), few enough that the digit-count table (and its scan) stays small next to the pairs.
  const per = Math.ceil(tiles / (g.software ? 64 : 2048));
  const blocks = Math.ceil(tiles / per);
  // Not scratch buffers: the mask and the first digit counts must outlive the submit before a mask readback.
  const mask = acquireBound(g, keyWords.length, 'radix sort key mask');
  const hist = acquireBound(g, 2 ** RADIX_BITS * blocks, `radix sort digit counts for ${n} rows`);
  try {
    return await sortPasses(g, new Recorder(g, shaders), input, keyWords, { mask, hist, per, blocks });
  } finally {
    g.pool.release(mask.buffer);
    g.pool.release(hist.buffer);
  }
}

/**
 * radixSortRows once its buffers are there: radixMask (which also counts the first digit pass's digits), then the
 * plan and its digit passes over `blocks` blocks of `per` tiles.
 */
async function sortPasses(
  g: GpuImpl,
  rec: Recorder,
  input: DeviceRelation,
  keyWords: readonly number[],
  { mask, hist, per, blocks }: { mask: Bound; hist: Bound; per: number; blocks: number },
): Promise<DeviceRelation> {
  const n = input.count;
  const pending = input.pending;
  const K = keyWords.length;
  const rows = sizeOf(input);
  const wg = g.limits.workgroupSize;
  const sizes = (shift: number): Size[] => [rows, shift, blocks, per];
  rec.clear(mask.buffer, K * 4);
  rec.dispatch('radixMask', [bound(input), mask, hist], sizes(0), blocks * wg);
  // Per key word (least significant first): its row offset, mask (host number or device word) and windows.
  let plan: Array<{ offset: number; mask: Size; shifts: number[] }>;
  if (!pending && g.software && n * K > SOFTWARE_MASK_READBACK) {
    const masks = (await submitAndSync(g, rec, [{ buffer: mask.buffer, offset: 0, words: K }]))[0]!;
    plan = keyWords.map((offset, k) => ({ offset, mask: masks[k]!, shifts: windows(masks[k]!) })).filter((p) => p.shifts.length > 0);
    if (plan.length === 0) return concatenate(g, [input], input.width);
  } else {
    plan = keyWords.map((offset, k) => ({ offset, mask: { buffer: mask.buffer, offset: 4 * k }, shifts: windows(0xffffffff) }));
  }
  plan.reverse();
  // radixMask counted the digits at shift 0 of the last key word: the first digit pass's counts, when that pass
  // sorts by that window (then it skips its radixHist; later passes count their own).
  let counted = plan[0]!.offset === keyWords[K - 1] && plan[0]!.shifts[0] === 0;
  const out = sameCount(g, rec, input, input.width);
  /**
   * One digit pass from src to dst, the key word (with varying bits `bits`) at position kp of each pair, or
   * (fromRows) at row offset `off` of the input rows themselves; `toRows`: dst gets the input rows.
   */
  const digit = (src: Bound, dst: Bound, shift: number, bits: Size, kp: number, toRows = false, fromRows: number | null = null): void => {
    const keyAt: Size[] = [kp, fromRows === null ? 0 : 1, fromRows ?? 0, bits];
    if (!counted) rec.dispatch('radixHist', [src, hist], sizes(shift), blocks * wg, keyAt);
    counted = false;
    encodeScan(rec, hist, hist.words);
    if (toRows) rec.dispatch('radixScatterRows', [src, hist, bound(input), dst], sizes(shift), blocks * wg, keyAt);
    else rec.dispatch(input.width === 1 ? 'radixScatterKeys' : 'radixScatter', [src, hist, dst], sizes(shift), blocks * wg, keyAt);
  };
  if (input.width <= 2) {
    // One-word rows are the keys and two-word rows pairs already: no index pairs, no gather; the last pass
    // writes the output.
    const steps = plan.flatMap(({ offset, mask: bits, shifts }) => shifts.map((shift) => ({ shift, bits, kp: offset })));
    const words = input.width * n;
    const temps = steps.length > 1 ? [rec.scratch(words), ...(steps.length > 2 ? [rec.scratch(words)] : [])] : [];
    let src = bound(input);
    steps.forEach(({ shift, bits, kp }, j) => {
      const dst = j === steps.length - 1 ? bound(out) : temps[j % 2]!;
      digit(src, dst, shift, bits, kp);
      src = dst;
    });
  } else {
    let src = rec.scratch(2 * n);
    let dst = rec.scratch(2 * n);
    plan.forEach(({ offset, mask: bits, shifts }, k) => {
      // Later key words are loaded through the permutation so far; the first is read from the rows by its first pass.
      if (k > 0) rec.dispatch('radixKeys', [bound(input), src], [rows, offset], n);
      shifts.forEach((shift, j) => {
        const from = k === 0 && j === 0 ? bound(input) : src;
        const fromRows = k === 0 && j === 0 ? offset : null;
        // The very last digit pass writes the sorted rows themselves.
        if (k === plan.length - 1 && j === shifts.length - 1) return digit(from, bound(out), shift, bits, 0, true, fromRows);
        digit(from, dst, shift, bits, 0, false, fromRows);
        [src, dst] = [dst, src];
      });
    });
  }
  await rec.submit();
  return out;
}
