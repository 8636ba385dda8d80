/**
 * Distinct byte strings sorted on the device (codegen-wgsl kernels/string-sort.ts), the lists of a device parse or of
 * Parquet files, behind the interface of io's ByteStringSort (ByteSorter): each list's bytes and spans are uploaded as
 * it is added, then an MSD refinement sorts them 7 bytes a round (the radix sort of rows (group rank, key hi, key lo,
 * string), then splitting each group where its keys differ and dropping the strings that are resolved), and each
 * string's position among the distinct ones and each distinct string's start and end come back: the host keeps a copy
 * of the lists' bytes laid out as on the device, in which the sorted list names its strings. The host lists each
 * string's span and reads the answer back; a round costs a host round trip, to learn how many strings are left.
 */
import { asciiCount, asciiEnd, ByteStringSort, byteSortTimes, compareBytes, type AsciiStrings, type ByteSorter, type ByteStrings } from '@vixen/io';
import { STRING_SORT_BYTES, STRING_SORT_ROW, stringSortShaders, sortShaders, type KernelShaders } from '@vixen/codegen-wgsl';
import type { ScalarType } from '@vixen/queryplan';
import { internals, type Gpu, type GpuImpl } from './device.js';
import { encodeScan } from './kernels/scan.js';
import { radixSortPasses } from './kernels/radix-sort.js';
import { sortRows } from './kernels/sort.js';
import { memoShaders, precompile, Recorder, type Bound } from './recorder.js';
import { acquireBound, allocRelation, bound, DeviceLimitError, readWords, releaseRelation, submitAndSync, type DeviceRelation } from './relations.js';
import { fromWords, uploadBytes, uploadWords } from './upload.js';

/**
 * Strings from which a GPU sorts them (`auto`): below, the workers' sample sort costs less than a device round trip
 * a round.
 */
export const DEVICE_SORT_STRINGS = 2 ** 17;

/** Where byte strings are sorted: `auto` (the device on a GPU, for many), always the device, or never. */
export type StringSortMode = 'auto' | 'device' | 'workers';

/** The mode VIXEN_STRING_SORT sets (`device`, `workers`; default `auto`): tests force the device's on a CPU adapter. */
export function stringSortMode(): StringSortMode {
  const mode = globalThis.process?.env?.VIXEN_STRING_SORT;
  return mode === 'device' || mode === 'workers' ? mode : 'auto';
}

/** The sort of byte strings for a load on `gpu`: the device's (falling back to the workers' where it does not take them), or the workers'. */
export function byteSorter(gpu: Gpu, mode: StringSortMode = stringSortMode()): ByteSorter {
  if (mode === 'workers' || (mode === 'auto' && gpu.software)) return new ByteStringSort();
  return new DeviceByteStringSort(gpu, mode === 'device' ? 0 : DEVICE_SORT_STRINGS);
}

/**
 * Lists of byte strings sorted on the device where they number `least` or more and fit its bindings, else on workers.
 * Each list's bytes and spans are uploaded as it is added, so they are on the device by the time the last list comes
 * (a device parse adds a chunk's strings while later chunks parse); a list a device parse gathered comes on the device
 * already, with its starts, and is not uploaded again.
 */
export class DeviceByteStringSort implements ByteSorter {
  private readonly lists: ByteStrings[] = [];
  /** Per list, its strings on the device, or undefined where they did not fit one binding. */
  private readonly uploads: Array<Promise<DeviceStrings | undefined>> = [];
  /** Per list, the word its bytes start at on the device (each list's at a word, as a device copy of them needs). */
  private readonly wordAt: number[] = [];
  private count = 0;
  /** Words of the lists' bytes so far, each list's starting at a word (as a device copy of them needs). */
  private words = 0;

  constructor(
    private readonly gpu: Gpu,
    private readonly least: number,
  ) {
    // Compiled while the lists come (a cold compile took some 66 ms a pipeline on the lent H200).
    const g = internals(gpu);
    if (g.software) return;
    const { shaders, keys } = sortShadersOf();
    precompile(g, shaders);
    precompile(g, keys, radixSortPasses(g, STRING_SORT_ROW));
  }

  /**
   * Adds a list (ByteSorter.add); `onDevice`: its bytes and starts on the device already (a device parse gathered
   * them), which the sort then owns: they are not uploaded again.
   */
  add(bytes: Uint8Array, starts: Uint32Array, onDevice?: DeviceStrings): ByteStrings {
    const list = { bytes, starts };
    this.lists.push(list);
    this.wordAt.push(this.words);
    const count = starts.length - 1;
    const first = starts[0]!;
    const size = starts[count]! - first;
    const own = bytes.subarray(first, first + size);
    if (onDevice && first !== 0) throw new Error('internal: a list on the device starts at its first byte');
    const upload = onDevice ? Promise.resolve(onDevice) : uploadList(internals(this.gpu), own, starts);
    // Awaited by finish or abandon; until then a failure must not go unhandled.
    upload.catch(() => undefined);
    this.uploads.push(upload);
    this.count += count;
    this.words += Math.ceil(size / 4);
    return list;
  }

