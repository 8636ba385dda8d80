/**
 * Range select: the rows of a relation whose key, its words in `order` compared as u32 (the radix sort's order),
 * lies in [lo, hi). A chunked sort on the device (runtime gpu/chunks.ts) splits its input into key ranges with it,
 * one range per output chunk, so rows never leave the device to be partitioned.
 */
import type { ScalarType } from '@vixen/queryplan';
import { identity, selectShaders } from './compaction.js';

/**
 * The select pass. Its constants are the `lo` key (when `hasLo`), then the `hi` key (when `hasHi`), each
 * `order.length` words; a missing bound is unbounded.
 */
export function rangeSelectShaders(width: number, order: readonly number[], hasLo: boolean, hasHi: boolean): Record<string, string> {
  const K = order.length;
  const constWord = (i: string): string => `u[1u + (${i}) / 4u][(${i}) % 4u]`;
  const steps = order.map((w, k) => `  c = cmpU(inp[b + ${w}u], ${constWord(`at + ${k}u`)});\n  if (c != 0) { return c; }`).join('\n');
  const helpers = `// -1, 0, 1 as the row at b is before, equal to or after the key of constant words at..
fn cmpKey(b: u32, at: u32) -> i32 {
  var c = 0;
${steps}
  return c;
}
`;
  const tests = [...(hasLo ? ['cmpKey(b, 0u) >= 0'] : []), ...(hasHi ? [`cmpKey(b, ${hasLo ? K : 0}u) < 0`] : [])];
  const types: ScalarType[] = Array.from({ length: width }, () => 'uint32');
  return selectShaders({
    pass: 'select',
    inputs: ['inp'],
    inputTypes: types,
    keep: tests.length > 0 ? tests.join(' && ') : 'true',
    helpers,
    project: identity(types),
    constOffsets: new Map(),
    constWords: (Number(hasLo) + Number(hasHi)) * K,
  });
}
