import { rowWords, wordsOf } from '@vixen/queryplan';
import type { ScalarType } from '@vixen/queryplan';
import { atomicBinding, header, SUBGROUP_VARIANT, threadMain, workgroupScan } from '../wgsl.js';
import type { KernelShaders } from '../passes.js';

/** Bits of one radix digit (one global scatter pass). */
export const RADIX_BITS = 8;

/**
 * Items per thread of a radix tile (a tile is radixItems * WG items) for rows of `width` words: one-word rows
 * are sorted as bare keys, whose tile of 8 per thread takes the workgroup memory of 4 (key, index) pairs.
 */
export function radixItems(width: number): number {
  return width === 1 ? 8 : 4;
}

/** Row word offsets of the key words, most significant first (the words of `keys` columns in order). */
export function sortKeyWords(types: readonly ScalarType[], keys: readonly number[]): number[] {
  return keys.flatMap((k) => {
    if (k < 0 || k >= types.length) throw new Error(`internal: sort key ${k} out of range (${types.length} columns)`);
    const base = types.slice(0, k).reduce((n, t) => n + wordsOf(t), 0);
    return Array.from({ length: wordsOf(types[k]!) }, (_, w) => base + w);
  });
}

/**
 * The radix passes work per block: workgroup `blk` owns the `per` consecutive tiles blk * per.. (a tile is
 * TILE = radixItems(width) * WG items), so the digit-count table has one column per block, not per tile.
 */
const tilePrelude = (width: number): string => `const ITEMS: u32 = ${radixItems(width)}u;
override TILE: u32 = ITEMS * WG;
const RADIX: u32 = ${2 ** RADIX_BITS}u;
fn digitOf(key: u32, shift: u32) -> u32 { return (key >> shift) & (RADIX - 1u); }
`;
/** For the digit passes: u1.w is the key word's varying bits (radixMask's word). */
const windowTest = `// No varying bit in this pass's window: every key has the same digit, and the stable order is the current one.
fn constantWindow(shift: u32) -> bool { return digitOf(u[1].w, shift) == 0u; }
`;

const blockMain = (body: string, builtins = ''): string => `
@compute @workgroup_size(WG)
fn main(@builtin(local_invocation_index) lid: u32, @builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>${builtins}) {
  let n = u[0].x;
  let shift = u[0].y;
  let blocks = u[0].z;
  let per = u[0].w;
  let blk = wid.x + wid.y * nwg.x;
  if (blk >= blocks) { return; }
${body}
}
`;

/**
 * LSD radix sort, stable, in unsigned lexicographic order of the key words. Items are (key word, row index)
 * pairs whose first digit pass reads the key words from the rows and whose last digit pass writes the rows the
 * indices pick; two-word rows are sorted as the pairs themselves (the key word at position kp = u1.x of each
 * pair, the other word carried) and one-word rows as bare keys, neither with a pair-making pass or a row gather.
 * radixMask first finds which key bits vary (OR of every key word XOR row 0's), counting the first digit
 * pass's digits in the same read; the host runs one digit pass per 8-bit window, least significant first, and
 * the device copies that word of the mask into each pass's uniform (u1.w), so a window with no varying bits is
 * a plain copy, with no host round trip: radixKeys loads the pairs' key word (the permutation so far picks the row), then per digit a block
 * histogram, a global exclusive scan of the digit-major counts, and a scatter that walks the block's tiles in
 * order, ranks each tile stably in workgroup memory (two 4-bit counting rounds, no atomics) and writes runs
 * of equal digits contiguously.
 */
