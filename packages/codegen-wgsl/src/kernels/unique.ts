import { rowWords } from '@vixen/queryplan';
import type { ScalarType } from '@vixen/queryplan';
import { atomicBinding, header, lexCompareFn, threadMain } from '../wgsl.js';
import { hashFunction, keyArgs, keyEquals, loadKey } from './hash.js';
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

/**
 * Hashed unique (input in any order): uniqueInsert marks each row that finds an equal row already in the table
 * (keyed by all its words); flagsAbsent counts the unmarked rows per tile, scatter writes them in input order.
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
    flagsAbsent: countPass('flagsAbsent', ['inp', 'dup'], types, 'dup[i] == 0u', '', 0),
    scatter: scatterPass(types, identity(types), new Map(), 0),
  };
}
