/**
 * The KIR `limit` kernel on the device (a top-k: `order P by ... limit N`, TPC-H Q10 keeps 20 of 381K rows): a
 * radix select over each row's typed key (the order's key columns, then every column ascending: the tie order
 * of QP `limit`), read as 8-bit digits from the most significant. Level d counts, per digit, the rows whose first
 * d digits are the ones chosen so far (topkHist), and one thread picks the digit in which the k-th row lies
 * (topkPick). Once the rows up to and including that digit's are exactly the k wanted, the level and the digits
 * are the threshold, and later levels return at once; a pass then writes the rows at or below it (topkWrite), in
 * no particular order (the host sorts those few). The levels need no host round trip: the state stays on the
 * device. The rows are duplicate-free, so their keys differ and the last level always finds exactly k.
 *
 * state: [done, depth (the level being picked until done), remaining, written, kept, digit 0, digit 1, ...]. A typed key word: int32 and date with
 * the sign bit flipped, int64 and decimal their high word so then the low word, other types as they are (string
 * ids are in string order); descending keys complemented. float32 has none here (the host limits those rows).
 *
 * Few rows (TPC-H Q18 keeps 100 of 216) take one pass instead (topkRank): each row's rank is the rows whose typed
 * key is smaller, counted by P threads a row as rankSort counts (kernels/sort.ts), and a row ranked below k is
 * written at its rank. The levels' two dispatches each (88 for Q18's 11 key words) cost 0.37 ms on the H200.
 * A small k takes rounds of topkTile instead: the same select within each workgroup's tile, one dispatch a round.
 */
import { rowWords, wordsOf, type OutputOrder, type ScalarType } from '@vixen/queryplan';
import type { KernelShaders } from '../passes.js';
import { atomicBinding, header, threadMain, workgroupScan } from '../wgsl.js';
import { rankCount } from './sort.js';

/** Words of the state before the chosen digits. */
export const TOPK_STATE_HEAD = 5;

/** Histogram bins: one per 8-bit digit. */
export const TOPK_BINS = 256;

/** Whether the device can pick these rows: every column has an order-preserving key word (no float32), and there is one. */
export function topKOnDevice(types: readonly ScalarType[]): boolean {
  return rowWords(types) > 0 && !types.includes('float32');
}

/** Typed key words of a row of `types` at word `base` of `buf`, for `keys` then every column. */
function typedKeyWords(types: readonly ScalarType[], keys: OutputOrder['keys'], buf: string, base: string): string[] {
  const at = types.map((_, c) => types.slice(0, c).reduce((n, t) => n + wordsOf(t), 0));
  const column = (c: number, descending: boolean): string[] => {
    const w = (k: number): string => `${buf}[${base} + ${at[c]! + k}u]`;
    const words = ((): string[] => {
      switch (types[c]!) {
        case 'int32':
        case 'date':
          return [`(${w(0)} ^ 0x80000000u)`];
        case 'int64':
        case 'decimal':
          return [`(${w(1)} ^ 0x80000000u)`, w(0)];
        case 'uint32':
        case 'boolean':
        case 'string':
          return [w(0)];
        case 'float32':
          throw new Error('internal: a device top-k of float32 rows');
      }
    })();
    return descending ? words.map((x) => `(~${x})`) : words;
  };
  return [...keys.flatMap((k) => column(k.column, k.descending)), ...types.flatMap((_, c) => column(c, false))];
}

/** Digit levels of rows of `types` (four per typed key word). */
export function topKLevels(types: readonly ScalarType[], keys: OutputOrder['keys']): number {
  return 4 * (keys.reduce((n, k) => n + wordsOf(types[k.column]!), 0) + rowWords(types));
}

