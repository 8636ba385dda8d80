/**
 * Distinct byte strings sorted on the device (runtime gpu/string-sort.ts drives it), in the order of io's
 * compareBytes: a most-significant-digit refinement. Every string has a group rank, the position in the sorted order
 * of all strings (repeats included) of the first string sharing its bytes so far; a round radix sorts the strings of
 * groups not yet resolved by (rank, their next 7 bytes, how many bytes they have left up to 8) as rows
 * (rank, hi, lo, string) and splits each group where its sorted neighbours' keys differ:
 * - strSortNext writes each string's row with its key at a depth: every string's for the first round, the kept rows
 *   of a round for the next;
 * - strSortHeads flags each row whose key differs from the row before it, and a scan numbers the new groups;
 * - strSortStarts notes where each new group and each old group starts among the rows;
 * - strSortRefine gives each row its new group's rank (the old rank plus the new group's start within the old one),
 *   and resolves a string whose new group is itself alone or whose bytes ended (the group's strings are then equal):
 *   its rank is final, and the group's first row marks the rank as a distinct string's, naming itself its string;
 *   the others are kept, and a scan places them.
 * Once none is left, a scan of the marks numbers the distinct strings, and strSortDistinct turns each string's rank
 * into its distinct string's position and lists each distinct string's start and end (the bytes of one of its
 * strings, where the lists hold them: the host has those bytes, so none is gathered or read back).
 * Strings are bytes (little-endian in u32 words) with their spans (string s is bytes [spans[2s], spans[2s + 1])): lists
 * whose bytes the host uploaded apart lie at word boundaries, with gaps between them; a list whose bytes a device parse
 * gathered (and kept on the device) comes with its starts, which strSortSpans turns into spans. `ranks` holds each string's rank
 * (words [0, strings)), then per rank the string that marked it (words [strings, 2 strings)).
 */
import { SCAN_ADD, scanBlock } from '../scan.js';
import { header, SUBGROUP_VARIANT, threadMain } from '../wgsl.js';

/** Bytes of a string a round of the refinement sorts by. */
export const STRING_SORT_BYTES = 7;

const KEY = `
fn byteAt(p: u32) -> u32 {
  return (bytes[p >> 2u] >> ((p & 3u) * 8u)) & 0xffu;
}

// Bytes [depth, depth + 7) of string s, zero past its end, big-endian in two words, the second's low byte how many
// bytes it has from depth on, up to 8: a string that ends among them sorts before one that goes on with zero bytes,
// and two whose keys are equal and that end there are equal.
fn keyOf(s: u32, depth: u32) -> vec2<u32> {
  let p = spans[2u * s] + depth;
  let e = spans[2u * s + 1u];
  let left = select(0u, e - p, e > p);
  var hi = 0u;
  var lo = 0u;
  for (var k = 0u; k < 7u; k = k + 1u) {
    var b = 0u;
    if (k < left) { b = byteAt(p + k); }
    if (k < 4u) { hi = (hi << 8u) | b; } else { lo = (lo << 8u) | b; }
  }
  return vec2<u32>(hi, (lo << 8u) | min(left, 8u));
}
`;

/** Words of a row of the refinement: (group rank, key hi, key lo, string). */
export const STRING_SORT_ROW = 4;

/** The passes of the device's byte string sort, with the scan's. */
export function stringSortShaders(): Record<string, string> {
  // u0.z = 1: the first round, every string's row (rank 0); `rows` and `keep` are not read.
  const next = `${header('strSortNext', ['bytes', 'spans', 'rows', 'keep', 'out'])}${KEY}${threadMain(`  if (i >= u[0].x) { return; }
  var s = i;
  var rank = 0u;
  var o = i;
  if (u[0].z == 0u) {
    if (keep[i + 1u] == keep[i]) { return; }
    s = rows[4u * i + 3u];
    rank = rows[4u * i];
    o = keep[i];
  }
  let k = keyOf(s, u[0].y);
  out[4u * o] = rank;
  out[4u * o + 1u] = k.x;
  out[4u * o + 2u] = k.y;
  out[4u * o + 3u] = s;`)}`;
  const heads = `${header('strSortHeads', ['rows', 'heads'])}${threadMain(`  let n = u[0].x;
  if (i > n) { return; }
  if (i == n) { heads[n] = 0u; return; }
  var head = 1u;
  if (i > 0u && rows[4u * i] == rows[4u * i - 4u] && rows[4u * i + 1u] == rows[4u * i - 3u] && rows[4u * i + 2u] == rows[4u * i - 2u]) { head = 0u; }
  heads[i] = head;`)}`;
  const starts = `${header('strSortStarts', ['rows', 'heads', 'subHead', 'groupHead'])}${threadMain(`  let n = u[0].x;
  if (i >= n) { return; }
  if (heads[i + 1u] != heads[i]) { subHead[heads[i]] = i; }
  if (i == 0u || rows[4u * i] != rows[4u * i - 4u]) { groupHead[rows[4u * i]] = i; }
  if (i == n - 1u) { subHead[heads[n]] = n; }`)}`;
  const refine = `${header('strSortRefine', ['rows', 'heads', 'subHead', 'groupHead', 'ranks', 'keep', 'mark'])}${threadMain(`  let n = u[0].x;
  if (i > n) { return; }
  if (i == n) { keep[n] = 0u; return; }
  let sub = heads[i + 1u] - 1u;
  let h = subHead[sub];
  let rank = rows[4u * i];
  let next = rank + h - groupHead[rank];
  rows[4u * i] = next;
  if (subHead[sub + 1u] - h == 1u || (rows[4u * i + 2u] & 0xffu) < 8u) {
    let s = rows[4u * i + 3u];
    ranks[s] = next;
    if (h == i) {
      mark[next] = 1u;
      ranks[u[0].y + next] = s;
    }
    keep[i] = 0u;
  } else {
    keep[i] = 1u;
  }`)}`;
  const distinct = `${header('strSortDistinct', ['spans', 'mark', 'ranks', 'distinct'])}${threadMain(`  let n = u[0].x;
  if (i >= n) { return; }
  ranks[i] = mark[ranks[i]];
  if (mark[i + 1u] != mark[i]) {
    let d = mark[i];
    let s = ranks[n + i];
    distinct[d] = spans[2u * s];
    distinct[n + d] = spans[2u * s + 1u];
  }`)}`;
  const spans = `${header('strSortSpans', ['starts', 'spans'])}${threadMain(`  if (i >= u[0].x) { return; }
  let s = u[0].z + i;
  spans[2u * s] = u[0].y + starts[i];
  spans[2u * s + 1u] = u[0].y + starts[i + 1u];`)}`;
  return {
    strSortNext: next,
    strSortHeads: heads,
    strSortStarts: starts,
    strSortRefine: refine,
    strSortDistinct: distinct,
    strSortSpans: spans,
    scanBlock: scanBlock(false),
    [`scanBlock${SUBGROUP_VARIANT}`]: scanBlock(true),
    scanAdd: SCAN_ADD,
  };
}
