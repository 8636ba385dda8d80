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
import { defineTask, runAllInWorkers, sortDistinct, workerCount } from '@vixen/io';

/**
 * Below this many strings one thread sorts them: handing them to workers copies them. Not higher: the workers also
 * give each string its id, and without those the facts' words are mapped through a map of every string (StringMap
 * get and add took 6.8 s of the main thread over bench load --sf 1 on the lent H200 with this at 2^20: customer's
 * and part's 150K-600K strings sorted on one thread).
 */
const PARALLEL_STRINGS = 1 << 16;

/**
 * A worker's task: `order`, the indices of `strings`' distinct values in sorted order (the first index of each
 * value), and `rank`, per string its value's position in that order. Indices are sorted by their strings, ties by
 * index, so each value's first index leads its run: no Map, which cost more than the sort (every string arrives
 * freshly copied, its hash not yet computed).
 */
export function sortedOrder(strings: readonly string[]): { order: Uint32Array; rank: Uint32Array } {
  const byString = new Uint32Array(strings.length);
  for (let i = 0; i < byString.length; i++) byString[i] = i;
  byString.sort((a, b) => {
    const x = strings[a]!;
    const y = strings[b]!;
    return x < y ? -1 : x > y ? 1 : a - b;
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

const sortedOrderTask = defineTask('runtime/sorted-order', import.meta.url, sortedOrder);

/** Bins of prefixBin: the empty string, 129 per ASCII first unit (no second unit, then each, 127+ together), the rest. */
const BINS = 1 + 128 * 129 + (65536 - 128);

/** A bin number that never decreases along code-unit order. */
function prefixBin(s: string): number {
  if (s.length === 0) return 0;
  const c0 = s.charCodeAt(0);
  if (c0 >= 128) return 1 + 128 * 129 + (c0 - 128);
  return 1 + c0 * 129 + (s.length > 1 ? Math.min(s.charCodeAt(1), 127) + 1 : 0);
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
  // Share of each bin: consecutive bins up to about 1/workers of the strings each.
  const shareOf = new Uint8Array(BINS);
  const per = Math.ceil(strings.length / workers);
  for (let b = 0, share = 0, inShare = 0; b < BINS; b++) {
    if (inShare >= per && share < workers - 1) {
      share++;
      inShare = 0;
    }
    shareOf[b] = share;
    inShare += counts[b]!;
  }
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

/** Runs merged at most: each output string compares the heads of all runs. */
const MERGED_RUNS = 16;

/**
 * sortDistinctInWorkers where `runs` (ranges [start, end) of `strings`, disjoint) hold sorted, distinct strings: the
 * runs and the other strings, sorted, are merged (a store's dictionaries are sorted already: no sort of millions of
 * strings, no map). Undefined where the runs do not cover most of the strings or are too many to merge.
 */
export function mergeSortedRuns(strings: readonly string[], runs: ReadonlyArray<readonly [number, number]>): { sorted: string[]; ids: Uint32Array } | undefined {
  const inRuns = runs.reduce((n, [a, b]) => n + b - a, 0);
  if (runs.length === 0 || runs.length >= MERGED_RUNS || inRuns < strings.length / 2) return undefined;
  const covered = new Uint8Array(strings.length);
  for (const [a, b] of runs) covered.fill(1, a, b);
  const rest: number[] = [];
  for (let i = 0; i < strings.length; i++) if (covered[i] === 0) rest.push(i);
  rest.sort((a, b) => (strings[a]! < strings[b]! ? -1 : strings[a]! > strings[b]! ? 1 : a - b));
  // Each list's next index: a run's position, or a position in `rest`.
  const lists: Array<{ at: number; end: number; index: (k: number) => number }> = runs.map(([a, b]) => ({ at: a, end: b, index: (k) => k }));
  if (rest.length > 0) lists.push({ at: 0, end: rest.length, index: (k) => rest[k]! });
  const sorted: string[] = [];
  const ids = new Uint32Array(strings.length);
  for (;;) {
    let best = -1;
    let bestText = '';
    for (let l = 0; l < lists.length; l++) {
      const list = lists[l]!;
      if (list.at === list.end) continue;
      const t = strings[list.index(list.at)]!;
      if (best < 0 || t < bestText) {
        best = l;
        bestText = t;
      }
    }
    if (best < 0) break;
    const list = lists[best]!;
    if (sorted.length === 0 || sorted[sorted.length - 1] !== bestText) sorted.push(bestText);
    ids[list.index(list.at)] = sorted.length - 1;
    list.at++;
  }
  return { sorted, ids };
}
