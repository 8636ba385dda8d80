import { rowWords, wordsOf } from '@vixen/queryplan';
import type { ScalarType } from '@vixen/queryplan';
import { atomicBinding, header, SUBGROUP_VARIANT, threadMain, workgroupScan } from '../wgsl.js';
import type { KernelShaders } from '../index.js';

/** Items per thread of a radix tile: a tile is RADIX_ITEMS * WG consecutive (key, index) pairs. */
export const RADIX_ITEMS = 4;
/** Bits of one radix digit (one global scatter pass). */
export const RADIX_BITS = 8;

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
 * TILE = RADIX_ITEMS * WG pairs), so the digit-count table has one column per block, not per tile.
 */
const tilePrelude = `const ITEMS: u32 = ${RADIX_ITEMS}u;
override TILE: u32 = ITEMS * WG;
const RADIX: u32 = ${2 ** RADIX_BITS}u;
fn digitOf(key: u32, shift: u32) -> u32 { return (key >> shift) & (RADIX - 1u); }
// The key word's varying bits (radixMask's word, u1.w) have none in this pass's window: every key has the same
// digit, and the stable order is the current one.
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
 * LSD radix sort of (key word, row index) pairs whose first digit pass reads the key words from the rows and
 * whose last digit pass writes the rows the indices pick; two-word
 * rows are sorted as the
 * pairs themselves (the key word at position kp = u1.x of each pair, the other word carried), with neither the
 * pair-making pass nor the row gather. Order: unsigned
 * lexicographic over the key words, stable. radixMask first finds which key bits vary (OR of every key word
 * XOR row 0's); the host runs one digit pass per 8-bit window, least significant first, and the device copies
 * that word of the mask into each pass's uniform (u1.w), so a window with no varying bits is a plain copy, with
 * no host round trip:
 * radixKeys loads the pairs' key word (the permutation so far picks the row), then per digit a block
 * histogram, a global exclusive scan of the digit-major counts, and a scatter that walks the block's tiles in
 * order, ranks each tile stably in workgroup memory (two 4-bit counting rounds, no atomics) and writes runs
 * of equal digits contiguously.
 */
export function sortShaders(types: readonly ScalarType[], keys: readonly number[]): KernelShaders {
  const width = rowWords(types);
  const keyWords = sortKeyWords(types, keys);
  const orWords = keyWords
    .map((off, k) => `    let x${k} = inp[b + ${off}u] ^ inp[${off}u];\n    if (x${k} != 0u) { atomicOr(&part[${k}], x${k}); }`)
    .join('\n');
  const K = Math.max(1, keyWords.length);
  const radixMask = `${atomicBinding(header('radixMask', ['inp', 'mask']), 'mask')}
const W: u32 = ${width}u;
const K: u32 = ${K}u;
var<workgroup> part: array<atomic<u32>, K>;

@compute @workgroup_size(WG)
fn main(@builtin(local_invocation_index) lid: u32, @builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
  let i = (wid.x + wid.y * nwg.x) * WG + lid;
  for (var k = lid; k < K; k = k + WG) { atomicStore(&part[k], 0u); }
  workgroupBarrier();
  if (i < u[0].x) {
    let b = i * W;
${orWords}
  }
  workgroupBarrier();
  for (var k = lid; k < K; k = k + WG) {
    let x = atomicLoad(&part[k]);
    if (x != 0u) { atomicOr(&mask[k], x); }
  }
}
`;

  const radixKeys = `${header('radixKeys', ['inp', 'pairs'])}
const W: u32 = ${width}u;
${threadMain(`  if (i >= u[0].x) { return; }
  pairs[2u * i] = inp[pairs[2u * i + 1u] * W + u[0].y];`)}`;

  const radixHist = `${header('radixHist', ['pairs', 'hist'], 1)}
const W: u32 = ${width}u;
${tilePrelude}
var<workgroup> h: array<atomic<u32>, RADIX>;
${blockMain(`  if (constantWindow(shift)) { return; }
  let end = min(n, (blk + 1u) * per * TILE);
  let kp = u[1].x;
  let fromRows = u[1].y == 1u;
  let off = u[1].z;
  for (var p = blk * per * TILE + lid; p < end; p = p + WG) {
    var key: u32;
    if (fromRows) { key = pairs[p * W + off]; } else { key = pairs[2u * p + kp]; }
    atomicAdd(&h[digitOf(key, shift)], 1u);
  }
  workgroupBarrier();
  for (var d = lid; d < RADIX; d = d + WG) { hist[d * blocks + blk] = atomicLoad(&h[d]); }`)}`;

  // The scatter writes pairs, or (the last digit pass of index pairs) the rows the pairs' indices pick.
  const radixScatter = (subgroups: boolean, rows: boolean): string => {
    const scan = workgroupScan(subgroups);
    // Writes pair (key, val) at output position o.
    const write = rows
      ? `let s = val * W;
        for (var w = 0u; w < W; w = w + 1u) { dst[o * W + w] = inp[s + w]; }`
      : `dst[2u * o + kp] = key;
        dst[2u * o + 1u - kp] = val;`;
    const bindings = rows ? header('radixScatterRows', ['src', 'offs', 'inp', 'dst'], 1) : header('radixScatter', ['src', 'offs', 'dst'], 1);
    return `${scan.enable}${bindings}
