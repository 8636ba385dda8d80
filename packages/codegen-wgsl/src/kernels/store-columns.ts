/**
 * A columnar store's column into the rows of a relation on the device (runtime gpu/store-columns.ts): the column
 * file's words are uploaded as they are, a piece at a time, and this pass writes value i of a piece into row
 * `first + i` (u[1].w). String ids, of the column's own dictionary, move by the dictionary's place in the load's
 * string map (`base`); an id at or past the dictionary's size sets state[0] (a corrupt store the CRC did not catch:
 * a file written wrong, not damaged since).
 */
import { atomicBinding, header, threadMain } from '../wgsl.js';

export function storeColumnShaders(): Record<string, string> {
  const body = `  if (i >= u[0].x) { return; }
  let row = (i + u[1].w) * u[0].y + u[0].z;
  if (u[0].w == 2u) {
    rows[row] = column[2u * i];
    rows[row + 1u] = column[2u * i + 1u];
    return;
  }
  let v = column[i];
  if (u[1].z != 0u && v >= u[1].y) { atomicOr(&state[0], 1u); }
  rows[row] = v + u[1].x;`;
  return { storeColumn: atomicBinding(`${header('storeColumn', ['column', 'rows', 'state'], 3)}${threadMain(body)}`, 'state') };
}
