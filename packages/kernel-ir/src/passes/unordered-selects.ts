/**
 * Marks the mapFilters whose output nothing needs in input order (order-free, as skip-unneeded-order decides:
 * read only by sorts by all columns, hashed uniques and aggregates that ignore order, through temporaries) as
 * `unordered`: their select pass then takes each tile's output offset from one atomic instead of waiting on the
 * tiles before it (codegen's SELECT_UNORDERED). Runs after the other optimizations, which may change the readers.
 */
import type { KirProgram } from '../ir.js';
import { liveOutSets } from '../analysis/liveness.js';
import { BlockReaders } from '../analysis/block-readers.js';
import type { KirPass } from '../compile.js';

export const unorderedSelects = { name: 'unordered-selects', required: false, run } satisfies KirPass;

function run(p: KirProgram): KirProgram {
  const liveOut = liveOutSets(p);
  // Per mapFilter kernel: whether every launch of it is order-free.
  const free = new Map<number, boolean>();
  for (const b of p.blocks) {
    const rd = new BlockReaders(p, b, liveOut.get(b.label)!);
    b.commands.forEach((c, i) => {
      if (c.kind !== 'launch' || p.kernels[c.kernel]?.kind !== 'mapFilter') return;
      // QP relation variables (temporaries of the plan too) stay canonical (ir.ts): only kernel temporaries qualify.
      const temporary = p.variables[p.kernels[c.kernel]!.output]!.relation === undefined;
      free.set(c.kernel, (free.get(c.kernel) ?? true) && temporary && rd.free(i, 'order'));
    });
  }
  if (![...free.values()].some((f) => f)) return p;
  const kernels = p.kernels.map((k, id) => (k.kind === 'mapFilter' && free.get(id) && !k.unordered ? { ...k, unordered: true as const } : k));
  return { ...p, kernels };
}
