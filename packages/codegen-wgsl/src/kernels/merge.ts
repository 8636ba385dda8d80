import { rowWords } from '@vixen/queryplan';
import type { ScalarType } from '@vixen/queryplan';
import { header, lexCompareFn, threadMain } from '../wgsl.js';
import { sortKeyWords } from './sort.js';
import type { KernelShaders } from '../passes.js';

/** Output rows per merge tile: one diagonal search over the whole inputs per tile (mergeSplits). */
export const MERGE_TILE = 1024;

/** Consecutive output rows a merge thread writes (MERGE_TILE is a multiple). */
export const MERGE_ROWS = 4;

/**
 * Merge path (Green, McColl & Bader 2012; Odeh et al. 2012), in two passes. mergeSplits: thread t finds, by a
 * binary search along the cross diagonal d = t * TILE, how many of the first d output rows come from the left input
 * (left first among equal keys). merge: a thread per ROWS consecutive output rows of a tile (TILE / ROWS a tile); the tile's splits bound
 * the left rows before its first row to a range of at most TILE, searched there (the rows a tile reads are few and
 * stay in cache), and it merges its rows on from there, one comparison a row: a search per ROWS rows, not per row.
 * A tile that takes all its rows from one side (a small delta merged into a large relation: most tiles) needs no
 * search and no comparison: its threads copy its rows, neighbouring threads neighbouring rows, so that loads and
 * stores coalesce. No workgroup memory or atomics.
 */
export function mergeShaders(types: readonly ScalarType[], keys: readonly number[]): KernelShaders {
  const width = rowWords(types);
  const pairs = sortKeyWords(types, keys).map((off): [string, string] => [`lhs[a * W + ${off}u]`, `rhs[b * W + ${off}u]`]);
  const common = `const W: u32 = ${width}u;
const TILE: u32 = ${MERGE_TILE}u;
${lexCompareFn('cmpLR', pairs)}
// The least a in [lo, hi) with left row a after right row d - 1 - a, else hi: the left rows among the first d
// output rows, where that count is known to lie in [lo, hi].
fn split(d: u32, lo0: u32, hi0: u32) -> u32 {
  var lo = lo0;
  var hi = hi0;
  while (lo < hi) {
    let mid = lo + (hi - lo) / 2u;
    if (cmpLR(mid, d - 1u - mid) <= 0) { lo = mid + 1u; } else { hi = mid; }
  }
  return lo;
}`;
  const mergeSplits = `${header('mergeSplits', ['lhs', 'rhs', 'splits'])}
${common}
${threadMain(`  let n = u[0].x;
  let m = u[0].y;
  let total = n + m;
  if (i > (total + TILE - 1u) / TILE) { return; }
  let d = min(i * TILE, total);
  splits[i] = split(d, select(0u, d - m, d > m), min(d, n));`)}`;
  const merge = `${header('merge', ['lhs', 'rhs', 'splits', 'outp'])}
${common}
const ROWS: u32 = ${MERGE_ROWS}u;
fn fromLeft(o: u32, a: u32) {
  for (var k = 0u; k < W; k = k + 1u) { outp[o * W + k] = lhs[a * W + k]; }
}
fn fromRight(o: u32, b: u32) {
  for (var k = 0u; k < W; k = k + 1u) { outp[o * W + k] = rhs[b * W + k]; }
}
${threadMain(`  let n = u[0].x;
  let m = u[0].y;
  let total = n + m;
  // The host runs TILE / ROWS threads for every tile, the last one's too (its one-side copy needs them all).
  let d = i * ROWS;
  let t = d / TILE;
  let d0 = t * TILE;
  if (d0 >= total) { return; }
  let d1 = min(d0 + TILE, total);
  let a0 = splits[t];
  let a1 = splits[t + 1u];
  let b0 = d0 - a0;
  let b1 = d1 - a1;
  if (a0 == a1 || b0 == b1) {
    // One side only: the tile's threads copy its rows TILE / ROWS apart, neighbouring threads neighbouring rows.
    for (var o = d0 + (d - d0) / ROWS; o < d1; o = o + TILE / ROWS) {
      if (b0 == b1) { fromLeft(o, a0 + o - d0); } else { fromRight(o, b0 + o - d0); }
    }
    return;
  }
  if (d >= d1) { return; }
  // Left rows before output row d: within [a0, a1], and d minus it within [b0, b1].
  var a = split(d, max(a0, select(0u, d - b1, d > b1)), min(a1, d - b0));
  var b = d - a;
  for (var o = d; o < min(d + ROWS, d1); o = o + 1u) {
    if (b >= b1 || (a < a1 && cmpLR(a, b) <= 0)) {
      fromLeft(o, a);
      a = a + 1u;
    } else {
      fromRight(o, b);
      b = b + 1u;
    }
  }`)}`;
  // The output's row count, for inputs whose counts are on the device (see PASS_LAYOUTS.countSum).
  const countSum = `${header('countSum', ['data'])}
${threadMain(`  if (i == 0u) { data[u[0].z] = u[0].x + u[0].y; }`)}`;
  return { mergeSplits, merge, countSum };
}
