/**
 * Liveness of KIR variables, shared by the passes that need it: per-command uses and definitions, and the
 * variables live after each block (backward dataflow over the CFG to a fixpoint).
 */
import type { KirBlock, KirCommand, KirKernel, KirProgram, KirTerminator, VarId } from '../ir.js';
import { kernelInputs, kirSuccessors } from '../ir.js';

export interface UseDef {
  uses: VarId[];
  defs: VarId[];
}

export function commandUseDef(p: KirProgram, c: KirCommand): UseDef {
  switch (c.kind) {
    case 'launch': {
      const k = p.kernels[c.kernel]!;
      return { uses: kernelInputs(k), defs: [k.output] };
    }
    case 'clear':
      return { uses: [], defs: [c.var] };
    case 'free':
      return { uses: [], defs: [] };
  }
}

export function terminatorUses(t: KirTerminator): VarId[] {
  switch (t.kind) {
    case 'branch':
      return t.condition.vars;
    case 'jump':
    case 'halt':
      return [];
  }
}

/** Variables live on entry to a block, given the variables live after its terminator. */
export function liveIn(p: KirProgram, b: KirBlock, liveOut: ReadonlySet<VarId>): Set<VarId> {
  const live = new Set(liveOut);
  for (const v of terminatorUses(b.terminator)) live.add(v);
  for (let i = b.commands.length - 1; i >= 0; i--) {
    const { uses, defs } = commandUseDef(p, b.commands[i]!);
    for (const v of defs) live.delete(v);
    for (const v of uses) live.add(v);
  }
  return live;
}

export function liveOutSets(p: KirProgram): Map<string, Set<VarId>> {
  const byLabel = new Map(p.blocks.map((b) => [b.label, b]));
  const liveOut = new Map(p.blocks.map((b) => [b.label, new Set<VarId>()]));
  const liveInOf = new Map(p.blocks.map((b) => [b.label, new Set<VarId>()]));
  for (let changed = true; changed; ) {
    changed = false;
    // Reverse block order converges fast for the mostly-forward CFGs plans produce.
    for (let i = p.blocks.length - 1; i >= 0; i--) {
      const b = p.blocks[i]!;
      const out = liveOut.get(b.label)!;
      for (const s of kirSuccessors(b.terminator)) {
        if (!byLabel.has(s)) continue;
        for (const v of liveInOf.get(s)!) {
          if (!out.has(v)) {
            out.add(v);
            changed = true;
          }
        }
      }
      // Live-in sets only grow, so a size change is a change (a back edge may have read the old one).
      const inSet = liveIn(p, b, out);
      if (inSet.size !== liveInOf.get(b.label)!.size) changed = true;
      liveInOf.set(b.label, inSet);
    }
  }
  return liveOut;
}

/**
 * Whether a variable's buffer may be freed before `halt`: kernel temporaries and variables of QP `temp` relations.
 * Variables of edb/idb relations stay live to the end, because a user may ask to print any of them.
 */
export function freeableVariable(p: KirProgram): (v: VarId) => boolean {
  const temp = new Set(p.relations.filter((r) => r.kind === 'temp').map((r) => r.name));
  return (v) => {
    const rel = p.variables[v]?.relation;
    return rel === undefined || temp.has(rel);
  };
}

/**
 * For the fusion passes, per block: `producer(j, t)` is the index of the launch whose value of `t` command `j`
 * alone reads (t freeable, dead after j, read by nothing in between), provided the producer does not read t
 * itself and nothing between the two redefines or frees what the producer reads (the fused kernel, launched at
 * j, reads those instead of t). `kernels` is the caller's working copy of p.kernels.
 */
function soleProducer(p: KirProgram, kernels: readonly KirKernel[], b: KirBlock, liveOut: ReadonlySet<VarId>): (j: number, t: VarId) => number | undefined {
  const freeable = freeableVariable(p);
  const useDef = b.commands.map((c) => commandUseDef({ ...p, kernels: [...kernels] }, c));
  const liveAfter: Array<Set<VarId>> = [];
  const live = new Set([...liveOut, ...terminatorUses(b.terminator)]);
  for (let j = b.commands.length - 1; j >= 0; j--) {
    liveAfter[j] = new Set(live);
    for (const v of useDef[j]!.defs) live.delete(v);
    for (const v of useDef[j]!.uses) live.add(v);
  }
  const freed = (n: number, v: VarId): boolean => {
    const c = b.commands[n]!;
    return c.kind === 'free' && c.vars.includes(v);
  };
  return (j, t) => {
    if (!freeable(t) || liveAfter[j]!.has(t)) return undefined;
    let i = j - 1;
    while (i >= 0 && !useDef[i]!.uses.includes(t) && !useDef[i]!.defs.includes(t) && !freed(i, t)) i--;
    const ci = b.commands[i];
    if (ci?.kind !== 'launch') return undefined;
    const first = kernels[ci.kernel]!;
    const inputs = kernelInputs(first);
    if (first.output !== t || inputs.includes(t)) return undefined;
    for (let n = i + 1; n < j; n++) if (inputs.some((v) => useDef[n]!.defs.includes(v) || freed(n, v))) return undefined;
    return i;
  };
}

/**
 * The fusion passes' round: in each block, the first launch whose kernel `fuse` merges with the launches that alone
 * produce what it reads (`producerOf(t)`: that launch's kernel, as soleProducer finds it, else undefined) gets the
 * fused kernel. One fusion per block and round: each changes the block's liveness (the pipeline repeats the pass),
 * not other blocks'. The new program, or `p` unchanged.
 */
export function fuseWithProducers(p: KirProgram, fuse: (k: KirKernel, producerOf: (t: VarId) => KirKernel | undefined) => KirKernel | undefined): KirProgram {
  const kernels = [...p.kernels];
  const liveOut = liveOutSets(p);
  let changed = false;
  for (const b of p.blocks) {
    const producer = soleProducer(p, kernels, b, liveOut.get(b.label)!);
    for (let j = 0; j < b.commands.length; j++) {
      const cj = b.commands[j]!;
      if (cj.kind !== 'launch') continue;
      const producerOf = (t: VarId): KirKernel | undefined => {
        const ci = b.commands[producer(j, t) ?? -1];
        return ci?.kind === 'launch' ? kernels[ci.kernel] : undefined;
      };
      const fused = fuse(kernels[cj.kernel]!, producerOf);
      if (!fused) continue;
      kernels[cj.kernel] = fused;
      changed = true;
      break;
    }
  }
  return changed ? { ...p, kernels } : p;
}
