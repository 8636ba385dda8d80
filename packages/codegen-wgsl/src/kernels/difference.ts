import { rowWords } from '@vixen/queryplan';
import type { ScalarType } from '@vixen/queryplan';
import { header, lexCompareFn, threadMain } from '../wgsl.js';
import { identity, rowPairs, scatterPass } from './compaction.js';
import type { KernelShaders } from '../index.js';

/** flags = left row absent from right (binary search over whole rows); scan; scatter the row. */
export function differenceShaders(types: readonly ScalarType[]): KernelShaders {
  const width = rowWords(types);
  const flagsAbsent = `${header('flagsAbsent', ['lhs', 'rhs', 'flags'])}
${lexCompareFn('cmpRows', rowPairs('lhs', 'rhs', width))}${threadMain(`  let n = u[0].x;
  let m = u[0].y;
  if (i > n) { return; }
  if (i == n) { flags[i] = 0u; return; }
  var lo = 0u;
  var hi = m;
  while (lo < hi) {
    let mid = lo + (hi - lo) / 2u;
    if (cmpRows(i, mid) > 0) { lo = mid + 1u; } else { hi = mid; }
  }
  flags[i] = select(1u, 0u, lo < m && cmpRows(i, lo) == 0);`)}`;
  return { flagsAbsent, scatter: scatterPass(types, identity(types), new Map(), 0) };
}
