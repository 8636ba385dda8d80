/**
 * Kernels whose own relations do not fit the device memory budget together (executor.ts): their inputs are in host
 * memory, and the kernel runs in steps that each fit, every step's inputs uploaded, its output read back and
 * appended to the result in host memory.
 * - Row by row (mapFilter, pipeline, join sides, aggregate and limit): the largest input that the kernel distributes
 *   over streams in consecutive row ranges against the other inputs whole (a join distributes over a union of rows of
 *   either side, a pipeline over one of its scanned or joined, not anti-joined, relations).
 * - Join pairs: where the other side does not fit either, both sides are split on the device by a hash of their key
 *   words (a select per partition, codegen-wgsl hash-select.ts, keeping the rows' order, so a merge join's right side
 *   stays sorted), and each pair of matching partitions is joined as above; again with another hash where one pair is
 *   still too large.
 * - Group by group: a pipeline's hashed aggregation gives partial aggregates per step (a decimal average as its sum
 *   and count), combined range by range while that makes them fewer, else per hash partition of the group words; a
 *   sorted aggregate's row ranges end at group boundaries.
 * - Sort: on the device, in ranges of the first key word whose values differ.
 * - Sorted inputs (unique, difference, merge): both inputs cut at the same key boundaries, found by a merge-path search
 *   of the host rows (so each step's rows follow the previous step's in the output's order), one step per range; a
 *   range of one side alone is that side's rows as they are. A hashed unique: per hash partition of its rows.
 * - Concat and copy: the host rows appended, as the device would.
 * Inputs the steps of one kernel share (all but the streamed one) stay on the device across those steps.
 * Where one step of a sort or of sorted inputs cannot fit (one row, or one run of equal rows), that part runs on the
 * host as a step that small; elsewhere (one partition pair, one group, one row) it stops, with a PartitionLimit.
 */
import { sortKeyWords } from '@vixen/codegen-wgsl';
import type { KirKernel, KirVariable } from '@vixen/kernel-ir';
import { rowWords, type ScalarType } from '@vixen/queryplan';
import { finishAverages, partialPlan } from './gpu/chunks.js';

/** Rows in host memory, back to back. */
export interface HostRows {
  words: Uint32Array;
  count: number;
  width: number;
}

export interface PartitionDevice {
  /** Device bytes one step may hold: its inputs and its output. */
  room: number;
  /**
   * Runs `kernel` (given `variables`, its own or made up here) on the device with `inputs` uploaded, and reads its
   * output back; undefined when the step held more than `room`, or (`smaller`: the caller can make it smaller) would
   * by what its kind held beyond its inputs before, checked before anything is uploaded.
   */
  step(kernel: KirKernel, inputs: readonly HostRows[], variables: readonly KirVariable[], smaller?: boolean): Promise<HostRows | undefined>;
  /**
   * `rows` split on the device into `parts` by a hash (seeded by `round`) of words `keys`, each part in the rows'
   * order; undefined when not even one row and its part fit `room`.
   */
  partition(rows: HostRows, keys: readonly number[], parts: number, round: number): Promise<HostRows[] | undefined>;
  /**
   * Keeps `rows` on the device, within `room`, until drop(rows): steps given them use that copy rather than upload
   * them again. False (nothing kept) where they do not fit.
   */
  keep(rows: HostRows): boolean;
  drop(rows: HostRows): void;
  /** Steps run (every partition or row range of every kernel). */
  steps: number;
  /** Work done on the host rows instead of a step: copies, concatenations, sort ranges too small for one. */
  onHost: number;
}

/** One step cannot fit: input `input` (kernelInputs order) of `rows` rows, `bytes` bytes, even alone with its partners. */
export class PartitionLimit extends Error {
  constructor(
    readonly input: number,
    readonly rows: number,
    readonly bytes: number,
  ) {
    super(`one partition of input ${input} (${rows} rows, ${bytes} bytes) does not fit`);
  }
}

/** Device bytes rows of this size take at most (buffers come in size classes up to 1.5 times the bytes asked). */
export const deviceBytes = (r: HostRows): number => Math.ceil(r.count * r.width * 4 * 1.5) + 256;
/** Below this room a sort step has too few rows to be worth a launch. */
const MIN_STEP_BYTES = 4096;
/** More hash partitions than a join's keys can spread are useless: after this many rounds a pair is too large. */
const MAX_ROUNDS = 3;

