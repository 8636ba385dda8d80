/**
 * Fusion (Red Fox §4 kernel fusion, first step): `t := mapFilter a where F1 -> P1` followed by
 * `u := mapFilter t where F2 -> P2`, where that is the only read of t's value, becomes
 * `u := mapFilter a where F1 and F2[P1] -> P2[P1]` (column n of t replaced by P1[n]): one launch and no
 * intermediate buffer. Arithmetic and built-ins are total (arith.ts), so evaluating P1 inside the fused filter
 * on rows F1 rejects changes nothing. The fused kernel lists the lowered kernels it stands for in `fused`.
 */
import type { Expr, Predicate } from '@vixen/queryplan';
import type { KirKernel, KirProgram, VarId } from '../ir.js';
import { commandUseDef, freeableVariable, liveOutSets, terminatorUses } from './liveness.js';

type MapFilter = Extract<KirKernel, { kind: 'mapFilter' }>;

/** A fresh copy of `e` (codegen keys constants by node, so a fused kernel shares no node with another). */
function clone(e: Expr): Expr {
  return substitute(e, undefined);
}

/** `e` over the columns `project` computes (`project` absent: `e` itself), built from fresh nodes. */
function substitute(e: Expr, project: readonly Expr[] | undefined): Expr {
  switch (e.kind) {
    case 'col':
      return project ? clone(project[e.index]!) : { ...e };
    case 'const':
      return { ...e };
    case 'binary':
      return { ...e, left: substitute(e.left, project), right: substitute(e.right, project) };
    case 'call':
      return { ...e, args: e.args.map((a) => substitute(a, project)) };
  }
}

function fuse(first: MapFilter, second: MapFilter): MapFilter {
  const over = (e: Expr): Expr => substitute(e, first.project);
  const filter: Predicate[] = [
    ...first.filter.map((f) => ({ ...f, left: clone(f.left), right: clone(f.right) })),
    ...second.filter.map((f) => ({ ...f, left: over(f.left), right: over(f.right) })),
  ];
  return {
    ...second,
    input: first.input,
    filter,
    project: second.project.map(over),
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
