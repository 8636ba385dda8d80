import { rowWords, wordsOf } from '@vixen/queryplan';
import type { Expr, Predicate, ScalarType } from '@vixen/queryplan';
import { atomicBinding, columnWords, filterCode, header, lexCompareFn, projectCode, SUBGROUP_VARIANT, threadMain, workgroupScan, type ColumnResolver } from '../wgsl.js';
import type { KernelShaders } from '../passes.js';

/**
 * Whether a join's write pass runs a thread per output row (no filter: every pair of a key's range is written, so
 * the output rows of a left row are known from its count alone) rather than one per left row.
 */
export const joinWritesPerOutputRow = (filter: readonly Predicate[]): boolean => filter.length === 0;

/**
 * Rows a thread of joinCount (and output rows a thread of a joinWrite per output row) takes: a tile of JOIN_ROWS *
 * WG rows a workgroup, whose window searches (one dependent chain of loads through the whole right side or offsets)
 * its rows share.
 */
export const JOIN_ROWS = 8;

/**
 * joinCount, per left row: the first right row of its key by a binary search, the end of that key's run by a
 * galloping one (a step or two for a short run, its logarithm for a hub), the pairs passing the filter counted; the
 * run's start goes to `starts`, and the counts are scanned within blocks of WG rows (the first pass of the offsets'
 * scan). The rest of the scan turns them into offsets. joinWrite then writes the pairs:
 * - Without a filter, a thread per output row o: its left row l is the last with offs[l] <= o (a binary search of
 *   the offsets) and its right row starts[l] + o - offs[l]. Neighbouring threads write neighbouring rows from
 *   neighbouring inputs, so loads and stores coalesce, and a left row with many matches (a hub of a skewed graph:
 *   10^5 edges of one node of R-MAT scale 22) is written by many threads, not by one the dispatch waits for.
 *   (Giving each thread 64 output rows instead made neighbouring threads read rows 64 apart: the H200 ran the
 *   operator bench's 2^26-row join in 124 ms, against 6.6 ms a thread per left row.)
 * - With one, a thread per left row walks its run and writes the pairs that pass.
 * Searches over a workgroup's rows start from a window: two threads search for the workgroup's first and last rows
 * over everything, and a row whose key (or offset) lies between theirs searches only the right rows (left rows)
 * between their results, a few steps in cache. A left side sorted by its keys (the usual: neighbouring rows search
 * alike) has every row in its window; a row outside it searches everything. joinRuns finds the longest run of
 * equal right keys: times the left rows, it bounds the output.
 */
