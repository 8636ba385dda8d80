/**
 * Duplicate removal without sorting: `s := sort x by (all columns); t := unique s`, where only that unique reads s
 * and nothing downstream depends on the order of t's rows (BlockReaders 'order', as skip-unneeded-order decides),
 * becomes `t := unique x (hashed)`: one pass inserting rows into a hash table instead of a radix sort over every
 * word of the row (TPC-H sorts wide rows only to drop duplicates). remove-dead-kernels drops the sort.
 */
import type { KirProgram } from '../ir.js';
import { liveOutSets } from '../analysis/liveness.js';
import { allColumns, BlockReaders } from '../analysis/block-readers.js';
import type { KirPass } from '../compile.js';

export const hashUnique = { name: 'hash-unique', required: false, run } satisfies KirPass;

function run(p: KirProgram): KirProgram {
  const liveOut = liveOutSets(p);
  const kernels = [...p.kernels];
  let changed = false;
  for (const b of p.blocks) {
    const rd = new BlockReaders(p, b, liveOut.get(b.label)!);
    for (let i = 0; i < b.commands.length; i++) {
      const k = rd.kernelAt(i);
      // Nullary rows have no words to hash (and at most one distinct row).
      if (k?.kind !== 'unique' || k.hashed || p.variables[k.input]!.columns.length === 0) continue;
      const found = rd.soleSort(i, k.input);
      if (!found || !allColumns(p, found.sort) || !rd.free(i, 'order')) continue;
      // The unique reads the sort's input instead: nothing may write that between the two.
      if (rd.clobbers(found.at, i, found.sort.input)) continue;
      kernels[k.id] = { ...k, input: found.sort.input, hashed: true };
      changed = true;
    }
  }
  return changed ? { ...p, kernels } : p;
}
