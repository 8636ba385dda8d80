/**
 * Sorting millions of strings given as UTF-8 bytes on the worker pool (a sample sort: sorted-order.ts binByteSlice
 * and sortByteBin), with no JS string made: the strings of device-parsed text and of Parquet files, which the run's
 * dictionary then merges as lists without decoding them.
 */
import { Buffer } from 'node:buffer';
import { asciiCount, asciiEnd, type AsciiStrings, type SortedStrings } from './encoding.js';
import { runAllInWorkers, workerCount } from './parallel/pool.js';
import { binByteSlice, binByteSliceTask, compareBytes, PARALLEL_STRINGS, sortByteBin, sortByteBinTask, type ByteBin, type ByteSlice, type ByteStrings } from './sorted-order.js';

/** Samples per bin that choose the bins' splitters. */
const SAMPLES_PER_BIN = 256;
/** Lists a ByteStringSort takes at most (a bin numbers its strings' lists in 16 bits). */
const MAX_LISTS = 1 << 16;

/**
 * Time of ByteStringSort.finish so far, by phase: choosing splitters and binning the strings, sorting the bins,
 * joining the bins' lists and ranks on the calling thread; and of the device's sorts (runtime gpu/string-sort.ts):
 * waiting for the lists' uploads at the end, the rounds of its refinement, the distinct strings' pass and reading
 * ranks and spans back (`vixen bench load` prints them).
 */
export const byteSortTimes = { sorts: 0, strings: 0, binMs: 0, sortMs: 0, joinMs: 0, deviceSorts: 0, deviceStrings: 0, deviceBytes: 0, deviceRounds: 0, deviceUploadMs: 0, deviceRoundsMs: 0, deviceReadMs: 0 };

/**
 * Lists of strings given as bytes sorted into one list, distinct, and per list each string's position there: on the
 * worker pool (ByteStringSort), or on the device (runtime gpu/string-sort.ts).
 */
export interface ByteSorter {
  /** Adds a list (string i is bytes [starts[i], starts[i + 1]) of it): the list as kept. */
  add(bytes: Uint8Array, starts: Uint32Array): ByteStrings;
  /** Every list's strings sorted and distinct, and per list, per string, its position among them. */
  finish(): Promise<{ sorted: AsciiStrings; ranks: Uint32Array[] }>;
  /** Gives back what the lists hold (device buffers) where finish will not be called: the load failed, or decodes them. */
  abandon(): Promise<void>;
}

/**
 * Lists of strings given as bytes (string i of a list is bytes [starts[i], starts[i + 1]) of it), sorted by their
 * bytes into one list, distinct, back to back, and per list each string's position there; no JS string made. A
 * sample sort on the worker pool: strings sampled evenly from all lists choose splitters, workers put each string of
 * a slice in its bin between two of them (binByteSlice), then each sorts one bin (sortByteBin), a stretch of the
 * whole, and the stretches are concatenated. Bins by a string's first two bytes instead left a quarter of a TPC-H
 * customer file's strings (every name "Customer#...") to one worker, which then sorted them through their 12 shared
 * bytes.
 */
export class ByteStringSort implements ByteSorter {
  private readonly lists: Array<ByteStrings & { bins: Uint8Array; rank: Uint32Array }> = [];
  private count = 0;

  /** Adds a list, its arrays copied where they are not in shared memory (workers read them): the list as kept. */
  add(bytes: Uint8Array, starts: Uint32Array): ByteStrings {
    if (this.lists.length >= MAX_LISTS) throw new Error(`internal: more than ${MAX_LISTS} lists of strings to sort`);
    const n = starts.length - 1;
    const list = { bytes: shared(bytes), starts: shared(starts), bins: new Uint8Array(new SharedArrayBuffer(n)), rank: new Uint32Array(new SharedArrayBuffer(4 * n)) };
    this.lists.push(list);
    this.count += n;
    return list;
  }

