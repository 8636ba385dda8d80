/**
 * Host drivers: run one KIR kernel's passes on the device. Selections (mapFilter, unique, difference) are one
 * pass that writes the kept rows and their count (a mapFilter without a filter, a projection: row i to row i);
 * mergeJoin writes per-row counts, an exclusive scan turns them into output offsets, and a second pass writes
 * the rows. Where the output is bounded by an input (all but
 * mergeJoin) its row count stays pending on the device (DeviceRelation.pending); passes read pending sizes
 * from device words, and only kernels that must size something exactly sync with the host (syncCounts),
 * resolving every pending count in the same round trip.
 */
import { rowWords, type ScalarType } from '@vixen/queryplan';
import {
  COMPACT_ITEMS,
  SELECT_STATE_HEAD,
  SELECT_UNORDERED,
  MERGE_TILE,
  RADIX_BITS,
  radixItems,
  generateKernelShaders,
  isProjection,
  rangeSelectShaders,
  hashJoinLayout,
  sortKeyWords,
  swapHashJoin,
  type KernelShaders,
  type PassName,
} from '@vixen/codegen-wgsl';
import { kernelInputs, type KirKernel, type KirVariable, type VarId } from '@vixen/kernel-ir';
import { aggregateRows } from './aggregate.js';
import { mergesPastBinding, pipelinePastBinding, releaseUnshared, runChunked } from './chunks.js';
import { hashJoinRows } from './hash.js';
import { limitRows } from './limit.js';
import { launchIsEmpty, pipelineAggregateRows, pipelineRows, type PipelineLaunch } from './pipeline.js';
import { internals, type Gpu, type GpuImpl } from './device.js';
import { memoShaders, Recorder, type Bound } from './recorder.js';
import {
  acquireBound,
  allocPending,
  allocRelation,
  bound,
  checkBindingSize,
  checkResultSize,
  DeviceLimitError,
  ResultLimitError,
  exactCount,
  settle,
  sizeOf,
  submitAndSync,
  syncCounts,
  type DeviceRelation,
  type DeviceWord,
  type Size,
} from './relations.js';

/** In-place exclusive prefix sum of `n` u32: block scans, then recursively over the block totals. */
export function encodeScan(rec: Recorder, data: Bound, n: number): void {
  const blocks = Math.ceil(n / rec.g.limits.workgroupSize);
  const sums = rec.scratch(blocks);
  rec.dispatch('scanBlock', [data, sums], [n], n);
  if (blocks > 1) {
    encodeScan(rec, sums, blocks);
    rec.dispatch('scanAdd', [data, sums], [n], n);
  }
}

interface Compaction {
  /** Pass writing per-row counts, after the buffers it reads. */
  count: { pass: PassName; inputs: Bound[] };
  /** Pass writing rows at their offsets, after the buffers it reads (then offsets, output). */
  write: { pass: PassName; inputs: Bound[] };
  /** Host bound on the left rows (one thread and count each). */
  rows: number;
  /** Row counts of the inputs (left, then right), host-known or pending. */
  sizes: Size[];
  /** Host bound on the right input's rows (a join writes at most rows * right rows). */
  right: number;
  constants: Uint32Array;
  outWidth: number;
  /** The kernel's string built-in tables, bound to both passes. */
  tables?: Bound;
}

/**
 * Joins: per-row counts, an exclusive scan into offsets, one host sync that reads the total (and resolves every
 * pending count), then the output gets exactly that many rows.
 */
