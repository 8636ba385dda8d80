import { rowWords } from '@vixen/queryplan';
import type { ScalarType } from '@vixen/queryplan';
import { atomicBinding, header, lexCompareFn, threadMain } from '../wgsl.js';
import { hashFunction, keyArgs, keyEquals, loadKey } from './hash.js';
import { identity, rowPairs, selectShaders } from './compaction.js';
import type { KernelShaders } from '../passes.js';

/** One select pass keeping the rows that differ from their predecessor. */
export function uniqueShaders(types: readonly ScalarType[]): KernelShaders {
  const helpers = lexCompareFn('cmpRows', rowPairs('inp', 'inp', rowWords(types)));
  const keep = 'i == 0u || cmpRows(i - 1u, i) != 0';
  return selectShaders({ pass: 'select', inputs: ['inp'], inputTypes: types, keep, helpers, project: identity(types), constOffsets: new Map(), constWords: 0 });
}

/**
 * Hashed unique (input in any order): uniqueInsert marks each row that finds an equal row already in the table
 * (keyed by all its words); a selectAbsent pass keeps the unmarked rows, in input order.
 */
export function hashedUniqueShaders(types: readonly ScalarType[]): KernelShaders {
  const width = rowWords(types);
  const row = { width, keyWords: Array.from({ length: width }, (_, k) => k) };
  const uniqueInsert = `${atomicBinding(header('uniqueInsert', ['inp', 'table', 'dup']), 'table')}
const W: u32 = ${width}u;
${hashFunction(width)}${threadMain(`  let n = u[0].x;
  let mask = u[0].y;
  if (i >= n) { return; }
  ${loadKey('inp', 'i * W', row)}
  var s = hashKey(${keyArgs(width)}) & mask;
  // At least twice as many slots as rows: the probe sequence reaches a free slot.
  loop {
    let r = atomicCompareExchangeWeak(&table[s], 0u, i + 1u);
    if (r.exchanged) {
      dup[i] = 0u;
      return;
    }
    // A weak exchange may fail spuriously: the slot is still free, try it again.
    if (r.old_value == 0u) { continue; }
    let o = (r.old_value - 1u) * W;
    if (${keyEquals(width, (k) => `inp[o + ${k}u]`)}) {
      dup[i] = 1u;
      return;
    }
    s = (s + 1u) & mask;
  }`)}`;
  return {
    uniqueInsert,
    ...selectShaders({ pass: 'selectAbsent', inputs: ['inp', 'dup'], inputTypes: types, keep: 'dup[i] == 0u', helpers: '', project: identity(types), constOffsets: new Map(), constWords: 0 }),
  };
}
