/**
 * Hash group-by aggregation skeletons: rows update their key's slot of a linear-probing table with 32-bit
 * atomics, then each occupied slot becomes one output row. A slot is (head, group id, aggregate words): the
 * head is the key ^ KEY_SALT for one-word keys (the key KEY_SALT itself has an extra slot after the probed
 * ones), else the group's first row + 1; group ids are handed out by an atomic counter, so output rows are
 * dense without a scan. Every aggregate is kept so that 0 is its identity (the host only zeroes the table):
 * min and max of int32 as order-preserving u32 encodings under atomicMax, 64-bit sums as two words with the
 * carry out of the low word added to the high one (the carries of the low-word additions sum to the overflow
 * of the total, in any order). A workgroup first aggregates its tile in a small table of its own in workgroup
 * memory, so that few groups (the worst case for global atomics: every row on the same few words) cost one
 * global update per group and tile; rows whose key finds no room there update the global table directly.
 * With many groups each row costs a slot read and an atomic per aggregate word in L2; on an H100 a CUDA
 * analog of this pass runs such random updates at ~60 G/s (2^26 rows into 2^16 groups: ~3.9 ms), so going
 * faster needs rows partitioned by key first (with locally sorted, coalesced writes) and aggregated in
 * workgroup tables. Measured on the H100 at 2^26 rows and kept out, since each made 16 groups slower (0.375 ms):
 * workgroups striding over tiles with a 512-slot table merged once each (256 groups 3.15 -> 1.36 ms, 16 groups
 * 0.43 ms); per-lane copies of a workgroup's first groups, so that no two lanes of a warp update one word (0.81 ms);
 * 8, 32 or 64 rows a thread (0.37-0.40 ms).
 */
import { atomicBinding, header, threadMain } from '../wgsl.js';
import type { KernelShaders } from '../passes.js';
import { hashFunction, keyArgs, keyEquals, loadKey, type HashKeyLayout } from './hash.js';

/**
 * One aggregate over a row word (`word`: the column's first word). count -> u32; sum -> int64 (two words,
 * an int32 argument sign-extended); min/max -> int32.
 */
export type HashAggregate = { fn: 'count' } | { fn: 'sum'; word: number; type: 'int32' | 'int64' } | { fn: 'min' | 'max'; word: number };