export function topKShaders(types: readonly ScalarType[], keys: OutputOrder['keys']): KernelShaders {
  const width = rowWords(types);
  const words = typedKeyWords(types, keys, 'inp', 'i * RW');
  const W = words.length;
  // The row's typed key, then its digit l (0: the most significant).
  const keyLoad = `var kw: array<u32, ${W}>;
${words.map((x, k) => `  kw[${k}] = ${x};`).join('\n')}`;
  const digitFn = `fn digit(kw: ptr<function, array<u32, ${W}>>, l: u32) -> u32 {
  return ((*kw)[l / 4u] >> (24u - 8u * (l % 4u))) & 0xffu;
}`;
  const consts = `const RW: u32 = ${width}u;
const HEAD: u32 = ${TOPK_STATE_HEAD}u;
const BINS: u32 = ${TOPK_BINS}u;`;
  // Level d = state[1] (the pick before advanced it): each workgroup counts its rows in workgroup memory, then adds
  // its non-zero bins.
  const hist = `${atomicBinding(header('topkHist', ['inp', 'state', 'hist']), 'hist')}
${consts}
${digitFn}
var<workgroup> lh: array<atomic<u32>, ${TOPK_BINS}>;
var<workgroup> stop: u32;

@compute @workgroup_size(WG)
fn main(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(local_invocation_index) lid: u32, @builtin(num_workgroups) nwg: vec3<u32>) {
  if (lid == 0u) { stop = state[0]; }
  if (workgroupUniformLoad(&stop) != 0u) { return; }
  for (var b = lid; b < BINS; b = b + WG) { atomicStore(&lh[b], 0u); }
  workgroupBarrier();
  let i = gid.x + gid.y * nwg.x * WG;
  let n = u[0].x;
  let d = state[1];
  if (i < n) {
  ${keyLoad}
    var on = true;
    for (var l = 0u; l < d; l = l + 1u) {
      if (digit(&kw, l) != state[HEAD + l]) { on = false; break; }
    }
    if (on) { atomicAdd(&lh[digit(&kw, d)], 1u); }
  }
  workgroupBarrier();
  for (var b = lid; b < BINS; b = b + WG) {
    let c = atomicLoad(&lh[b]);
    if (c != 0u) { atomicAdd(&hist[b], c); }
  }
}
`;
  // One thread: the digit holding the remaining-th row of this level's prefix, the level advanced (every level's
  // dispatches then have the same uniforms: one arena slot, no copy of the pending row count per level) and the
  // histogram cleared for the next.
  const pick = `${header('topkPick', ['state', 'hist'])}
const HEAD: u32 = ${TOPK_STATE_HEAD}u;
const BINS: u32 = ${TOPK_BINS}u;
const LEVELS: u32 = ${4 * W}u;
${threadMain(`  if (i != 0u || state[0] != 0u) { return; }
  let n = u[0].x;
  let d = state[1];
  let k = u[0].z;
  var r = state[2];
  if (d == 0u) {
    // No more rows than wanted: all of them (depth 0).
    if (n <= k) { state[0] = 1u; state[1] = 0u; return; }
    r = k;
  }
  var before = 0u;
  var b = 0u;
  loop {
    if (b + 1u >= BINS || before + hist[b] >= r) { break; }
    before = before + hist[b];
    b = b + 1u;
  }
  state[HEAD + d] = b;
  state[2] = r - before;
  state[1] = d + 1u;
  if (hist[b] == r - before || d + 1u == LEVELS) { state[0] = 1u; }
  for (var c = 0u; c < BINS; c = c + 1u) { hist[c] = 0u; }`)}`;
  // Rows whose key's first `depth` digits are at or below the chosen ones; at most `capacity` written (rows that
  // are all equal past that would be duplicates, which the input has none of).
  const write = `${atomicBinding(header('topkWrite', ['inp', 'state', 'outp']), 'state')}
${consts}
${digitFn}
${threadMain(`  let n = u[0].x;
  let capacity = u[0].y;
  if (i >= n) { return; }
  ${keyLoad}
  let depth = atomicLoad(&state[1]);
  var inside = true;
  for (var l = 0u; l < depth; l = l + 1u) {
    let x = digit(&kw, l);
    let c = atomicLoad(&state[HEAD + l]);
    if (x < c) { break; }
    if (x > c) { inside = false; break; }
  }
  if (!inside) { return; }
  let o = atomicAdd(&state[3], 1u);
  if (o >= capacity) { return; }
  atomicMax(&state[4], o + 1u);
${Array.from({ length: width }, (_, w) => `  outp[o * RW + ${w}u] = inp[i * RW + ${w}u];`).join('\n')}`)}`;
  return {
    topkHist: hist,
    topkPick: pick,
    topkWrite: write,
    topkTile: tilePass(width, words),
    ...(W <= TOPK_RANK_KEY_WORDS ? { topkRank: rankPass(width, types, keys) } : {}),
  };
}

/** Rows of a topkTile tile per thread (a tile is TOPK_TILE_ITEMS * WG rows). */
export const TOPK_TILE_ITEMS = 16;

/**
 * topkTile: the radix select above within each workgroup's tile of TILE rows, its levels separated by workgroup
 * barriers instead of dispatches: each tile writes its first min(k, its rows) rows in typed order, in no particular
 * order, at row tile * k of the output, so the output is compact and holds the input's first k. Rounds repeat it on
 * the previous round's rows until one tile holds them; round r's row count is the input's n taken through
 * n -> (n / TILE) * k + min(k, n % TILE) r times (u0 = (n, k, capacity, r)), so the rounds need no count of
 * their own; each writes its count after its capacity's rows. A thread keeps its rows' states in registers: out,
 * in (below the chosen digits), or undecided (equal to them so far), and a run of equal digits among them costs one
 * workgroup atomic (a digit all rows share, as a decimal's high word, would otherwise serialize them on one bin).
 */
