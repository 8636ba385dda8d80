/**
 * Strings sorted by index, so that each string's position in the sorted distinct list comes with the sort, without a
 * map of strings (a run's dictionary on workers, runtime sort-strings.ts; a store column's dictionary, store/import.ts).
 */
import { defineTask } from './parallel/tasks.js';

/**
 * `order`, the indices of `strings`' distinct values in sorted order (the first index of each value), and `rank`, per
 * string its value's position in that order. Indices are sorted by their strings, ties by
 * index, so each value's first index leads its run: no Map, which cost more than the sort (every string arrives
 * freshly copied, its hash not yet computed).
 */
export function sortedOrder(strings: readonly string[]): { order: Uint32Array; rank: Uint32Array } {
  const byString = new Uint32Array(strings.length);
  for (let i = 0; i < byString.length; i++) byString[i] = i;
  byString.sort((a, b) => {
    const x = strings[a]!;
    const y = strings[b]!;
    // Equality before order: strings of other lengths differ at once, where `>` compares their units again.
    return x < y ? -1 : x === y ? a - b : 1;
  });
  const rank = new Uint32Array(strings.length);
  const order: number[] = [];
  for (let k = 0; k < byString.length; k++) {
    const i = byString[k]!;
    if (k === 0 || strings[i] !== strings[order[order.length - 1]!]) order.push(i);
    rank[i] = order.length - 1;
  }
  return { order: Uint32Array.from(order), rank };
}

/**
 * Below this many strings one thread sorts them: handing them to workers copies them. Not higher: the workers also
 * give each string its id, and without those the facts' words are mapped through a map of every string (StringMap
 * get and add took 6.8 s of the main thread over bench load --sf 1 on the lent H200 with this at 2^20: customer's
 * and part's 150K-600K strings sorted on one thread).
 */
export const PARALLEL_STRINGS = 1 << 16;

/** sortedOrder on a worker. */
export const sortedOrderTask = defineTask('io/sorted-order', import.meta.url, sortedOrder);

/** < 0, 0 or > 0 as bytes [p, pe) of x are below, equal to or above bytes [q, qe) of y. */
export function compareBytes(x: Uint8Array, p: number, pe: number, y: Uint8Array, q: number, qe: number): number {
  for (; p < pe && q < qe; p++, q++) {
    const d = x[p]! - y[q]!;
    if (d !== 0) return d;
  }
  return pe - p - (qe - q);
}

/** Byte strings: string i is bytes [starts[i], starts[i + 1]). */
export interface ByteStrings {
  bytes: Uint8Array;
  starts: Uint32Array;
}

/** Ranges this short are sorted by comparing their bytes. */
const SHORT_RANGE = 16;
/** Bits of a key's low word that number a string within its range (the three above: how many of its 4 bytes it has). */
const INDEX_BITS = 29;
const INDEX_MASK = 2 ** INDEX_BITS - 1;
/** The most strings one sortByteRange sorts (a position within a range takes INDEX_BITS). */
export const MAX_RANGE_STRINGS = 2 ** INDEX_BITS;

/**
 * Strings [lo, hi) of `strings` sorted by their bytes (byte order is code-unit order for ASCII text), without a JS
 * string each: `perm`, their indices in order, and `same[k]`, whether string perm[k] equals perm[k - 1]. A
 * most-significant-digit radix sort on 4 bytes at a time: each range's strings get a 64-bit key (the 4 bytes at the
 * depth they share, big-endian and zero-padded; how many of those they have, 0-4; their position in the range) that
 * a typed array's native sort orders; runs of one key whose strings go on are sorted again 4 bytes deeper, short
 * ranges by comparing bytes. A byte at a time (an American flag sort) read a string's bytes from memory once per byte,
 * a cache miss each, and took 1.5 times as long on 1.5M TPC-H comments.
 */
export function sortByteRange({ bytes, starts }: ByteStrings, lo: number, hi: number): { perm: Uint32Array; same: Uint8Array } {
  const n = hi - lo;
  if (n > MAX_RANGE_STRINGS) throw new Error(`internal: ${n} strings to sort at once, more than ${MAX_RANGE_STRINGS}`);
  const perm = new Uint32Array(n);
  for (let k = 0; k < n; k++) perm[k] = lo + k;
  const same = new Uint8Array(n);
  const keys = new BigUint64Array(n);
  // Little-endian words of the keys: [2k] the low one (length class, position), [2k + 1] the bytes.
  const words = new Uint32Array(keys.buffer);
  const moved = new Uint32Array(n);
  // Ranges left to sort: lo, hi, depth (bytes every string of the range shares).
  const stack: number[] = [0, n, 0];
  while (stack.length > 0) {
    const depth = stack.pop()!;
    const b = stack.pop()!;
    const a = stack.pop()!;
    if (b - a <= SHORT_RANGE) {
      for (let k = a + 1; k < b; k++) {
        const x = perm[k]!;
        const xs = starts[x]! + depth;
        const xe = starts[x + 1]!;
        let j = k - 1;
        for (; j >= a; j--) {
          const y = perm[j]!;
          if (compareBytes(bytes, starts[y]! + depth, starts[y + 1]!, bytes, xs, xe) <= 0) break;
          perm[j + 1] = y;
        }
        perm[j + 1] = x;
      }
      for (let k = a + 1; k < b; k++) {
        const x = perm[k]!;
        const y = perm[k - 1]!;
        if (compareBytes(bytes, starts[y]! + depth, starts[y + 1]!, bytes, starts[x]! + depth, starts[x + 1]!) === 0) same[k] = 1;
      }
      continue;
    }
    for (let k = a; k < b; k++) {
      const x = perm[k]!;
      const p = starts[x]! + depth;
      const left = starts[x + 1]! - p;
      let key: number;
      if (left >= 4) key = ((bytes[p]! << 24) | (bytes[p + 1]! << 16) | (bytes[p + 2]! << 8) | bytes[p + 3]!) >>> 0;
      else {
        key = 0;
        for (let j = 0; j < 4; j++) key = key * 256 + (j < left ? bytes[p + j]! : 0);
      }
      // A string that ends inside the 4 bytes comes before one that goes on with zero bytes there.
      words[2 * k] = ((left >= 4 ? 4 : left) << INDEX_BITS) | (k - a);
      words[2 * k + 1] = key;
    }
    keys.subarray(a, b).sort();
    for (let k = a; k < b; k++) moved[k] = perm[a + (words[2 * k]! & INDEX_MASK)]!;
    perm.set(moved.subarray(a, b), a);
    // Runs of one key and length class: strings that end inside the 4 bytes are equal; the others go on past them.
    for (let k = a; k < b; ) {
      const key = words[2 * k + 1]!;
      const lengthClass = words[2 * k]! >>> INDEX_BITS;
      let e = k + 1;
      while (e < b && words[2 * e + 1] === key && words[2 * e]! >>> INDEX_BITS === lengthClass) e++;
      if (e - k > 1) {
        if (lengthClass === 4) stack.push(k, e, depth + 4);
        else same.fill(1, k + 1, e);
      }
      k = e;
    }
  }
  return { perm, same };
}

