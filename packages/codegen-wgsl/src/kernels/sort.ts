import { rowWords, wordsOf } from '@vixen/queryplan';
import type { ScalarType } from '@vixen/queryplan';
import { atomicBinding, header, lexCompareFn, SUBGROUP_VARIANT, threadMain, workgroupScan } from '../wgsl.js';
import type { KernelShaders } from '../passes.js';

/** Bits of one radix digit (one global scatter pass). */
export const RADIX_BITS = 8;

/**
 * Items per thread of a radix tile (a tile is radixItems * WG items) for rows of `width` words: as many as fit the
 * 16 KiB of workgroup memory WebGPU promises beside the digit pass's other arrays (1,090 words at WG = 256), since
 * each tile costs a status word per digit written twice and read by the tiles after it. One-word rows are sorted as
 * bare keys (one word of the tile each), others as pairs (two).
 */
export function radixItems(width: number): number {
  return width === 1 ? 11 : 5;
}

/** Row word offsets of the key words, most significant first (the words of `keys` columns in order). */
export function sortKeyWords(types: readonly ScalarType[], keys: readonly number[]): number[] {
  return keys.flatMap((k) => {
    if (k < 0 || k >= types.length) throw new Error(`internal: sort key ${k} out of range (${types.length} columns)`);
    const base = types.slice(0, k).reduce((n, t) => n + wordsOf(t), 0);
    return Array.from({ length: wordsOf(types[k]!) }, (_, w) => base + w);
  });
}

/** Key words whose digits one radixCount dispatch counts (its workgroup counters: RADIX_COUNT_WORDS * 4 * 256 words). */
export const RADIX_COUNT_WORDS = 3;

/** Digit windows of a key word: the least significant first. */
export const RADIX_WINDOWS = 32 / RADIX_BITS;

/** radixSweep's u0.x where its rows are not a uniform but the word of hist after the key mask. */
export const RADIX_ROWS_IN_HIST = 0xffffffff;

/** Words of a radixSweep state buffer before the tile statuses: the tile counter. */
export const RADIX_STATE_HEAD = 1;

const tilePrelude = (width: number): string => `const ITEMS: u32 = ${radixItems(width)}u;
override TILE: u32 = ITEMS * WG;
const RADIX: u32 = ${2 ** RADIX_BITS}u;
fn digitOf(key: u32, shift: u32) -> u32 { return (key >> shift) & (RADIX - 1u); }
`;

/**
 * LSD radix sort in the manner of Onesweep (Adinets and Merrill 2022), stable, in unsigned lexicographic order of
 * the key words. Items are (key word, row index) pairs whose first digit pass reads the key words from the rows and
 * whose last digit pass writes the rows the indices pick; two-word rows are sorted as the pairs themselves (the key
 * word at position kp = u1.x of each pair, the other word carried) and one-word rows as bare keys, neither with a
 * pair-making pass or a row gather. radixCount reads the key words once and counts the digits of every 8-bit window
 * of every key word (a key word's counts do not depend on the order its rows are in), and finds which key bits vary
 * (OR of every key word XOR row 0's). Then one radixSweep per window, least significant first: each workgroup takes
 * the next tile from an atomic counter, ranks it stably in workgroup memory, publishes its per-digit counts and
 * finds the counts of the tiles before it by a decoupled look-back, then writes its runs of equal digits. Each pass
 * reads the key word's mask where radixCount left it (u1.w names the word), so a window with no varying bits is a
 * plain copy, with no host round trip; radixKeys loads the pairs' next key word (the permutation so far picks the row).
 */