function tilePass(width: number, words: readonly string[]): string {
  const W = words.length;
  return `${header('topkTile', ['inp', 'outp'])}
const RW: u32 = ${width}u;
const ITEMS: u32 = ${TOPK_TILE_ITEMS}u;
const BINS: u32 = ${TOPK_BINS}u;
const LEVELS: u32 = ${4 * W}u;
${workgroupScan(false).decls}
var<workgroup> lh: array<atomic<u32>, ${TOPK_BINS}>;
var<workgroup> written: atomic<u32>;
var<workgroup> chosen: u32;
var<workgroup> rest: u32;
var<workgroup> done: u32;

// Typed key word j of the row at word i * RW.
fn keyWord(i: u32, j: u32) -> u32 {
  switch j {
${words.map((x, k) => `    case ${k}u: { return ${x}; }`).join('\n')}
    default: { return 0u; }
  }
}

@compute @workgroup_size(WG)
fn main(@builtin(local_invocation_index) lid: u32, @builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
  let k = u[0].y;
  let capacity = u[0].z;
  let TILE = ITEMS * WG;
  let PER = (BINS + WG - 1u) / WG;
  var n = u[0].x;
  for (var r = 0u; r < u[0].w; r = r + 1u) { n = (n / TILE) * k + min(k, n % TILE); }
  let tile = wid.x + wid.y * nwg.x;
  if (tile == 0u && lid == 0u) { outp[capacity * RW] = (n / TILE) * k + min(k, n % TILE); }
  let start = tile * TILE;
  if (start >= n) { return; }
  let rows = min(TILE, n - start);
  let keep = min(k, rows);
  if (lid == 0u) { atomicStore(&written, 0u); }
  // 0: out, 1: in, 2: undecided.
  var st: array<u32, ${TOPK_TILE_ITEMS}>;
  var dg: array<u32, ${TOPK_TILE_ITEMS}>;
  for (var j = 0u; j < ITEMS; j = j + 1u) { st[j] = select(0u, 2u, lid + j * WG < rows); }
  if (rows > k) {
    var remaining = k;
    for (var l = 0u; l < LEVELS; l = l + 1u) {
      for (var b = lid; b < BINS; b = b + WG) { atomicStore(&lh[b], 0u); }
      workgroupBarrier();
      let shift = 24u - 8u * (l % 4u);
      var run = 0u;
      var last = 0u;
      for (var j = 0u; j < ITEMS; j = j + 1u) {
        if (st[j] == 2u) {
          let x = (keyWord(start + lid + j * WG, l / 4u) >> shift) & 0xffu;
          dg[j] = x;
          if (run != 0u && x != last) {
            atomicAdd(&lh[last], run);
            run = 0u;
          }
          last = x;
          run = run + 1u;
        }
      }
      if (run != 0u) { atomicAdd(&lh[last], run); }
      workgroupBarrier();
      // The bin of the remaining-th row: a scan of the bins, each thread taking PER of them; the one bin whose rows
      // before it are fewer than remaining and with it are not fewer is chosen by its thread.
      var x = 0u;
      for (var q = 0u; q < PER; q = q + 1u) {
        if (lid * PER + q < BINS) { x = x + atomicLoad(&lh[lid * PER + q]); }
      }
      scanSums(lid, x, vec2<u32>(0u, 1u));
      var before = sums[lid] - x;
      for (var q = 0u; q < PER; q = q + 1u) {
        let b = lid * PER + q;
        if (b < BINS) {
          let c = atomicLoad(&lh[b]);
          if (before < remaining && before + c >= remaining) {
            chosen = b;
            rest = remaining - before;
            done = select(0u, 1u, c == remaining - before);
          }
          before = before + c;
        }
      }
      let c = workgroupUniformLoad(&chosen);
      remaining = workgroupUniformLoad(&rest);
      for (var j = 0u; j < ITEMS; j = j + 1u) {
        if (st[j] == 2u) {
          if (dg[j] < c) { st[j] = 1u; } else if (dg[j] > c) { st[j] = 0u; }
        }
      }
      if (workgroupUniformLoad(&done) != 0u) { break; }
    }
  }
  workgroupBarrier();
  for (var j = 0u; j < ITEMS; j = j + 1u) {
    if (st[j] != 0u) {
      let o = atomicAdd(&written, 1u);
      if (o < keep) {
        let at = (start + lid + j * WG) * RW;
        let to = (tile * k + o) * RW;
        for (var w = 0u; w < RW; w = w + 1u) { outp[to + w] = inp[at + w]; }
      }
    }
  }
}
`;
}

/** Typed key words up to which a top-k has a topkRank pass (a thread holds its row's in registers). */
const TOPK_RANK_KEY_WORDS = 24;

/**
 * topkRank: row i's rank is the rows with a smaller typed key (or an equal one and a smaller index), counted by
 * P = u0.y threads a row (a slice of the other rows each), the key words of RANK_TILE rows at a time staged in
 * workgroup memory by all threads (those past n too: the barriers need every thread). A row ranked below
 * u0.z (the room) is written at its rank, so the rows kept are the first min(n, room) in typed order.
 */
function rankPass(width: number, types: readonly ScalarType[], keys: OutputOrder['keys']): string {
  const rank = rankCount('topkRank', width, typedKeyWords(types, keys, 'inp', 'at'), typedKeyWords(types, keys, 'inp', 'src'));
  return `${rank.head}
  let room = u[0].z;
  if (i == 0u && s == 0u) { out[room * RW] = min(n, room); }
${rank.body}
  if (live && counts[lid - s] < room) {
    let to = counts[lid - s] * RW;
    for (var w = s; w < RW; w = w + P) { out[to + w] = inp[at + w]; }
  }
}
`;
}
