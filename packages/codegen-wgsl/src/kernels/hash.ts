/**
 * Hash join skeletons: a linear-probing table built with 32-bit compare-exchange, probed tile by tile.
 * Keys are any number of u32 words at given offsets of a row (an int64 key is two words); equal keys are equal
 * words. A slot is (head build row + 1, key words): the compare-exchange claims a slot by its head word alone,
 * so keys wider than one atomic word need no wider atomics; a thread that loses the race compares its key with
 * the winner's build row (slot key words are written after the claim, so they are read only by the probe).
 * A build key seen twice chains its rows (next[] per build row); a word after the slots records that any chain
 * exists, so probes of a unique-key table never touch next[]. The word after it counts the rows a filtered build
 * (a pipeline probe's build filter) kept.
 */
import { atomicBinding, header, SUBGROUP_VARIANT, threadMain, workgroupScan } from '../wgsl.js';
import type { KernelShaders } from '../passes.js';

/** Probe rows per thread of a probe tile (TILE = HASH_ITEMS * WG rows, one workgroup). */
export const HASH_ITEMS = 4;

/**
 * The override constant that bounds the chain steps a hash probe thread counts (no bound by default). CPU adapters
 * end a shader invocation's loops after 65,535 iterations in all, silently: the runtime sets it there (the probe
 * walks each chain twice, to count and to write), and a thread whose chains pass it writes nothing and sets
 * CHAIN_OVERFLOW in the counter, so the host runs the join again over parts of the build side.
 */
export const CHAIN_STEPS = 'CHAIN_STEPS';

/** The counter bit a probe thread sets whose chains passed CHAIN_STEPS (no output count comes near it). */
export const CHAIN_OVERFLOW = 0x80000000;

/** CHAIN_STEPS on a CPU adapter: counting and writing twice as many steps, and the table lookups, stay below 65,535. */
export const CPU_CHAIN_STEPS = 16384;

/** Where a relation's key is: row width in u32 words and the row offsets of the key words, in key order. */
export interface HashKeyLayout {
  width: number;
  keyWords: readonly number[];
}

/**
 * One word of a join output row: a word of the probe or build row, or the row's index. (Pairs of row indices
 * let a caller gather later; words straight from the rows save that pass.)
 */
export type JoinOutputWord = { from: 'probe' | 'build'; word: number } | { from: 'probeIndex' | 'buildIndex' };

/** (probe row index, build row index). */
export const JOIN_PAIRS: readonly JoinOutputWord[] = [{ from: 'probeIndex' }, { from: 'buildIndex' }];

/** Words of a join table slot for keys of `keyWords` words. */
export function joinSlotWords(keyWords: number): number {
  return 1 + keyWords;
}

/** fmix32, MurmurHash3's finalizer. */
const FMIX32 = `fn fmix32(x0: u32) -> u32 {
  var x = x0;
  x = (x ^ (x >> 16u)) * 0x85ebca6bu;
  x = (x ^ (x >> 13u)) * 0xc2b2ae35u;
  return x ^ (x >> 16u);
}
`;

/** `fn name(k0: u32, ...)`: fmix32 (declared once per module) folded over `keyWords` key words. */
function hashKeyFunction(keyWords: number, name: string): string {
  const params = Array.from({ length: keyWords }, (_, k) => `k${k}: u32`).join(', ');
  const fold = Array.from({ length: keyWords }, (_, k) => `  h = fmix32(h ^ k${k}) + 0x9e3779b9u;`).join('\n');
  return `fn ${name}(${params}) -> u32 {
  var h = 0x2545f491u;
${fold}
  return fmix32(h);
}
`;
}

/** fmix32 folded over the key words `k0`, `k1`, ...: `hashKey` and the fmix32 it calls. */
export function hashFunction(keyWords: number): string {
  return FMIX32 + hashKeyFunction(keyWords, 'hashKey');
}

