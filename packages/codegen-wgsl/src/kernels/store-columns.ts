/**
 * A columnar store's column into the rows of a relation on the device (runtime gpu/store-columns.ts): the column
 * file's bytes are uploaded as they are, a piece at a time, and this pass writes value i of a piece into row
 * `first + i` (u[1].w). A file of device words is copied; a narrow one (io store/column-encoding.ts: frame of
 * reference, `u[2].x` bytes a value) is widened: value = base + n * step, modulo 2^32 for a one-word value, modulo
 * 2^64 for a two-word one (the product n * step taken whole). WGSL has no 8- or 16-bit storage, so n is read from the
 * piece's u32 words (a three-byte n may span two). String ids, of the column's own dictionary, move by the
 * dictionary's place in the load's string map (`base`); an id at or past the dictionary's size sets state[0] (a
 * corrupt store the CRC did not catch: a file written wrong, not damaged since).
 */
import { atomicBinding, header, threadMain, withArithHelpers } from '../wgsl.js';

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
    let lane = at % 4u;
    var n = column[at / 4u] >> (8u * lane);
    // A shift by 32 is no shift in WGSL: the next word only where the value reaches into it.
    if (lane + narrow > 4u) { n = n | (column[at / 4u + 1u] << (32u - 8u * lane)); }
    n = n & select(0xffffffffu, (1u << (8u * narrow)) - 1u, narrow < 4u);
    if (u[0].w == 2u) {
      let d = mulWide(n, u[2].w);
      let lo = u[2].y + d.x;
      rows[row] = lo;
      rows[row + 1u] = u[2].z + d.y + select(0u, 1u, lo < d.x);
      return;
    }
    v = u[2].y + n * u[2].w;
  }
  if (u[1].z != 0u && v >= u[1].y) { atomicOr(&state[0], 1u); }
  rows[row] = v + u[1].x;`;
  return { storeColumn: atomicBinding(withArithHelpers(`${header('storeColumn', ['column', 'rows', 'state'], 8)}${threadMain(body)}`), 'state') };
}
