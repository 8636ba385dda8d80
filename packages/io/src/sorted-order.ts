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
