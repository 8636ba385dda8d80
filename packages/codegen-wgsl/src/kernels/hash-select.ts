/**
 * Hash select: the rows of a relation whose key words hash to one partition. A kernel whose relations do not fit
 * the device memory budget (runtime partitioned.ts) splits both sides of a join (or a pipeline's scanned rows and a
 * build side) so on the device, one select per partition, so that rows of one key meet in one partition pair.
 */
import type { ScalarType } from '@vixen/queryplan';
import { identity, selectShaders } from './compaction.js';

/**
 * The select pass over rows of `width` words, hashing words `keys` (in this order). Its constants: the partition
 * count, the partition kept, and a seed (another seed splits a partition that one hash left too large).
 */
export function hashSelectShaders(width: number, keys: readonly number[]): Record<string, string> {
  const mix = keys.map((w) => `  h = (h ^ inp[b + ${w}u]) * 0x85ebca6bu;\n  h = h ^ (h >> 13u);`).join('\n');
  const helpers = `// The partition of the row at b: a hash of its key words, seeded, modulo the partition count.
fn partOf(b: u32) -> u32 {
  var h = (u[1u][2u] + 1u) * 0x9e3779b9u;
${mix}
  h = (h ^ (h >> 16u)) * 0xc2b2ae35u;
  h = h ^ (h >> 15u);
  return h % u[1u][0u];
}
`;
  const types: ScalarType[] = Array.from({ length: width }, () => 'uint32');
  return selectShaders({
    pass: 'select',
    inputs: ['inp'],
    inputTypes: types,
    keep: 'partOf(b) == u[1u][1u]',
    helpers,
    project: identity(types),
    constOffsets: new Map(),
    constWords: 3,
  });
}