const W: u32 = ${width}u;
${tilePrelude}
// The tile as (key, index) pairs in its current local order; during ranking, the 4-bit counters.
var<workgroup> tile: array<u32, 2u * TILE>;
${scan.decls}// Local position of the first item of each digit once the tile is sorted.
var<workgroup> first: array<u32, RADIX>;
// Output position of the block's next pair of each digit.
var<workgroup> next: array<u32, RADIX>;

// Stable local sort of the first \`count\` pairs of the tile by the 4 key bits at \`shift\`. Thread lid owns
// items lid * ITEMS.. in order; counters[d][lid] (digit-major, digits d and d + 8 packed as 16-bit halves
// of one word) are scanned in (digit, thread) order, which is each item's rank among equal digits.
fn rankNibble(lid: u32, shift: u32, count: u32, sg: vec2<u32>) {
  var key: array<u32, ITEMS>;
  var val: array<u32, ITEMS>;
  var sub: array<u32, ITEMS>;
  for (var k = 0u; k < ITEMS; k = k + 1u) {
    let p = lid * ITEMS + k;
    if (p < count) { key[k] = tile[2u * p]; val[k] = tile[2u * p + 1u]; }
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
      tile[2u * pos[k]] = key[k];
      tile[2u * pos[k] + 1u] = val[k];
    }
  }
  workgroupBarrier();
}
${blockMain(`  let kp = u[1].x;
  let fromRows = u[1].y == 1u;
  let off = u[1].z;
  if (constantWindow(shift)) {
    // Uniform (from the uniform block): the whole workgroup copies its block's pairs in place.
    let end = min(n, (blk + 1u) * per * TILE);
    for (var p = blk * per * TILE + lid; p < end; p = p + WG) {
      var key: u32;
      var val: u32;
      if (fromRows) { key = src[p * W + off]; val = p; } else { key = src[2u * p + kp]; val = src[2u * p + 1u - kp]; }
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
        if (fromRows) {
          tile[2u * p] = src[(base + p) * W + off];
          tile[2u * p + 1u] = base + p;
        } else {
          tile[2u * p] = src[2u * (base + p) + kp];
          tile[2u * p + 1u] = src[2u * (base + p) + 1u - kp];
        }
      }
    }
    workgroupBarrier();
    rankNibble(lid, shift, count, ${scan.sg});
    rankNibble(lid, shift + 4u, count, ${scan.sg});
    for (var k = 0u; k < ITEMS; k = k + 1u) {
      let p = k * WG + lid;
      if (p < count) {
        let d = digitOf(tile[2u * p], shift);
        if (p == 0u || digitOf(tile[2u * p - 2u], shift) != d) { first[d] = p; }
      }
    }
    workgroupBarrier();
    for (var k = 0u; k < ITEMS; k = k + 1u) {
      let p = k * WG + lid;
      if (p < count) {
        let key = tile[2u * p];
        let val = tile[2u * p + 1u];
        let o = next[digitOf(key, shift)] + p - first[digitOf(key, shift)];
        ${write}
      }
    }
    workgroupBarrier();
    // The last item of each digit's run advances that digit's output position past the run.
    for (var k = 0u; k < ITEMS; k = k + 1u) {
      let p = k * WG + lid;
      if (p < count) {
        let d = digitOf(tile[2u * p], shift);
        if (p + 1u == count || digitOf(tile[2u * p + 2u], shift) != d) { next[d] = next[d] + p + 1u - first[d]; }
      }
    }
    workgroupBarrier();
  }`, scan.builtins)}`;
  };

  return {
    radixMask,
    radixKeys,
    radixHist,
    radixScatter: radixScatter(false, false),
    [`radixScatter${SUBGROUP_VARIANT}`]: radixScatter(true, false),
    radixScatterRows: radixScatter(false, true),
    [`radixScatterRows${SUBGROUP_VARIANT}`]: radixScatter(true, true),
  };
}
