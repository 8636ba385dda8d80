/**
 * Aggregation without sorting: `s := sort x by ...; a := aggregate s by G`, where only that aggregate reads s,
 * becomes `t := pipeline x -> (the columns the aggregate reads) aggregate by G` (aggregated in a device hash table,
 * one pass over x, no sort of its rows) and `a := sort t by G` (sorting the groups instead of the rows; the group
 * columns are a key of t, so that order is canonical). skip-unneeded-order drops the new sort where nothing needs a's
 * order, remove-dead-kernels the old one, and fuse-pipelines folds x's producer into the pipeline (Crystal's
 * select -> probe -> aggregate in one kernel). Only aggregates whose result does not depend on the order of the rows
 * hash: no float32 sums or averages (rounded in row order), and min or max only of one-word types other than float32
 * (32-bit atomics; float32's NaN rule needs the first row). An aggregate over rows already in group order (no sort)
 * stays a reduction by key: it reads them once and needs no table.
 */
import { unionOrigins, type Expr } from '@vixen/queryplan';
import type { KirCommand, KirKernel, KirProgram } from '../ir.js';
import { iota } from '../lower/from-plan.js';
import { liveOutSets } from '../analysis/liveness.js';
import { blockEntryStates, commandStates, sortedBy } from '../analysis/properties.js';
import { BlockReaders } from '../analysis/block-readers.js';
import { hashableAggregate } from '../analysis/hashable-aggregate.js';
import type { KirPass } from '../compile.js';

export const hashAggregates = { name: 'hash-aggregates', required: false, run } satisfies KirPass;

function run(p: KirProgram): KirProgram {
  const liveOut = liveOutSets(p);
  const kernels = [...p.kernels];
  const variables = [...p.variables];
  let blocks = p.blocks;
  let changed = false;
  const entry = blockEntryStates(p);
  for (const [bi, b] of p.blocks.entries()) {
    const rd = new BlockReaders(p, b, liveOut.get(b.label)!);
    const added: Array<{ after: number; command: KirCommand }> = [];
    // Properties before each command (unreachable blocks have none: left as they are).
    const states = commandStates(p, entry, b);
    if (!states) continue;
    for (let i = 0; i < b.commands.length; i++) {
      const k = rd.kernelAt(i);
      if (k?.kind !== 'aggregate') continue;
      const input = p.variables[k.input]!.columns;
      if (!k.aggregates.every((a) => hashableAggregate(a.fn, a.column === undefined ? undefined : input[a.column]))) continue;
      const found = rd.soleSort(i, k.input);
      // An aggregate over all rows (no group columns) reads them in any order: hashed (one group), its producer
      // fused into it (Q6's scan -> filter -> sum in one kernel), without a sort to drop.
      if (!found && k.groupBy.length > 0) continue;
      const source = found?.sort.input ?? k.input;
      if (found) {
        // Rows already in that order (simplify-kernels drops the sort): the reduction reads them once, without a table.
        if (sortedBy(states[found.at]!, found.sort.input, found.sort.keys)) continue;
        // The pipeline reads the sort's input instead: nothing may write that between the two.
        if (rd.clobbers(found.at, i, source)) continue;
      }
      // The pipeline projects only the columns the aggregate reads (narrowing keeps a pipeline's projection whole).
      const used = [...new Set([...k.groupBy, ...k.aggregates.flatMap((a) => (a.column === undefined ? [] : [a.column]))])].sort((x, y) => x - y);
      const at = (c: number): number => used.indexOf(c);
      const project = used.map((c): Expr => ({ kind: 'col', index: c, type: p.variables[source]!.columns[c]! }));
      const origin = { ...(k.origin ? { origin: k.origin } : {}), ...unionOrigins(k.rules) };
      const aggregate = { groupBy: k.groupBy.map(at), aggregates: k.aggregates.map((a) => (a.column === undefined ? a : { ...a, column: at(a.column) })) };
      // Without group columns there is at most one row, in canonical order already.
      const sorted = k.groupBy.length > 0;
      const output = sorted ? variables.length : k.output;
      if (sorted) variables.push({ id: output, name: `%k${output}`, columns: [...p.variables[k.output]!.columns] });
      kernels[k.id] = { kind: 'pipeline', id: k.id, ...origin, input: source, output, filter: [], probes: [], check: [], project, aggregate, fused: [k.id] };
      changed = true;
      if (!sorted) continue;
      const order: KirKernel = { kind: 'sort', id: kernels.length, ...origin, input: output, output: k.output, keys: iota(k.groupBy.length) };
      kernels.push(order);
      added.push({ after: i, command: { kind: 'launch', kernel: order.id } });
    }
    if (added.length === 0) continue;
    const commands = b.commands.flatMap((c, n) => [c, ...added.filter((a) => a.after === n).map((a) => a.command)]);
    blocks = blocks.map((x, n) => (n === bi ? { ...x, commands } : x));
  }
  return changed ? { ...p, kernels, variables, blocks } : p;
}
