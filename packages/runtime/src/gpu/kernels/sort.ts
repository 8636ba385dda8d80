/** The sort kernel: a copy where there is nothing to sort, a rank or merge sort of few rows, else a radix sort. */
import type { KernelShaders, PassName } from '@vixen/codegen-wgsl';
import type { GpuImpl } from '../device.js';
import { settle, type DeviceRelation } from '../relations.js';
import { concatenate } from './concat.js';
import { radixCountWords, radixSortPasses, radixSortRows } from './radix-sort.js';
import { rankSortPasses, rankSortRows } from './rank-sort.js';

/** Which sort runs: by the row count (`auto`), or one of them (the operator bench compares them). */
export type SortPath = 'auto' | 'rank' | 'radix';

/** `input` sorted by the key words at row offsets `keyWords` (most significant first). */
export async function sortRows(g: GpuImpl, shaders: KernelShaders, input: DeviceRelation, keyWords: readonly number[], path: SortPath = 'auto'): Promise<DeviceRelation> {
  const n = settle(input).count;
  if (n <= 1 || keyWords.length === 0) return concatenate(g, [input], input.width);
  const ranked = shaders.rankSort !== undefined && (path === 'rank' || (path === 'auto' && n <= rankSortLimit(g)));
  return ranked ? rankSortRows(g, shaders, input) : radixSortRows(g, shaders, input, keyWords);
}

/**
 * The passes sortRows dispatches (path `auto`) for `n` rows (a bound) of `width` words: a load compiles only these
 * ahead (load-passes.ts), not every pass of both sorts.
 */
export function sortPasses(g: GpuImpl, shaders: KernelShaders, n: number, width: number): PassName[] {
  if (n <= 1) return [];
  return shaders.rankSort !== undefined && n <= rankSortLimit(g) ? rankSortPasses(g, n) : radixSortPasses(g, width);
}

/** The whole-key passes of a sort (rankSortRows'), compiled per row layout. */
const WHOLE_KEY_PASSES: ReadonlySet<string> = new Set<PassName>(['rankSort', 'sortTiles', 'mergeRanks']);

const radixOnlyOf = new WeakMap<KernelShaders, KernelShaders>();

/**
 * `shaders` of a sort by `keyWords` key words without its whole-key passes: sortRows then radix sorts rows of any
 * count. A load sorts so: the radix passes' WGSL is the same for every table (the layout is uniforms), the whole-key
 * passes are compiled per row layout (a cold compile cost ~66 ms of a load's wall time on the H200, each), for sorts
 * they would make faster by well under a millisecond at the sizes they take (see rankSortLimit). All of `shaders`
 * where the radix sort's counts would not fit one binding (tests of tiny bindings).
 */
export function radixOnly(g: GpuImpl, shaders: KernelShaders, keyWords: number): KernelShaders {
  if (4 * radixCountWords(keyWords) > g.limits.maxStorageBufferBindingSize) return shaders;
  let radix = radixOnlyOf.get(shaders);
  if (!radix) radixOnlyOf.set(shaders, (radix = Object.fromEntries(Object.entries(shaders).filter(([pass]) => !WHOLE_KEY_PASSES.has(pass)))));
  return radix;
}

/**
 * Rows (a bound on them, for a pending count) up to which a sort compares whole keys (rankSortRows: a rank sort, or
 * tiles sorted in workgroup memory and merged four runs a pass, few dispatches whatever the key width) instead of
 * radix sorting (a dispatch and a clear per 8-bit window of every key word: 26 and 22 for five key words). On the
 * H200 (wall time of a run), a sort of 2^17 rows took 0.13-0.24 ms so against 0.25-0.88 ms by radix (one to five
 * key words); merging pairs of runs instead (slower than four at every size measured), 2^18 int32 keys took 0.18
 * against 0.42 ms, and TPC-H Q12's four sorts of 19K-94K five-word rows at SF 3 0.10-0.14 ms each against
 * 0.46-0.62 ms. Larger sorts were not measured. A CPU adapter pays for every comparison.
 */
function rankSortLimit(g: GpuImpl): number {
  return g.software ? 2 ** 13 : 2 ** 18;
}
