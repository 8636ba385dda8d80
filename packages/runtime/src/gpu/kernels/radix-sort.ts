import { RADIX_BITS, RADIX_COUNT_WORDS, RADIX_ROWS_IN_HIST, RADIX_STATE_HEAD, RADIX_WINDOWS, radixItems, type KernelShaders, type PassName } from '@vixen/codegen-wgsl';
import type { GpuImpl } from '../device.js';
import { Recorder, type Bound } from '../recorder.js';
import { acquireBound, bound, checkBindingSize, sameCount, settle, sizeOf, submitAndSync, type DeviceRelation, type Size } from '../relations.js';
import { concatenate } from './concat.js';

const RADIX = 2 ** RADIX_BITS;

/** The shifts of the digit windows of a key word with varying bits `m` that hold any of them. */
function windows(m: number): number[] {
  return Array.from({ length: RADIX_WINDOWS }, (_, w) => w * RADIX_BITS).filter((s) => ((m >>> s) & (RADIX - 1)) !== 0);
}

/**
 * Rows * key words above which a sort on a CPU adapter reads its key mask back to plan only the windows that
 * vary: there a digit pass costs more than a host round trip. On a GPU the round trip costs more than the
 * passes up to far larger sorts than this one.
 */
const SOFTWARE_MASK_READBACK = 2 ** 12;

/**
 * Bytes of digit pass states up to which every pass gets its own, zeroed together (see sortPasses): the 20 passes
 * of a sort of 5 key words over about 2^20 pairs; larger sorts are bound by their passes' traffic, not by pass breaks.
 */
const STATE_REGION_BYTES = 16 * 2 ** 20;

/**
 * The passes radixSortRows may dispatch for rows of `width` words: radixTiles and radixTilePrefix only on a CPU
 * adapter (see digit), index pairs (radixKeys, radixSweepRows) only past two words.
 */
export function radixSortPasses(g: GpuImpl, width: number): PassName[] {
  const sweeps: PassName[] = width === 1 ? ['radixSweepKeys'] : width === 2 ? ['radixSweep'] : ['radixSweep', 'radixKeys', 'radixSweepRows'];
  return ['radixCount', ...(g.cpuAdapter ? (['radixTiles', 'radixTilePrefix'] as const) : []), ...sweeps];
}

/** Words of a radix sort's digit counts, key mask and pending row count for `keys` key words (one binding). */
export const radixCountWords = (keys: number): number => countWordsOf(keys) + keys + 1;

/**
 * Onesweep-style LSD radix sort of (key word, row index) pairs, the last pass writing whole rows; one-word rows are
 * sorted as bare keys and two-word rows as the pairs themselves. radixCount counts the digits of every window of
 * every key word in one read of the rows, and finds which key bits vary; then one radixSweep per window (a digit
 * pass with a look-back over the tiles' digit counts, no histogram pass or scan of its own). Without a host round
 * trip, every window of every key word gets a pass that reads its key word's mask from a device word and copies
 * where the window is constant. A large sort on a CPU adapter (of rows whose count is known) reads the mask back
 * instead and plans only the windows that vary.
 */
export async function radixSortRows(g: GpuImpl, shaders: KernelShaders, input: DeviceRelation, keyWords: readonly number[]): Promise<DeviceRelation> {
  const n = settle(input).count;
  checkBindingSize(g, Math.min(2, input.width) * n, `radix sort items for ${n} rows`);
  // Not a scratch buffer: the mask and the digit counts must outlive the submit before a mask readback.
  const counts = acquireBound(g, radixCountWords(keyWords.length), 'radix sort digit counts, key mask and rows');
  try {
    return await sortPasses(g, new Recorder(g, shaders), input, keyWords, counts);
  } finally {
    g.pool.release(counts.buffer);
  }
}

/** Words of the digit counts of `keys` key words: a multiple of any binding alignment. */
const countWordsOf = (keys: number): number => keys * RADIX_WINDOWS * RADIX;

/**
 * radixSortRows once its buffers are there: radixCount, then the plan and its digit passes. `counts` holds the
 * digit counts, then the key mask, then a word for a pending row count: the digit passes read the mask (and count)
 * where they read the counts, with no copy of them into each pass's uniforms.
 */
