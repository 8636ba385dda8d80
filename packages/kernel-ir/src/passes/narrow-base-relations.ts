/**
 * Base relations keep on the device only the columns kernels read. pruneColumns (QP) keeps a base column that a
 * rule binds, and under set semantics a column that only tells rows apart is still needed: SSB's aggregated
 * bodies bind lineorder's key (lo_orderkey, lo_linenumber) so that equal revenues of different lines all count.
 * Once the kernel-IR passes have proved the lines distinct and dropped the duplicate elimination, no kernel reads
 * those columns, yet every scan of lineorder would stream them. Here such a relation's variable loses them
 * (RelationDecl.deviceColumns): the runtime loads and checks the facts whole, then keeps only the columns read.
 *
 * Sound because the rows keep their number and order, and every reader reads row by row (columnsRead): each
 * kernel sees the same rows with the same values in the columns it reads, so it computes the same result. A
 * reader that sees whole rows (unique, sort by all columns, copy, set operations) needs every column, and then
 * nothing is dropped. Last among the passes: the variable is no longer canonical (sorted and duplicate-free by
 * its own columns), which the property analysis assumes of relation variables.
 */
import type { KirKernel, KirProgram } from '../ir.js';
import { kernelInputs } from '../ir.js';
import { columnsRead, readThrough } from '../analysis/column-reads.js';
import type { KirPass } from '../compile.js';

export const narrowBaseRelations = { name: 'narrow-base-relations', required: false, run } satisfies KirPass;

function run(p: KirProgram): KirProgram {
  const written = new Set(p.kernels.map((k) => k.output));
  for (const b of p.blocks) for (const c of b.commands) if (c.kind === 'clear') written.add(c.var);
  const checked = new Set((p.constraints ?? []).map((c) => c.relation));
  let kernels: KirKernel[] | undefined;
  const variables = [...p.variables];
  const relations = p.relations.map((r) => {
    const v = p.relationVars[r.name];
    if (r.kind !== 'edb' || r.output || r.deviceColumns || checked.has(r.name) || v === undefined || written.has(v)) return r;
    const readers = p.kernels.filter((k) => kernelInputs(k).includes(v));
    const need = new Set<number>();
    for (const k of readers) {
      const cols = columnsRead(p, k, v, () => undefined);
      if (!cols) return r;
      for (const c of cols) need.add(c);
    }
    const columns = p.variables[v]!.columns;
    // Rows stay at least one column wide: a count, or an emptiness test, reads none.
    if (need.size === 0) need.add(0);
    if (need.size === columns.length) return r;
    const keep = [...need].sort((x, y) => x - y);
    const map = new Map(keep.map((c, n) => [c, n]));
    kernels ??= [...p.kernels];
    for (const k of readers) kernels[k.id] = readThrough(p, kernels[k.id]!, v, v, columns, map);
    variables[v] = { ...variables[v]!, columns: keep.map((c) => columns[c]!) };
    return { ...r, deviceColumns: keep };
  });
  return kernels ? { ...p, relations, variables, kernels } : p;
}
