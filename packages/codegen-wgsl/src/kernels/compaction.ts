/**
 * Passes shared by the compacting kernels (mapFilter, unique, difference): tile-based stream compaction
 * that keeps input order. A workgroup owns a tile of COMPACT_ITEMS * WG consecutive rows. The count pass
 * evaluates the keep predicate once per row and writes the tile's kept-row total plus one keep bit per row;
 * the host scans the totals (one per tile, not per row); the scatter pass ranks kept rows from the bits
 * (popcounts, no per-row scan) and reads and writes only the kept rows, contiguously from the tile's offset.
 */
import { rowWords } from '@vixen/queryplan';
import type { Expr, ScalarType } from '@vixen/queryplan';
import { columnWords, header, projectCode } from '../wgsl.js';

/** Rows per thread of a compaction tile (a multiple of 4, so a tile's keep bits fill whole words). */
export const COMPACT_ITEMS = 8;

/** Module text after the header: tile constants, `decls`, then main over the tile of workgroup `t`. */
function tileModule(inputTypes: readonly ScalarType[], decls: string, body: string): string {
  return `const W_IN: u32 = ${rowWords(inputTypes)}u;
const ITEMS: u32 = ${COMPACT_ITEMS}u;
override TILE: u32 = ITEMS * WG;
// Keep-bit words per tile; tile t's words follow the tiles + 1 counts.
override BITS: u32 = TILE / 32u;
${decls}
@compute @workgroup_size(WG)
fn main(@builtin(local_invocation_index) lid: u32, @builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
  let n = u[0].x;
  // The host's tile count (u0.w): at least ceil(n / TILE), more when n is a device-side count below the
  // host's bound; the keep bits follow that many counts.
  let tiles = u[0].w;
  let t = wid.x + wid.y * nwg.x;
  let base = t * TILE;
${body}
}
`;
}

/**
 * Count pass (`flags` or `flagsAbsent`): for rows i of tile t where `keep` holds (a WGSL bool over row
 * index `i` and its first word `b`), counts[t] = how many and bit r % 32 of counts[tiles + 1 + t * BITS +
 * r / 32] is set (r = i - t * TILE); counts[t] = 0 for tiles t past n and counts[tiles] = 0. `inputs` are the buffers before counts.
 */
export function countPass(pass: 'flags' | 'flagsAbsent', inputs: readonly string[], inputTypes: readonly ScalarType[], keep: string, helpers: string, constWords: number): string {
  return `${header(pass, [...inputs, 'counts'], constWords)}
${helpers}${tileModule(
  inputTypes,
  '// This round\'s keep flags, then the tile\'s keep-bit words (built without contended atomics).\nvar<workgroup> flag: array<u32, WG>;\nvar<workgroup> bits: array<u32, BITS>;',
  `  if (t == 0u && lid == 0u) { counts[tiles] = 0u; }
  if (base >= n) {
    // Tiles past n (and grid padding) count nothing, so the scan of all tiles + 1 counts ends in the total.
    if (t < tiles && lid == 0u) { counts[t] = 0u; }
    return;
  }
  for (var k = 0u; k < ITEMS; k = k + 1u) {
    let i = base + k * WG + lid;
    var f = 0u;
    if (i < n) {
      let b = i * W_IN;
      f = select(0u, 1u, ${keep});
    }
    flag[lid] = f;
    workgroupBarrier();
    if (lid < WG / 32u) {
      var word = 0u;
      for (var j = 0u; j < 32u; j = j + 1u) { word = word | (flag[lid * 32u + j] << j); }
      bits[k * (WG / 32u) + lid] = word;
    }
    workgroupBarrier();
  }
  if (lid < BITS) { counts[tiles + 1u + t * BITS + lid] = bits[lid]; }
  if (lid == 0u) {
    var c = 0u;
    for (var j = 0u; j < BITS; j = j + 1u) { c = c + countOneBits(bits[j]); }
    counts[t] = c;
  }`,
)}`;
}

/**
 * Scatter pass: the kept rows of tile t (per its keep bits after the scanned counts in `offs`), projected,
 * at rows offs[t], offs[t] + 1, ... in input order.
 */
export function scatterPass(inputTypes: readonly ScalarType[], project: readonly Expr[], constOffsets: ReadonlyMap<Expr, number>, constWords: number): string {
  const outWords = project.reduce((n, e) => n + rowWords([e.type]), 0);
  const body = projectCode(project, 'outp', 'ob', (c) => columnWords('inp', 'b', inputTypes, c), constOffsets);
  return `${header('scatter', ['inp', 'offs', 'outp'], constWords)}
const W_OUT: u32 = ${outWords}u;
${tileModule(
  inputTypes,
  "// Inclusive prefix sums of the popcounts of the tile's keep-bit words.\nvar<workgroup> before: array<u32, BITS>;",
  `  if (base >= n) { return; }
  let at = tiles + 1u + t * BITS;
  if (lid < BITS) { before[lid] = countOneBits(offs[at + lid]); }
  for (var off = 1u; off < BITS; off = off * 2u) {
    workgroupBarrier();
    var x = 0u;
    if (lid < BITS && lid >= off) { x = before[lid - off]; }
    workgroupBarrier();
    if (lid < BITS) { before[lid] = before[lid] + x; }
  }
  workgroupBarrier();
  let o = offs[t];
  for (var k = 0u; k < ITEMS; k = k + 1u) {
    let r = k * WG + lid;
    let w = offs[at + r / 32u];
    let bit = r % 32u;
    if (((w >> bit) & 1u) == 1u) {
      let rank = before[r / 32u] - countOneBits(w) + countOneBits(w & ((1u << bit) - 1u));
      let b = (base + r) * W_IN;
      let ob = (o + rank) * W_OUT;
${body}
    }
  }`,
)}`;
}

/** Projection copying every column: the scatter of unique and difference. */
export function identity(types: readonly ScalarType[]): Expr[] {
  return types.map((type, index) => ({ kind: 'col', index, type }));
}

/** Word pairs (buffer a row at `a` vs buffer b row at `b`) over all `width` words. */
export function rowPairs(bufA: string, bufB: string, width: number): Array<[string, string]> {
  return Array.from({ length: width }, (_, k): [string, string] => [`${bufA}[a * ${width}u + ${k}u]`, `${bufB}[b * ${width}u + ${k}u]`]);
}