export function sortShaders(types: readonly ScalarType[], keys: readonly number[]): KernelShaders {
  const width = rowWords(types);
  const keyWords = sortKeyWords(types, keys);
  // The radix passes take the row width, the key words and where the rows' count lies as uniforms, not constants:
  // their WGSL depends only on whether rows are one word, so the sorts of all tables share their pipelines (a
  // cold compile cost ~66 ms of a TPC-H load's wall time per pipeline on the H200).
  // Each thread ORs its rows' key words XOR row 0's and counts their digits in workgroup counters; then one
  // workgroup atomic per thread and key word, and one global atomic per nonzero counter.
  const radixCount = `${atomicBinding(atomicBinding(header('radixCount', ['inp', 'mask', 'hist'], 8), 'mask'), 'hist')}
const KC: u32 = ${RADIX_COUNT_WORDS}u;
const WINDOWS: u32 = ${RADIX_WINDOWS}u;
${tilePrelude(width)}
var<workgroup> part: array<atomic<u32>, KC>;
var<workgroup> h: array<atomic<u32>, KC * WINDOWS * RADIX>;

@compute @workgroup_size(WG)
fn main(@builtin(local_invocation_index) lid: u32, @builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
  let n = u[0].x;
  let k0 = u[0].y;
  let blocks = u[0].z;
  let per = u[0].w;
  let W = u[1].x;
  let kc = u[1].y;
  let blk = wid.x + wid.y * nwg.x;
  if (blk >= blocks) { return; }
  let end = min(n, (blk + 1u) * per * TILE);
  var x: array<u32, KC>;
  for (var p = blk * per * TILE + lid; p < end; p = p + WG) {
    for (var j = 0u; j < kc; j = j + 1u) {
      let o = u[2][j];
      let v = inp[p * W + o];
      x[j] = x[j] | (v ^ inp[o]);
      for (var w = 0u; w < WINDOWS; w = w + 1u) { atomicAdd(&h[(j * WINDOWS + w) * RADIX + digitOf(v, 8u * w)], 1u); }
    }
  }
  for (var j = 0u; j < kc; j = j + 1u) {
    if (x[j] != 0u) { atomicOr(&part[j], x[j]); }
  }
  workgroupBarrier();
  for (var j = lid; j < kc; j = j + WG) {
    let v = atomicLoad(&part[j]);
    if (v != 0u) { atomicOr(&mask[k0 + j], v); }
  }
  for (var c = lid; c < kc * WINDOWS * RADIX; c = c + WG) {
    let v = atomicLoad(&h[c]);
    if (v != 0u) { atomicAdd(&hist[k0 * WINDOWS * RADIX + c], v); }
  }
}
`;

  // Where a digit pass reads an item's key: word kp of each pair, or word off of each row (one-word rows: the key).
  const keyOf = (q: string): string => (width === 1 ? `src[${q}]` : `select(src[2u * ${q} + kp], src[${q} * u[2].x + off], fromRows)`);
  const keyAt =
    width === 1
      ? ''
      : `  let kp = u[1].x;
  let fromRows = u[1].y == 1u;
  let off = u[1].z;
`;
  // For CPU adapters, whose digit passes find their statuses published already (runtime radix-sort.ts says why):
  // each tile's digit counts, then every tile's prefixes, one thread per digit walking the tiles.
  const radixTiles = `${atomicBinding(header('radixTiles', ['src', 'state'], 6), 'state')}
${tilePrelude(width)}const HEAD: u32 = ${RADIX_STATE_HEAD}u;
const AGGREGATE: u32 = 0x40000000u;
var<workgroup> h: array<atomic<u32>, RADIX>;

@compute @workgroup_size(WG)
fn main(@builtin(local_invocation_index) lid: u32, @builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
  let n = u[0].x;
  let shift = u[0].y;
${keyAt}  let t = wid.x + wid.y * nwg.x;
  let base = t * TILE;
  if (base >= n) { return; }
  for (var k = 0u; k < ITEMS; k = k + 1u) {
    let p = base + k * WG + lid;
    if (p < n) { atomicAdd(&h[digitOf(${keyOf('p')}, shift)], 1u); }
  }
  workgroupBarrier();
  let head = u[0].w + HEAD;
  for (var d = lid; d < RADIX; d = d + WG) { atomicStore(&state[head + t * RADIX + d], AGGREGATE | atomicLoad(&h[d])); }
}
`;
  const radixTilePrefix = `${header('radixTilePrefix', ['hist', 'state'])}
${tilePrelude(width)}const HEAD: u32 = ${RADIX_STATE_HEAD}u;
const PREFIX: u32 = 0x80000000u;
const COUNT: u32 = 0x3fffffffu;
${threadMain(`  let d = i;
  if (d >= RADIX) { return; }
  let n = u[0].x;
  let counts = u[0].z;
  var run = 0u;
  for (var e = 0u; e < d; e = e + 1u) { run = run + hist[counts + e]; }
  for (var t = 0u; t * TILE < n; t = t + 1u) {
    let at = u[0].w + HEAD + t * RADIX + d;
    run = run + (state[at] & COUNT);
    state[at] = PREFIX | run;
  }`)}`;

  const radixKeys = `${header('radixKeys', ['inp', 'pairs'])}
${threadMain(`  if (i >= u[0].x) { return; }
  pairs[2u * i] = inp[pairs[2u * i + 1u] * u[0].z + u[0].y];`)}`;

  /**
   * The digit pass: `pairs` from pairs to pairs, `rows` (the last pass of index pairs) from pairs to the rows their
   * indices pick, `keys` (one-word rows) from keys to keys. A tile item takes S words of workgroup memory: the key,
   * then (pairs) the other word.
   */
  const radixSweep = (subgroups: boolean, mode: 'pairs' | 'rows' | 'keys'): string => {
    const scan = workgroupScan(subgroups);
    const pairs = mode !== 'keys';
    // Writes item (key, val) at output position o.
    const write = {
      pairs: `dst[2u * o + kp] = key;
        dst[2u * o + 1u - kp] = val;`,
      rows: `let s = val * W;
        for (var w = 0u; w < W; w = w + 1u) { dst[o * W + w] = inp[s + w]; }`,
      keys: 'dst[o] = key;',
    }[mode];
    const bindings = atomicBinding(
      {
        pairs: header('radixSweep', ['src', 'hist', 'state', 'dst'], 6),
        rows: header('radixSweepRows', ['src', 'hist', 'inp', 'state', 'dst'], 6),
        keys: header('radixSweepKeys', ['src', 'hist', 'state', 'dst'], 6),
      }[mode],
      'state',
    );
    // Loads the item at input position q into the key (and val) of its current local order.
    const load = (q: string): string =>
      pairs
        ? `if (fromRows) { key = src[${q} * W + off]; val = ${q}; } else { key = src[2u * ${q} + kp]; val = src[2u * ${q} + 1u - kp]; }`
        : `key = src[${q}];`;
    // The tile ranked by two 4-bit counting rounds in workgroup memory (items k * WG + lid loaded into it), then
    // each digit's run found in the ranked tile.
    const nibbleRank = `  for (var d = lid; d < RADIX; d = d + WG) {
    first[d] = 0u;
    past[d] = 0u;
  }
  for (var k = 0u; k < ITEMS; k = k + 1u) {
    let p = k * WG + lid;
    if (p < count) {
      var key: u32;
${pairs ? '      var val: u32;\n' : ''}      ${load('(base + p)')}
      tile[S * p] = key;${pairs ? '\n      tile[S * p + 1u] = val;' : ''}
    }
  }
  workgroupBarrier();
  rankNibble(lid, shift, count, ${scan.sg});
  rankNibble(lid, shift + 4u, count, ${scan.sg});
  for (var k = 0u; k < ITEMS; k = k + 1u) {
    let p = k * WG + lid;
    if (p < count) {
      let d = digitOf(tile[S * p], shift);
      if (p == 0u || digitOf(tile[S * (p - 1u)], shift) != d) { first[d] = p; }
      if (p + 1u == count || digitOf(tile[S * (p + 1u)], shift) != d) { past[d] = p + 1u; }
    }
  }
`;
    // Subgroups of 32 to 128 invocations (the tile's warps; their digit counters fill the tile's memory, 8 * WG
    // words, until the items go there): warp w ranks its ITEMS * sgs consecutive items a round of sgs at a time,
    // each item's rank among the warp's items of its digit found from RADIX_BITS ballots (the lanes whose digit
    // matches, as Onesweep's match-any), the lowest such lane adding their count to the warp's counter; then the
    // counters scanned across warps and digits give each item's place in the tile.
    const ballotRank = `let w = lid / sgs;
for (var j = lid; j < (WG / 32u) * RADIX; j = j + WG) { tile[j] = 0u; }
workgroupBarrier();
let below = lanesBelow(sgi);
var keys: array<u32, ITEMS>;
${pairs ? 'var vals: array<u32, ITEMS>;\n' : ''}var rank: array<u32, ITEMS>;
for (var k = 0u; k < ITEMS; k = k + 1u) {
  let p = (w * ITEMS + k) * sgs + sgi;
  let live = p < count;
  var d = 0u;
  if (live) {
    var key: u32;
${pairs ? '    var val: u32;\n' : ''}    ${load('(base + p)')}
    keys[k] = key;${pairs ? '\n    vals[k] = val;' : ''}
    d = digitOf(key, shift);
  }
  var m = subgroupBallot(live);
  for (var b = 0u; b < ${RADIX_BITS}u; b = b + 1u) {
    let bit = ((d >> b) & 1u) != 0u;
    let v = subgroupBallot(bit);
    m = m & select(~v, v, bit);
  }
  let r = lanes(m & below);
  var old = 0u;
  if (live && r == 0u) {
    let a = w * RADIX + d;
    old = tile[a];
    tile[a] = old + lanes(m);
  }
  rank[k] = subgroupShuffle(old, lowestLane(m, sgs)) + r;
}
workgroupBarrier();
// Per digit: the warps' counters become their exclusive prefixes, the tile's count goes to past.
for (var d = lid; d < RADIX; d = d + WG) {
  var run = 0u;
  for (var v = 0u; v < WG / sgs; v = v + 1u) {
    let c = tile[v * RADIX + d];
    tile[v * RADIX + d] = run;
    run = run + c;
  }
  past[d] = run;
}
workgroupBarrier();
// Each thread's DPT digits, scanned across threads: each digit's first place in the tile.
var mine = 0u;
for (var j = 0u; j < DPT; j = j + 1u) {
  let d = lid * DPT + j;
  if (d < RADIX) { mine = mine + past[d]; }
}
scanSums(lid, mine, ${scan.sg});
var at = sums[lid] - mine;
for (var j = 0u; j < DPT; j = j + 1u) {
  let d = lid * DPT + j;
  if (d < RADIX) {
    let c = past[d];
    first[d] = at;
    past[d] = at + c;
    at = at + c;
  }
}
workgroupBarrier();
var pos: array<u32, ITEMS>;
for (var k = 0u; k < ITEMS; k = k + 1u) {
  if ((w * ITEMS + k) * sgs + sgi < count) {
    let d = digitOf(keys[k], shift);
    pos[k] = first[d] + tile[w * RADIX + d] + rank[k];
  }
}
workgroupBarrier();
for (var k = 0u; k < ITEMS; k = k + 1u) {
  if ((w * ITEMS + k) * sgs + sgi < count) {
    tile[S * pos[k]] = keys[k];${pairs ? '\n    tile[S * pos[k] + 1u] = vals[k];' : ''}
  }
}
workgroupBarrier();`;
    // Ballot helpers: lanes below lane l, lanes in a ballot, the lowest lane of a ballot (0 for none).
    const ballotHelpers = subgroups
      ? `var<workgroup> wide: u32;
override DPT: u32 = (RADIX + WG - 1u) / WG;
fn lanesBelow(l: u32) -> vec4<u32> {
  var m = vec4<u32>(0u);
  for (var c = 0u; c < 4u; c = c + 1u) {
    if (l >= 32u * c + 32u) { m[c] = 0xffffffffu; } else if (l > 32u * c) { m[c] = (1u << (l - 32u * c)) - 1u; }
  }
  return m;
}
fn lanes(m: vec4<u32>) -> u32 {
  let c = countOneBits(m);
  return c.x + c.y + c.z + c.w;
}
fn lowestLane(m: vec4<u32>, sgs: u32) -> u32 {
  var l = 128u;
  if (m.w != 0u) { l = 96u + countTrailingZeros(m.w); }
  if (m.z != 0u) { l = 64u + countTrailingZeros(m.z); }
  if (m.y != 0u) { l = 32u + countTrailingZeros(m.y); }
  if (m.x != 0u) { l = countTrailingZeros(m.x); }
  return select(0u, l, l < sgs);
}
`
      : '';
    return `${scan.enable}${bindings}
${tilePrelude(width)}const S: u32 = ${pairs ? 2 : 1}u;
const HEAD: u32 = ${RADIX_STATE_HEAD}u;
// Tile t's status of digit d, state[u0.w + HEAD + t * RADIX + d]: 0 until published, then AGGREGATE | the tile's items of
// digit d, then PREFIX | the output position past them (the items of digit d of tiles 0..t and of all smaller
// digits). Counts fit 30 bits (the host bounds n).
const AGGREGATE: u32 = 0x40000000u;
const PREFIX: u32 = 0x80000000u;
const COUNT: u32 = 0x3fffffffu;
// No varying bit in this pass's window (u1.w: 0 where the host planned only varying windows, else 1 + the word of
// hist holding the key word's varying bits, radixCount's mask): every key has the same digit, and the stable order is
// the current one.
fn constantWindow(shift: u32) -> bool { return u[1].w != 0u && digitOf(hist[u[1].w - 1u], shift) == 0u; }
var<workgroup> windowConstant: u32;
// The rows: u0.x, or where it is ROWS_IN_HIST the word u2.y of hist, after the key mask (a pending count the host
// copied there once for all of a sort's passes, not into each pass's uniforms).
const ROWS_IN_HIST: u32 = ${RADIX_ROWS_IN_HIST}u;
var<workgroup> sweepRows: u32;
// The tile's items in their current local order; during ranking, the 4-bit counters (8 * WG <= S * TILE).
var<workgroup> tile: array<u32, S * TILE>;
${scan.decls}// Local positions of the first item of each digit and past its last once the tile is sorted (equal: none).
var<workgroup> first: array<u32, RADIX>;
var<workgroup> past: array<u32, RADIX>;
// Output position of the tile's first item of each digit.
var<workgroup> next: array<u32, RADIX>;
var<workgroup> tileId: u32;
${ballotHelpers}
// Stable local sort of the first \`count\` items of the tile by the 4 key bits at \`shift\`. Thread lid owns
// items lid * ITEMS.. in order; counters[d][lid] (digit-major, digits d and d + 8 packed as 16-bit halves
// of one word) are scanned in (digit, thread) order, which is each item's rank among equal digits.
fn rankNibble(lid: u32, shift: u32, count: u32, sg: vec2<u32>) {
  var key: array<u32, ITEMS>;
${pairs ? '  var val: array<u32, ITEMS>;\n' : ''}  var sub: array<u32, ITEMS>;
  for (var k = 0u; k < ITEMS; k = k + 1u) {
    let p = lid * ITEMS + k;
    if (p < count) { key[k] = tile[S * p];${pairs ? ' val[k] = tile[S * p + 1u];' : ''} }
  }
  workgroupBarrier();
  for (var j = 0u; j < 8u; j = j + 1u) { tile[j * WG + lid] = 0u; }
  for (var k = 0u; k < ITEMS; k = k + 1u) {
    if (lid * ITEMS + k < count) {
      let d = (key[k] >> shift) & 15u;
      let a = (d & 7u) * WG + lid;
      let s = (d >> 3u) * 16u;
      let c = tile[a];
      sub[k] = (c >> s) & 0xffffu;
      tile[a] = c + (1u << s);
    }
  }
  workgroupBarrier();
  // Exclusive scan of the 8 * WG packed counters: 8 consecutive per thread, then across threads.
  var run = 0u;
  for (var j = 0u; j < 8u; j = j + 1u) {
    let v = tile[lid * 8u + j];
    tile[lid * 8u + j] = run;
    run = run + v;
  }
  scanSums(lid, run, sg);
  let before = sums[lid] - run;
  for (var j = 0u; j < 8u; j = j + 1u) { tile[lid * 8u + j] = tile[lid * 8u + j] + before; }
  // Items with digits 0..7 (the low halves' total) come before those with digits 8..15.
  let low = sums[WG - 1u] & 0xffffu;
  workgroupBarrier();
  var pos: array<u32, ITEMS>;
  for (var k = 0u; k < ITEMS; k = k + 1u) {
    if (lid * ITEMS + k < count) {
      let d = (key[k] >> shift) & 15u;
      let s = (d >> 3u) * 16u;
      pos[k] = ((tile[(d & 7u) * WG + lid] >> s) & 0xffffu) + select(0u, low, d >= 8u) + sub[k];
    }
  }
  workgroupBarrier();
  for (var k = 0u; k < ITEMS; k = k + 1u) {
    if (lid * ITEMS + k < count) {
      tile[S * pos[k]] = key[k];${pairs ? '\n      tile[S * pos[k] + 1u] = val[k];' : ''}
    }
  }
  workgroupBarrier();
}

@compute @workgroup_size(WG)
fn main(@builtin(local_invocation_index) lid: u32${scan.builtins}) {
  // Tiles in the order workgroups start: a tile waits only on tiles before it, which have started, so the look-back
  // makes progress wherever started workgroups run to completion.
  if (lid == 0u) {
    tileId = atomicAdd(&state[u[0].w], 1u);
    sweepRows = select(u[0].x, hist[u[2].y], u[0].x == ROWS_IN_HIST);
  }
  // Words of a row (pairs read from rows, or rows written).
  let W = u[2].x;
  let t = workgroupUniformLoad(&tileId);
  let n = workgroupUniformLoad(&sweepRows);
  let shift = u[0].y;
  // This window's global digit counts (radixCount's).
  let counts = u[0].z;
  let head = u[0].w + HEAD;
${
  pairs
    ? `  let kp = u[1].x;
  let fromRows = u[1].y == 1u;
  let off = u[1].z;
`
    : ''
}  let base = t * TILE;
  // The grid covers the host's bound on n: tiles past the rows have nothing to do, and no tile waits on them.
  if (base >= n) { return; }
  let count = min(TILE, n - base);
  if (lid == 0u) { windowConstant = select(0u, 1u, constantWindow(shift)); }
  if (workgroupUniformLoad(&windowConstant) == 1u) {
    // The whole workgroup copies its tile's items in place.
    for (var k = 0u; k < ITEMS; k = k + 1u) {
      let p = k * WG + lid;
      if (p < count) {
        var key: u32;
${pairs ? '        var val: u32;\n' : ''}        ${load('(base + p)')}
        let o = base + p;
        ${write}
      }
    }
    return;
  }
${subgroups ? `  if (lid == 0u) { wide = select(0u, 1u, sgs >= 32u && sgs <= 128u); }
  if (workgroupUniformLoad(&wide) == 1u) {
${ballotRank.replace(/^/gm, '  ')}
  } else {
${nibbleRank.replace(/^/gm, '  ')}
  }
` : nibbleRank}  if (t == 0u && lid == 0u) {
    // Tile 0 starts each digit's run where the global counts of the smaller digits end.
    var run = 0u;
    for (var d = 0u; d < RADIX; d = d + 1u) {
      next[d] = run;
      run = run + hist[counts + d];
    }
  }
  workgroupBarrier();
  // The counts go out before any look-back, so that the tiles after this one wait on them as little as possible.
  for (var d = lid; d < RADIX; d = d + WG) {
    let c = past[d] - first[d];
    atomicStore(&state[head + t * RADIX + d], select(AGGREGATE | c, PREFIX | (next[d] + c), t == 0u));
  }
  if (t > 0u) {
    // One thread per digit walks back over the tiles before, adding their counts up to the first prefix.
    for (var d = lid; d < RADIX; d = d + WG) {
      var before = 0u;
      var k = t;
      loop {
        // 0: not published yet, read it again.
        let s = atomicLoad(&state[head + (k - 1u) * RADIX + d]);
        if (s != 0u) {
          before = before + (s & COUNT);
          if ((s & PREFIX) != 0u) { break; }
          k = k - 1u;
        }
      }
      atomicStore(&state[head + t * RADIX + d], PREFIX | (before + past[d] - first[d]));
      next[d] = before;
    }
  }
  workgroupBarrier();
  for (var k = 0u; k < ITEMS; k = k + 1u) {
    let p = k * WG + lid;
    if (p < count) {
      let key = tile[S * p];
${pairs ? '      let val = tile[S * p + 1u];\n' : ''}      let d = digitOf(key, shift);
      let o = next[d] + p - first[d];
      ${write}
    }
  }
}
`;
  };

  // Only the passes the row width uses: keys alone (one word), pairs (two words), or index pairs.
  const sweeps: KernelShaders =
    width === 1
      ? { radixSweepKeys: radixSweep(false, 'keys'), [`radixSweepKeys${SUBGROUP_VARIANT}`]: radixSweep(true, 'keys') }
      : {
          radixSweep: radixSweep(false, 'pairs'),
          [`radixSweep${SUBGROUP_VARIANT}`]: radixSweep(true, 'pairs'),
          ...(width > 2 ? { radixKeys, radixSweepRows: radixSweep(false, 'rows'), [`radixSweepRows${SUBGROUP_VARIANT}`]: radixSweep(true, 'rows') } : {}),
        };
  // Few rows (runtime kernels/sort.ts): rankSort, or sortTiles then mergeRanks passes; all compare whole keys.
  const small: KernelShaders =
    keyWords.length > 0 && keyWords.length <= RANK_SORT_KEY_WORDS ? { rankSort: rankSort(width, keyWords), sortTiles: sortTiles(width, keyWords), mergeRanks: mergeRanks(width, keyWords) } : {};
  return { radixCount, radixTiles, radixTilePrefix, ...sweeps, ...small };
}

