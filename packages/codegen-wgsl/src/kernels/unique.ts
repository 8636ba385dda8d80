import { rowWords } from '@vixen/queryplan';
import type { ScalarType } from '@vixen/queryplan';
import { lexCompareFn } from '../wgsl.js';
import { countPass, identity, rowPairs, scatterPass } from './compaction.js';
import type { KernelShaders } from '../index.js';

/** Keep = row differs from its predecessor; tile counts; scan; scatter the row. */
export function uniqueShaders(types: readonly ScalarType[]): KernelShaders {
  const helpers = lexCompareFn('cmpRows', rowPairs('inp', 'inp', rowWords(types)));
  const keep = 'i == 0u || cmpRows(i - 1u, i) != 0';
  return {
    flags: countPass('flags', ['inp'], types, keep, helpers, 0),
    scatter: scatterPass(types, identity(types), new Map(), 0),
  };
}