/** Rows `start` to `end` of `r`, sharing its words. */
export function sliceRows(r: HostRows, start: number, end: number): HostRows {
  return { words: r.words.subarray(start * r.width, end * r.width), count: end - start, width: r.width };
}

export function concatRows(parts: readonly HostRows[], width: number): HostRows {
  if (parts.length === 1) return parts[0]!;
  const count = parts.reduce((n, p) => n + p.count, 0);
  const words = new Uint32Array(count * width);
  let at = 0;
  for (const p of parts) {
    words.set(p.words.subarray(0, p.count * width), at);
    at += p.count * width;
  }
  return { words, count, width };
}

/** Compares rows `i` of `a` and `j` of `b` by words `keys` (unsigned), as the device's sort orders them. */
function compareBy(a: HostRows, i: number, b: HostRows, j: number, keys: readonly number[]): number {
  for (const k of keys) {
    const x = a.words[i * a.width + k]!;
    const y = b.words[j * b.width + k]!;
    if (x !== y) return x < y ? -1 : 1;
  }
  return 0;
}

export const allWords = (width: number): number[] => Array.from({ length: width }, (_, i) => i);

/** Words `picked` of each row of `r`, in that order (columns projected, as sortKeyWords lists their words). */
export function pickWords(r: HostRows, picked: readonly number[]): HostRows {
  const words = new Uint32Array(r.count * picked.length);
  for (let i = 0, at = 0; i < r.count; i++) for (const w of picked) words[at++] = r.words[i * r.width + w]!;
  return { words, count: r.count, width: picked.length };
}

function gather(r: HostRows, rows: readonly number[]): HostRows {
  const words = new Uint32Array(rows.length * r.width);
  rows.forEach((row, i) => words.set(r.words.subarray(row * r.width, (row + 1) * r.width), i * r.width));
  return { words, count: rows.length, width: r.width };
}

/** `r` sorted by words `keys`, stably (ties keep their order, as the device's radix sort keeps them), on the host. */
export function sortRows(r: HostRows, keys: readonly number[]): HostRows {
  const order = Array.from({ length: r.count }, (_, i) => i).sort((i, j) => compareBy(r, i, r, j, keys));
  return gather(r, order);
}

/** Sorted `r` without adjacent equal rows. */
export function uniqueSorted(r: HostRows): HostRows {
  const all = allWords(r.width);
  const kept: number[] = [];
  for (let i = 0; i < r.count; i++) if (i === 0 || compareBy(r, i, r, i - 1, all) !== 0) kept.push(i);
  return kept.length === r.count ? r : gather(r, kept);
}

/** The first of each set of equal rows of `r`, in `r`'s order. */
function uniqueFirst(r: HostRows): HostRows {
  const seen = new Set<string>();
  const kept: number[] = [];
  for (let i = 0; i < r.count; i++) {
    const key = r.words.subarray(i * r.width, (i + 1) * r.width).join(',');
    if (!seen.has(key)) {
      seen.add(key);
      kept.push(i);
    }
  }
  return gather(r, kept);
}

/** Canonical `a` less canonical `b` (both sorted by all words, duplicate-free). */
function differenceRows(a: HostRows, b: HostRows): HostRows {
  const all = allWords(a.width);
  const kept: number[] = [];
  let j = 0;
  for (let i = 0; i < a.count; i++) {
    while (j < b.count && compareBy(b, j, a, i, all) < 0) j++;
    if (j >= b.count || compareBy(b, j, a, i, all) !== 0) kept.push(i);
  }
  return gather(a, kept);
}

/** `a` and `b`, both sorted by words `keys`, merged (left first among equal keys). */
function mergeRows(a: HostRows, b: HostRows, keys: readonly number[]): HostRows {
  const words = new Uint32Array((a.count + b.count) * a.width);
  let i = 0;
  let j = 0;
  for (let at = 0; i < a.count || j < b.count; at += a.width) {
    const fromA = j >= b.count || (i < a.count && compareBy(a, i, b, j, keys) <= 0);
    const [src, row] = fromA ? [a, i++] : [b, j++];
    words.set(src.words.subarray(row * src.width, (row + 1) * src.width), at);
  }
  return { words, count: a.count + b.count, width: a.width };
}