export function sortShaders(types: readonly ScalarType[], keys: readonly number[]): KernelShaders {
  const width = rowWords(types);
  const keyWords = sortKeyWords(types, keys);
  const K = Math.max(1, keyWords.length);
  // Each thread ORs its rows' key words XOR row 0's, and counts the first digit pass's digits (the last key
  // word's at shift 0); then one workgroup atomic per thread and key word, one global one per workgroup.
  const orWords = keyWords.map((off, k) => `    x[${k}] = x[${k}] | (inp[b + ${off}u] ^ inp[${off}u]);`).join('\n');
  const radixMask = `${atomicBinding(header('radixMask', ['inp', 'mask', 'hist']), 'mask')}
const W: u32 = ${width}u;
const K: u32 = ${K}u;
${tilePrelude(width)}
var<workgroup> part: array<atomic<u32>, K>;
var<workgroup> h: array<atomic<u32>, RADIX>;
${blockMain(`  let end = min(n, (blk + 1u) * per * TILE);
  var x: array<u32, K>;
  for (var p = blk * per * TILE + lid; p < end; p = p + WG) {
    let b = p * W;
${orWords}
    atomicAdd(&h[digitOf(inp[b + ${keyWords[keyWords.length - 1] ?? 0}u], 0u)], 1u);
  }
  for (var k = 0u; k < K; k = k + 1u) {
    if (x[k] != 0u) { atomicOr(&part[k], x[k]); }
  }
  workgroupBarrier();
  for (var k = lid; k < K; k = k + WG) {
    let v = atomicLoad(&part[k]);
    if (v != 0u) { atomicOr(&mask[k], v); }
  }
  for (var d = lid; d < RADIX; d = d + WG) { hist[d * blocks + blk] = atomicLoad(&h[d]); }`)}`;

  const radixKeys = `${header('radixKeys', ['inp', 'pairs'])}
const W: u32 = ${width}u;
${threadMain(`  if (i >= u[0].x) { return; }
  pairs[2u * i] = inp[pairs[2u * i + 1u] * W + u[0].y];`)}`;

  // Where the key word is: word kp of each pair, or word off of each row (one-word rows: the key itself).
  const histKey =
    width === 1
      ? ''
      : `  let kp = u[1].x;
  let fromRows = u[1].y == 1u;
  let off = u[1].z;
`;
  const radixHist = `${header('radixHist', ['pairs', 'hist'], 1)}
const W: u32 = ${width}u;
${tilePrelude(width)}${windowTest}
var<workgroup> h: array<atomic<u32>, RADIX>;
${blockMain(`  if (constantWindow(shift)) { return; }
  let end = min(n, (blk + 1u) * per * TILE);
${histKey}  for (var p = blk * per * TILE + lid; p < end; p = p + WG) {
    ${histKey ? 'var key: u32;\n    if (fromRows) { key = pairs[p * W + off]; } else { key = pairs[2u * p + kp]; }' : 'let key = pairs[p];'}
    atomicAdd(&h[digitOf(key, shift)], 1u);
  }
  workgroupBarrier();
  for (var d = lid; d < RADIX; d = d + WG) { hist[d * blocks + blk] = atomicLoad(&h[d]); }`)}`;

  /**
   * The scatter of one digit pass: `pairs` from pairs to pairs, `rows` (the last pass of index pairs) from pairs
   * to the rows their indices pick, `keys` (one-word rows) from keys to keys. A tile item takes S words of
   * workgroup memory: the key, then (pairs) the other word.
   */
  const radixScatter = (subgroups: boolean, mode: 'pairs' | 'rows' | 'keys'): string => {
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
    const bindings = {
      pairs: header('radixScatter', ['src', 'offs', 'dst'], 1),
      rows: header('radixScatterRows', ['src', 'offs', 'inp', 'dst'], 1),
      keys: header('radixScatterKeys', ['src', 'offs', 'dst'], 1),
    }[mode];
    // Loads the item at input position q into the key (and val) of its current local order.
    const load = (q: string): string =>
      pairs
        ? `if (fromRows) { key = src[${q} * W + off]; val = ${q}; } else { key = src[2u * ${q} + kp]; val = src[2u * ${q} + 1u - kp]; }`
        : `key = src[${q}];`;
    return `${scan.enable}${bindings}
const W: u32 = ${width}u;
${tilePrelude(width)}${windowTest}const S: u32 = ${pairs ? 2 : 1}u;
// The tile's items in their current local order; during ranking, the 4-bit counters (8 * WG <= S * TILE).
var<workgroup> tile: array<u32, S * TILE>;
${scan.decls}// Local position of the first item of each digit once the tile is sorted.
var<workgroup> first: array<u32, RADIX>;
// Output position of the block's next item of each digit.
var<workgroup> next: array<u32, RADIX>;

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
      let d = select((key[k] >> shift) & 15u, 0u, shift >= 32u);
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
      let d = select((key[k] >> shift) & 15u, 0u, shift >= 32u);
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
${blockMain(`${
      pairs
        ? `  let kp = u[1].x;
  let fromRows = u[1].y == 1u;
  let off = u[1].z;
`
        : ''
    }  if (constantWindow(shift)) {
    // Uniform (from the uniform block): the whole workgroup copies its block's items in place.
    let end = min(n, (blk + 1u) * per * TILE);
    for (var p = blk * per * TILE + lid; p < end; p = p + WG) {
      var key: u32;
${pairs ? '      var val: u32;\n' : ''}      ${load('p')}
      let o = p;
      ${write}
    }
    return;
  }
  for (var d = lid; d < RADIX; d = d + WG) { next[d] = offs[d * blocks + blk]; }
  for (var tt = 0u; tt < per; tt = tt + 1u) {
    let base = (blk * per + tt) * TILE;
    if (base >= n) { break; }
    let count = min(TILE, n - base);
    for (var k = 0u; k < ITEMS; k = k + 1u) {
      let p = k * WG + lid;
      if (p < count) {
        var key: u32;
${pairs ? '        var val: u32;\n' : ''}        ${load('(base + p)')}
        tile[S * p] = key;${pairs ? '\n        tile[S * p + 1u] = val;' : ''}
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
      }
    }
    workgroupBarrier();
    for (var k = 0u; k < ITEMS; k = k + 1u) {
      let p = k * WG + lid;
      if (p < count) {
        let key = tile[S * p];
${pairs ? '        let val = tile[S * p + 1u];\n' : ''}        let o = next[digitOf(key, shift)] + p - first[digitOf(key, shift)];
        ${write}
      }
    }
    workgroupBarrier();
    // The last item of each digit's run advances that digit's output position past the run.
    for (var k = 0u; k < ITEMS; k = k + 1u) {
      let p = k * WG + lid;
      if (p < count) {
        let d = digitOf(tile[S * p], shift);
        if (p + 1u == count || digitOf(tile[S * (p + 1u)], shift) != d) { next[d] = next[d] + p + 1u - first[d]; }
      }
    }
    workgroupBarrier();
  }`, scan.builtins)}`;
  };

  // Only the passes the row width uses: keys alone (one word), pairs (two words), or index pairs.
  const scatters: KernelShaders =
    width === 1
      ? { radixScatterKeys: radixScatter(false, 'keys'), [`radixScatterKeys${SUBGROUP_VARIANT}`]: radixScatter(true, 'keys') }
      : {
          radixScatter: radixScatter(false, 'pairs'),
          [`radixScatter${SUBGROUP_VARIANT}`]: radixScatter(true, 'pairs'),
          ...(width > 2 ? { radixKeys, radixScatterRows: radixScatter(false, 'rows'), [`radixScatterRows${SUBGROUP_VARIANT}`]: radixScatter(true, 'rows') } : {}),
        };
  return { radixMask, radixHist, ...scatters, ...(keyWords.length > 0 && keyWords.length <= RANK_SORT_KEY_WORDS ? { rankSort: rankSort(width, keyWords) } : {}) };
}