  async finish(): Promise<{ sorted: AsciiStrings; ranks: Uint32Array[] }> {
    const t0 = performance.now();
    const resident = await this.resident();
    const waited = performance.now() - t0;
    const g = internals(this.gpu);
    try {
      const groups = this.count >= this.least && all(resident) ? this.groups(g.limits.maxStorageBufferBindingSize) : undefined;
      if (groups) {
        // Each group of lists sorted on its own (past one binding: more bytes than one holds), then merged.
        const parts = [];
        const wordOf = (k: number): number => this.wordAt[k] ?? this.words;
        /**
         * The lists' bytes laid out as the device holds them: the sorted strings are named in them, so none is read
         * back. Copied once, while the device sorts (copied as each list came, it grew by doubling, copying again).
         */
        const joined = new Uint8Array(4 * this.words);
        for (const [i, [lo, hi]] of groups.entries()) {
          const from = wordOf(lo);
          const to = wordOf(hi);
          const sorting = sortOnDevice(g, this.lists.slice(lo, hi), resident.slice(lo, hi) as DeviceStrings[], to - from, joined.subarray(4 * from, 4 * to));
          if (i === 0) this.lists.forEach(({ bytes, starts }, k) => joined.set(bytes.subarray(starts[0]!, starts[starts.length - 1]!), 4 * this.wordAt[k]!));
          parts.push(await sorting);
        }
        byteSortTimes.deviceUploadMs += waited;
        return parts.length === 1 ? parts[0]! : mergeSorted(joined, parts, groups.map(([lo]) => 4 * wordOf(lo)));
      }
    } catch (e) {
      // More bytes or strings than one binding holds: the workers sort them.
      if (!(e instanceof DeviceLimitError)) throw e;
    } finally {
      release(g, resident);
    }
    const sort = new ByteStringSort();
    for (const { bytes, starts } of this.lists) sort.add(bytes, starts);
    return sort.finish();
  }

  async abandon(): Promise<void> {
    release(internals(this.gpu), await this.resident());
  }

  /**
   * The lists cut into runs [lo, hi) of consecutive lists whose bytes, spans and rows each fit a binding of `limit`
   * bytes, or undefined where one list alone does not.
   */
  private groups(limit: number): Array<[number, number]> | undefined {
    const groups: Array<[number, number]> = [[0, 0]];
    let words = 0;
    let strings = 0;
    const fits = (w: number, n: number): boolean => 4 * w <= limit && 4 * STRING_SORT_ROW * n <= limit;
    for (let k = 0; k < this.lists.length; k++) {
      const w = (this.wordAt[k + 1] ?? this.words) - this.wordAt[k]!;
      const n = this.lists[k]!.starts.length - 1;
      if (!fits(w, n)) return undefined;
      if (k > 0 && !fits(words + w, strings + n)) {
        groups.push([k, k]);
        words = 0;
        strings = 0;
      }
      groups[groups.length - 1]![1] = k + 1;
      words += w;
      strings += n;
    }
    return groups;
  }

  /** The lists on the device, once uploaded (each once: finish or abandon). */
  private async resident(): Promise<Array<DeviceStrings | undefined>> {
    return Promise.all(this.uploads.splice(0));
  }
}

/**
 * A list's bytes (padded to whole words) and starts on the device: string i is bytes [starts[i] - starts[0],
 * starts[i + 1] - starts[0]) of them.
 */
export interface DeviceStrings {
  bytes: Bound;
  starts: Bound;
}

const all = (lists: ReadonlyArray<DeviceStrings | undefined>): lists is DeviceStrings[] => lists.every((l) => l !== undefined);

/** A list's bytes and starts uploaded into buffers of their own, or undefined where they do not fit one binding. */
async function uploadList(g: GpuImpl, bytes: Uint8Array, starts: Uint32Array): Promise<DeviceStrings | undefined> {
  const words = Math.ceil(bytes.length / 4);
  const held: Bound[] = [];
  try {
    held.push(acquireBound(g, Math.max(1, words), `${bytes.length} bytes of strings to sort`));
    held.push(acquireBound(g, starts.length, `the starts of ${starts.length - 1} strings to sort`));
  } catch (e) {
    for (const b of held) g.pool.release(b.buffer);
    if (e instanceof DeviceLimitError) return undefined;
    throw e;
  }
  const [b, s] = held as [Bound, Bound];
  try {
    await uploadBytes(g, b.buffer, 0, 4 * words, fromWords([bytes, new Uint8Array(4 * words - bytes.length)]));
    await uploadWords(g, s.buffer, 0, [starts]);
  } catch (e) {
    for (const h of held) g.pool.release(h.buffer);
    throw e;
  }
  return { bytes: b, starts: s };
}