/** `r` split by device.partition, or a PartitionLimit naming input `input` where not one row fits. */
async function partitions(device: PartitionDevice, r: HostRows, keys: readonly number[], parts: number, round: number, input: number): Promise<HostRows[]> {
  const out = await device.partition(r, keys, parts, round);
  if (!out) throw new PartitionLimit(input, Math.min(1, r.count), Math.min(1, r.count) * r.width * 4);
  return out;
}

/**
 * `r` sorted by words `keys` on the device: in one step where it fits, else split into ranges of its first key word
 * whose values differ (splitters from a sample), each range sorted (so again), the ranges in order. Only a budget
 * without room for a few rows' buffers sorts on the host.
 */
export async function sortWords(device: PartitionDevice, r: HostRows, keys: readonly number[]): Promise<HostRows> {
  if (r.count <= 1 || keys.length === 0 || r.width === 0) return r;
  // Rows as words: the sort kernel orders by the words of its key columns, whatever their types.
  const variables: KirVariable[] = [{ id: 0, name: 'rows', columns: new Array<ScalarType>(r.width).fill('uint32') }];
  return sortRanges(device, { kind: 'sort', id: -1, input: 0, output: 0, keys: [...keys] }, r, variables);
}

async function sortRanges(device: PartitionDevice, kernel: Extract<KirKernel, { kind: 'sort' }>, r: HostRows, variables: readonly KirVariable[]): Promise<HostRows> {
  // Its input, its output and the sort's scratch, about as much again.
  if (deviceBytes(r) * 3 <= device.room) {
    const out = await device.step(kernel, [r], variables);
    if (out) {
      device.steps += 1;
      return out;
    }
  }
  // No room for a few rows' buffers: sorted on the host.
  if (device.room < MIN_STEP_BYTES) {
    device.onHost += 1;
    return sortRows(r, kernel.keys);
  }
  // Ranges of the first key word whose values differ among the rows (those before it are equal); none: the rows are
  // in order already (a stable sort keeps them).
  const word = kernel.keys.find((k) => {
    for (let i = 1; i < r.count; i++) if (r.words[i * r.width + k] !== r.words[k]) return true;
    return false;
  });
  if (word === undefined) return r;
  const parts = Math.min(r.count, Math.max(2, 2 * Math.ceil((deviceBytes(r) * 3) / device.room)));
  const sample = new Uint32Array(Math.min(r.count, parts * 32));
  for (let i = 0; i < sample.length; i++) sample[i] = r.words[Math.floor((i * r.count) / sample.length) * r.width + word]!;
  sample.sort();
  let splitters = [...new Set(Array.from({ length: parts - 1 }, (_, p) => sample[Math.floor(((p + 1) * sample.length) / parts)]!))].filter((w) => w > sample[0]!);
  if (splitters.length === 0) {
    // The sample missed the word's spread (it took one value only, so every row would fall in one range): two
    // ranges, at the middle of its values. Otherwise the sample's least value and its largest splitter, both rows'
    // words, fall in two ranges.
    let [least, most] = [r.words[word]!, r.words[word]!];
    for (let i = 1; i < r.count; i++) [least, most] = [Math.min(least, r.words[i * r.width + word]!), Math.max(most, r.words[i * r.width + word]!)];
    splitters = [least + Math.floor((most - least) / 2) + 1];
  }
  // Range b holds the rows whose word is at least splitter b - 1 and below splitter b.
  const range = (w: number): number => {
    let lo = 0;
    let hi = splitters.length;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if (splitters[mid]! <= w) lo = mid + 1;
      else hi = mid;
    }
    return lo;
  };
  const of = new Uint32Array(r.count);
  const sizes = new Array<number>(splitters.length + 1).fill(0);
  for (let i = 0; i < r.count; i++) sizes[(of[i] = range(r.words[i * r.width + word]!))]! += 1;
  const ranges = sizes.map((n) => ({ words: new Uint32Array(n * r.width), count: 0, width: r.width }));
  for (let i = 0; i < r.count; i++) {
    const o = ranges[of[i]!]!;
    o.words.set(r.words.subarray(i * r.width, (i + 1) * r.width), o.count * r.width);
    o.count += 1;
  }
  const outs: HostRows[] = [];
  for (const part of ranges) if (part.count > 0) outs.push(await sortRanges(device, kernel, part, variables));
  return concatRows(outs, r.width);
}

