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

/**
 * Digits of the most-significant-digit radix sort below: 3 bytes, each as byte + 1 (0: past the string's end), so a
 * digit is below 257^3 < 2^25 and a digit with an index below 2^28 fits a double exactly.
 */
const DIGIT = 257;
const INDEX = 2 ** 28;
/** Ranges this short are sorted by comparing their bytes. */
const SHORT_RANGE = 24;

/** < 0, 0 or > 0 as bytes [p, pe) are below, equal to or above bytes [q, qe) (of the same array). */
function compareRanges(b: Uint8Array, p: number, pe: number, q: number, qe: number): number {
  for (; p < pe && q < qe; p++, q++) {
    const d = b[p]! - b[q]!;
    if (d !== 0) return d;
  }
  return pe - p - (qe - q);
}

/**
 * The strings of a share sorted by their bytes (byte order is code-unit order for ASCII text) without a JS string
 * each: a most-significant-digit radix sort on 3-byte digits, each level a native sort of doubles (digit, index),
 * short ranges by comparison. Dictionaries of millions of names or comments (device-parsed text, parse-text.ts).
 */
export function sortedByteStrings({ bytes, starts, indices }: ByteStringsShare): SortedByteStrings {
  const n = indices.length;
  if (n >= INDEX) throw new Error(`internal: ${n} strings to sort in one share, more than ${INDEX}`);
  const from = (k: number): number => starts[indices[k]!]!;
  const to = (k: number): number => starts[indices[k]! + 1]!;
  /** Positions into `indices`, sorted in place range by range. */
  const perm = new Uint32Array(n);
  for (let k = 0; k < n; k++) perm[k] = k;
  const keys = new Float64Array(n);
  const compareFrom = (a: number, b: number, depth: number): number => compareRanges(bytes, from(a) + depth, to(a), from(b) + depth, to(b));
  // Ranges left to sort: lo, hi, depth (bytes every string of the range shares).
  const stack: number[] = [0, n, 0];
  while (stack.length > 0) {
    const depth = stack.pop()!;
    const hi = stack.pop()!;
    const lo = stack.pop()!;
    if (hi - lo <= SHORT_RANGE) {
      for (let k = lo + 1; k < hi; k++) {
        const x = perm[k]!;
        let j = k - 1;
        for (; j >= lo && compareFrom(perm[j]!, x, depth) > 0; j--) perm[j + 1] = perm[j]!;
        perm[j + 1] = x;
      }
      continue;
    }
    for (let k = lo; k < hi; k++) {
      const i = perm[k]!;
      const s = from(i) + depth;
      const e = to(i);
      const digit = (s < e ? bytes[s]! + 1 : 0) * DIGIT * DIGIT + (s + 1 < e ? bytes[s + 1]! + 1 : 0) * DIGIT + (s + 2 < e ? bytes[s + 2]! + 1 : 0);
      keys[k] = digit * INDEX + i;
    }
    keys.subarray(lo, hi).sort();
    let run = lo;
    let last = -1;
    for (let k = lo; k <= hi; k++) {
      const digit = k < hi ? Math.floor(keys[k]! / INDEX) : -1;
      if (k < hi) perm[k] = keys[k]! - digit * INDEX;
      if (digit === last) continue;
      // A run of one digit goes on at the next digit unless its strings ended within it (they are then equal).
      if (k - run > 1 && last % DIGIT !== 0) stack.push(run, k, depth + 3);
      run = k;
      last = digit;
    }
  }
  const rank = new Uint32Array(n);
  let distinct = 0;
  let size = 0;
  for (let k = 0; k < n; k++) {
    const i = perm[k]!;
    if (k === 0 || compareFrom(perm[k - 1]!, i, 0) !== 0) {
      distinct++;
      size += to(i) - from(i);
    }
    rank[i] = distinct - 1;
  }
  const out = new Uint8Array(size);
  const outStarts = new Uint32Array(distinct + 1);
  for (let k = 0, d = 0, at = 0; k < n; k++) {
    const i = perm[k]!;
    // Ranks run 0, 0, 1, 2, 2, ... in sorted order: a string whose rank is `d` is the next distinct one.
    if (rank[i] === d) {
      for (let p = from(i), e = to(i); p < e; p++) out[at++] = bytes[p]!;
      outStarts[++d] = at;
    }
  }
  return { bytes: out, starts: outStarts, rank };
}

/** sortedByteStrings on a worker (the share's bytes and starts in shared memory). */
export const sortedByteStringsTask = defineTask('io/sorted-byte-strings', import.meta.url, sortedByteStrings);
