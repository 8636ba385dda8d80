/**
 * Sorting millions of strings (a run's dictionary, encoding.ts) on the worker pool. Strings go to workers by
 * their first two code units, in ranges of those prefixes cut to about equal counts, so each worker's sorted,
 * duplicate-free share is one contiguous stretch of the whole and the shares are concatenated, not merged.
 * Workers answer with the order of their share's strings (indices), so the result holds the caller's strings,
 * not copies: millions of strings copied back would double their memory for as long as the dictionary lives. They
 * also give each string its rank, so the caller maps its strings to dictionary ids without a lookup per string on
 * its own thread (a Map of 2M strings took seconds there).
 * A prefix shared by most strings leaves most of them to one worker: no faster than sorting on one thread.
 */
import { asciiEnd, compareBytes, dictionaryRun, grow, PARALLEL_STRINGS, runAllInWorkers, sortDistinct, sortedOrder, sortedOrderTask, StringDictionary, workerCount, type SortedStrings } from '@vixen/io';

/** Bins of prefixBin: the empty string, 129 per ASCII first unit (no second unit, then each, 127+ together), the rest. */
const BINS = 1 + 128 * 129 + (65536 - 128);

/** A bin number that never decreases along code-unit order. */
function prefixBin(s: string): number {
  if (s.length === 0) return 0;
  const c0 = s.charCodeAt(0);
  if (c0 >= 128) return 1 + 128 * 129 + (c0 - 128);
  return 1 + c0 * 129 + (s.length > 1 ? Math.min(s.charCodeAt(1), 127) + 1 : 0);
}

