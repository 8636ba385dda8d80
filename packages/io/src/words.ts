/** Word lists one after another in one new array (ids of several lists, constants of several kernels, pieces). */
export function concatWords(lists: readonly Uint32Array[]): Uint32Array {
  const out = new Uint32Array(lists.reduce((n, l) => n + l.length, 0));
  let at = 0;
  for (const l of lists) {
    out.set(l, at);
    at += l.length;
  }
  return out;
}
