import { MERGE_RANK_FAN, SORT_TILE_ITEMS, type KernelShaders, type PassName } from '@vixen/codegen-wgsl';
import type { GpuImpl } from '../device.js';
import { Recorder } from '../recorder.js';
import { bound, sameCount, settle, sizeOf, type DeviceRelation } from '../relations.js';

/**
 * Threads rankSort gives each of `n` rows, each comparing a slice of the rows: a power of two up to 32 (and the
 * workgroup size) while n times it stays within RANK_SORT_THREADS. With one thread a row, the 6,249 rows of a
 * TPC-H Q12 sort at SF 1 ran as 25 workgroups, one long loop each, and took 1.5 ms of the H100.
 */
export function rankSlices(g: GpuImpl, n: number): number {
  const most = Math.min(32, g.limits.workgroupSize);
  let p = 1;
  while (2 * p <= most && 2 * p * n <= (g.software ? RANK_SORT_THREADS_SOFTWARE : RANK_SORT_THREADS)) p *= 2;
  return p;
}

/** About the threads that fill the H100 (132 SMs of 2,048); a CPU adapter gets a few slices per row (its tests too). */
const RANK_SORT_THREADS = 2 ** 18;
const RANK_SORT_THREADS_SOFTWARE = 2 ** 13;

/**
 * Rows up to which rankSort compares every row with every other in one dispatch; past them its n^2 comparisons cost
 * more than sorting tiles and merging them (a rankSort of 4,739 nine-word rows, TPC-H Q2 at SF 10, took 0.16 ms of
 * the H100). A CPU adapter pays for every comparison.
 */
const RANK_ROWS = 2 ** 10;
const RANK_ROWS_SOFTWARE = 2 ** 8;

/** The passes rankSortRows dispatches for `n` rows (a bound). */
export const rankSortPasses = (g: GpuImpl, n: number): PassName[] => (n <= (g.software ? RANK_ROWS_SOFTWARE : RANK_ROWS) ? ['rankSort'] : ['sortTiles', 'mergeRanks']);

/**
 * The rows sorted by whole-key comparisons in few dispatches, whatever the key width: up to RANK_ROWS, rankSort
 * (one dispatch, no scratch buffers); else sortTiles sorts each workgroup's tile of rows, then each mergeRanks pass
 * merges every MERGE_RANK_FAN sorted runs into one, the passes alternating between the output and one scratch buffer so that
 * the last writes the output. Stable (rankSort breaks ties by index, the merges take earlier runs first), so the
 * same rows as the radix sort.
 */
export async function rankSortRows(g: GpuImpl, shaders: KernelShaders, rows: DeviceRelation): Promise<DeviceRelation> {
  const input = settle(rows);
  // A bound for a pending count: passes past the true rows copy.
  const n = input.count;
  const rec = new Recorder(g, shaders);
  const out = sameCount(g, rec, input, input.width);
  const wg = g.limits.workgroupSize;
  const size = sizeOf(input);
  if (n <= (g.software ? RANK_ROWS_SOFTWARE : RANK_ROWS)) {
    const slices = rankSlices(g, n);
    rec.dispatch('rankSort', [bound(input), bound(out)], [size, slices], Math.ceil((n * slices) / wg) * wg);
  } else {
    const tile = SORT_TILE_ITEMS * wg;
    const runs: number[] = [];
    for (let L = tile; L < n; L *= MERGE_RANK_FAN) runs.push(L);
    const temp = runs.length > 0 ? rec.scratch(n * input.width) : undefined;
    // Pass j (0: sortTiles) writes the output when an even number of passes follow it.
    const target = (j: number) => ((runs.length - j) % 2 === 0 ? bound(out) : temp!);
    rec.dispatch('sortTiles', [bound(input), target(0)], [size], Math.ceil(n / tile) * wg);
    runs.forEach((L, j) => rec.dispatch('mergeRanks', [target(j), target(j + 1)], [size, L], n));
  }
  await rec.submit();
  return out;
}