/** Key words up to which a sort has its few-rows passes (rankSort, sortTiles, mergeRanks: whole keys compared). */
const RANK_SORT_KEY_WORDS = 16;

/**
 * rankSort: each row's rank is the rows that go before it (smaller key words, or equal ones and a smaller index),
 * counted by P = u0.y threads (a slice of the other rows each; WG / P rows a workgroup, P a power of two up to 32
 * that the host picks so that small sorts still fill the device), then its row is written there. The key words of
 * RANK_TILE rows at a time are staged in workgroup memory by all threads (those past n too: the barriers need
 * every thread).
 */
function rankSort(width: number, keyWords: readonly number[]): string {
  const rank = rankCount(
    'rankSort',
    width,
    keyWords.map((w) => `inp[at + ${w}u]`),
    keyWords.map((w) => `inp[src + ${w}u]`),
  );
  return `${rank.head}
${rank.body}
  if (live) {
    let to = counts[lid - s] * RW;
    for (var w = s; w < RW; w = w + P) { out[to + w] = inp[at + w]; }
  }
}
`;
}

/**
 * What rankSort and a top-k's topkRank share: the pass `name` over rows of `width` words (RW) up to row i's rank (the
 * rows with smaller key words, or equal ones and a smaller index) counted by P threads a row, a slice of the other
 * rows each, the key words of RANK_TILE rows at a time staged in workgroup memory by all threads (those past n too:
 * the barriers need every thread); after `body` counts[lid - s] holds it. `mine`: the row's key words (row offset
 * `at`); `staged`: row `src`'s. The caller writes the row and closes main.
 */
