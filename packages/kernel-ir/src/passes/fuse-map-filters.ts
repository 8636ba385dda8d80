/**
 * Fusion (Red Fox §4 kernel fusion, first step): `t := mapFilter a where F1 -> P1` followed by
 * `u := mapFilter t where F2 -> P2`, where that is the only read of t's value, becomes
 * `u := mapFilter a where F1 and F2[P1] -> P2[P1]` (column n of t replaced by P1[n]): one launch and no
 * intermediate buffer. Arithmetic and built-ins are total (arith.ts), so evaluating P1 inside the fused filter
 * on rows F1 rejects changes nothing. The fused kernel lists the lowered kernels it stands for in `fused`.
 */
import type { KirKernel, KirProgram, VarId } from '../ir.js';
import { substitute, substitutePredicate } from './exprs.js';
import { commandUseDef, freeableVariable, liveOutSets, terminatorUses } from './liveness.js';

type MapFilter = Extract<KirKernel, { kind: 'mapFilter' }>;

function fuse(first: MapFilter, second: MapFilter): MapFilter {
  return {
    ...second,
    input: first.input,
    filter: [...first.filter.map((f) => substitutePredicate(f)), ...second.filter.map((f) => substitutePredicate(f, first.project))],
    project: second.project.map((e) => substitute(e, first.project)),
    fused: [...(first.fused ?? [first.id]), ...(second.fused ?? [second.id])],
  };
}

export function fuseMapFilters(p: KirProgram): KirProgram {
  const kernels = [...p.kernels];
  const freeable = freeableVariable(p);
  const liveOut = liveOutSets(p);
  let changed = false;
  for (const b of p.blocks) {
    const useDef = b.commands.map((c) => commandUseDef({ ...p, kernels }, c));
    const liveAfter: Array<Set<VarId>> = [];
    const live = new Set([...liveOut.get(b.label)!, ...terminatorUses(b.terminator)]);
    for (let j = b.commands.length - 1; j >= 0; j--) {
      liveAfter[j] = new Set(live);
      for (const v of useDef[j]!.defs) live.delete(v);
      for (const v of useDef[j]!.uses) live.add(v);
    }
    const freed = (n: number, v: VarId): boolean => {
      const c = b.commands[n]!;
      return c.kind === 'free' && c.vars.includes(v);
    };
    // One fusion per block and round: it changes the block's liveness (fixpoint repeats the pass), not other blocks'.
    for (let j = 0, fusedHere = false; j < b.commands.length && !fusedHere; j++) {
      const cj = b.commands[j]!;
      if (cj.kind !== 'launch') continue;
      const second = kernels[cj.kernel]!;
      if (second.kind !== 'mapFilter') continue;
      const t = second.input;
      if (!freeable(t) || liveAfter[j]!.has(t)) continue;
      let i = j - 1;
      while (i >= 0 && !useDef[i]!.uses.includes(t) && !useDef[i]!.defs.includes(t) && !freed(i, t)) i--;
      const ci = b.commands[i];
      if (ci?.kind !== 'launch') continue;
      const first = kernels[ci.kernel]!;
      if (first.kind !== 'mapFilter' || first.output !== t || first.input === t) continue;
      let clobbered = false;
      for (let n = i + 1; n < j; n++) if (useDef[n]!.defs.includes(first.input) || freed(n, first.input)) clobbered = true;
      if (clobbered) continue;
      kernels[cj.kernel] = fuse(first, second);
      fusedHere = true;
      changed = true;
    }
  }
  return changed ? { ...p, kernels } : p;
}
