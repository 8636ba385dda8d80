import { rowWords } from '@vixen/queryplan';
import type { ScalarType } from '@vixen/queryplan';
import { lexCompareFn } from '../wgsl.js';
import { COMPACT_ITEMS, identity, rowPairs, selectShaders } from './compaction.js';
import type { KernelShaders } from '../passes.js';

/**
 * One select pass keeping the left rows absent from right: a binary search over whole rows per left row. A tile's
 * rows go in groups of WG (a thread's rows k * WG + lid): first its threads search for the rows that bound each
 * group (its first rows, and the tile's last), then a row whose words lie between its group's bounds searches only
 * the right rows between theirs, a few steps in cache, not the whole right side. A left side sorted by all its
 * words (the usual: new rows sorted and unique) has every row between them; any other row searches everything.
 */
export function differenceShaders(types: readonly ScalarType[]): KernelShaders {
  const width = rowWords(types);
  const helpers = `${lexCompareFn('cmpRows', rowPairs('lhs', 'rhs', width))}${lexCompareFn('cmpLeft', rowPairs('lhs', 'lhs', width))}
// The first right row in [lo, hi) not below left row i, else hi.
fn lowerBound(i: u32, lo0: u32, hi0: u32) -> u32 {
  var lo = lo0;
  var hi = hi0;
  while (lo < hi) {
    let mid = lo + (hi - lo) / 2u;
    if (cmpRows(i, mid) > 0) { lo = mid + 1u; } else { hi = mid; }
  }
  return lo;
}
// edges[k] = lowerBound of the tile's row min(tileBase + k * WG, n - 1), k <= ${COMPACT_ITEMS}.
var<workgroup> edges: array<u32, ${COMPACT_ITEMS + 1}>;
var<workgroup> tileBase: u32;
fn absent(i: u32) -> bool {
  let n = u[0].x;
  let m = u[0].y;
  let k = (i - tileBase) / WG;
  var lo = 0u;
  var hi = m;
  if (cmpLeft(tileBase + k * WG, i) <= 0 && cmpLeft(i, min(tileBase + (k + 1u) * WG, n - 1u)) <= 0) {
    lo = edges[k];
    hi = edges[k + 1u];
  }
  let at = lowerBound(i, lo, hi);
  return at == m || cmpRows(i, at) != 0;
}
`;
  const tileSetup = `  if (n > 0u) {
    for (var e = lid; e <= ${COMPACT_ITEMS}u; e = e + WG) { edges[e] = lowerBound(min(base + e * WG, n - 1u), 0u, u[0].y); }
  }
  if (lid == 0u) { tileBase = base; }`;
  return selectShaders({
    pass: 'selectAbsent',
    inputs: ['lhs', 'rhs'],
    inputTypes: types,
    keep: 'absent(i)',
    keepLoops: true,
    tileSetup,
    helpers,
    project: identity(types),
    constOffsets: new Map(),
    constWords: 0,
  });
}