export function rankCount(name: 'rankSort' | 'topkRank', width: number, mine: readonly string[], staged: readonly string[]): { head: string; body: string } {
  const K = staged.length;
  // Branch-free lexicographic comparison, unrolled: the row's key words stay in registers (m<k>), and no thread of
  // a warp waits on another's early exit.
  const compare = staged.map((_, k) => `        let a${k} = keys[b + ${k}u];\n        lt = lt || (eq && a${k} < m${k});\n        eq = eq && a${k} == m${k};`).join('\n');
  const head = `${header(name, ['inp', 'out'])}
const RW: u32 = ${width}u;
const K: u32 = ${K}u;
const RANK_TILE: u32 = 128u;
var<workgroup> keys: array<u32, ${128 * K}>;
// Each thread's count, then (at the row's first thread) the row's rank.
var<workgroup> counts: array<u32, WG>;

@compute @workgroup_size(WG)
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(local_invocation_index) lid: u32, @builtin(num_workgroups) nwg: vec3<u32>) {
  let n = u[0].x;
  let P = u[0].y;
  let s = lid % P;
  let i = (wid.x + wid.y * nwg.x) * (WG / P) + lid / P;
  let live = i < n;
  // A thread past n reads row 0 (the buffer has room for it) and writes nothing.
  let at = select(0u, i, live) * RW;`;
  const body = `${mine.map((x, k) => `  let m${k} = ${x};`).join('\n')}
  var rank = 0u;
  for (var t = 0u; t < n; t = t + RANK_TILE) {
    workgroupBarrier();
    for (var r = lid; r < RANK_TILE; r = r + WG) {
      if (t + r < n) {
        let src = (t + r) * RW;
${staged.map((x, k) => `        keys[r * K + ${k}u] = ${x};`).join('\n')}
      }
    }
    workgroupBarrier();
    if (live) {
      let m = min(RANK_TILE, n - t);
      for (var j = s; j < m; j = j + P) {
        let b = j * K;
        var lt = false;
        var eq = true;
${compare}
        if (lt || (eq && t + j < i)) { rank = rank + 1u; }
      }
    }
  }
  counts[lid] = rank;
  workgroupBarrier();
  if (live && s == 0u) {
    for (var q = 1u; q < P; q = q + 1u) { rank = rank + counts[lid + q]; }
    counts[lid] = rank;
  }
  workgroupBarrier();`;
  return { head, body };
}