/** Runs `kernel` (inputs in kernelInputs order, in host memory) in steps that fit `device.room`. */
export async function runPartitioned(device: PartitionDevice, kernel: KirKernel, inputs: readonly HostRows[], variables: readonly KirVariable[]): Promise<HostRows> {
  const columns = (id: number): ScalarType[] => variables[id]!.columns;
  const outWidth = rowWords(columns(kernel.output));
  const [a, b] = inputs as [HostRows, HostRows];
  const streamOrFail = async (k: KirKernel, ins: readonly HostRows[], s: number, vars = variables, cut?: Cut): Promise<HostRows> => {
    const out = await stream(device, k, ins, s, vars, cut);
    if (out) return out;
    // Not one row beside the other inputs: the largest of them (or the streamed one alone) names the limit.
    const other = ins.reduce((m, r, i) => (i !== s && r.count * r.width > ins[m]!.count * ins[m]!.width ? i : m), s);
    const rows = other === s ? Math.min(1, ins[s]!.count) : ins[other]!.count;
    throw new PartitionLimit(other, rows, rows * ins[other]!.width * 4);
  };
  switch (kernel.kind) {
    case 'mapFilter':
      return streamOrFail(kernel, inputs, 0);
    case 'copy':
      device.onHost += 1;
      return a;
    case 'concat':
      device.onHost += 1;
      return concatRows([a, b], outWidth);
    case 'sort':
      return sortWords(device, a, sortKeyWords(columns(kernel.input), kernel.keys));
    case 'unique':
      try {
        // A hashed unique is its own partial form, and nothing reads its rows' order: as partial aggregates combine.
        if (kernel.hashed) return await combineAll(device, kernel, a, allWords(a.width), variables);
        // Row ranges that end where a run of equal rows does: their outputs, in order, are the whole output.
        return await streamOrFail(kernel, inputs, 0, variables, groupCut(allWords(a.width)));
      } catch (e) {
        // Not one row (or one run of equal rows) beside what cannot be spilled: on the host, as a sort that small.
        if (!(e instanceof PartitionLimit)) throw e;
        device.onHost += 1;
        return kernel.hashed ? uniqueFirst(a) : uniqueSorted(a);
      }
    case 'difference':
      return sortedPairs(device, kernel, a, b, allWords(a.width), variables);
    case 'merge':
      return sortedPairs(device, kernel, a, b, sortKeyWords(columns(kernel.left), kernel.keys), variables);
    case 'aggregate':
      // Row ranges that end where a group does: the groups' outputs, in order, are the whole output.
      return streamOrFail(kernel, inputs, 0, variables, groupCut(sortKeyWords(columns(kernel.input), kernel.groupBy)));
    case 'limit': {
      // The first rows of each range hold the first rows of the whole.
      const before = device.steps;
      const firsts = await streamOrFail(kernel, inputs, 0);
      if (device.steps - before === 1) return firsts;
      if (firsts.count < a.count) return runPartitioned(device, kernel, [firsts], variables);
      throw new PartitionLimit(0, a.count, a.count * a.width * 4);
    }
    case 'hashJoin':
      return joinPairs(device, kernel, inputs, [sortKeyWords(columns(kernel.build), kernel.buildKeys), sortKeyWords(columns(kernel.probe), kernel.probeKeys)], variables, 0);
    case 'mergeJoin':
      return joinPairs(device, kernel, inputs, [sortKeyWords(columns(kernel.left), kernel.leftKeys), sortKeyWords(columns(kernel.right), kernel.rightKeys)], variables, 0);
    case 'pipeline': {
      if (!kernel.aggregate) return pipelineRows(device, kernel, inputs, variables, 0);
      const types = kernel.project.map((e) => e.type);
      const { aggregate, ...rest } = kernel;
      const identity = (cols: readonly ScalarType[]) => cols.map((type, index) => ({ kind: 'col' as const, index, type }));
      const grouping = (input: number, output: number, cols: ScalarType[], agg: typeof aggregate): KirKernel => ({
        kind: 'pipeline',
        id: kernel.id,
        input,
        output,
        filter: [],
        probes: [],
        check: [],
        project: identity(cols),
        aggregate: agg,
        fused: kernel.fused,
      });
      const name = variables[kernel.output]!.name;
      const plan = partialPlan(aggregate, types, variables, [`${name} partial`, `${name} combined`]);
      if (!plan) {
        // An integer average has no partial form here: the projected rows unaggregated, then aggregated group by group.
        const rowsVar = variables.length;
        const vars = [...variables, { id: rowsVar, name: `${name} rows`, columns: types }];
        const rows = await pipelineRows(device, { ...rest, output: rowsVar }, inputs, vars, 0);
        return byGroups(device, grouping(rowsVar, kernel.output, types, aggregate), rows, sortKeyWords(types, aggregate.groupBy), vars, 0);
      }
      // Partial aggregates per step (a decimal average as its sum and count), combined group by group.
      const partials = await pipelineRows(device, { ...kernel, output: plan.partialVar, aggregate: { groupBy: aggregate.groupBy, aggregates: plan.partial } }, inputs, plan.variables, 0);
      const combine = grouping(plan.partialVar, plan.combinedVar, plan.columns, plan.combined);
      const combined = await combineAll(device, combine, partials, allWords(rowWords(plan.groupTypes)), plan.variables);
      if (!aggregate.aggregates.some((x) => x.fn === 'avg')) return combined;
      return { words: finishAverages(combined.words, plan.groupTypes, aggregate.aggregates, plan.partial), count: combined.count, width: outWidth };
    }
  }
}

