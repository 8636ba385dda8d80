import { rowWords } from '@vixen/queryplan';
import type { ScalarType } from '@vixen/queryplan';
import { lexCompareFn } from '../wgsl.js';
import { identity, rowPairs, selectShaders } from './compaction.js';
import type { KernelShaders } from '../index.js';

/** One select pass keeping the rows that differ from their predecessor. */
export function uniqueShaders(types: readonly ScalarType[]): KernelShaders {
  const helpers = lexCompareFn('cmpRows', rowPairs('inp', 'inp', rowWords(types)));
  const keep = 'i == 0u || cmpRows(i - 1u, i) != 0';
  return selectShaders({ pass: 'select', inputs: ['inp'], inputTypes: types, keep, helpers, project: identity(types), constOffsets: new Map(), constWords: 0 });
}
