/**
 * Top-k for limited outputs. `order P by ... limit N` prints P's first N rows; the runtime applies the order and
 * the limit when it hands P back. Where no kernel reads P (rules reading a limited P get a QP limit already) and
 * its one write is the sort that makes it canonical (`P := sort x by all columns`: x holds P's rows,
 * duplicate-free), or a copy of such rows (`P := copy x`, TPC-H Q21's result of an aggregate), that write becomes
 * `P := limit x`: a device top-k keeps the N rows that come first, sorted, and the rest of x is neither sorted nor
 * read back (TPC-H Q10 sorted 381K rows to print 20). What P hands back is the same N rows. Only for N up to
 * TOP_K_MAX (the kept rows then sort in one pass) and outside fixpoint loops.
 */
import type { KirBlock, KirKernel, KirProgram, VarId } from '../ir.js';
import { variablesRead } from '../ir.js';
import { allColumns } from '../analysis/block-readers.js';
import { blockEntryStates, commandStates, distinct, propsOf, type PropState } from '../analysis/properties.js';
import { loopBlocks } from '../lower/join-strategy.js';
import type { KirPass } from '../compile.js';

/** The largest limit done as a top-k. */
export const TOP_K_MAX = 2 ** 14;

export const limitOutputs = { name: 'limit-outputs', required: false, run } satisfies KirPass;

/** Whether `v` is known duplicate-free before the launch of kernel `id` in block `b`. */
function distinctBefore(p: KirProgram, entry: Map<string, PropState>, b: KirBlock, id: number, v: VarId): boolean {
  const at = b.commands.findIndex((c) => c.kind === 'launch' && c.kernel === id);
  const states = commandStates(p, entry, b);
  return states !== undefined && distinct(propsOf(states[at]!, v));
}

function run(p: KirProgram): KirProgram {
  const entry = blockEntryStates(p);
  const loops = loopBlocks(p.blocks);
  const read = variablesRead(p);
  const checked = new Set((p.constraints ?? []).map((c) => c.relation));
  const kernels = [...p.kernels];
  let changed = false;
  for (const [relation, order] of Object.entries(p.orders ?? {})) {
    const v = p.relationVars[relation];
    if (order.limit === undefined || order.limit > TOP_K_MAX || v === undefined || read.has(v) || checked.has(relation)) continue;
    // Every write of v: launches whose output it is, and clears.
    const writes = p.blocks.flatMap((b) =>
      b.commands.flatMap((c): Array<{ b: KirBlock; k: KirKernel | undefined }> =>
        c.kind === 'launch' && kernels[c.kernel]!.output === v ? [{ b, k: kernels[c.kernel]! }] : c.kind === 'clear' && c.var === v ? [{ b, k: undefined }] : [],
      ),
    );
    const only = writes.length === 1 ? writes[0]! : undefined;
    const k = only?.k;
    const write = k && !loops.has(only.b.label) && ((k.kind === 'sort' && allColumns(p, k)) || k.kind === 'copy') ? k : undefined;
    // The top-k tells rows apart by all their columns: x must be known duplicate-free where the write reads it.
    if (!write || !distinctBefore(p, entry, only!.b, write.id, write.input)) continue;
    const limit: KirKernel = {
      kind: 'limit',
      id: write.id,
      ...(write.origin ? { origin: write.origin } : {}),
      ...(write.rules ? { rules: write.rules } : {}),
      input: write.input,
      output: v,
      keys: order.keys,
      count: order.limit,
    };
    kernels[write.id] = limit;
    changed = true;
  }
  return changed ? { ...p, kernels } : p;
}