/** Key words up to which a sort has a rankSort pass (each thread holds its row's key words in registers). */
const RANK_SORT_KEY_WORDS = 16;

/**
 * rankSort: each row's rank is the rows that go before it (smaller key words, or equal ones and a smaller index),
 * counted by P = u0.y threads (a slice of the other rows each; WG / P rows a workgroup, P a power of two up to 32
 * that the host picks so that small sorts still fill the device), then its row is written there. The key words of
 * RANK_TILE rows at a time are staged in workgroup memory by all threads (those past n too: the barriers need
 * every thread).
 */
function rankSort(width: number, keyWords: readonly number[]): string {
  const K = keyWords.length;
  const words = keyWords.map((_, k) => k);
  // Branch-free lexicographic comparison, unrolled: the row's key words stay in registers (m<k>), and no thread of
  // a warp waits on another's early exit.
  const compare = words.map((k) => `        let a${k} = keys[b + ${k}u];\n        lt = lt || (eq && a${k} < m${k});\n        eq = eq && a${k} == m${k};`).join('\n');
  return `${header('rankSort', ['inp', 'out'])}
const W: u32 = ${width}u;
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
  let at = select(0u, i, live) * W;
${words.map((k) => `  let m${k} = inp[at + ${keyWords[k]}u];`).join('\n')}
  var rank = 0u;
  for (var t = 0u; t < n; t = t + RANK_TILE) {
    workgroupBarrier();
    for (var r = lid; r < RANK_TILE; r = r + WG) {
      if (t + r < n) {
        let src = (t + r) * W;
${words.map((k) => `        keys[r * K + ${k}u] = inp[src + ${keyWords[k]}u];`).join('\n')}
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
  workgroupBarrier();
  if (live) {
    let to = counts[lid - s] * W;
    for (var w = s; w < W; w = w + P) { out[to + w] = inp[at + w]; }
  }
}
`;
}