function release(g: GpuImpl, lists: ReadonlyArray<DeviceStrings | undefined>): void {
  for (const l of lists) {
    if (!l) continue;
    g.pool.release(l.bytes.buffer);
    g.pool.release(l.starts.buffer);
  }
}

/**
 * Sorted distinct lists (`parts`, each sortOnDevice's of a run of lists, its strings named in its window of `joined`,
 * which starts at byte `offsets[p]`) merged into one, named in `joined`, with each list's ranks among the merged
 * strings: past one binding, where each run of lists was sorted on its own.
 */
export function mergeSorted(joined: Uint8Array, parts: ReadonlyArray<{ sorted: AsciiStrings; ranks: Uint32Array[] }>, offsets: readonly number[]): { sorted: AsciiStrings; ranks: Uint32Array[] } {
  const k = parts.length;
  const sizes = parts.map((p) => asciiCount(p.sorted));
  const total = sizes.reduce((n, m) => n + m, 0);
  const starts = new Uint32Array(total);
  const ends = new Uint32Array(total);
  /** Per part, per string, its position among the merged ones. */
  const maps = sizes.map((n) => new Uint32Array(n));
  const at = new Uint32Array(k);
  let n = 0;
  for (;;) {
    let best = -1;
    let bs = 0;
    let be = 0;
    for (let p = 0; p < k; p++) {
      const i = at[p]!;
      if (i === sizes[p]) continue;
      const s = offsets[p]! + parts[p]!.sorted.starts[i]!;
      const e = offsets[p]! + asciiEnd(parts[p]!.sorted, i);
      if (best < 0 || compareBytes(joined, s, e, joined, bs, be) < 0) {
        best = p;
        bs = s;
        be = e;
      }
    }
    if (best < 0) break;
    // Parts are distinct each; a string in two of them comes out of each in turn.
    if (n > 0 && compareBytes(joined, starts[n - 1]!, ends[n - 1]!, joined, bs, be) === 0) maps[best]![at[best]!] = n - 1;
    else {
      starts[n] = bs;
      ends[n] = be;
      maps[best]![at[best]!] = n++;
    }
    at[best]!++;
  }
  return {
    sorted: { bytes: joined, starts: starts.subarray(0, n), ends: ends.subarray(0, n) },
    ranks: parts.flatMap((p, q) => p.ranks.map((r) => r.map((rank) => maps[q]![rank]!))),
  };
}

const ROW_TYPES: ScalarType[] = Array.from({ length: STRING_SORT_ROW }, () => 'uint32');

/** The passes a device sort runs: its own (`shaders`) and the radix sort's of its rows by (rank, hi, lo) (`keys`). */
function sortShadersOf(): { shaders: KernelShaders; keys: KernelShaders } {
  return {
    shaders: memoShaders({ stringSort: true }, stringSortShaders),
    keys: memoShaders({ sort: [ROW_TYPES, [0, 1, 2]] }, () => sortShaders(ROW_TYPES, [0, 1, 2])),
  };
}

/**
 * `lists`' strings sorted, distinct, and per list each string's position among them (ByteStringSort.finish), their
 * bytes (`words` in all) and spans on the device already (`resident`, uploadList's), copied from there into one buffer
 * each; the sorted strings are named in `joined`, the lists' bytes on the host laid out as on the device.
 */