async function compact(g: GpuImpl, shaders: KernelShaders, c: Compaction): Promise<DeviceRelation> {
  const n = c.rows;
  // Per-row counts (at most n * m rows) and an overflow flag.
  const wraps = n * c.right > 0xffffffff;
  const words = n + 1 + (wraps ? 1 : 0);
  // The passes read the bound on left rows from u0.z.
  const sizes: Size[] = [c.sizes[0]!, c.sizes[1]!, n];
  const offsets = acquireBound(g, words, `offsets for ${n} rows`);
  try {
    const rec = new Recorder(g, shaders);
    rec.dispatch(c.count.pass, [...c.count.inputs, offsets], sizes, n + 1, c.constants, c.tables);
    encodeScan(rec, offsets, n + 1);
    if (wraps) {
      g.writeBuffer(offsets.buffer, (n + 1) * 4, new Uint32Array(1));
      rec.dispatch('scanWrapped', [offsets], [n + 1], n + 1);
    }
    const [read] = await submitAndSync(g, rec, [{ buffer: offsets.buffer, offset: n * 4, words: wraps ? 2 : 1 }]);
    const [total, wrapped] = read!;
    if (wrapped) throw new DeviceLimitError(`the result has more than ${0xffffffff} rows (row offsets are 32-bit)`);
    checkResultSize(g, total! * c.outWidth, `relation of ${total} rows x ${c.outWidth} words`);
    const out = allocRelation(g, total!, c.outWidth);
    if (total === 0) return out;
    const writing = new Recorder(g, shaders);
    writing.dispatch(c.write.pass, [...c.write.inputs, offsets, bound(out)], sizes, n, c.constants, c.tables);
    await writing.submit();
    return out;
  } finally {
    g.pool.release(offsets.buffer);
  }
}

interface Selection {
  pass: 'select' | 'selectAbsent';
  /** The buffers the pass reads: the rows to select from, then (selectAbsent) the right side. */
  inputs: Bound[];
  /** Host bound on the rows to select from. */
  rows: number;
  /** Row counts of the inputs, host-known or pending. */
  sizes: Size[];
  constants: Uint32Array;
  outWidth: number;
  tables?: Bound;
  /** The rows may come out in any order across tiles (SELECT_UNORDERED): nothing downstream needs input order. */
  unordered?: boolean;
}

/**
 * mapFilter, unique and difference: one select pass (kernels/compaction.ts) writes the kept rows and their
 * count; the output has room for every input row and its count stays pending on the device. When that room
 * would pass one binding (a projection may widen rows), a counting run and a host sync size the output first.
 */
async function select(g: GpuImpl, shaders: KernelShaders, c: Selection): Promise<DeviceRelation> {
  const n = c.rows;
  // The pass packs counts in 30 bits of its tile status words.
  if (n >= 2 ** 30) throw new DeviceLimitError(`selecting from ${n} rows: at most ${2 ** 30 - 1} rows`);
  const wg = g.limits.workgroupSize;
  const tiles = Math.ceil(n / (COMPACT_ITEMS * wg));
  const stateWords = SELECT_STATE_HEAD + tiles;
  const state = acquireBound(g, stateWords, `select state for ${n} rows`);
  /** `out` undefined: count only; `countAt`: the output's word for the count, if it has one. */
  const run = (rec: Recorder, out: Bound | undefined, countAt?: number): void => {
    rec.clear(state.buffer, stateWords * 4);
    // Unordered, no tile knows the total when it writes: the total word is copied to the count word after the pass.
    const mode = (out === undefined ? 0 : countAt === undefined || c.unordered ? 1 : 2) | (c.unordered ? SELECT_UNORDERED : 0);
    rec.dispatch(c.pass, [...c.inputs, state, out ?? rec.scratch(1)], [c.sizes[0]!, c.sizes[1] ?? 0, mode, countAt ?? 0], tiles * wg, c.constants, c.tables);
  };
  try {
    const rec = new Recorder(g, shaders);
    if ((n * c.outWidth + 1) * 4 <= g.limits.maxStorageBufferBindingSize) {
      const out = allocPending(g, n, c.outWidth);
      const count = out.pending!;
      run(rec, bound(out), count.offset / 4);
      if (c.unordered) rec.copy(state.buffer, 4, count.buffer, count.offset, 4);
      await rec.submit();
      return out;
    }
    run(rec, undefined);
    const [read] = await submitAndSync(g, rec, [{ buffer: state.buffer, offset: 4, words: 1 }]);
    checkResultSize(g, read![0]! * c.outWidth, `relation of ${read![0]} rows x ${c.outWidth} words`);
    const out = allocRelation(g, read![0]!, c.outWidth);
    if (out.count === 0) return out;
    const writing = new Recorder(g, shaders);
    run(writing, bound(out));
    await writing.submit();
    return out;
  } finally {
    g.pool.release(state.buffer);
  }
}