/** hashKeyFunction for each of `widths` (key words; repeats declared once) as `hashKey<width>`, with fmix32. */
export function hashFunctions(widths: readonly number[]): string {
  return FMIX32 + [...new Set(widths)].map((k) => hashKeyFunction(k, `hashKey${k}`)).join('');
}

/** `let k0 = buf[base + off0]; ...` for a layout's key words. */
export function loadKey(buf: string, base: string, layout: HashKeyLayout): string {
  return layout.keyWords.map((off, k) => `let k${k} = ${buf}[${base} + ${off}u];`).join(' ');
}

/** WGSL bool: the key words k0.. equal words `at(k)` for every k (true for a key of no words). */
export function keyEquals(keyWords: number, at: (k: number) => string): string {
  return keyWords === 0 ? 'true' : Array.from({ length: keyWords }, (_, k) => `${at(k)} == k${k}`).join(' && ');
}

export const keyArgs = (keyWords: number): string => Array.from({ length: keyWords }, (_, k) => `k${k}`).join(', ');

function checkLayout(layout: HashKeyLayout, what: string, keyless = false): void {
  if (layout.keyWords.length === 0 && !keyless) throw new Error(`internal: ${what} has no key words`);
  for (const off of layout.keyWords) {
    if (!Number.isInteger(off) || off < 0 || off >= layout.width) throw new Error(`internal: ${what} key word ${off} outside a ${layout.width}-word row`);
  }
}

/** A build pass's filter: a WGSL bool over build row `i` (first word `b`) and the kernel's constants (`constWords`). */
export interface BuildFilter {
  keep: string;
  constWords: number;
}

/**
 * The hash mask of a filtered build's table of capacity mask `cap`, given the rows it kept: slots for twice as
 * many (a power of two, at least 2), at most the capacity.
 */
export const KEPT_MASK = `fn keptMask(kept: u32, cap: u32) -> u32 {
  let want = max(kept, 1u) * 2u;
  if (want > cap) { return cap; }
  return (1u << (32u - countLeadingZeros(want - 1u))) - 1u;
}
`;

/**
 * A keyless build's insert (hashBuildShaders): the first row to claim slot `s` keeps it; the others leave. It writes
 * no chain (the repeat flag stays clear), so `next` may hold fewer words than the rows.
 */
const KEYLESS_INSERT = `loop {
    if (atomicLoad(&table[s * SW]) != 0u) { return; }
    // A weak exchange may fail spuriously: the load above then sees the slot still free.
    if (atomicCompareExchangeWeak(&table[s * SW], 0u, i + 1u).exchanged) { return; }
  }`;

/**
 * The build pass for rows laid out as `build`, of the rows where `filter` holds (all by default). A key of no words
 * (a pipeline's keyless negated probe, which asks only whether the table holds any row) keeps one row in one slot,
 * without chains: the other rows leave once they see that slot taken, rather than all swap its head in turn.
 */