/** Where a row range that would end before row `end` of `r` ends instead (a range's last group kept whole). */
type Cut = (r: HostRows, end: number) => number;

/** A Cut past the rows equal to a range's last in words `keys`. */
const groupCut =
  (keys: readonly number[]): Cut =>
  (r, end) => {
    while (end < r.count && end > 0 && compareBy(r, end, r, end - 1, keys) === 0) end++;
    return end;
  };

/** Rows of `width` words a step may take where `free` bytes hold them and an output as large. */
const rowsWithin = (free: number, width: number): number => Math.max(1, Math.floor(free / 2 / Math.max(4, width * 4 * 1.5)));

/**
 * How many of the first `d` rows of the merge of `a` from row `i` and `b` from row `j` (both sorted by words `keys`,
 * a's row first among equal keys) come from each: a merge-path search.
 */
function mergePath(a: HostRows, i: number, b: HostRows, j: number, keys: readonly number[], d: number): [number, number] {
  let lo = Math.max(0, d - (b.count - j));
  let hi = Math.min(d, a.count - i);
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    // a's row mid comes before b's row d - mid - 1: the first d rows hold more of a.
    if (compareBy(a, i + mid, b, j + d - mid - 1, keys) <= 0) lo = mid + 1;
    else hi = mid;
  }
  return [lo, d - lo];
}