/**
 * An output of `input`'s row count in rows of `width` words: host-known, or pending, `rec` copying the input's count
 * word after the output's rows.
 */
function sameCount(g: GpuImpl, rec: Recorder, input: DeviceRelation, width: number): DeviceRelation {
  const pending = settle(input).pending;
  const out = pending ? allocPending(g, input.count, width) : allocRelation(g, input.count, width);
  if (pending) rec.copy(pending.buffer, pending.offset, out.buffer!, out.pending!.offset, 4);
  return out;
}

/**
 * A mapFilter that keeps every row (isProjection): one pass writes input row i's projection at output row i. The
 * output has the input's count: host-known, or pending, the input's count word then copied after the output's rows
 * in the same submission. Where room for the input's bound would pass one binding, the count is read first.
 */
async function project(g: GpuImpl, shaders: KernelShaders, a: DeviceRelation, outWidth: number, constants: Uint32Array, tables: Bound | undefined): Promise<DeviceRelation> {
  if (settle(a).pending && (a.count * outWidth + 1) * 4 > g.limits.maxStorageBufferBindingSize) await exactCount(g, a);
  if (!settle(a).pending) checkResultSize(g, a.count * outWidth, `relation of ${a.count} rows x ${outWidth} words`);
  const rec = new Recorder(g, shaders);
  const out = sameCount(g, rec, a, outWidth);
  if (out.count === 0) return out;
  rec.dispatch('project', [bound(a), bound(out)], [sizeOf(a)], a.count, constants, tables);
  await rec.submit();
  return out;
}

/**
 * The rows of `rel` (one buffer) whose words in `order`, compared as u32, lie in [lo, hi) (a bound left out is
 * open), in input order; the count stays pending on the device.
 */
export async function selectRange(g: GpuImpl, rel: DeviceRelation, order: readonly number[], lo?: Uint32Array, hi?: Uint32Array): Promise<DeviceRelation> {
  if (rel.count === 0) return { buffer: null, count: 0, width: rel.width };
  const shaders = memoShaders(['range', rel.width, order, lo !== undefined, hi !== undefined], () => rangeSelectShaders(rel.width, order, lo !== undefined, hi !== undefined));
  const constants = new Uint32Array([...(lo ?? []), ...(hi ?? [])]);
  return select(g, shaders, { pass: 'select', inputs: [bound(rel)], rows: rel.count, sizes: [sizeOf(rel)], constants, outWidth: rel.width });
}

/**
 * Copies of whole relations, back to back (copy and concat). One part whose count is pending stays pending
 * (rows and count word copied); several parts need their counts, to place the later ones.
 */
async function concatenate(g: GpuImpl, all: DeviceRelation[], width: number): Promise<DeviceRelation> {
  const parts = all.filter((p) => p.count > 0);
  const single = parts.length === 1 ? settle(parts[0]!) : undefined;
  if (single?.pending) {
    const rec = new Recorder(g, {});
    const out = sameCount(g, rec, single, width);
    rec.copy(single.buffer!, 0, out.buffer!, 0, single.count * width * 4);
    await rec.submit();
    return out;
  }
  if (parts.some((p) => settle(p).pending)) await syncCounts(g);
  parts.forEach(settle);
  const out = allocRelation(g, parts.reduce((n, p) => n + p.count, 0), width);
  const rec = new Recorder(g, {});
  let offset = 0;
  for (const p of parts) {
    if (p.width !== width) throw new Error(`internal: concatenating rows of ${p.width} and ${width} words`);
    const bytes = p.count * p.width * 4;
    if (p.buffer && out.buffer) rec.copy(p.buffer, 0, out.buffer, offset, bytes);
    offset += bytes;
  }
  await rec.submit();
  return out;
}

/**
 * A hashed unique (input in any order): uniqueInsert marks rows equal to a row already in a table of at least
 * 2n slots, then the compaction keeps the unmarked rows in input order. The output is not canonical (unsorted).
 */