export function mergeJoinShaders(
  leftTypes: readonly ScalarType[],
  rightTypes: readonly ScalarType[],
  leftKeys: readonly number[],
  rightKeys: readonly number[],
  filter: readonly Predicate[],
  project: readonly Expr[],
  constOffsets: ReadonlyMap<Expr, number>,
  constWords: number,
): KernelShaders {
  if (leftKeys.length !== rightKeys.length) throw new Error('internal: mergeJoin key arity mismatch');
  const keyPairs = (x: string, xTypes: readonly ScalarType[], xKeys: readonly number[], xW: string, y: string, yTypes: readonly ScalarType[], yKeys: readonly number[], yW: string) =>
    xKeys.flatMap((xk, k) => {
      const yk = yKeys[k]!;
      if (wordsOf(xTypes[xk]!) !== wordsOf(yTypes[yk]!)) throw new Error('internal: mergeJoin key types differ');
      const a = columnWords(x, `a * ${xW}`, xTypes, xk);
      const b = columnWords(y, `b * ${yW}`, yTypes, yk);
      return a.map((w, i): [string, string] => [w, b[i]!]);
    });
  const cols: ColumnResolver = (c) =>
    c < leftTypes.length ? columnWords('lhs', 'lb', leftTypes, c) : columnWords('rhs', 'rb', rightTypes, c - leftTypes.length);
  const keep = filterCode(filter, cols, constOffsets);
  const prelude = `const WL: u32 = ${rowWords(leftTypes)}u;
const WR: u32 = ${rowWords(rightTypes)}u;
const WO: u32 = ${project.reduce((n, e) => n + wordsOf(e.type), 0)}u;
${lexCompareFn('cmpKey', keyPairs('lhs', leftTypes, leftKeys, 'WL', 'rhs', rightTypes, rightKeys, 'WR'))}`;
  const searches = `${lexCompareFn('cmpLeft', keyPairs('lhs', leftTypes, leftKeys, 'WL', 'lhs', leftTypes, leftKeys, 'WL'))}
// The first right row in [lo, hi) whose key is not below left row l's, else hi.
fn lowerBound(l: u32, lo0: u32, hi0: u32) -> u32 {
  var lo = lo0;
  var hi = hi0;
  while (lo < hi) {
    let mid = lo + (hi - lo) / 2u;
    if (cmpKey(l, mid) > 0) { lo = mid + 1u; } else { hi = mid; }
  }
  return lo;
}
// The end of the run of right rows with left row l's key that starts at lo <= m: galloping steps of 1, 2, 4, ..
// past it, then a binary search of the last step.
fn runEnd(l: u32, lo: u32, m: u32) -> u32 {
  var a = lo;
  var b = m;
  var step = 1u;
  loop {
    if (step > m - a) { break; }
    let p = a + step - 1u;
    if (cmpKey(l, p) < 0) { b = p; break; }
    a = p + 1u;
    step = step * 2u;
  }
  while (a < b) {
    let mid = a + (b - a) / 2u;
    if (cmpKey(l, mid) >= 0) { a = mid + 1u; } else { b = mid; }
  }
  return a;
}
`;
  // Entry point over tiles of ROWS * WG rows (or output rows) below rows, thread lid taking rows base + k * WG +
  // lid: first edges[e] = edge(min(base + e * WG, rows - 1)) for e <= ROWS, the searches for each group's first row
  // (and the tile's last), in parallel, then body for each row i of group k.
  const tiled = (edge: string, rows: string, setup: string, body: string, builtins = ''): string => `const ROWS: u32 = ${JOIN_ROWS}u;
var<workgroup> edges: array<u32, ${JOIN_ROWS + 1}>;
@compute @workgroup_size(WG)
fn main(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>, @builtin(local_invocation_index) lid: u32${builtins}) {
  let base = (gid.x + gid.y * nwg.x * WG - lid) * ROWS;
${setup}
  for (var e = lid; e <= ROWS && base < ${rows}; e = e + WG) { edges[e] = ${edge.replace('ROW', `min(base + e * WG, ${rows} - 1u)`)}; }
  workgroupBarrier();
  for (var k = 0u; k < ROWS; k = k + 1u) {
    let i = base + k * WG + lid;
${body}
  }
}
`;
  const perOutputRow = joinWritesPerOutputRow(filter);
  const counted = perOutputRow
    ? '      c = runEnd(i, s, m) - s;'
    : `      let lb = i * WL;
      let e = runEnd(i, s, m);
      for (var j = s; j < e; j = j + 1u) {
        let rb = j * WR;
        if (${keep}) { c = c + 1u; }
      }`;
  // A row's search takes its group's window when its key lies between those of the group's bounding rows. A group
  // of WG rows is a block of the offsets' scan (scan.ts): the pass scans it too, as scanBlock would.
  const joinCount = (subgroups: boolean): string => {
    const scan = workgroupScan(subgroups);
    // The counts first (the searches of a thread's rows free of barriers), then the blocks' scans.
    return `${scan.enable}${header('joinCount', ['lhs', 'rhs', 'counts', 'starts', 'totals'], constWords)}
${prelude}${searches}${scan.decls}${tiled(
      'lowerBound(ROW, 0u, m)',
      'n',
      `  let n = u[0].x;
  let m = u[0].y;
  var held: array<u32, ROWS>;`,
      `    var c = 0u;
    if (i < n) {
      var s = 0u;
      if (cmpLeft(base + k * WG, i) <= 0 && cmpLeft(i, min(base + (k + 1u) * WG, n - 1u)) <= 0) { s = lowerBound(i, edges[k], edges[k + 1u]); } else { s = lowerBound(i, 0u, m); }
      starts[i] = s;
${counted}
    }
    held[k] = c;
  }
  for (var k = 0u; k < ROWS; k = k + 1u) {
    let i = base + k * WG + lid;
    let c = held[k];
    scanSums(lid, c, ${scan.sg});
    // Slots up to u0.z (the host's bound on n) past n count nothing, so the scan ends in the total.
    if (i <= u[0].z) { counts[i] = sums[lid] - c; }
    if (lid == WG - 1u && i - lid <= u[0].z) { totals[i / WG] = sums[lid]; }`,
      scan.builtins,
    )}`;
  };
  const joinWrite = perOutputRow
    ? `${header('joinWrite', ['lhs', 'rhs', 'offs', 'starts', 'outp'], constWords)}
${prelude}
// The left row of output row o: the last l in [lo, hi] with offs[l] <= o.
fn leftOf(o: u32, lo0: u32, hi0: u32) -> u32 {
  var lo = lo0;
  var hi = hi0;
  while (lo < hi) {
    let mid = hi - (hi - lo) / 2u;
    if (offs[mid] <= o) { lo = mid; } else { hi = mid - 1u; }
  }
  return lo;
}
${tiled(
  'leftOf(first + ROW, 0u, n - 1u)',
  'count',
  `  let n = u[0].x;
  // Output rows from u0.z (a window of the join's rows: an output past one binding is written in chunks), at most
  // the output's room (u0.w; past it, a guess's, rows are not written).
  let first = u[0].z;
  let count = select(0u, min(offs[n] - first, u[0].w), offs[n] > first);`,
  `    if (i >= count) { break; }
    let o = first + i;
    let l = leftOf(o, edges[k], edges[k + 1u]);
    let lb = l * WL;
    let rb = (starts[l] + o - offs[l]) * WR;
    let ob = i * WO;
${projectCode(project, 'outp', 'ob', cols, constOffsets)}`,
)}`
    : `${header('joinWrite', ['lhs', 'rhs', 'offs', 'starts', 'outp'], constWords)}
${prelude}${searches}${threadMain(`  if (i >= u[0].x) { return; }
  var o = offs[i];
  if (offs[i + 1u] == o) { return; }
  let s = starts[i];
  let lb = i * WL;
  let e = runEnd(i, s, u[0].y);
  for (var j = s; j < e; j = j + 1u) {
    let rb = j * WR;
    if (${keep}) {
      let ob = o * WO;
${projectCode(project, 'outp', 'ob', cols, constOffsets)}
      o = o + 1u;
    }
  }`)}`;
  const rightPairs = keyPairs('rhs', rightTypes, rightKeys, 'WR', 'rhs', rightTypes, rightKeys, 'WR');
  // A thread per row; a row that starts a run binary-searches its end. runs[0] is zeroed by the host.
  const joinRuns = `${atomicBinding(header('joinRuns', ['rhs', 'runs']), 'runs')}
const WR: u32 = ${rowWords(rightTypes)}u;
${lexCompareFn('cmpRight', rightPairs)}${threadMain(`  let m = u[0].x;
  if (i >= m || (i > 0u && cmpRight(i - 1u, i) == 0)) { return; }
  var lo = i + 1u;
  var hi = m;
  while (lo < hi) {
    let mid = lo + (hi - lo) / 2u;
    if (cmpRight(i, mid) == 0) { lo = mid + 1u; } else { hi = mid; }
  }
  atomicMax(&runs[0], lo - i);`)}`;
  return { joinCount: joinCount(false), [`joinCount${SUBGROUP_VARIANT}`]: joinCount(true), joinWrite, joinRuns };
}
