/**
 * Sorting millions of strings (a run's dictionary, encoding.ts) on the worker pool. Strings go to workers by
 * their first two code units, in ranges of those prefixes cut to about equal counts, so each worker's sorted,
 * duplicate-free share is one contiguous stretch of the whole and the shares are concatenated, not merged.
 * Workers answer with the order of their share's strings (indices), so the result holds the caller's strings,
 * not copies: millions of strings copied back would double their memory for as long as the dictionary lives.
 * A prefix shared by most strings leaves most of them to one worker: no faster than sorting on one thread.
 */
import { defineTask, runAllInWorkers, sortDistinct, StringMap, workerCount } from '@vixen/io';

/** Below this many strings one thread sorts them: handing them to workers copies them. */
const PARALLEL_STRINGS = 1 << 20;

/** Indices of `strings`' distinct values in sorted order (a worker's task): the first index of each value. */
export function sortedOrder(strings: readonly string[]): Uint32Array {
  const first = new StringMap('sorting strings');
  const distinct: string[] = [];
  strings.forEach((s, i) => {
    if (!first.has(s)) {
      first.add(s, i);
      distinct.push(s);
    }
  });
  return Uint32Array.from(distinct.sort(), (s) => first.get(s)!);
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

/** sortDistinct of `strings` (which it may reorder), on the worker pool when there are many. */
export async function sortDistinctInWorkers(strings: string[]): Promise<string[]> {
  const workers = workerCount();
  if (strings.length < PARALLEL_STRINGS || workers < 2) return sortDistinct(strings);
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
  for (let i = 0; i < strings.length; i++) shares[shareOf[bins[i]!]!]!.push(strings[i]!);
  const used = shares.filter((s) => s.length > 0);
  const orders = await runAllInWorkers(sortedOrderTask, used);
  const out: string[] = [];
  used.forEach((share, w) => {
    for (const i of orders[w]!) out.push(share[i]!);
  });
  return out;
}
