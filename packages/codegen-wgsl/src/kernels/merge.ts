import { rowWords } from '@vixen/queryplan';
import type { ScalarType } from '@vixen/queryplan';
import { header, lexCompareFn, threadMain } from '../wgsl.js';
import { sortKeyWords } from './sort.js';
import type { KernelShaders } from '../index.js';

/** Output rows per merge thread: one diagonal search is shared by this many rows. */
export const MERGE_ITEMS = 8;

/**
 * Merge path (Green, McColl & Bader 2012; Odeh et al. 2012): thread t owns output rows [t * ITEMS, +ITEMS).
 * A binary search along the cross diagonal d = t * ITEMS finds how many of the first d output rows come from
 * the left input (left first among equal keys), then the thread merges its ITEMS rows sequentially. Every
 * output row is written once, no workgroup memory or atomics, so any split of the threads is correct.
 */
export function mergeShaders(types: readonly ScalarType[], keys: readonly number[]): KernelShaders {
  const width = rowWords(types);
  const pairs = sortKeyWords(types, keys).map((off): [string, string] => [`lhs[a * W + ${off}u]`, `rhs[b * W + ${off}u]`]);
  const merge = `${header('merge', ['lhs', 'rhs', 'outp'])}
const W: u32 = ${width}u;
const ITEMS: u32 = ${MERGE_ITEMS}u;
${lexCompareFn('cmpLR', pairs)}
${threadMain(`  let n = u[0].x;
  let m = u[0].y;
  let total = n + m;
  if (i >= (total + ITEMS - 1u) / ITEMS) { return; }
  let d = i * ITEMS;
  // Left rows among the first d outputs: the least a with left[a] > right[d - 1 - a].
  var lo = select(0u, d - m, d > m);
  var hi = min(d, n);
  while (lo < hi) {
    let mid = lo + (hi - lo) / 2u;
    if (cmpLR(mid, d - 1u - mid) <= 0) { lo = mid + 1u; } else { hi = mid; }
  }
  var a = lo;
  var b = d - lo;
  let end = min(d + ITEMS, total);
  for (var o = d; o < end; o = o + 1u) {
    if (b >= m || (a < n && cmpLR(a, b) <= 0)) {
      for (var k = 0u; k < W; k = k + 1u) { outp[o * W + k] = lhs[a * W + k]; }
      a = a + 1u;
    } else {
      for (var k = 0u; k < W; k = k + 1u) { outp[o * W + k] = rhs[b * W + k]; }
      b = b + 1u;
    }
  }`)}`;
  // The output's row count, for inputs whose counts are on the device (see PASS_LAYOUTS.countSum).
  const countSum = `${header('countSum', ['data'])}
${threadMain(`  if (i == 0u) { data[u[0].z] = u[0].x + u[0].y; }`)}`;
  return { merge, countSum };
}
