import { rowWords } from '@vixen/queryplan';
import type { ScalarType } from '@vixen/queryplan';
import { lexCompareFn } from '../wgsl.js';
import { identity, rowPairs, selectShaders } from './compaction.js';
import type { KernelShaders } from '../passes.js';

/** One select pass keeping the left rows absent from right (binary search over whole rows). */
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
  return selectShaders({
    pass: 'selectAbsent',
    inputs: ['lhs', 'rhs'],
    inputTypes: types,
    keep: 'absent(i)',
    keepLoops: true,
    helpers,
    project: identity(types),
    constOffsets: new Map(),
    constWords: 0,
  });
}