  /** Every list's strings sorted and distinct, and per list, per string, its position among them. */
  async finish(): Promise<{ sorted: AsciiStrings; ranks: Uint32Array[] }> {
    const t0 = performance.now();
    const workers = workerCount();
    const parallel = workers >= 2 && this.count >= PARALLEL_STRINGS;
    const binCount = parallel ? workers : 1;
    const splitters = this.splitters(binCount);
    // Slices of about equal counts, none across two lists.
    const slices: ByteSlice[] = this.lists.flatMap((list) => {
      const n = list.starts.length - 1;
      const parts = Math.max(1, Math.round((n * binCount) / this.count));
      return Array.from({ length: parts }, (_, j) => ({ ...list, lo: Math.floor((j * n) / parts), hi: Math.floor(((j + 1) * n) / parts), splitters }));
    });
    const sizes = parallel ? await runAllInWorkers(binByteSliceTask, slices) : slices.map(binByteSlice);
    const t1 = performance.now();
    const bins = Array.from({ length: binCount }, (_, bin): ByteBin => ({
      lists: this.lists,
      bin,
      strings: sizes.reduce((n, s) => n + s[2 * bin]!, 0),
      bytes: sizes.reduce((n, s) => n + s[2 * bin + 1]!, 0),
    }));
    const results = parallel ? await runAllInWorkers(sortByteBinTask, bins) : bins.map(sortByteBin);
    const t2 = performance.now();
    const bytes = new Uint8Array(results.reduce((n, r) => n + r.bytes.length, 0));
    const starts = new Uint32Array(results.reduce((n, r) => n + r.starts.length - 1, 0) + 1);
    /** Per bin, the distinct strings of the bins before it. */
    const base = new Uint32Array(binCount);
    let at = 0;
    let d = 0;
    results.forEach((r, bin) => {
      base[bin] = d;
      bytes.set(r.bytes, at);
      for (let k = 1; k < r.starts.length; k++) starts[d + k] = at + r.starts[k]!;
      at += r.bytes.length;
      d += r.starts.length - 1;
    });
    const ranks = this.lists.map(({ bins, rank }) => {
      const own = new Uint32Array(rank.length);
      for (let i = 0; i < rank.length; i++) own[i] = rank[i]! + base[bins[i]!]!;
      return own;
    });
    byteSortTimes.sorts++;
    byteSortTimes.strings += this.count;
    byteSortTimes.binMs += t1 - t0;
    byteSortTimes.sortMs += t2 - t1;
    byteSortTimes.joinMs += performance.now() - t2;
    return { sorted: { bytes, starts }, ranks };
  }

  /** Nothing to give back: the lists' shared memory is garbage collected. */
  abandon(): Promise<void> {
    return Promise.resolve();
  }

  /** `count` - 1 strings, sorted, that cut the strings sampled evenly from every list into `count` bins alike. */
  private splitters(count: number): ByteStrings {
    const samples: Array<{ list: ByteStrings; i: number }> = [];
    if (count > 1) {
      const every = this.count / (count * SAMPLES_PER_BIN);
      let next = every / 2;
      let before = 0;
      for (const list of this.lists) {
        const n = list.starts.length - 1;
        for (; next < before + n; next += every) samples.push({ list, i: Math.floor(next - before) });
        before += n;
      }
    }
    const span = ({ list, i }: { list: ByteStrings; i: number }): Uint8Array => list.bytes.subarray(list.starts[i], list.starts[i + 1]);
    samples.sort((a, b) => compareBytes(a.list.bytes, a.list.starts[a.i]!, a.list.starts[a.i + 1]!, b.list.bytes, b.list.starts[b.i]!, b.list.starts[b.i + 1]!));
    const cuts = Array.from({ length: count - 1 }, (_, b) => span(samples[Math.floor(((b + 1) * samples.length) / count)]!));
    const starts = new Uint32Array(cuts.length + 1);
    cuts.forEach((c, b) => (starts[b + 1] = starts[b]! + c.length));
    const bytes = new Uint8Array(starts[cuts.length]!);
    cuts.forEach((c, b) => bytes.set(c, starts[b]));
    return { bytes, starts };
  }
}

/**
 * `a` in shared memory (copied where it is not). The copy is a plain typed array, never `a.constructor`: for a Node
 * Buffer that is the deprecated `Buffer()` constructor, whose warning would reach the user's stderr.
 */
function shared<T extends Uint8Array | Uint32Array>(a: T): T {
  if (a.buffer instanceof SharedArrayBuffer) return a;
  const memory = new SharedArrayBuffer(a.byteLength);
  const b = (a instanceof Uint32Array ? new Uint32Array(memory) : new Uint8Array(memory)) as T;
  b.set(a);
  return b;
}

/**
 * Strings given as bytes (string i is bytes [starts[i], starts[i + 1])) sorted by their bytes, distinct, back to
 * back, and per string its position among them (ByteStringSort of one list).
 */
export async function sortByteStrings(bytes: Uint8Array, starts: Uint32Array): Promise<{ sorted: AsciiStrings; rank: Uint32Array }> {
  const sort = new ByteStringSort();
  sort.add(bytes, starts);
  const { sorted, ranks } = await sort.finish();
  return { sorted, rank: ranks[0]! };
}

let warmed = false;

/**
 * Starts the worker pool's threads for ByteStringSort (once per process), without waiting: a device parse calls it
 * as a file starts, so the workers load while the device parses rather than when the file's strings wait for them.
 */
export function warmByteSortWorkers(): void {
  if (warmed || workerCount() < 2) return;
  warmed = true;
  const none = { bytes: new Uint8Array(0), starts: new Uint32Array(1) };
  const slice = { ...none, lo: 0, hi: 0, splitters: none, bins: new Uint8Array(0) };
  runAllInWorkers(binByteSliceTask, Array.from({ length: workerCount() }, () => slice)).catch(() => undefined);
}

/** ASCII strings, sorted and distinct, as a list the run's dictionary merges without decoding them (mergeSortedLists). */
export function asciiList(ascii: AsciiStrings): SortedStrings {
  const { bytes, starts } = ascii;
  const text = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  return { size: asciiCount(ascii), ascii, text: (i) => text.toString('latin1', starts[i]!, asciiEnd(ascii, i)) };
}
