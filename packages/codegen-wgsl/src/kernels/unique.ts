import { rowWords } from '@vixen/queryplan';
import type { ScalarType } from '@vixen/queryplan';
import { lexCompareFn } from '../wgsl.js';
import { flagsPass, identity, rowPairs, scatterPass } from './compaction.js';
import type { KernelShaders } from '../index.js';

/** flags = row differs from its predecessor; scan; scatter the row. */
export function uniqueShaders(types: readonly ScalarType[]): KernelShaders {
  const helpers = lexCompareFn('cmpRows', rowPairs('inp', 'inp', rowWords(types)));
  return {
    flags: flagsPass(types, 'i == 0u || cmpRows(i - 1u, i) != 0', helpers, 0),
    scatter: scatterPass(types, identity(types), new Map(), 0),
  };
}