async function sortPasses(g: GpuImpl, rec: Recorder, input: DeviceRelation, keyWords: readonly number[], counts: Bound): Promise<DeviceRelation> {
  const n = input.count;
  const K = keyWords.length;
  const hist = { buffer: counts.buffer, offset: 0, words: countWordsOf(K) };
  const mask = { buffer: counts.buffer, offset: hist.words, words: K };
  const rows = sizeOf(input);
  const wg = g.limits.workgroupSize;
  const tiles = Math.ceil(n / (radixItems(input.width) * wg));
  // radixCount's blocks of consecutive tiles, one workgroup each: enough to fill the device (a CPU adapter runs a
  // few workgroups at a time), few enough that each flushes its counters to few global atomics.
  const per = Math.ceil(tiles / (g.software ? 64 : 2048));
  const blocks = Math.ceil(tiles / per);
  rec.clear(hist.buffer, (hist.words + mask.words) * 4);
  for (let k0 = 0; k0 < K; k0 += RADIX_COUNT_WORDS) {
    // u1 = (row words, key words counted), u2 = their row offsets.
    const offs = keyWords.slice(k0, k0 + RADIX_COUNT_WORDS);
    const keys = [input.width, offs.length, 0, 0, ...offs, ...Array<number>(RADIX_COUNT_WORDS - offs.length).fill(0)];
    rec.dispatch('radixCount', [bound(input), mask, hist], [rows, k0, blocks, per], blocks * wg, keys);
  }
  // Per key word (least significant first): its index, row offset, mask (0: every window varies, else 1 + the word
  // of the mask in the counts buffer) and windows.
  let plan: Array<{ k: number; offset: number; mask: number; shifts: number[] }>;
  if (input.pending === undefined && g.software && n * K > SOFTWARE_MASK_READBACK) {
    const masks = (await submitAndSync(g, rec, [{ buffer: mask.buffer, offset: mask.offset * 4, words: K }]))[0]!;
    plan = keyWords.map((offset, k) => ({ k, offset, mask: 0, shifts: windows(masks[k]!) })).filter((p) => p.shifts.length > 0);
    if (plan.length === 0) return concatenate(g, [input], input.width);
  } else {
    plan = keyWords.map((offset, k) => ({ k, offset, mask: 1 + mask.offset + k, shifts: windows(0xffffffff) }));
  }
  plan.reverse();
  const out = sameCount(g, rec, input, input.width);
  // The tile counter and statuses of a digit pass, zeroed before it. Where all passes' fit STATE_REGION_BYTES,
  // each pass has its own (at word u0.w of one buffer), all zeroed by one clear: a clear ends a compute pass, and
  // on a GPU each pass break costs host encoding and a device drain, more than a small sort's digit pass.
  const digits = plan.reduce((n, p) => n + p.shifts.length, 0);
  const stateWords = RADIX_STATE_HEAD + tiles * RADIX;
  const regions = digits * stateWords * 4 <= Math.min(STATE_REGION_BYTES, g.limits.maxStorageBufferBindingSize);
  const state = rec.scratch(regions ? digits * stateWords : stateWords);
  if (regions) rec.clear(state.buffer, digits * stateWords * 4);
  let passes = 0;
  // A pending row count is copied after the mask once (each pass's uniforms would need a copy of their own).
  if (typeof rows !== 'number') rec.copy(rows.buffer, rows.offset, hist.buffer, (hist.words + mask.words) * 4, 4);
  const sweepRows = typeof rows === 'number' ? rows : RADIX_ROWS_IN_HIST;
  /**
   * One digit pass from src to dst by the window at `shift` of key word k (`mask`: as in the plan), at position
   * kp of each pair, or (fromRows) at row offset `off` of the input rows themselves; `toRows`: dst gets the input rows.
   */
  const digit = (src: Bound, dst: Bound, k: number, shift: number, bits: number, kp: number, toRows = false, fromRows: number | null = null): void => {
    // u2 = (row words, the word of the counts buffer holding a pending row count).
    const keyAt = [kp, fromRows === null ? 0 : 1, fromRows ?? 0, bits, input.width, hist.words + mask.words];
    const state0 = regions ? stateWords * passes++ : 0;
    const sizes: Size[] = [rows, shift, (k * RADIX_WINDOWS + shift / RADIX_BITS) * RADIX, state0];
    if (!regions) rec.clear(state.buffer, state.words * 4);
    if (g.cpuAdapter) {
      // llvmpipe ends a shader's loops after 65,535 iterations in all (Mesa's LP_MAX_TGSI_LOOP_ITERATIONS), so a
      // look-back polling a tile the OS had not run for a while gave up with a wrong offset (1 run in 5 of a
      // 200,003-key sort on a loaded 2-core machine): there every tile's statuses are published before the pass,
      // whose look-back then never waits.
      rec.dispatch('radixTiles', [src, state], sizes, tiles * wg, keyAt);
      rec.dispatch('radixTilePrefix', [hist, state], sizes, RADIX);
    }
    const sweep = [sweepRows, ...sizes.slice(1)];
    if (toRows) rec.dispatch('radixSweepRows', [src, counts, bound(input), state, dst], sweep, tiles * wg, keyAt);
    else rec.dispatch(input.width === 1 ? 'radixSweepKeys' : 'radixSweep', [src, counts, state, dst], sweep, tiles * wg, keyAt);
  };
  if (input.width <= 2) {
    // One-word rows are the keys and two-word rows pairs already: no index pairs, no gather; the last pass
    // writes the output.
    const steps = plan.flatMap(({ k, offset, mask: bits, shifts }) => shifts.map((shift) => ({ k, shift, bits, kp: offset })));
    const words = input.width * n;
    const temps = steps.length > 1 ? [rec.scratch(words), ...(steps.length > 2 ? [rec.scratch(words)] : [])] : [];
    let src = bound(input);
    steps.forEach(({ k, shift, bits, kp }, j) => {
      const dst = j === steps.length - 1 ? bound(out) : temps[j % 2]!;
      digit(src, dst, k, shift, bits, kp);
      src = dst;
    });
  } else {
    let src = rec.scratch(2 * n);
    let dst = rec.scratch(2 * n);
    plan.forEach(({ k, offset, mask: bits, shifts }, i) => {
      // Later key words are loaded through the permutation so far; the first is read from the rows by its first pass.
      if (i > 0) rec.dispatch('radixKeys', [bound(input), src], [rows, offset, input.width], n);
      shifts.forEach((shift, j) => {
        const from = i === 0 && j === 0 ? bound(input) : src;
        const fromRows = i === 0 && j === 0 ? offset : null;
        // The very last digit pass writes the sorted rows themselves.
        if (i === plan.length - 1 && j === shifts.length - 1) return digit(from, bound(out), k, shift, bits, 0, true, fromRows);
        digit(from, dst, k, shift, bits, 0, false, fromRows);
        [src, dst] = [dst, src];
      });
    });
  }
  await rec.submit();
  return out;
}
