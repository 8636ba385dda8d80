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

/** The share of each bin: consecutive bins (of `counts` strings each) up to about 1/workers of the `total` each. */
export function binShares(counts: Uint32Array, total: number, workers: number): Uint8Array {
  const shareOf = new Uint8Array(counts.length);
  const per = Math.ceil(total / workers);
  for (let b = 0, share = 0, inShare = 0; b < counts.length; b++) {
    if (inShare >= per && share < workers - 1) {
      share++;
      inShare = 0;
    }
    shareOf[b] = share;
    inShare += counts[b]!;
  }
  return shareOf;
}

/** sortedOrder on a worker. */
export const sortedOrderTask = defineTask('io/sorted-order', import.meta.url, sortedOrder);

/** Strings as bytes: string i is bytes [starts[indices[k]], starts[indices[k] + 1]) for each k. */
export interface ByteStringsShare {
  bytes: Uint8Array;
  starts: Uint32Array;
  indices: Uint32Array;
}

/** The distinct strings of a share in byte order, back to back, and per string of the share its position among them. */
export interface SortedByteStrings {
  bytes: Uint8Array;
  /** starts[d], starts[d + 1]: where distinct string d lies in `bytes`. */
  starts: Uint32Array;
  /** Per k of the share's indices, its string's position in the sorted distinct strings. */
  rank: Uint32Array;
}

/** Ranges this short are sorted by comparing their bytes. */
const SHORT_RANGE = 32;

/** < 0, 0 or > 0 as bytes [p, pe) of x are below, equal to or above bytes [q, qe) of y. */
export function compareBytes(x: Uint8Array, p: number, pe: number, y: Uint8Array, q: number, qe: number): number {
  for (; p < pe && q < qe; p++, q++) {
    const d = x[p]! - y[q]!;
    if (d !== 0) return d;
  }
  return pe - p - (qe - q);
}

/**
 * The strings of a share sorted by their bytes (byte order is code-unit order for ASCII text) without a JS string
 * each: a most-significant-digit radix sort (American flag sort: each range counted by its byte at the depth its
 * strings share and moved into buckets, 0 for strings that end there), short ranges by comparing bytes. Dictionaries
 * of millions of names or comments (device-parsed text, parse-text.ts).
 */
export function sortedByteStrings({ bytes, starts, indices }: ByteStringsShare): SortedByteStrings {
  const n = indices.length;
  const from = new Uint32Array(n);
  const to = new Uint32Array(n);
  for (let k = 0; k < n; k++) {
    from[k] = starts[indices[k]!]!;
    to[k] = starts[indices[k]! + 1]!;
  }
  /** Positions into `indices`, sorted in place range by range. */
  const perm = new Uint32Array(n);
  for (let k = 0; k < n; k++) perm[k] = k;
  const moved = new Uint32Array(n);
  const digits = new Uint16Array(n);
  const counts = new Uint32Array(257);
  const ends = new Uint32Array(257);
  // Ranges left to sort: lo, hi, depth (bytes every string of the range shares).
  const stack: number[] = [0, n, 0];
  while (stack.length > 0) {
    const depth = stack.pop()!;
    const hi = stack.pop()!;
    const lo = stack.pop()!;
    if (hi - lo <= SHORT_RANGE) {
      for (let k = lo + 1; k < hi; k++) {
        const x = perm[k]!;
        const xs = from[x]! + depth;
        const xe = to[x]!;
        let j = k - 1;
        for (; j >= lo; j--) {
          const y = perm[j]!;
          if (compareBytes(bytes, from[y]! + depth, to[y]!, bytes, xs, xe) <= 0) break;
          perm[j + 1] = y;
        }
        perm[j + 1] = x;
      }
      continue;
    }
    counts.fill(0);
    for (let k = lo; k < hi; k++) {
      const i = perm[k]!;
      const at = from[i]! + depth;
      const d = at < to[i]! ? bytes[at]! + 1 : 0;
      digits[k] = d;
      counts[d]!++;
    }
    // A range whose strings all share the byte moves nothing: the next byte.
    const only = counts[digits[lo]!] === hi - lo;
    if (only) {
      if (digits[lo] !== 0) stack.push(lo, hi, depth + 1);
      continue;
    }
    for (let d = 0, at = lo; d < 257; d++) {
      const c = counts[d]!;
      counts[d] = at;
      at += c;
      ends[d] = at;
    }
    for (let k = lo; k < hi; k++) moved[counts[digits[k]!]!++] = perm[k]!;
    perm.set(moved.subarray(lo, hi), lo);
    // Bucket 0 holds strings that end here: all equal.
    for (let d = 1, at = ends[0]!; d < 257; d++) {
      if (ends[d]! - at > 1) stack.push(at, ends[d]!, depth + 1);
      at = ends[d]!;
    }
  }
  const rank = new Uint32Array(n);
  let distinct = 0;
  let size = 0;
  for (let k = 0; k < n; k++) {
    const i = perm[k]!;
    const p = perm[k - 1]!;
    if (k === 0 || compareBytes(bytes, from[p]!, to[p]!, bytes, from[i]!, to[i]!) !== 0) {
      distinct++;
      size += to[i]! - from[i]!;
    }
    rank[i] = distinct - 1;
  }
  const out = new Uint8Array(size);
  const outStarts = new Uint32Array(distinct + 1);
  for (let k = 0, d = 0, at = 0; k < n; k++) {
    const i = perm[k]!;
    // Ranks run 0, 0, 1, 2, 2, ... in sorted order: a string whose rank is `d` is the next distinct one.
    if (rank[i] === d) {
      for (let p = from[i]!, e = to[i]!; p < e; p++) out[at++] = bytes[p]!;
      outStarts[++d] = at;
    }
  }
  return { bytes: out, starts: outStarts, rank };
}

/** sortedByteStrings on a worker (the share's bytes and starts in shared memory). */
export const sortedByteStringsTask = defineTask('io/sorted-byte-strings', import.meta.url, sortedByteStrings);