/** Rows of a sortTiles tile per thread (a tile is SORT_TILE_ITEMS * WG rows). */
export const SORT_TILE_ITEMS = 4;

/**
 * sortTiles: each workgroup sorts its tile of TILE = SORT_TILE_ITEMS * WG rows of the input into the same rows of
 * the output (the sorted runs mergeRanks starts from), stably, by a merge sort of the tile's local row indices in
 * workgroup memory (two arrays of TILE words, the passes alternating between them; the key words are read from the
 * rows, which stay in cache): each thread sorts its ITEMS consecutive rows by insertion, then log2(WG) merge passes
 * of pairs of runs, a thread per ITEMS output positions placed by the merge path's diagonal search over its pair.
 * Rows are compared a few dozen times each, where ranking a row within a tile of T rows compares it T times (a
 * rankSort of 4,739 nine-word rows, 22M comparisons, took 0.16 ms of the H100). The last tile may be short.
 */
function sortTiles(width: number, keyWords: readonly number[]): string {
  const pairs = keyWords.map((off): [string, string] => [`inp[a * W + ${off}u]`, `inp[b * W + ${off}u]`]);
  return `${header('sortTiles', ['inp', 'out'])}
const W: u32 = ${width}u;
const ITEMS: u32 = ${SORT_TILE_ITEMS}u;
override TILE: u32 = ITEMS * WG;
var<workgroup> ia: array<u32, TILE>;
var<workgroup> ib: array<u32, TILE>;
${lexCompareFn('cmpRows', pairs)}
fn at(fromA: bool, p: u32) -> u32 {
  if (fromA) { return ia[p]; }
  return ib[p];
}

@compute @workgroup_size(WG)
fn main(@builtin(local_invocation_index) lid: u32, @builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
  let n = u[0].x;
  let base = (wid.x + wid.y * nwg.x) * TILE;
  // Uniform across the workgroup (its barriers need that).
  if (base >= n) { return; }
  let count = min(TILE, n - base);
  // The thread's ITEMS rows, sorted by insertion (stable: a row goes after equal ones).
  let f = lid * ITEMS;
  var loc: array<u32, ITEMS>;
  var m = 0u;
  for (var k = 0u; k < ITEMS; k = k + 1u) {
    if (f + k < count) {
      var j = m;
      loop {
        if (j == 0u || cmpRows(base + loc[j - 1u], base + f + k) <= 0) { break; }
        loc[j] = loc[j - 1u];
        j = j - 1u;
      }
      loc[j] = f + k;
      m = m + 1u;
    }
  }
  for (var k = 0u; k < m; k = k + 1u) { ia[f + k] = loc[k]; }
  workgroupBarrier();
  var fromA = true;
  for (var L = ITEMS; L < TILE; L = L * 2u) {
    let d = lid * ITEMS;
    if (d < count) {
      // Runs [s, s + L) and [s + L, s + 2L) of the tile; d is their merge's output position dl.
      let s = d - d % (2u * L);
      let na = min(L, count - s);
      let nb = min(L, count - s - na);
      let dl = d - s;
      var lo = select(0u, dl - nb, dl > nb);
      var hi = min(dl, na);
      while (lo < hi) {
        let mid = lo + (hi - lo) / 2u;
        if (cmpRows(base + at(fromA, s + mid), base + at(fromA, s + L + dl - 1u - mid)) <= 0) { lo = mid + 1u; } else { hi = mid; }
      }
      var a = lo;
      var b = dl - lo;
      for (var o = dl; o < min(dl + ITEMS, na + nb); o = o + 1u) {
        var r: u32;
        if (b >= nb || (a < na && cmpRows(base + at(fromA, s + a), base + at(fromA, s + L + b)) <= 0)) {
          r = at(fromA, s + a);
          a = a + 1u;
        } else {
          r = at(fromA, s + L + b);
          b = b + 1u;
        }
        if (fromA) { ib[s + o] = r; } else { ia[s + o] = r; }
      }
    }
    workgroupBarrier();
    fromA = !fromA;
  }
  // Neighbouring threads copy neighbouring rows.
  for (var p = lid; p < count; p = p + WG) {
    let r = base + at(fromA, p);
    for (var w = 0u; w < W; w = w + 1u) { out[(base + p) * W + w] = inp[r * W + w]; }
  }
}
`;
}
/** Sorted runs a mergeRanks pass merges into one. */
export const MERGE_RANK_FAN = 4;