/** The share of each bin: consecutive bins (of `counts` strings each) up to about 1/workers of the `total` each. */
function binShares(counts: Uint32Array, total: number, workers: number): Uint8Array {
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

/**
 * sortDistinct of `strings` (which it may reorder), on the worker pool when there are many; then also `ids`: per
 * string of `strings` (in the order given), its position in `sorted`.
 */
export async function sortDistinctInWorkers(strings: string[]): Promise<{ sorted: string[]; ids?: Uint32Array }> {
  const workers = workerCount();
  if (strings.length < PARALLEL_STRINGS || workers < 2) return { sorted: sortDistinct(strings) };
  const bins = new Uint32Array(strings.length);
  const counts = new Uint32Array(BINS);
  for (let i = 0; i < strings.length; i++) counts[(bins[i] = prefixBin(strings[i]!))]!++;
  const shareOf = binShares(counts, strings.length, workers);
  const shares: string[][] = Array.from({ length: workers }, () => []);
  // Per string, its share and its index there.
  const shareIndex = new Uint32Array(strings.length);
  for (let i = 0; i < strings.length; i++) {
    const share = shares[shareOf[bins[i]!]!]!;
    shareIndex[i] = share.length;
    share.push(strings[i]!);
  }
  const results = await runAllInWorkers(sortedOrderTask, shares);
  const out: string[] = [];
  // Each share's values follow the shares before it.
  const base = new Uint32Array(workers);
  results.forEach(({ order }, w) => {
    base[w] = out.length;
    for (const i of order) out.push(shares[w]![i]!);
  });
  const ids = new Uint32Array(strings.length);
  for (let i = 0; i < strings.length; i++) {
    const w = shareOf[bins[i]!]!;
    ids[i] = base[w]! + results[w]!.rank[shareIndex[i]!]!;
  }
  return { sorted: out, ids };
}

/** Lists merged at most: each merged string compares the heads of all lists. */
export const MERGED_LISTS = 16;

/**
 * `strings` (any order, repeats) sorted and distinct, with `ids`: per string, its position in `sorted`. On the worker
 * pool when there are many, else on this thread through sortedOrder (no map of strings either way).
 */
export async function sortWithIds(strings: readonly string[]): Promise<{ sorted: string[]; ids: Uint32Array }> {
  if (strings.length >= PARALLEL_STRINGS && workerCount() >= 2) {
    const { sorted, ids } = await sortDistinctInWorkers([...strings]);
    if (ids) return { sorted, ids };
  }
  const { order, rank } = sortedOrder(strings);
  return { sorted: Array.from(order, (i) => strings[i]!), ids: rank };
}

/** `sorted` (in code-unit order, distinct) as a SortedStrings, with its bytes where all are ASCII (and few). */
export function sortedList(sorted: readonly string[]): SortedStrings {
  const list = { size: sorted.length, text: (i: number) => sorted[i]! };
  // One string of all of them: only for few (kernel constants, inline facts), far below V8's longest string.
  if (sorted.length > PARALLEL_STRINGS) return list;
  const joined = sorted.join('');
  const bytes = Buffer.from(joined, 'utf8');
  // Any code unit past 127 takes more than one UTF-8 byte.
  if (bytes.length !== joined.length || bytes.length >= 2 ** 32) return list;
  const starts = new Uint32Array(sorted.length + 1);
  sorted.forEach((s, i) => (starts[i + 1] = starts[i]! + s.length));
  return { ...list, ascii: { bytes, starts } };
}

/**
 * The union of `lists` (each sorted and distinct) as a dictionary, and per list each string's id in it: a k-way merge
 * (at most MERGED_LISTS lists), comparing bytes where every list is ASCII, so no string is decoded (the dictionary
 * decodes a string when it is first asked for); otherwise the lists are decoded and their strings compared.
 */
export function mergeSortedLists(lists: readonly SortedStrings[]): { dict: StringDictionary; ids: Uint32Array[] } {
  if (lists.length > MERGED_LISTS) throw new Error(`internal: ${lists.length} lists to merge, more than ${MERGED_LISTS}`);
  const k = lists.length;
  const sizes = lists.map((l) => l.size);
  const total = sizes.reduce((n, m) => n + m, 0);
  const ids = sizes.map((n) => new Uint32Array(n));
  /** Runs of ids whose strings are consecutive entries of one list (DictionaryBytes): first id, list, first entry. */
  let runIds = new Uint32Array(64);
  let runLists = new Uint8Array(64);
  let runEntries = new Uint32Array(64);
  let runs = 0;
  /** Ids given so far. */
  let n = 0;
  /** The list and entry of id n - 1's string (as its run says). */
  let lastList = -1;
  let lastEntry = -1;
  /** Ids n... are entries e... of list l: a new run unless they go on from the last one. */
  const note = (l: number, e: number): void => {
    if (l === lastList && e === lastEntry + 1) return;
    if (runs === runIds.length) {
      runIds = grow(runIds, runs + 1);
      runLists = grow(runLists, runs + 1);
      runEntries = grow(runEntries, runs + 1);
    }
    runIds[runs] = n;
    runLists[runs] = l;
    runEntries[runs++] = e;
  };
  const ascii = lists.every((l) => l.ascii) ? lists.map((l) => l.ascii!) : undefined;
  const texts = ascii ? [] : lists.map((l) => Array.from({ length: l.size }, (_, i) => l.text(i)));
  /** < 0, 0 or > 0 as string i of list a is below, equal to or above string j of list b. */
  const compare = ascii
    ? (a: number, i: number, b: number, j: number): number => {
        const x = ascii[a]!;
        const y = ascii[b]!;
        return compareBytes(x.bytes, x.starts[i]!, asciiEnd(x, i), y.bytes, y.starts[j]!, asciiEnd(y, j));
      }
    : (a: number, i: number, b: number, j: number): number => {
        const x = texts[a]![i]!;
        const y = texts[b]![j]!;
        return x < y ? -1 : x > y ? 1 : 0;
      };
  /**
   * The first entry from `i` on of list a that is not below string j of list b (a's strings, from i, all distinct):
   * found by galloping (steps of 1, 2, 4, ... then halving), so a long run of one list (a column's millions of names
   * between two of the few kernel constants) costs a few comparisons, not one per string.
   */
  const below = (a: number, i: number, b: number, j: number): number => {
    const size = sizes[a]!;
    let lo = i;
    let step = 1;
    while (lo + step - 1 < size && compare(a, lo + step - 1, b, j) < 0) {
      lo += step;
      step *= 2;
    }
    // Entries before lo are below; the first not below lies in [lo, hi].
    let hi = Math.min(size, lo + step - 1);
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (compare(a, mid, b, j) < 0) lo = mid + 1;
      else hi = mid;
    }
    return lo;
  };
  const at = new Uint32Array(k);
  /**
   * The lists not done, as a binary heap by their heads (the least first): a string taken costs a few comparisons
   * however many lists interleave (a scan of every head cost up to two per list: 80-120 ns a string for TPC-H's
   * tables, whose comments, names and addresses interleave).
   */
  const heap: number[] = [];
  const above = (l: number, m: number): boolean => compare(l, at[l]!, m, at[m]!) > 0;
  const siftDown = (h: number): void => {
    const l = heap[h]!;
    for (;;) {
      let c = 2 * h + 1;
      if (c >= heap.length) break;
      if (c + 1 < heap.length && above(heap[c]!, heap[c + 1]!)) c++;
      if (!above(l, heap[c]!)) break;
      heap[h] = heap[c]!;
      h = c;
    }
    heap[h] = l;
  };
  for (let l = 0; l < k; l++) if (sizes[l]! > 0) heap.push(l);
  for (let h = (heap.length >> 1) - 1; h >= 0; h--) siftDown(h);
  while (heap.length > 0) {
    // The list with the least head, and the one with the next least: strings come from the first while they stay below
    // the second's head (lists of other ranges, a name column and a comment column, run long).
    const best = heap[0]!;
    const second = heap.length < 2 ? -1 : heap.length < 3 || !above(heap[1]!, heap[2]!) ? heap[1]! : heap[2]!;
    const own = ids[best]!;
    const size = sizes[best]!;
    let e = at[best]!;
    // Lists share strings (a name in two columns): the same string comes out of each in turn.
    if (n > 0 && lastList !== best && compare(best, e, lastList, lastEntry) === 0) own[e++] = n - 1;
    else {
      note(best, e);
      lastList = best;
      lastEntry = e;
      own[e++] = n++;
    }
    const end = second < 0 ? size : below(best, e, second, at[second]!);
    if (end > e) {
      note(best, e);
      lastList = best;
      lastEntry = end - 1;
    }
    for (; e < end; e++) own[e] = n++;
    at[best] = e;
    if (e === size) {
      const last = heap.pop()!;
      if (heap.length > 0) heap[0] = last;
    }
    if (heap.length > 0) siftDown(0);
  }
  const bytes = { lists: ascii ?? [], runIds: runIds.subarray(0, runs), runLists: runLists.subarray(0, runs), runEntries: runEntries.subarray(0, runs) };
  const decode = (id: number): string => {
    const r = dictionaryRun(bytes, id);
    const entry = bytes.runEntries[r]! + (id - bytes.runIds[r]!);
    return ascii ? lists[bytes.runLists[r]!]!.text(entry) : texts[bytes.runLists[r]!]![entry]!;
  };
  return { dict: StringDictionary.lazy(n, decode, undefined, ascii ? bytes : undefined), ids };
}
