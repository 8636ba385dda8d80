/**
 * Whether loaded rows are in canonical order already (runtime gpu/kernels/rows-order.ts): thread i compares row i
 * with the row after it (row i + 1, or the first row of the next chunk) word by word, as a sort by all words
 * orders them (unsigned, first word first). state[0] is set where a row is not below the next (out of order, or a
 * duplicate); state[1] is the most leading words two adjacent rows share (a key of the leading columns holds when
 * it has more words). Both are read before the atomic writes: most threads write neither.
 */
import { atomicBinding, header, threadMain } from '../wgsl.js';

export function rowsOrderShaders(): Record<string, string> {
  const body = `  let n = u[0].x;
  let w = u[0].y;
  if (i >= n || (i + 1u == n && u[0].z == 0u)) { return; }
  var k = 0u;
  while (k < w && rows[i * w + k] == after(i, k)) { k++; }
  if ((k == w || rows[i * w + k] > after(i, k)) && atomicLoad(&state[0]) == 0u) { atomicOr(&state[0], 1u); }
  if (k > atomicLoad(&state[1])) { atomicMax(&state[1], k); }`;
  const helper = `
// Word k of the row after row i.
fn after(i: u32, k: u32) -> u32 {
  if (i + 1u < u[0].x) { return rows[(i + 1u) * u[0].y + k]; }
  return next[k];
}
`;
  return { rowsOrder: atomicBinding(`${header('rowsOrder', ['rows', 'next', 'state'])}${helper}${threadMain(body)}`, 'state') };
}