export function hashBuildShaders(build: HashKeyLayout, filter?: BuildFilter): KernelShaders {
  checkLayout(build, 'hash build', true);
  const K = build.keyWords.length;
  const storeKey = build.keyWords.map((_, k) => `atomicStore(&table[at + ${k + 1}u], k${k});`).join(' ');
  // A filtered build runs three times: u0.z = 0 counts the kept rows (one atomic per workgroup; the host also orders
  // a pipeline's lookups by them at its next launch), u0.z = 2 clears the slots they take (the host clears only the
  // count and the repeat flag: a table sized for every row, 256 MB for TPC-H Q13's 15M orders at SF 10, was cleared
  // whole each launch), then u0.z = 1 inserts them into those first slots of the table, as many as keptMask gives
  // (not the capacity u0.y + 1 that all rows would need), so that the lookups of a selective build side (TPC-H Q9's
  // green parts, Q13's special orders: 1-5% of the rows) stay in a small, cache-resident part of it.
  const start = filter
    ? `  let n = u[0].x;
  let cap = u[0].y;
  if (u[0].z == 2u) {
    let used = (keptMask(atomicLoad(&table[(cap + 1u) * SW + 1u]), cap) + 1u) * SW;
    for (var w = i; w < used; w = w + nwg.x * nwg.y * WG) { atomicStore(&table[w], 0u); }
    return;
  }
  var keep = false;
  if (i < n) {
    let b = i * WB;
    keep = ${filter.keep};
  }
  let kept = (cap + 1u) * SW + 1u;
  if (u[0].z == 0u) {
    if (keep) { atomicAdd(&keptHere, 1u); }
    workgroupBarrier();
    if (lid == 0u) {
      let c = atomicLoad(&keptHere);
      if (c != 0u) { atomicAdd(&table[kept], c); }
    }
    return;
  }
  if (!keep) { return; }
  let mask = keptMask(atomicLoad(&table[kept]), cap);`
    : `  let n = u[0].x;
  let cap = u[0].y;
  let mask = cap;
  // Rows from u0.z on: a CPU adapter's probe whose chains passed CHAIN_STEPS builds over parts of the rows.
  if (i >= n || i < u[0].z) { return; }`;
  const main = (body: string): string =>
    filter
      ? `var<workgroup> keptHere: atomic<u32>;
@compute @workgroup_size(WG)
fn main(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>, @builtin(local_invocation_index) lid: u32) {
  let i = gid.x + gid.y * nwg.x * WG;
${body}
}
`
      : threadMain(body);
  const hashBuild = `${atomicBinding(header('hashBuild', ['build', 'table', 'next'], filter?.constWords ?? 0), 'table')}
const WB: u32 = ${build.width}u;
const SW: u32 = ${joinSlotWords(K)}u;
${hashFunction(K)}${filter ? KEPT_MASK : ''}${main(`${start}
  ${loadKey('build', 'i * WB', build)}
  var s = hashKey(${keyArgs(K)}) & mask;
  ${K === 0 ? KEYLESS_INSERT : `// The table has at least twice as many slots as rows, so the probe sequence reaches a free slot.
  loop {
    let at = s * SW;
    let r = atomicCompareExchangeWeak(&table[at], 0u, i + 1u);
    if (r.exchanged) {
      ${storeKey}
      next[i] = 0u;
      return;
    }
    // A weak exchange may fail spuriously: the slot is still free, try it again.
    if (r.old_value == 0u) { continue; }
    let o = (r.old_value - 1u) * WB;
    if (${keyEquals(K, (k) => `build[o + ${build.keyWords[k]}u]`)}) {
      next[i] = atomicExchange(&table[at], i + 1u);
      let dup = (cap + 1u) * SW;
      if (atomicLoad(&table[dup]) == 0u) { atomicStore(&table[dup], 1u); }
      return;
    }
    s = (s + 1u) & mask;
  }`}`)}`;
  return { hashBuild };
}

/**
 * The probe pass for probe rows laid out as `probe` against a table of keys of the same number of words, built
 * over rows of `buildWidth` words; each match writes one row of `output`.
 * A workgroup looks up its tile's rows once, keeping each row's chain head and match count in registers,
 * scans the per-thread match totals in workgroup memory, reserves the tile's output range with one atomic
 * and writes the pairs from there (Crystal's tile-wide compaction). Two variants: the scan with and without
 * subgroup operations.
 */
