import { rowWords } from '@vixen/queryplan';
import type { ScalarType } from '@vixen/queryplan';
import { lexCompareFn } from '../wgsl.js';
import { countPass, identity, rowPairs, scatterPass } from './compaction.js';
import type { KernelShaders } from '../index.js';

/** Keep = left row absent from right (binary search over whole rows); tile counts; scan; scatter the row. */
export function differenceShaders(types: readonly ScalarType[]): KernelShaders {
  const helpers = `${lexCompareFn('cmpRows', rowPairs('lhs', 'rhs', rowWords(types)))}
fn absent(i: u32) -> bool {
  let m = u[0].y;
  var lo = 0u;
  var hi = m;
  while (lo < hi) {
    let mid = lo + (hi - lo) / 2u;
    if (cmpRows(i, mid) > 0) { lo = mid + 1u; } else { hi = mid; }
  }
  return lo == m || cmpRows(i, lo) != 0;
}
`;
  return {
    flagsAbsent: countPass('flagsAbsent', ['lhs', 'rhs'], types, 'absent(i)', helpers, 0),
    scatter: scatterPass(types, identity(types), new Map(), 0),
  };
}
