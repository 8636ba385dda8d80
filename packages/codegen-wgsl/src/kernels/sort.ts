import { rowWords } from '@vixen/queryplan';
import type { ScalarType } from '@vixen/queryplan';
import { columnWords, header, lexCompareFn, threadMain } from '../wgsl.js';
import type { KernelShaders } from '../index.js';

/**
 * Bitonic sort of a row-index permutation, then a gather. Uses the all-ascending variant (the first step
 * of each stage compares mirrored partners), so out-of-range partners act as +inf and are skipped:
 * correct for any n. Ties break on the original index, which makes the sort stable and deterministic.
 */
export function sortShaders(types: readonly ScalarType[], keys: readonly number[]): KernelShaders {
  const width = rowWords(types);
  const pairs = keys.flatMap((k) => {
    const a = columnWords('inp', 'a * W', types, k);
    const b = columnWords('inp', 'b * W', types, k);
    return a.map((x, w): [string, string] => [x, b[w]!]);
  });
  const sortInit = `${header('sortInit', ['idx'])}${threadMain(`  if (i < u[0].x) { idx[i] = i; }`)}`;
  const sortStep = `${header('sortStep', ['inp', 'idx'])}
const W: u32 = ${width}u;
${lexCompareFn('cmpKeys', pairs)}${threadMain(`  let n = u[0].x;
  let j = u[0].y;
  if (i >= n) { return; }
  let p = select(i ^ j, i ^ (2u * j - 1u), u[0].z == 1u);
  if (p <= i || p >= n) { return; }
  let a = idx[i];
  let b = idx[p];
  let c = cmpKeys(a, b);
  if (c > 0 || (c == 0 && a > b)) {
    idx[i] = b;
    idx[p] = a;
  }`)}`;
  const gather = `${header('gather', ['inp', 'idx', 'outp'])}
const W: u32 = ${width}u;
${threadMain(`  if (i >= u[0].x) { return; }
  let s = idx[i] * W;
  let d = i * W;
  for (var k = 0u; k < W; k = k + 1u) { outp[d + k] = inp[s + k]; }`)}`;
  return { sortInit, sortStep, gather };
}