export function hashProbeShaders(probe: HashKeyLayout, buildWidth: number, output: readonly JoinOutputWord[] = JOIN_PAIRS): KernelShaders {
  checkLayout(probe, 'hash probe');
  if (output.length === 0) throw new Error('internal: hash probe writes no words');
  for (const w of output) {
    if ('word' in w && (w.word < 0 || w.word >= (w.from === 'probe' ? probe.width : buildWidth))) {
      throw new Error(`internal: join output word ${w.word} outside the ${w.from} row`);
    }
  }
  // Probe row i matched build row x - 1.
  const value = (w: JoinOutputWord): string => {
    switch (w.from) {
      case 'probeIndex':
        return 'i';
      case 'buildIndex':
        return 'x - 1u';
      case 'probe':
        return `probe[i * WP + ${w.word}u]`;
      case 'build':
        return `build[(x - 1u) * WB + ${w.word}u]`;
    }
  };
  const writes = output.map((w, k) => `        outp[o * OW + ${k}u] = ${value(w)};`).join('\n');
  const module = (subgroups: boolean): string => probeModule(probe, buildWidth, output.length, writes, subgroups);
  return { hashProbe: module(false), [`hashProbe${SUBGROUP_VARIANT}`]: module(true) };
}

function probeModule(probe: HashKeyLayout, buildWidth: number, outWidth: number, writes: string, subgroups: boolean): string {
  const K = probe.keyWords.length;
  const scan = workgroupScan(subgroups);
  return `${scan.enable}${atomicBinding(header('hashProbe', ['probe', 'build', 'table', 'next', 'outp', 'counter']), 'counter')}
const WP: u32 = ${probe.width}u;
const WB: u32 = ${buildWidth}u;
const OW: u32 = ${outWidth}u;
const SW: u32 = ${joinSlotWords(K)}u;
const ITEMS: u32 = ${HASH_ITEMS}u;
override TILE: u32 = ITEMS * WG;
override ${CHAIN_STEPS}: u32 = 0xffffffffu;
${hashFunction(K)}
${scan.decls}var<workgroup> start: u32;

@compute @workgroup_size(WG)
fn main(@builtin(local_invocation_index) lid: u32, @builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>${scan.builtins}) {
  let n = u[0].x;
  let mask = u[0].y;
  let capacity = u[0].z;
  let base = (wid.x + wid.y * nwg.x) * TILE;
  if (base >= n) { return; }
  let chained = table[(mask + 1u) * SW] != 0u;
  var head: array<u32, ITEMS>;
  var total = 0u;
  var steps = 0u;
  for (var k = 0u; k < ITEMS; k = k + 1u) {
    head[k] = 0u;
    let i = base + k * WG + lid;
    if (i >= n) { continue; }
    ${loadKey('probe', 'i * WP', probe)}
    var s = hashKey(${keyArgs(K)}) & mask;
    loop {
      let at = s * SW;
      let r = table[at];
      if (r == 0u) { break; }
      if (${keyEquals(K, (k) => `table[at + ${k + 1}u]`)}) { head[k] = r; break; }
      s = (s + 1u) & mask;
    }
    if (head[k] != 0u) {
      total = total + 1u;
      if (chained) {
        for (var x = next[head[k] - 1u]; x != 0u && steps <= ${CHAIN_STEPS}; x = next[x - 1u]) { total = total + 1u; steps = steps + 1u; }
      }
    }
  }
  if (steps > ${CHAIN_STEPS}) {
    atomicOr(&counter[0], ${CHAIN_OVERFLOW}u);
    total = 0u;
    for (var k = 0u; k < ITEMS; k = k + 1u) { head[k] = 0u; }
  }
  // Inclusive scan of the per-thread totals; the last thread reserves the tile's range.
  scanSums(lid, total, ${scan.sg});
  if (lid == WG - 1u) { start = atomicAdd(&counter[0], sums[lid]); }
  workgroupBarrier();
  var o = start + sums[lid] - total;
  for (var k = 0u; k < ITEMS; k = k + 1u) {
    let i = base + k * WG + lid;
    var x = head[k];
    loop {
      if (x == 0u) { break; }
      if (o < capacity) {
${writes}
      }
      o = o + 1u;
      if (!chained) { break; }
      x = next[x - 1u];
    }
  }
}
`;
}