function aggregateWords(a: HashAggregate): number {
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

/**
 * The local table's lookup (local slot of the key among LPROBES slots, or NONE; new keys claim one only while
 * the table is at most half full), comparing keys by their rows' words.
 */
const localSlotByRow = (keyParams: string, args: string, sameKey: string): string => `fn localSlot(row: u32${keyParams}) -> u32 {
  var s = hashKey(${args}) & (LS - 1u);
  for (var p = 0u; p < LPROBES; p = p + 1u) {
    var head = atomicLoad(&lhead[s]);
    if (head == 0u) {
      if (atomicLoad(&lfill) >= LS / 2u) { return NONE; }
      let r = atomicCompareExchangeWeak(&lhead[s], 0u, row + 1u);
      if (r.exchanged) {
        atomicAdd(&lfill, 1u);
        return s;
      }
      head = r.old_value;
      if (head == 0u) { p = p - 1u; continue; }
    }
    if (${sameKey}) { return s; }
    s = (s + 1u) & (LS - 1u);
  }
  return NONE;
}`;

/**
 * The same for one-word keys, claimed and compared in workgroup memory (no row reads); the one key equal to
 * KEY_SALT cannot be stored there and always takes the global table.
 */
const localSlotByKey = `fn localSlot(row: u32, k0: u32) -> u32 {
  let t = k0 ^ KEY_SALT;
  if (t == 0u) { return NONE; }
  var s = hashKey(k0) & (LS - 1u);
  for (var p = 0u; p < LPROBES; p = p + 1u) {
    var cur = atomicLoad(&lkey[s]);
    if (cur == 0u) {
      if (atomicLoad(&lfill) >= LS / 2u) { return NONE; }
      let r = atomicCompareExchangeWeak(&lkey[s], 0u, t);
      if (r.exchanged) {
        atomicAdd(&lfill, 1u);
        return s;
      }
      cur = r.old_value;
      if (cur == 0u) { p = p - 1u; continue; }
    }
    if (cur == t) { return s; }
    s = (s + 1u) & (LS - 1u);
  }
  return NONE;
}`;

/**
 * Global slot of the key (k0..) of row 'row', claimed if new; NONE (and the full flag) when the table holds
 * u[0].z groups or has no free slot. Keys are compared through their groups' first rows.
 */
const globalSlotByRow = (keyParams: string, args: string, sameKey: string): string => `fn globalSlot(row: u32${keyParams}) -> u32 {
  let mask = u[0].y;
  var s = hashKey(${args}) & mask;
  for (var probes = 0u; probes <= mask; probes = probes + 1u) {
    let at = s * SW;
    // Plain load first: a group's slot is claimed once, then only read, so hot keys cause no exchanges.
    var head = atomicLoad(&table[at]);
    if (head == 0u) {
      if (atomicLoad(&groups[0]) >= u[0].z) { break; }
      let r = atomicCompareExchangeWeak(&table[at], 0u, row + 1u);
      if (r.exchanged) {
        atomicStore(&table[at + 1u], atomicAdd(&groups[0], 1u));
        return s;
      }
      head = r.old_value;
      // A weak exchange may fail spuriously: look at the same slot again.
      if (head == 0u) { probes = probes - 1u; continue; }
    }
    if (${sameKey}) { return s; }
    s = (s + 1u) & mask;
  }
  atomicStore(&groups[1], 1u);
  return NONE;
}`;

/**
 * The same for one-word keys, held in the slot's head word as key ^ KEY_SALT (so a lookup reads no other row);
 * the key equal to KEY_SALT has the extra slot after the mask + 1 probed ones (head 1 once claimed).
 */
const globalSlotByKey = `fn globalSlot(row: u32, k0: u32) -> u32 {
  let mask = u[0].y;
  let t = k0 ^ KEY_SALT;
  if (t == 0u) {
    let at = (mask + 1u) * SW;
    // Until claimed, by this thread or another (a weak exchange may fail spuriously).
    while (atomicLoad(&table[at]) == 0u) {
      if (atomicCompareExchangeWeak(&table[at], 0u, 1u).exchanged) {
        atomicStore(&table[at + 1u], atomicAdd(&groups[0], 1u));
      }
    }
    return mask + 1u;
  }
  var s = hashKey(k0) & mask;
  for (var probes = 0u; probes <= mask; probes = probes + 1u) {
    let at = s * SW;
    var head = atomicLoad(&table[at]);
    if (head == 0u) {
      if (atomicLoad(&groups[0]) >= u[0].z) { break; }
      let r = atomicCompareExchangeWeak(&table[at], 0u, t);
      if (r.exchanged) {
        atomicStore(&table[at + 1u], atomicAdd(&groups[0], 1u));
        return s;
      }
      head = r.old_value;
      if (head == 0u) { probes = probes - 1u; continue; }
    }
    if (head == t) { return s; }
    s = (s + 1u) & mask;
  }
  atomicStore(&groups[1], 1u);
  return NONE;
}`;

/** Rows per thread of a group-by tile (TILE = GROUP_ITEMS * WG rows, one workgroup). */
export const GROUP_ITEMS = 16;

/** Local table slots: a power of two up to 256 whose key (or head) and aggregate words fit 8 KiB of workgroup memory. */
function localSlots(aggWords: number): number {
  let slots = 256;
  while (slots > 16 && slots * (1 + Math.max(1, aggWords)) * 4 > 8192) slots /= 2;
  return slots;
}

export function hashAggregateShaders(layout: HashKeyLayout, aggregates: readonly HashAggregate[]): KernelShaders {
  const K = layout.keyWords.length;
  if (K === 0) throw new Error('internal: hash group-by needs key words');
  for (const a of aggregates) {
    if (a.fn !== 'count' && (a.word < 0 || a.word + (a.fn === 'sum' && a.type === 'int64' ? 2 : 1) > layout.width)) {
      throw new Error(`internal: ${a.fn} argument word ${a.word} outside a ${layout.width}-word row`);
    }
  }
  // Per aggregate at word `off` of a slot's aggregates: the update by one row (into the local or the global
  // table) and the merge of a local slot into a global one; then the output words.
  let off = 0;
  const toLocal: string[] = [];
  const toGlobal: string[] = [];
  const merge: string[] = [];
  const emits: string[] = [];
  for (const a of aggregates) {
    // Output words: the K key words, then the aggregates in slot order.
    const out = K + off;
    const g = `a + ${off}u`;
    const l = `l + ${off}u`;
    switch (a.fn) {
      case 'count':
        toLocal.push(`atomicAdd(&lagg[${l}], 1u);`);
        toGlobal.push(`atomicAdd(&table[${g}], 1u);`);
        merge.push(`atomicAdd(&table[${g}], atomicLoad(&lagg[${l}]));`);
        emits.push(`outp[ob + ${out}u] = table[a + ${off}u];`);
        break;
      case 'sum': {
        const lo = `inp[b + ${a.word}u]`;
        const hi = a.type === 'int64' ? `inp[b + ${a.word + 1}u]` : `select(0u, 0xffffffffu, (${lo} & 0x80000000u) != 0u)`;
        toLocal.push(`addWideLocal(${l}, ${lo}, ${hi});`);
        toGlobal.push(`addWide(${g}, ${lo}, ${hi});`);
        merge.push(`addWide(${g}, atomicLoad(&lagg[${l}]), atomicLoad(&lagg[${l} + 1u]));`);
        emits.push(`outp[ob + ${out}u] = table[a + ${off}u]; outp[ob + ${out + 1}u] = table[a + ${off + 1}u];`);
        break;
      }
      case 'min':
      case 'max': {
        const code = a.fn === 'min' ? MIN_CODE : MAX_CODE;
        toLocal.push(`atomicMax(&lagg[${l}], inp[b + ${a.word}u] ^ ${code});`);
        toGlobal.push(`atomicMax(&table[${g}], inp[b + ${a.word}u] ^ ${code});`);
        merge.push(`atomicMax(&table[${g}], atomicLoad(&lagg[${l}]));`);
        emits.push(`outp[ob + ${out}u] = table[a + ${off}u] ^ ${code};`);
        break;
      }
    }
    off += aggregateWords(a);
  }
  const aggWords = off;
  const slots = localSlots(aggWords);
  const keyParams = Array.from({ length: K }, (_, k) => `, k${k}: u32`).join('');
  const sameKey = (row: string): string => keyEquals(K, (k) => `inp[(${row}) * W + ${layout.keyWords[k]}u]`);
  const slotWords = groupSlotWords(aggregates);
  // One-word keys are the slots' own head words (global and local), so neither a lookup nor the emit reads
  // rows but the row's own; wider keys are compared through the first row of their group (head = row + 1).
  const global = K === 1 ? globalSlotByKey : globalSlotByRow(keyParams, keyArgs(K), sameKey('head - 1u'));
  const local = K === 1 ? localSlotByKey : localSlotByRow(keyParams, keyArgs(K), sameKey('head - 1u'));
  // A local slot's key and its global slot, for the merge at the end.
  const localKey =
    K === 1
      ? `let tag = atomicLoad(&lkey[ls]);
    if (tag == 0u) { continue; }
    let s = globalSlot(0u, tag ^ KEY_SALT);`
      : `let head = atomicLoad(&lhead[ls]);
    if (head == 0u) { continue; }
    ${loadKey('inp', '(head - 1u) * W', layout)}
    let s = globalSlot(head - 1u, ${keyArgs(K)});`;
  const groupInsert = `${atomicBinding(atomicBinding(header('groupInsert', ['inp', 'table', 'groups']), 'table'), 'groups')}
const W: u32 = ${layout.width}u;
const SW: u32 = ${slotWords}u;
// Aggregate words of a slot; local table slots; local slots a row looks at before it goes to the global table.
const AW: u32 = ${aggWords}u;
const LS: u32 = ${slots}u;
const LPROBES: u32 = 8u;
const ITEMS: u32 = ${GROUP_ITEMS}u;
override TILE: u32 = ITEMS * WG;
const NONE: u32 = 0xffffffffu;
const KEY_SALT: u32 = 0x5bd1e995u;
${hashFunction(K)}
// The workgroup's own table: rows of keys that repeat within its tile update it with workgroup atomics, and
// each of its groups reaches the global table once.
${K === 1 ? '// One-word keys: the key itself (XOR KEY_SALT, 0 = free).\nvar<workgroup> lkey: array<atomic<u32>, LS>;' : '// Head = row + 1 as in the global table.\nvar<workgroup> lhead: array<atomic<u32>, LS>;'}
var<workgroup> lagg: array<atomic<u32>, ${Math.max(1, aggWords)}u * LS>;
var<workgroup> lfill: atomic<u32>;

fn addWide(at: u32, lo: u32, hi: u32) {
  let old = atomicAdd(&table[at], lo);
  let carried = hi + select(0u, 1u, old + lo < old);
  if (carried != 0u) { atomicAdd(&table[at + 1u], carried); }
}
fn addWideLocal(at: u32, lo: u32, hi: u32) {
  let old = atomicAdd(&lagg[at], lo);
  let carried = hi + select(0u, 1u, old + lo < old);
  if (carried != 0u) { atomicAdd(&lagg[at + 1u], carried); }
}

${global}

${local}

// A thread stops looking its rows up in the local table once they mostly miss it (at least 2 + 4 misses per
// hit): with many groups the table is full of other keys after the tile's first rows, and each probe would
// only add work before the global update; with few groups rows keep hitting it.
@compute @workgroup_size(WG)
fn main(@builtin(local_invocation_index) lid: u32, @builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
  let n = u[0].x;
  let base = (wid.x + wid.y * nwg.x) * TILE;
  var hits = 0u;
  var misses = 0u;
  for (var it = 0u; it < ITEMS; it = it + 1u) {
    let i = base + it * WG + lid;
    if (i < n) {
      let b = i * W;
      ${loadKey('inp', 'b', layout)}
      var ls = NONE;
      if (misses < 4u * hits + 2u) {
        ls = localSlot(i, ${keyArgs(K)});
        if (ls == NONE) { misses = misses + 1u; } else { hits = hits + 1u; }
      }
      if (ls != NONE) {
        let l = ls * AW;
        ${toLocal.join('\n        ')}
      } else {
        let s = globalSlot(i, ${keyArgs(K)});
        if (s != NONE) {
          let a = s * SW + 2u;
          ${toGlobal.join('\n          ')}
        }
      }
    }
  }
  workgroupBarrier();
  for (var ls = lid; ls < LS; ls = ls + WG) {
    ${localKey}
    if (s != NONE) {
      let a = s * SW + 2u;
      let l = ls * AW;
      ${merge.join('\n      ')}
    }
  }
}
`;
  // One-word keys: slot words are (key ^ KEY_SALT, group id, ..), the extra last slot holding KEY_SALT itself.
  const emitKey =
    K === 1
      ? `outp[ob] = select(head ^ KEY_SALT, KEY_SALT, i == u[0].x - 1u);`
      : `let b = (head - 1u) * W;
  ${layout.keyWords.map((w, k) => `outp[ob + ${k}u] = inp[b + ${w}u];`).join(' ')}`;
  const groupEmit = `${header('groupEmit', ['inp', 'table', 'outp'])}
const W: u32 = ${layout.width}u;
const SW: u32 = ${slotWords}u;
const OW: u32 = ${groupRowWords(layout, aggregates)}u;
const KEY_SALT: u32 = 0x5bd1e995u;
${threadMain(`  if (i >= u[0].x) { return; }
  let head = table[i * SW];
  if (head == 0u) { return; }
  let ob = table[i * SW + 1u] * OW;
  let a = i * SW + 2u;
  ${emitKey}
  ${emits.join('\n  ')}`)}`;
  return { groupInsert, groupEmit };
}
