/**
 * An aggregate with no group-by reduces all rows as one group, in any order: when its input is a sort whose
 * result nothing else reads, the aggregate reads the sort's input instead (remove-dead-kernels then drops the
 * sort). Kept for float32 sums and averages, whose rounding depends on the order of the rows.
 */
import type { KirBlock, KirKernel, KirProgram, VarId } from '../ir.js';
import { commandUseDef, liveOutSets, terminatorUses } from './liveness.js';

function orderInsensitive(p: KirProgram, k: Extract<KirKernel, { kind: 'aggregate' }>): boolean {
  return k.aggregates.every(
    (a) => (a.fn !== 'sum' && a.fn !== 'avg') || a.column === undefined || p.variables[k.input]!.columns[a.column] !== 'float32',
  );
}

export function elideAggregateSorts(p: KirProgram): KirProgram {
  const kernels = [...p.kernels];
  const liveOut = liveOutSets(p);
  for (const b of p.blocks) {
    const useDef = b.commands.map((c) => commandUseDef(p, c));
    const liveAfter: Array<Set<VarId>> = [];
    const live = new Set([...liveOut.get(b.label)!, ...terminatorUses(b.terminator)]);
    for (let j = b.commands.length - 1; j >= 0; j--) {
      liveAfter[j] = new Set(live);
      for (const v of useDef[j]!.defs) live.delete(v);
      for (const v of useDef[j]!.uses) live.add(v);
    }
    b.commands.forEach((c, j) => {
      if (c.kind !== 'launch') return;
      const agg = kernels[c.kernel]!;
      if (agg.kind !== 'aggregate' || agg.groupBy.length > 0 || liveAfter[j]!.has(agg.input) || !orderInsensitive(p, agg)) return;
      const s = agg.input;
      let i = j - 1;
      while (i >= 0 && !useDef[i]!.uses.includes(s) && !useDef[i]!.defs.includes(s) && !isFreeOf(b, i, s)) i--;
      const ci = b.commands[i];
      if (ci?.kind !== 'launch') return;
      const sort = kernels[ci.kernel]!;
      if (sort.kind !== 'sort' || sort.output !== s || sort.input === s) return;
      const x = sort.input;
      for (let n = i + 1; n < j; n++) if (useDef[n]!.defs.includes(x) || isFreeOf(b, n, x)) return;
      kernels[c.kernel] = { ...agg, input: x };
    });
  }
  return kernels.some((k, i) => k !== p.kernels[i]) ? { ...p, kernels } : p;
}

function isFreeOf(b: KirBlock, i: number, v: VarId): boolean {
  const c = b.commands[i]!;
  return c.kind === 'free' && c.vars.includes(v);
}
