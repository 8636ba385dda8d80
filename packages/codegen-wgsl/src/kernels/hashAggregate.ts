/**
 * Hash group-by aggregation skeletons: rows update their key's slot of a linear-probing table with 32-bit
 * atomics, then each occupied slot becomes one output row. A slot is (first row + 1, group id, aggregate
 * words); group ids are handed out by an atomic counter, so output rows are dense without a scan. Every
 * aggregate is kept so that 0 is its identity (the host only zeroes the table): min and max of int32 as
 * order-preserving u32 encodings under atomicMax, 64-bit sums as two words with the carry out of the low word
 * added to the high one (the carries of the low-word additions sum to the overflow of the total, in any order).
 */
import { atomicBinding, header, threadMain } from '../wgsl.js';
import type { KernelShaders } from '../index.js';
import { hashFunction, keyArgs, keyEquals, loadKey, type HashKeyLayout } from './hash.js';

/**
 * One aggregate over a row word (`word`: the column's first word). count -> u32; sum -> int64 (two words,
 * an int32 argument sign-extended); min/max -> int32.
 */
export type HashAggregate = { fn: 'count' } | { fn: 'sum'; word: number; type: 'int32' | 'int64' } | { fn: 'min' | 'max'; word: number };

export function aggregateWords(a: HashAggregate): number {
  return a.fn === 'sum' ? 2 : 1;
}

/** Words of a group-by slot: head, group id, aggregates. */
export function groupSlotWords(aggregates: readonly HashAggregate[]): number {
  return 2 + aggregates.reduce((n, a) => n + aggregateWords(a), 0);
}

/** Output row words: the key words, then each aggregate. */
export function groupRowWords(layout: HashKeyLayout, aggregates: readonly HashAggregate[]): number {
  return layout.keyWords.length + aggregates.reduce((n, a) => n + aggregateWords(a), 0);
}

// Bias flips the sign bit (signed order -> unsigned order); min stores the complement of that under atomicMax.
const MAX_CODE = '0x80000000u';
const MIN_CODE = '0x7fffffffu';

export function hashAggregateShaders(layout: HashKeyLayout, aggregates: readonly HashAggregate[]): KernelShaders {
  const K = layout.keyWords.length;
  if (K === 0) throw new Error('internal: hash group-by needs key words');
  for (const a of aggregates) {
    if (a.fn !== 'count' && (a.word < 0 || a.word + (a.fn === 'sum' && a.type === 'int64' ? 2 : 1) > layout.width)) {
      throw new Error(`internal: ${a.fn} argument word ${a.word} outside a ${layout.width}-word row`);
    }
  }
  let off = 2;
  const updates: string[] = [];
  const emits: string[] = [];
  let out = K;
  for (const a of aggregates) {
    const at = `a + ${off}u`;
    switch (a.fn) {
      case 'count':
        updates.push(`atomicAdd(&table[${at}], 1u);`);
        emits.push(`outp[ob + ${out}u] = table[a + ${off}u];`);
        break;
      case 'sum': {
        const lo = `inp[b + ${a.word}u]`;
        const hi = a.type === 'int64' ? `inp[b + ${a.word + 1}u]` : `select(0u, 0xffffffffu, (${lo} & 0x80000000u) != 0u)`;
        updates.push(`addWide(${at}, ${lo}, ${hi});`);
        emits.push(`outp[ob + ${out}u] = table[a + ${off}u]; outp[ob + ${out + 1}u] = table[a + ${off + 1}u];`);
        break;
      }
      case 'min':
      case 'max': {
        const code = a.fn === 'min' ? MIN_CODE : MAX_CODE;
        updates.push(`atomicMax(&table[${at}], inp[b + ${a.word}u] ^ ${code});`);
        emits.push(`outp[ob + ${out}u] = table[a + ${off}u] ^ ${code};`);
        break;
      }
    }
    off += aggregateWords(a);
    out += aggregateWords(a);
  }
  const slotWords = groupSlotWords(aggregates);
  const groupInsert = `${atomicBinding(atomicBinding(header('groupInsert', ['inp', 'table', 'groups']), 'table'), 'groups')}
const W: u32 = ${layout.width}u;
const SW: u32 = ${slotWords}u;
${hashFunction(K)}
fn addWide(at: u32, lo: u32, hi: u32) {
  let old = atomicAdd(&table[at], lo);
  let carried = hi + select(0u, 1u, old + lo < old);
  if (carried != 0u) { atomicAdd(&table[at + 1u], carried); }
}
${threadMain(`  let n = u[0].x;
  let mask = u[0].y;
  let limit = u[0].z;
  if (i >= n) { return; }
  let b = i * W;
  ${loadKey('inp', 'b', layout)}
  var s = hashKey(${keyArgs(K)}) & mask;
  var probes = 0u;
  loop {
    let at = s * SW;
    // Plain load first: a group's slot is claimed once, then only read, so hot keys cause no exchanges.
    var head = atomicLoad(&table[at]);
    if (head == 0u) {
      // A new group past the limit: the table is too small (give up at once; probe sequences would grow long).
      if (atomicLoad(&groups[0]) >= limit) {
        atomicStore(&groups[1], 1u);
        return;
      }
      let r = atomicCompareExchangeWeak(&table[at], 0u, i + 1u);
      if (r.exchanged) {
        atomicStore(&table[at + 1u], atomicAdd(&groups[0], 1u));
        break;
      }
      head = r.old_value;
      if (head == 0u) { continue; }
    }
    let o = (head - 1u) * W;
    if (${keyEquals(K, (k) => `inp[o + ${layout.keyWords[k]}u]`)}) { break; }
    s = (s + 1u) & mask;
    probes = probes + 1u;
    if (probes > mask) {
      atomicStore(&groups[1], 1u);
      return;
    }
  }
  let a = s * SW;
  ${updates.join('\n  ')}`)}`;
  const groupEmit = `${header('groupEmit', ['inp', 'table', 'outp'])}
const W: u32 = ${layout.width}u;
const SW: u32 = ${slotWords}u;
const OW: u32 = ${groupRowWords(layout, aggregates)}u;
${threadMain(`  if (i >= u[0].x) { return; }
  let a = i * SW;
  let head = table[a];
  if (head == 0u) { return; }
  let b = (head - 1u) * W;
  let ob = table[a + 1u] * OW;
  ${layout.keyWords.map((w, k) => `outp[ob + ${k}u] = inp[b + ${w}u];`).join(' ')}
  ${emits.join('\n  ')}`)}`;
  return { groupInsert, groupEmit };
}
