import { rowWords, wordsOf } from '@vixen/queryplan';
import type { Expr, Predicate, ScalarType } from '@vixen/queryplan';
import { atomicBinding, columnWords, filterCode, header, lexCompareFn, projectCode, threadMain, type ColumnResolver } from '../wgsl.js';
import type { KernelShaders } from '../passes.js';

/**
 * Output rows each thread of a join's write pass writes when the join has no filter (every pair in a key's range
 * is written), or undefined: then a thread writes one left row's pairs. The host sizes the dispatch by it.
 */
export const joinWriteRows = (filter: readonly Predicate[]): number | undefined => (filter.length === 0 ? 64 : undefined);

/**
 * Per left row: binary-search the [lo, hi) range of right rows with equal key words (empty keys: all
 * rows), count the pairs passing the filter; scan; write pass re-walks the range and emits projections. joinRuns
 * finds the longest run of equal right keys: times the left rows, it bounds the output.
 *
 * Without a filter the count is the range's length, and the write pass is spread over the output: thread i writes
 * rows [i K, i K + K) (K = joinWriteRows), finding the left row of the first by a binary search of the offsets and
 * walking on from there. A left row with many matches (a hub of a skewed graph: 10^5 edges of one node of R-MAT
 * scale 22) is then written by many threads, not by one that the whole dispatch waits for.
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
  const pairs = leftKeys.flatMap((lk, k) => {
    const rk = rightKeys[k]!;
    if (wordsOf(leftTypes[lk]!) !== wordsOf(rightTypes[rk]!)) throw new Error('internal: mergeJoin key types differ');
    const a = columnWords('lhs', 'a * WL', leftTypes, lk);
    const b = columnWords('rhs', 'b * WR', rightTypes, rk);
    return a.map((x, w): [string, string] => [x, b[w]!]);
  });
  const cols: ColumnResolver = (c) =>
    c < leftTypes.length ? columnWords('lhs', 'lb', leftTypes, c) : columnWords('rhs', 'rb', rightTypes, c - leftTypes.length);
  const keep = filterCode(filter, cols, constOffsets);
  const prelude = `const WL: u32 = ${rowWords(leftTypes)}u;
const WR: u32 = ${rowWords(rightTypes)}u;
const WO: u32 = ${project.reduce((n, e) => n + wordsOf(e.type), 0)}u;
${lexCompareFn('cmpKey', pairs)}
// [lo, hi) of right rows whose key equals left row l's key.
fn matchRange(l: u32, m: u32) -> vec2<u32> {
  var lo = 0u;
  var hi = m;
  while (lo < hi) {
    let mid = lo + (hi - lo) / 2u;
    if (cmpKey(l, mid) > 0) { lo = mid + 1u; } else { hi = mid; }
  }
  var end = lo;
  hi = m;
  while (end < hi) {
    let mid = end + (hi - end) / 2u;
    if (cmpKey(l, mid) >= 0) { end = mid + 1u; } else { hi = mid; }
  }
  return vec2<u32>(lo, end);
}
`;
  const walk = (inner: string): string => `  let r = matchRange(i, u[0].y);
  let lb = i * WL;
  for (var j = r.x; j < r.y; j = j + 1u) {
    let rb = j * WR;
    if (${keep}) {
${inner}
    }
  }`;
  const spread = joinWriteRows(filter);
  const joinCount = `${header('joinCount', ['lhs', 'rhs', 'counts'], constWords)}
${prelude}${threadMain(`  let n = u[0].x;
  // Slots up to u0.z (the host's bound on n) past n count nothing, so the scan ends in the total.
  if (i > u[0].z) { return; }
  if (i >= n) { counts[i] = 0u; return; }
${spread === undefined ? `  var count = 0u;
${walk('      count = count + 1u;')}
  counts[i] = count;` : `  let r = matchRange(i, u[0].y);
  counts[i] = r.y - r.x;`}`)}`;
  const perRow = `  if (i >= u[0].x) { return; }
  var o = offs[i];
  if (offs[i + 1u] == o) { return; }
${walk(`      let ob = o * WO;
${projectCode(project, 'outp', 'ob', cols, constOffsets)}
      o = o + 1u;`)}`;
  const spreadOver = `  let n = u[0].x;
  let total = offs[n];
  let first = i * ${spread}u;
  if (first >= total) { return; }
  let last = min(first + ${spread}u, total);
  // The left row of output row first: the last l < n with offs[l] <= first.
  var lo = 0u;
  var hi = n - 1u;
  while (lo < hi) {
    let mid = hi - (hi - lo) / 2u;
    if (offs[mid] <= first) { lo = mid; } else { hi = mid - 1u; }
  }
  var l = lo;
  var j = matchRange(l, u[0].y).x + (first - offs[l]);
  for (var o = first; o < last; o = o + 1u) {
    // Past left row l's pairs: the next left row with any.
    while (o >= offs[l + 1u]) {
      l = l + 1u;
      j = matchRange(l, u[0].y).x;
    }
    let lb = l * WL;
    let rb = j * WR;
    let ob = o * WO;
${projectCode(project, 'outp', 'ob', cols, constOffsets)}
    j = j + 1u;
  }`;
  const joinWrite = `${header('joinWrite', ['lhs', 'rhs', 'offs', 'outp'], constWords)}
${prelude}${threadMain(spread === undefined ? perRow : spreadOver)}`;
  const rightPairs = rightKeys.flatMap((rk) => {
    const a = columnWords('rhs', 'a * WR', rightTypes, rk);
    const b = columnWords('rhs', 'b * WR', rightTypes, rk);
    return a.map((x, w): [string, string] => [x, b[w]!]);
  });
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
  return { joinCount, joinWrite, joinRuns };
}
