/** The sort kernel: a copy where there is nothing to sort, a rank sort of few rows, else a radix sort. */
import type { KernelShaders } from '@vixen/codegen-wgsl';
import type { GpuImpl } from '../device.js';
import { settle, type DeviceRelation } from '../relations.js';
import { concatenate } from './concat.js';
import { radixSortRows } from './radix-sort.js';
import { rankSortRows } from './rank-sort.js';

/** `input` sorted by the key words at row offsets `keyWords` (most significant first). */
export async function sortRows(g: GpuImpl, shaders: KernelShaders, input: DeviceRelation, keyWords: readonly number[]): Promise<DeviceRelation> {
  const n = settle(input).count;
  if (n <= 1 || keyWords.length === 0) return concatenate(g, [input], input.width);
  if (n <= (g.software ? RANK_SORT_ROWS_SOFTWARE : RANK_SORT_ROWS) && shaders.rankSort !== undefined) return rankSortRows(g, shaders, input);
  return radixSortRows(g, shaders, input, keyWords);
}

/**
 * Rows (a bound on them, for a pending count) up to which a sort ranks each row by comparing it with all others
 * (rankSort: one pass, n^2 comparisons) instead of radix sorting: a digit pass costs a few dispatches whatever
 * the rows, and a sort of 4,739 nine-word rows (TPC-H Q2 at SF 10) took 36 of them, 2.9 ms on the H100. A CPU
 * adapter pays for every comparison.
 */
const RANK_SORT_ROWS = 2 ** 14;
const RANK_SORT_ROWS_SOFTWARE = 2 ** 10;