async function sortOnDevice(g: GpuImpl, lists: readonly ByteStrings[], resident: readonly DeviceStrings[], words: number, joined: Uint8Array): Promise<{ sorted: AsciiStrings; ranks: Uint32Array[] }> {
  const t0 = performance.now();
  const n = lists.reduce((k, l) => k + l.starts.length - 1, 0);
  const byteCount = lists.reduce((k, l) => k + l.starts[l.starts.length - 1]! - l.starts[0]!, 0);
  if (n === 0) return { sorted: { bytes: new Uint8Array(0), starts: new Uint32Array(0), ends: new Uint32Array(0) }, ranks: lists.map(() => new Uint32Array(0)) };
  const { shaders, keys } = sortShadersOf();
  const held: Bound[] = [];
  const acquire = (count: number, what: string): Bound => {
    const b = acquireBound(g, count, what);
    held.push(b);
    return b;
  };
  let rows: DeviceRelation | undefined;
  try {
    const byteWords = Math.max(1, words);
    const bytes = acquire(byteWords, `${byteCount} bytes of strings to sort`);
    const spans = acquire(2 * n, `the spans of ${n} strings to sort`);
    // Per string its rank, then per rank the string that marked it a distinct string's (kernels/string-sort.ts).
    const ranks = acquire(2 * n, 'string ranks');
    const mark = acquire(n + 1, 'distinct string marks');
    const groupHead = acquire(n, 'string group starts');
    rows = allocRelation(g, n, STRING_SORT_ROW);
    let rec = new Recorder(g, shaders);
    let wordsAt = 0;
    let spansAt = 0;
    resident.forEach((r, k) => {
      const l = lists[k]!;
      const size = l.starts[l.starts.length - 1]! - l.starts[0]!;
      const count = l.starts.length - 1;
      rec.copy(r.bytes.buffer, 0, bytes.buffer, 4 * wordsAt, 4 * Math.ceil(size / 4));
      // Spans from the starts: the list's first byte lies at word wordsAt (u32 sums wrap, as the base may be below 0).
      if (count > 0) rec.dispatch('strSortSpans', [r.starts, spans], [count, (4 * wordsAt - l.starts[0]!) >>> 0, spansAt / 2], count);
      wordsAt += Math.ceil(size / 4);
      spansAt += 2 * (l.starts.length - 1);
    });
    rec.clear(mark.buffer, 4 * (n + 1));
    // The first round's rows: `rows` and `keep` are not read (spans stand in).
    rec.dispatch('strSortNext', [bytes, spans, spans, spans, bound(rows)], [n, 0, 1], n);
    await rec.submit();
    let left = n;
    let rounds = 0;
    for (let depth = STRING_SORT_BYTES; left > 0; depth += STRING_SORT_BYTES) {
      const sorted = await sortRows(g, keys, rows, [0, 1, 2], 'radix');
      releaseRelation(g, rows);
      rows = sorted;
      rounds++;
      rec = new Recorder(g, shaders);
      const heads = rec.scratch(left + 1);
      const subHead = rec.scratch(left + 1);
      // Read back after the submit, which gives scratch buffers back to the pool (another sort may take them).
      const keep = acquireBound(g, left + 1, 'kept strings');
      const rowsBound = bound(rows);
      rec.dispatch('strSortHeads', [rowsBound, heads], [left], left + 1);
      encodeScan(rec, heads, left + 1);
      rec.dispatch('strSortStarts', [rowsBound, heads, subHead, groupHead], [left], left);
      rec.dispatch('strSortRefine', [rowsBound, heads, subHead, groupHead, ranks, keep, mark], [left, n], left + 1);
      encodeScan(rec, keep, left + 1);
      const next = allocRelation(g, left, STRING_SORT_ROW);
      rec.dispatch('strSortNext', [bytes, spans, rowsBound, keep, bound(next)], [left, depth, 0], left);
      let kept: Uint32Array;
      try {
        [kept] = (await submitAndSync(g, rec, [{ buffer: keep.buffer, offset: 4 * left, words: 1 }])) as [Uint32Array];
      } finally {
        g.pool.release(keep.buffer);
      }
      releaseRelation(g, rows);
      rows = next;
      left = rows.count = kept[0]!;
    }
    const t2 = performance.now();
    // Ranks (positions among all strings) to positions among the distinct ones, and each distinct string's span.
    rec = new Recorder(g, shaders);
    const distinct = acquire(2 * n, 'distinct string spans');
    encodeScan(rec, mark, n + 1);
    rec.dispatch('strSortDistinct', [spans, mark, ranks, distinct], [n], n);
    const d = (await submitAndSync(g, rec, [{ buffer: mark.buffer, offset: 4 * n, words: 1 }]))[0]![0]!;
    // Read at once: each read's device copies and mappings overlap the others' copying out on the host.
    const [rankWords, sortedStarts, sortedEnds] = await Promise.all([readWords(g, ranks.buffer, 0, n), readWords(g, distinct.buffer, 0, d), readWords(g, distinct.buffer, 4 * n, d)]);
    const result = { bytes: joined.subarray(0, 4 * words), starts: sortedStarts, ends: sortedEnds };
    let from = 0;
    const listRanks = lists.map((l) => rankWords.subarray(from, (from += l.starts.length - 1)));
    const t3 = performance.now();
    byteSortTimes.deviceSorts++;
    byteSortTimes.deviceStrings += n;
    byteSortTimes.deviceBytes += byteCount;
    byteSortTimes.deviceRounds += rounds;
    byteSortTimes.deviceRoundsMs += t2 - t0;
    byteSortTimes.deviceReadMs += t3 - t2;
    return { sorted: result, ranks: listRanks };
  } finally {
    if (rows) releaseRelation(g, rows);
    for (const b of held) g.pool.release(b.buffer);
  }
}
