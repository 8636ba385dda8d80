/**
 * A columnar store's column into the rows of a relation on the device (runtime gpu/store-columns.ts): the column
 * file's bytes are uploaded as they are, a piece at a time, and this pass writes value i of a piece into row
 * `first + i` (u[1].w). A file of device words is copied; a narrow one (io store/column-encoding.ts: frame of
 * reference, `u[2].x` bytes a value) is widened: value = base + n * step, in u32 arithmetic with the carry into the
 * high word of a two-word value. WGSL has no 8- or 16-bit storage, so n is a lane of the piece's u32 words. String
 * ids, of the column's own dictionary, move by the dictionary's place in the load's string map (`base`); an id at or
 * past the dictionary's size sets state[0] (a corrupt store the CRC did not catch: a file written wrong, not damaged
 * since).
 */
import { atomicBinding, header, threadMain } from '../wgsl.js';

export function storeColumnShaders(): Record<string, string> {
  const body = `  if (i >= u[0].x) { return; }
  let row = (i + u[1].w) * u[0].y + u[0].z;
  let narrow = u[2].x;
  var v: u32;
  if (narrow == 0u) {
    if (u[0].w == 2u) {
      rows[row] = column[2u * i];
      rows[row + 1u] = column[2u * i + 1u];
      return;
    }
    v = column[i];
  } else {
    let at = i * narrow;
    let mask = select(0xffffffffu, (1u << (8u * narrow)) - 1u, narrow < 4u);
    let d = ((column[at / 4u] >> (8u * (at % 4u))) & mask) * u[2].w;
    v = u[2].y + d;
    if (u[0].w == 2u) {
      rows[row] = v;
      rows[row + 1u] = u[2].z + select(0u, 1u, v < d);
      return;
    }
  }
  if (u[1].z != 0u && v >= u[1].y) { atomicOr(&state[0], 1u); }
  rows[row] = v + u[1].x;`;
  return { storeColumn: atomicBinding(`${header('storeColumn', ['column', 'rows', 'state'], 8)}${threadMain(body)}`, 'state') };
}