/** The first row of `b` from row `from` on that is not below row `i` of `a` in words `keys`. */
function lowerBound(b: HostRows, from: number, a: HostRows, i: number, keys: readonly number[]): number {
  let lo = from;
  let hi = b.count;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if (compareBy(b, mid, a, i, keys) < 0) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

/**
 * A merge or a difference of inputs sorted by words `keys` in steps: consecutive ranges of both sides, cut at one
 * place of their merged order, so each step's output follows the last one's. A difference keeps a row and its equal
 * in one step, and skips the right rows below its next left row (they remove nothing). A range of one side alone
 * needs no step: a merge's output is those rows, a difference's the left ones.
 */
async function sortedPairs(
  device: PartitionDevice,
  kernel: Extract<KirKernel, { kind: 'merge' | 'difference' }>,
  a: HostRows,
  b: HostRows,
  keys: readonly number[],
  variables: readonly KirVariable[],
): Promise<HostRows> {
  const difference = kernel.kind === 'difference';
  const outs: HostRows[] = [];
  let rows = rowsWithin(device.room, a.width);
  let i = 0;
  let j = 0;
  while (i < a.count || (!difference && j < b.count)) {
    if (difference) j = lowerBound(b, j, a, i, keys);
    let [da, db] = mergePath(a, i, b, j, keys, Math.min(rows, a.count - i + b.count - j));
    if (difference && da > 0 && j + db < b.count && compareBy(a, i + da - 1, b, j + db, keys) === 0) db += 1;
    const left = sliceRows(a, i, i + da);
    const right = sliceRows(b, j, j + db);
    if (da === 0 || db === 0) {
      outs.push(da === 0 ? (difference ? left : right) : left);
    } else {
      const out = await device.step(kernel, [left, right], variables, da + db > 2);
      if (!out) {
        if (da + db > 1 && rows > 1) {
          rows = Math.max(1, Math.floor(Math.min(rows, da + db) / 2));
          continue;
        }
        // Not one row and its equal beside what cannot be spilled: the rest on the host, as a sort that small.
        device.onHost += 1;
        const [restA, restB] = [sliceRows(a, i, a.count), sliceRows(b, j, b.count)];
        outs.push(difference ? differenceRows(restA, restB) : mergeRows(restA, restB, keys));
        break;
      }
      device.steps += 1;
      outs.push(out);
    }
    i += da;
    j += db;
  }
  return concatRows(outs.length > 0 ? outs : [sliceRows(a, 0, 0)], a.width);
}

/**
 * `kernel` once per row range of input `s`, the other inputs whole, the outputs appended; undefined when the other
 * inputs leave no room for a range. A range whose step does not fit is halved; a PartitionLimit for one row.
 */
async function stream(device: PartitionDevice, kernel: KirKernel, inputs: readonly HostRows[], s: number, variables: readonly KirVariable[], cut?: Cut): Promise<HostRows | undefined> {
  const fixed = inputs.reduce((n, r, i) => (i === s ? n : n + deviceBytes(r)), 0);
  const streamed = inputs[s]!;
  // A range and an output as large as it beside the other inputs.
  const free = device.room - fixed;
  if (free <= 0) return undefined;
  let rows = rowsWithin(free, streamed.width);
  const outs: HostRows[] = [];
  let start = 0;
  // The other inputs are the same in every step: uploaded once.
  const kept = [...new Set(inputs.filter((_, i) => i !== s))].filter((r) => device.keep(r));
  try {
    do {
      let end = Math.min(streamed.count, start + rows);
      if (cut) end = cut(streamed, end);
      const out = await device.step(kernel, inputs.map((r, i) => (i === s ? sliceRows(streamed, start, end) : r)), variables, end - start > 1);
      if (out) {
        device.steps += 1;
        outs.push(out);
        start = end;
      } else if (rows > 1 && end > start) rows = Math.max(1, Math.floor(Math.min(rows, end - start) / 2));
      // Not even one row (or one group, or nothing) beside the other inputs: they do not fit.
      else if (outs.length === 0) return undefined;
      else throw new PartitionLimit(s, end - start, (end - start) * streamed.width * 4);
    } while (start < streamed.count);
  } finally {
    for (const r of kept) device.drop(r);
  }
  const width = rowWords(variables[kernel.output]!.columns);
  return concatRows(outs, width);
}

/**
 * A pipeline's output, streaming the largest of its scanned and (not anti-)joined relations; where the others do not
 * fit beside it, per hash partition of the scanned rows and of the largest build side whose probe keys are columns.
 */
async function pipelineRows(
  device: PartitionDevice,
  kernel: Extract<KirKernel, { kind: 'pipeline' }>,
  inputs: readonly HostRows[],
  variables: readonly KirVariable[],
  round: number,
): Promise<HostRows> {
  const size = (i: number): number => inputs[i]!.count * inputs[i]!.width;
  const candidates = [0, ...kernel.probes.flatMap((p, i) => (p.negated ? [] : [i + 1]))];
  const s = candidates.reduce((m, i) => (size(i) > size(m) ? i : m), 0);
  const out = await stream(device, kernel, inputs, s, variables);
  if (out) return out;
  // A row matches only build rows of its key, in the partition of the same hash: a join and an anti-join alike.
  const j = kernel.probes.reduce((m, p, i) => (p.probeKeys.every((e) => e.kind === 'col') && (m < 0 || size(i + 1) > size(m + 1)) ? i : m), -1);
  if (j < 0 || round >= MAX_ROUNDS) {
    const other = inputs.reduce((m, _, i) => (i !== s && (m < 0 || size(i) > size(m)) ? i : m), -1);
    throw new PartitionLimit(other, inputs[other]!.count, size(other) * 4);
  }
  const probe = kernel.probes[j]!;
  const scanWords = sortKeyWords(variables[kernel.input]!.columns, probe.probeKeys.map((e) => (e.kind === 'col' ? e.index : -1)));
  const buildWords = sortKeyWords(variables[probe.build]!.columns, probe.buildKeys);
  const parts = Math.max(2, Math.ceil((deviceBytes(inputs[j + 1]!) * 3) / device.room));
  const scanned = await partitions(device, inputs[0]!, scanWords, parts, round, 0);
  const built = await partitions(device, inputs[j + 1]!, buildWords, parts, round, j + 1);
  const outs: HostRows[] = [];
  // Every pair, empty ones included: an aggregate of no rows may still have a row.
  for (let p = 0; p < parts; p++) {
    outs.push(await pipelineRows(device, kernel, inputs.map((r, i) => (i === 0 ? scanned[p]! : i === j + 1 ? built[p]! : r)), variables, round + 1));
  }
  return concatRows(outs, rowWords(variables[kernel.output]!.columns));
}

/** A join streaming its larger side against the other whole, or pair by pair of hash partitions of both sides' key words. */
async function joinPairs(
  device: PartitionDevice,
  kernel: KirKernel,
  inputs: readonly HostRows[],
  keys: readonly [number[], number[]],
  variables: readonly KirVariable[],
  round: number,
): Promise<HostRows> {
  const bytes = inputs.map((r) => r.count * r.width);
  const big = bytes[1]! > bytes[0]! ? 1 : 0;
  const out = await stream(device, kernel, inputs, big, variables);
  if (out) return out;
  const small = 1 - big;
  if (keys[0].length === 0 || round >= MAX_ROUNDS) throw new PartitionLimit(small, inputs[small]!.count, bytes[small]! * 4);
  // Each partition of the smaller side about a third of the room, beside a range of the other's and its output.
  const parts = Math.max(2, Math.ceil((deviceBytes(inputs[small]!) * 3) / device.room));
  const left = await partitions(device, inputs[0]!, keys[0], parts, round, 0);
  const right = await partitions(device, inputs[1]!, keys[1], parts, round, 1);
  const outs: HostRows[] = [];
  for (let p = 0; p < parts; p++) {
    // An inner join of an empty partition is empty.
    if (left[p]!.count === 0 || right[p]!.count === 0) continue;
    outs.push(await joinPairs(device, kernel, [left[p]!, right[p]!], keys, variables, round + 1));
  }
  const width = rowWords(variables[kernel.output]!.columns);
  return concatRows(outs.length > 0 ? outs : [{ words: new Uint32Array(0), count: 0, width }], width);
}

/**
 * Partial aggregates combined (`combine` is its own partial form): in one step where they fit, else range by range
 * while that leaves fewer rows (few groups), else per hash partition of the group words (many groups).
 */
async function combineAll(device: PartitionDevice, combine: KirKernel, partials: HostRows, group: readonly number[], variables: readonly KirVariable[]): Promise<HostRows> {
  for (let rows = partials; ; ) {
    if (deviceBytes(rows) * 2 <= device.room) {
      const out = await device.step(combine, [rows], variables);
      if (out) {
        device.steps += 1;
        return out;
      }
    }
    const fewer = await stream(device, combine, [rows], 0, variables);
    if (!fewer || fewer.count >= rows.count) return byGroups(device, combine, rows, group, variables, 0);
    rows = fewer;
  }
}

/** A hashed aggregation of `rows`, whole where it fits, else per hash partition of the group words. */
async function byGroups(device: PartitionDevice, kernel: KirKernel, rows: HostRows, group: readonly number[], variables: readonly KirVariable[], round: number): Promise<HostRows> {
  if (deviceBytes(rows) * 2 <= device.room || rows.count <= 1) {
    const out = await device.step(kernel, [rows], variables);
    if (out) {
      device.steps += 1;
      return out;
    }
  }
  if (group.length === 0 || round >= MAX_ROUNDS) throw new PartitionLimit(0, rows.count, rows.count * rows.width * 4);
  const parts = Math.max(2, Math.ceil((deviceBytes(rows) * 3) / device.room));
  const outs: HostRows[] = [];
  for (const part of await partitions(device, rows, group, parts, round, 0)) {
    if (part.count > 0) outs.push(await byGroups(device, kernel, part, group, variables, round + 1));
  }
  const width = rowWords(variables[kernel.output]!.columns);
  return concatRows(outs.length > 0 ? outs : [{ words: new Uint32Array(0), count: 0, width }], width);
}