async function hashedUnique(g: GpuImpl, shaders: KernelShaders, a: DeviceRelation, outWidth: number): Promise<DeviceRelation> {
  const n = a.count;
  let slots = 2 ** Math.ceil(Math.log2(2 * n));
  // Past one binding the table is halved while at most 3/4 full (linear probing stays short), so a unique of up to
  // 3/4 of the largest table's slots needs no chunks (at 2 GiB bindings: 201M rows).
  while (slots * 4 > g.limits.maxStorageBufferBindingSize && (slots / 2) * 0.75 >= n) slots /= 2;
  // Still too large: runKernel runs it as chunks.ts does a hashed unique, sorted by all columns and then unique.
  if (slots * 4 > g.limits.maxStorageBufferBindingSize) throw new ResultLimitError(`unique hash table of ${slots} slots for ${n} rows`);
  const table = acquireBound(g, slots, `unique hash table of ${slots} slots`);
  const dup = acquireBound(g, n, `unique marks for ${n} rows`);
  try {
    const rec = new Recorder(g, shaders);
    rec.clear(table.buffer, slots * 4);
    rec.dispatch('uniqueInsert', [bound(a), table, dup], [sizeOf(a), slots - 1], n);
    await rec.submit();
    // Queue order: the select pass runs after the inserts.
    return await select(g, shaders, {
      pass: 'selectAbsent',
      inputs: [bound(a), dup],
      rows: n,
      sizes: [sizeOf(a), n],
      constants: new Uint32Array(0),
      outWidth,
    });
  } finally {
    g.pool.release(table.buffer);
    g.pool.release(dup.buffer);
  }
}

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
async function sortRows(g: GpuImpl, shaders: KernelShaders, input: DeviceRelation, keyWords: readonly number[]): Promise<DeviceRelation> {
  const n = settle(input).count;
  if (n <= 1 || keyWords.length === 0) return concatenate(g, [input], input.width);
  if (n <= (g.software ? RANK_SORT_ROWS_SOFTWARE : RANK_SORT_ROWS) && shaders.rankSort !== undefined) return rankSortRows(g, shaders, input);
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
 * Rows (a bound on them, for a pending count) up to which a sort ranks each row by comparing it with all others
 * (rankSort: one pass, n^2 comparisons) instead of radix sorting: a digit pass costs a few dispatches whatever
 * the rows, and a sort of 4,739 nine-word rows (TPC-H Q2 at SF 10) took 36 of them, 2.9 ms on the H100. A CPU
 * adapter pays for every comparison.
 */
const RANK_SORT_ROWS = 2 ** 14;
const RANK_SORT_ROWS_SOFTWARE = 2 ** 10;

/**
 * Threads rankSort gives each of `n` rows, each comparing a slice of the rows: a power of two up to 32 (and the
 * workgroup size) while n times it stays within RANK_SORT_THREADS. With one thread a row, the 6,249 rows of a
 * TPC-H Q12 sort at SF 1 ran as 25 workgroups, one long loop each, and took 1.5 ms of the H100.
 */
function rankSlices(g: GpuImpl, n: number): number {
  const most = Math.min(32, g.limits.workgroupSize);
  let p = 1;
  while (2 * p <= most && 2 * p * n <= (g.software ? RANK_SORT_THREADS_SOFTWARE : RANK_SORT_THREADS)) p *= 2;
  return p;
}

/** About the threads that fill the H100 (132 SMs of 2,048); a CPU adapter gets a few slices per row (its tests too). */
const RANK_SORT_THREADS = 2 ** 18;
const RANK_SORT_THREADS_SOFTWARE = 2 ** 13;

/** The rows sorted by rankSort: one dispatch, no scratch buffers. */
async function rankSortRows(g: GpuImpl, shaders: KernelShaders, rows: DeviceRelation): Promise<DeviceRelation> {
  const input = settle(rows);
  const rec = new Recorder(g, shaders);
  const out = sameCount(g, rec, input, input.width);
  const slices = rankSlices(g, input.count);
  const wg = g.limits.workgroupSize;
  rec.dispatch('rankSort', [bound(input), bound(out)], [sizeOf(input), slices], Math.ceil((input.count * slices) / wg) * wg);
  await rec.submit();
  return out;
}

/**
 * sortRows once its buffers are there: radixMask (which also counts the first digit pass's digits), then the
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

/**
 * WGSL of hash joins run with build and probe swapped, by kernel: a fixpoint may swap at every iteration, and
 * regenerating the text each time also made the pipeline cache hash it anew.
 */
const swappedShaders = new WeakMap<KirKernel, KernelShaders>();

/** A pipeline's passes with other lookup orders than its probes', by kernel and order. */
const reorderedShaders = new WeakMap<KirKernel, Map<string, KernelShaders>>();

/**
 * Per pipeline kernel, the row counts of its build sides at its last launch: device words copied from the pending
 * counts (a filtered build's: from the rows its build pass kept), which the run's next host sync reads (every run
 * ends with one), in a small pooled buffer.
 */
const buildsSeen = new WeakMap<GpuImpl, WeakMap<KirKernel, { buffer: GPUBuffer; words: Array<DeviceWord | undefined> }>>();

/**
 * A pipeline's passes with its lookups ordered so that the rows a lookup drops skip the rest: by the share of its
 * bound a build side keeps, least first. A pending or filtered build side is mostly a filter of a dimension,
 * bounded by the dimension's rows, so that share is about the share of probe rows whose key it holds (keys spread
 * evenly over the dimension, as foreign keys do). Its rows are known only after the launch, so the last launch's
 * count of the same kernel stands in (cardinality feedback); at a first launch those sides come first, by bound.
 * A side a sync settled keeps its bound (so a profiled run, which settles every count, orders as the others do);
 * any other settled side's bound is its count (share 1). Ties: fewer rows first (a small table also stays in cache).
 * By the share, SSB Q2.2 at SF 10 looks up the 0.8% of parts before the 20% of suppliers, and Q3.1 the days (86%)
 * last; by rows alone, every lineorder row of Q2.1 looked up all 2,557 days before the suppliers in AMERICA that
 * keep a fifth of them; TPC-H Q9 probed 8M partsupp rows for every lineitem row before the 108K green parts that
 * keep 5%. The copies of this launch's counts are recorded into `rec`.
 */
function orderedLookups(
  g: GpuImpl,
  kernel: Extract<KirKernel, { kind: 'pipeline' }>,
  shaders: KernelShaders,
  builds: readonly DeviceRelation[],
  variables: readonly KirVariable[],
  /** The launch builds its tables (launchIsEmpty is false). */
  building: boolean,
  rec: Recorder,
): Pick<PipelineLaunch, 'shaders' | 'keptTo'> {
  let seenHere = buildsSeen.get(g);
  if (!seenHere) buildsSeen.set(g, (seenHere = new WeakMap()));
  const last = seenHere.get(kernel);
  if (last) {
    for (const w of last.words) if (w) g.pending.delete(w);
    g.pool.release(last.buffer);
    seenHere.delete(kernel);
  }
  // A filtered side's kept rows are counted by its build pass, which copies them into `words` (keptTo).
  const filtered = builds.map((_, j) => (kernel.probes[j]!.buildFilter?.length ?? 0) > 0);
  const rank = builds.map((b, j) => {
    if (!settle(b).pending && !filtered[j]) return { share: b.count / Math.max(1, b.bound ?? b.count), rows: b.count };
    const seen = last?.words[j]?.value;
    return seen === undefined ? { share: 0.5, rows: b.count } : { share: seen / Math.max(1, b.count), rows: seen };
  });
  let keptTo: Array<DeviceWord | undefined> = [];
  if (builds.some((b, j) => b.pending || filtered[j])) {
    const buffer = acquireBound(g, builds.length, 'build side counts').buffer;
    // A launch that builds nothing (no input rows) leaves its filtered sides' words at 0; the others' build passes
    // count into them.
    if (filtered.some(Boolean) && !building) rec.clear(buffer, 4 * builds.length);
    const words = builds.map((b, j) => {
      if (!b.pending && !filtered[j]) return undefined;
      if (!filtered[j]) rec.copy(b.pending!.buffer, b.pending!.offset, buffer, 4 * j, 4);
      const w: DeviceWord = { buffer, offset: 4 * j };
      g.pending.add(w);
      return w;
    });
    seenHere.set(kernel, { buffer, words });
    keptTo = words.map((w, j) => (filtered[j] ? w : undefined));
  }
  const order = builds.map((_, j) => j).sort((x, y) => rank[x]!.share - rank[y]!.share || rank[x]!.rows - rank[y]!.rows || x - y);
  if (order.every((j, i) => j === i)) return { shaders, keptTo };
  let byOrder = reorderedShaders.get(kernel);
  if (!byOrder) reorderedShaders.set(kernel, (byOrder = new Map()));
  const key = order.join();
  let passes = byOrder.get(key);
  if (!passes) byOrder.set(key, (passes = generateKernelShaders(kernel, variables, { lookupOrder: order })));
  return { shaders: passes, keptTo };
}

async function run(
  g: GpuImpl,
  kernel: KirKernel,
  shaders: KernelShaders,
  inputs: DeviceRelation[],
  constWords: Uint32Array,
  variables: readonly KirVariable[],
  tables: Bound | undefined,
): Promise<DeviceRelation> {
  const columns = (id: VarId): ScalarType[] => {
    const v = variables.find((x) => x.id === id);
    if (!v) throw new Error(`internal: kernel ${kernel.id} uses unknown variable ${id}`);
    return v.columns;
  };
  const outWidth = rowWords(columns(kernel.output));
  const empty: DeviceRelation = { buffer: null, count: 0, width: outWidth };
  const [a, b] = inputs as [DeviceRelation, DeviceRelation];
  switch (kernel.kind) {
    case 'mapFilter':
    case 'unique': {
      if (a.count === 0) return empty;
      if (kernel.kind === 'mapFilter' && isProjection(columns(kernel.input), kernel.filter, outWidth)) return project(g, shaders, a, outWidth, constWords, tables);
      if (kernel.kind === 'unique' && a.canonical) return a;
      if (kernel.kind === 'unique' && kernel.hashed) return hashedUnique(g, shaders, a, outWidth);
      const out = await select(g, shaders, {
        pass: 'select',
        inputs: [bound(a)],
        rows: a.count,
        sizes: [sizeOf(a)],
        constants: constWords,
        outWidth,
        ...(tables ? { tables } : {}),
        unordered: kernel.kind === 'mapFilter' && kernel.unordered === true,
      });
      return kernel.kind === 'unique' ? { ...out, canonical: true } : out;
    }
    case 'difference':
      if (a.count === 0) return empty;
      if (b.count === 0) return concatenate(g, [a], outWidth);
      return select(g, shaders, {
        pass: 'selectAbsent',
        inputs: [bound(a), bound(b)],
        rows: a.count,
        sizes: [sizeOf(a), sizeOf(b)],
        constants: constWords,
        outWidth,
      });
    case 'mergeJoin':
      if (a.count === 0 || b.count === 0) return empty;
      return compact(g, shaders, {
        count: { pass: 'joinCount', inputs: [bound(a), bound(b)] },
        write: { pass: 'joinWrite', inputs: [bound(a), bound(b)] },
        rows: a.count,
        sizes: [sizeOf(a), sizeOf(b)],
        right: b.count,
        constants: constWords,
        outWidth,
        ...(tables ? { tables } : {}),
      });
    case 'hashJoin': {
      if (a.count === 0 || b.count === 0) return empty;
      // Sizes are known only now (bounds, for pending counts): build on the smaller side (a smaller table, and the probe's first pass has
      // room for one match per row of the larger side). The swapped passes are generated once per kernel.
      const swap = b.count < a.count;
      const k = swap ? swapHashJoin(kernel) : kernel;
      const [build, probe] = swap ? [b, a] : [a, b];
      const layout = hashJoinLayout(k, columns(k.build), columns(k.probe));
      let passes = shaders;
      if (swap) {
        passes = swappedShaders.get(kernel) ?? generateKernelShaders(k, variables);
        swappedShaders.set(kernel, passes);
      }
      return hashJoinRows(g, { relation: build, keyWords: layout.build.keyWords }, { relation: probe, keyWords: layout.probe.keyWords }, layout.output, passes);
    }
    case 'pipeline': {
      const buildTypes = kernel.probes.map((pr) => columns(pr.build));
      // One recorder for the launch: its count copies, builds and probe or aggregation passes go out together.
      const steps = new Recorder(g, {});
      const builds = inputs.slice(1);
      const launch = { ...orderedLookups(g, kernel, shaders, builds, variables, !launchIsEmpty(a, builds), steps), constWords, tables };
      const rec = steps.using(launch.shaders);
      const out = kernel.aggregate
        ? await pipelineAggregateRows(g, kernel, launch, rec, inputs, kernel.project.map((e) => e.type), buildTypes, outWidth)
        : await pipelineRows(g, kernel, launch, rec, inputs, buildTypes, outWidth);
      // What a launch without rows to build or probe recorded (its counts' clear) still goes out.
      await rec.submit();
      return out;
    }
    case 'sort': {
      const arity = columns(kernel.input).length;
      // A canonical relation is already in the order of a sort by all its columns.
      if (a.canonical && kernel.keys.length === arity && kernel.keys.every((k, i) => k === i)) return a;
      return sortRows(g, shaders, a, sortKeyWords(columns(kernel.input), kernel.keys));
    }
    case 'concat':
      // A union into an empty relation (every rule's first run) keeps the other side's rows and form.
      if (a.count === 0 && b.canonical) return b;
      if (b.count === 0 && a.canonical) return a;
      return concatenate(g, [a, b], outWidth);
    case 'merge': {
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
      rec.dispatch('merge', [bound(a), bound(b), splits, bound(out)], [na, nb], capacity);
      if (out.pending) rec.dispatch('countSum', [{ buffer: out.buffer!, words: capacity * outWidth + 1 }], [na, nb, out.pending.offset / 4], 1);
      await rec.submit();
      return out;
    }
    case 'copy':
      return concatenate(g, [a], outWidth);
    case 'limit':
      await exactCount(g, a);
      if (a.count <= kernel.count) return concatenate(g, [a], outWidth);
      return limitRows(g, a, columns(kernel.input), kernel.keys, kernel.count);
    case 'aggregate': {
      await exactCount(g, a);
      const types = columns(kernel.input);
      const argTypes = kernel.aggregates.map((x) => (x.column === undefined ? undefined : types[x.column]));
      return aggregateRows(g, shaders, a, kernel.aggregates, argTypes, outWidth, `kernel ${kernel.id}`);
    }
  }
}

/**
 * Runs one kernel. `inputs` in kernelInputs(kernel) order; `constWords` = the kernel's constants
 * encoded in kernelConstants() order (int32 1 word, int64 2 words lo,hi, string 1 word); `tables` = the
 * kernel's string built-in tables (kernelTables(), laid out as TableSpec says), when it has any.
 */
export async function runKernel(
  gpu: Gpu,
  kernel: KirKernel,
  shaders: KernelShaders,
  inputs: DeviceRelation[],
  constWords: Uint32Array,
  variables: readonly KirVariable[],
  tables?: Bound,
): Promise<DeviceRelation> {
  const g = internals(gpu);
  if (inputs.length !== kernelInputs(kernel).length) throw new Error(`internal: ${kernel.kind} kernel ${kernel.id} given ${inputs.length} inputs`);
  return g.scoped(`${kernel.kind} kernel ${kernel.id}`, () => runUnscoped(g, kernel, shaders, inputs, constWords, variables, tables));
}

/** runKernel inside the caller's scope (scopes are serialized: a kernel run from another's must not open one). */
async function runUnscoped(
  g: GpuImpl,
  kernel: KirKernel,
  shaders: KernelShaders,
  inputs: DeviceRelation[],
  constWords: Uint32Array,
  variables: readonly KirVariable[],
  tables: Bound | undefined,
): Promise<DeviceRelation> {
  if (kernel.kind === 'pipeline' && kernel.aggregate) {
    // Build sides whose tables pass one binding: the rows are written in parts (runChunked) and sorted.
    if (pipelinePastBinding(g, kernel, inputs, variables)) return sortedGroups(g, kernel, inputs, constWords, variables, tables);
    try {
      // Chunks of the scanned relation go into one table (runChunked makes the build sides whole).
      if (!inputs.some((r) => r.chunks)) return await run(g, kernel, shaders, inputs, constWords, variables, tables);
      return await runChunked(g, kernel, inputs, variables, (k, ins, vars = variables) => run(g, k, shaders, ins, constWords, vars, tables));
    } catch (e) {
      if (!(e instanceof ResultLimitError)) throw e;
      return sortedGroups(g, kernel, inputs, constWords, variables, tables);
    }
  }
  if (!inputs.some((r) => r.chunks) && !mergesPastBinding(g, kernel, inputs, variables) && !pipelinePastBinding(g, kernel, inputs, variables)) {
    try {
      return await run(g, kernel, shaders, inputs, constWords, variables, tables);
    } catch (e) {
      // A join whose result passes one binding runs again on parts of its row-wise side.
      if (!(e instanceof ResultLimitError)) throw e;
    }
  }
  // Relations larger than one binding: per chunk, or whole (gpu/chunks.ts); its own kernels get their own passes.
  return runChunked(g, kernel, inputs, variables, (k, ins, vars = variables) =>
    run(g, k, k === kernel ? shaders : chunkShaders(k, vars), ins, constWords, vars, tables),
  );
}

/** The kernels an aggregating pipeline runs instead when its groups outgrow a table (sortedGroups), by kernel. */
const sortedPlans = new WeakMap<KirKernel, { kernels: KirKernel[]; variables: KirVariable[] }>();

/**
 * An aggregating pipeline whose groups do not fit the largest group table: its rows written (chunked past one
 * binding), sorted by the group columns and reduced by key, as the kernels it replaced would have.
 */
async function sortedGroups(
  g: GpuImpl,
  kernel: Extract<KirKernel, { kind: 'pipeline' }>,
  inputs: DeviceRelation[],
  constWords: Uint32Array,
  variables: readonly KirVariable[],
  tables: Bound | undefined,
): Promise<DeviceRelation> {
  let plan = sortedPlans.get(kernel);
  if (!plan) {
    const [rows, sorted] = [1, 2].map((k) => Math.max(...variables.map((v) => v.id)) + k) as [VarId, VarId];
    const columns = kernel.project.map((e) => e.type);
    const { aggregate, ...plain } = kernel;
    // Without probes the rows are a mapFilter's (the same constants, in the same order: check is empty).
    const rowsKernel: KirKernel =
      kernel.probes.length === 0 && kernel.check.length === 0
        ? { kind: 'mapFilter', id: kernel.id, input: kernel.input, output: rows, filter: kernel.filter, project: kernel.project }
        : { ...plain, output: rows };
    const kernels: KirKernel[] = [
      rowsKernel,
      { kind: 'sort', id: kernel.id, input: rows, output: sorted, keys: aggregate!.groupBy },
      { kind: 'aggregate', id: kernel.id, input: sorted, output: kernel.output, groupBy: aggregate!.groupBy, aggregates: aggregate!.aggregates },
    ];
    plan = { kernels, variables: [...variables, { id: rows, name: `%k${kernel.id}$rows`, columns }, { id: sorted, name: `%k${kernel.id}$sorted`, columns }] };
    sortedPlans.set(kernel, plan);
  }
  const [rowsKernel, sortKernel, aggregateKernel] = plan.kernels as [KirKernel, KirKernel, KirKernel];
  const vars = plan.variables;
  const rows = await runUnscoped(g, rowsKernel, chunkShaders(rowsKernel, vars), inputs, constWords, vars, tables);
  const sorted = await runUnscoped(g, sortKernel, chunkShaders(sortKernel, vars), [rows], new Uint32Array(0), vars, undefined);
  releaseUnshared(g, rows, sorted);
  const out = await runUnscoped(g, aggregateKernel, chunkShaders(aggregateKernel, vars), [sorted], new Uint32Array(0), vars, undefined);
  releaseUnshared(g, sorted, out);
  return out;
}

/** WGSL of the kernels gpu/chunks.ts makes up (per-chunk and combining aggregates, copies), by kernel. */
const madeUpShaders = new WeakMap<KirKernel, KernelShaders>();

function chunkShaders(kernel: KirKernel, variables: readonly KirVariable[]): KernelShaders {
  let passes = madeUpShaders.get(kernel);
  if (!passes) madeUpShaders.set(kernel, (passes = generateKernelShaders(kernel, variables)));
  return passes;
}