/** The distinct strings of a sort (sortByteRange) in order, back to back: bytes and starts. */
function gatherDistinct({ bytes, starts }: ByteStrings, perm: Uint32Array, same: Uint8Array): ByteStrings {
  let distinct = 0;
  let size = 0;
  for (let k = 0; k < perm.length; k++) {
    if (k > 0 && same[k] === 1) continue;
    distinct++;
    size += starts[perm[k]! + 1]! - starts[perm[k]!]!;
  }
  const out = new Uint8Array(size);
  const outStarts = new Uint32Array(distinct + 1);
  for (let k = 0, d = 0, at = 0; k < perm.length; k++) {
    if (k > 0 && same[k] === 1) continue;
    const i = perm[k]!;
    for (let p = starts[i]!, e = starts[i + 1]!; p < e; p++) out[at++] = bytes[p]!;
    outStarts[++d] = at;
  }
  return { bytes: out, starts: outStarts };
}

/**
 * A slice of a sample sort over workers (sort-byte-strings.ts ByteStringSort): strings [lo, hi) of a list (`bytes`, `starts`, in
 * shared memory), each put in the bin of the splitters below it (`splitters`: sorted strings; bin b holds the strings
 * not below splitter b - 1 and below splitter b), written to `bins` (per string of the list, shared).
 */
export interface ByteSlice extends ByteStrings {
  lo: number;
  hi: number;
  splitters: ByteStrings;
  bins: Uint8Array;
}

/** Bins the strings of a ByteSlice; returns per bin its strings and their bytes (words 2b and 2b + 1). */
export function binByteSlice({ bytes, starts, lo, hi, splitters, bins }: ByteSlice): Uint32Array {
  const cuts = splitters.starts.length - 1;
  const sizes = new Uint32Array(2 * (cuts + 1));
  for (let i = lo; i < hi; i++) {
    const s = starts[i]!;
    const e = starts[i + 1]!;
    // The first splitter above the string.
    let a = 0;
    let b = cuts;
    while (a < b) {
      const mid = (a + b) >>> 1;
      if (compareBytes(splitters.bytes, splitters.starts[mid]!, splitters.starts[mid + 1]!, bytes, s, e) <= 0) a = mid + 1;
      else b = mid;
    }
    bins[i] = a;
    sizes[2 * a]!++;
    sizes[2 * a + 1]! += e - s;
  }
  return sizes;
}

/** binByteSlice on a worker. */
export const binByteSliceTask = defineTask('io/bin-byte-slice', import.meta.url, binByteSlice);

/**
 * One bin of a sample sort's lists: `strings` strings of `bytes` bytes in all, those whose `bins` entry is `bin`.
 * Their bytes are gathered into memory of their own (the bin's strings, a share of all, sort in the cache), sorted,
 * and each string's position among the bin's distinct ones written to its list's `rank` (shared).
 */
export interface ByteBin {
  lists: ReadonlyArray<ByteStrings & { bins: Uint8Array; rank: Uint32Array }>;
  bin: number;
  strings: number;
  bytes: number;
}

/** Sorts a ByteBin: its distinct strings in order, back to back. */
export function sortByteBin({ lists, bin, strings, bytes: size }: ByteBin): ByteStrings {
  const bytes = new Uint8Array(size);
  const starts = new Uint32Array(strings + 1);
  /** Per string of the bin, its list and index there. */
  const listOf = new Uint16Array(strings);
  const indexOf = new Uint32Array(strings);
  let n = 0;
  let at = 0;
  lists.forEach((list, l) => {
    const { bins, bytes: from, starts: spans } = list;
    for (let i = 0; i < bins.length; i++) {
      if (bins[i] !== bin) continue;
      for (let p = spans[i]!, e = spans[i + 1]!; p < e; p++) bytes[at++] = from[p]!;
      listOf[n] = l;
      indexOf[n] = i;
      starts[++n] = at;
    }
  });
  const own = { bytes, starts };
  const { perm, same } = sortByteRange(own, 0, n);
  for (let k = 0, d = -1; k < n; k++) {
    const x = perm[k]!;
    lists[listOf[x]!]!.rank[indexOf[x]!] = k > 0 && same[k] === 1 ? d : ++d;
  }
  return gatherDistinct(own, perm, same);
}

/** sortByteBin on a worker. */
export const sortByteBinTask = defineTask('io/sort-byte-bin', import.meta.url, sortByteBin);