/**
 * mergeRanks, a pass of the merge sort after sortTiles: the rows of `src` are sorted runs of L = u0.y rows (the last
 * one shorter), and each group of FAN consecutive runs is merged into the same rows of dst, a thread per row. A row's
 * place is its place in its own run plus, for each other run of its group, the rows there that go before it (equal
 * keys: those of earlier runs, so stable), found by binary searches done in lockstep so that their loads overlap.
 * Against a merge of pairs placed by a merge path search per 8 rows (a pass per doubling), four-way passes took
 * 0.13-0.24 ms on the H200 to sort 2^17 rows of one to five key words where the pairs took 0.16-0.28 ms.
 */
function mergeRanks(width: number, keyWords: readonly number[]): string {
  const words = keyWords.map((_, k) => k);
  const compare = words.map((k) => `  c = cmpU(src[b * W + ${keyWords[k]}u], m${k});\n  if (c != 0) { return c; }`).join('\n');
  return `${header('mergeRanks', ['src', 'dst'])}
const W: u32 = ${width}u;
const FAN: u32 = ${MERGE_RANK_FAN}u;
${words.map((k) => `var<private> m${k}: u32;`).join('\n')}
// Row b's key against this thread's row's (in registers).
fn cmpMine(b: u32) -> i32 {
  var c = 0;
${compare}
  return c;
}
${threadMain(`  let n = u[0].x;
  let L = u[0].y;
  if (i >= n) { return; }
  let g0 = i - i % (FAN * L);
  let r = (i - g0) / L;
${words.map((k) => `  m${k} = src[i * W + ${keyWords[k]}u];`).join('\n')}
  var lo: array<u32, FAN>;
  var hi: array<u32, FAN>;
  for (var j = 0u; j < FAN; j = j + 1u) {
    let s = g0 + j * L;
    lo[j] = 0u;
    hi[j] = select(0u, min(L, n - s), j != r && s < n);
  }
  loop {
    var busy = false;
    for (var j = 0u; j < FAN; j = j + 1u) {
      if (lo[j] < hi[j]) {
        busy = true;
        let mid = lo[j] + (hi[j] - lo[j]) / 2u;
        let c = cmpMine(g0 + j * L + mid);
        // Rows of earlier runs go before equal keys, rows of later runs after them.
        if (c < 0 || (c == 0 && j < r)) { lo[j] = mid + 1u; } else { hi[j] = mid; }
      }
    }
    if (!busy) { break; }
  }
  var o = i - r * L;
  for (var j = 0u; j < FAN; j = j + 1u) { o = o + lo[j]; }
  for (var k = 0u; k < W; k = k + 1u) { dst[o * W + k] = src[i * W + k]; }`)}`;
}
