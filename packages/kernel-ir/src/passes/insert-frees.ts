/**
 * Liveness (Red Fox §3.4: storage is time-multiplexed between variables): inserts `free` commands right
 * after the last use of each freeable variable, so the runtime can hand its buffer back to the pool.
 * Freeable means a kernel temporary or a variable of a QP `temp` relation; variables of edb/idb relations
 * stay live to `halt`, because a user may ask to print any of them.
 *
 * Backward dataflow over the CFG gives each block's live-out set, so a value read again after a loop
 * back edge is live through the whole loop body and never freed before that read. A value that dies on
 * a control-flow edge (live at the end of a predecessor, dead on entry to this block) is freed at the
 * start of the block; freeing a variable that holds nothing is a no-op for the runtime.
 */
import type { KirBlock, KirCommand, KirProgram, KirTerminator, VarId } from '../ir.js';
import { kernelInputs, kirSuccessors } from '../ir.js';

interface UseDef {
  uses: VarId[];
  defs: VarId[];
}

function commandUseDef(p: KirProgram, c: KirCommand): UseDef {
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

function terminatorUses(t: KirTerminator): VarId[] {
  switch (t.kind) {
    case 'branch':
      return t.condition.vars;
    case 'jump':
    case 'halt':
      return [];
  }
}

/** Variables live on entry to a block, given the variables live after its terminator. */
function liveIn(p: KirProgram, b: KirBlock, liveOut: ReadonlySet<VarId>): Set<VarId> {
  const live = new Set(liveOut);
  for (const v of terminatorUses(b.terminator)) live.add(v);
  for (let i = b.commands.length - 1; i >= 0; i--) {
    const { uses, defs } = commandUseDef(p, b.commands[i]!);
    for (const v of defs) live.delete(v);
    for (const v of uses) live.add(v);
  }
  return live;
}

function liveOutSets(p: KirProgram): Map<string, Set<VarId>> {
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

function freeCommand(vars: Iterable<VarId>): KirCommand[] {
  const sorted = [...new Set(vars)].sort((a, b) => a - b);
  return sorted.length === 0 ? [] : [{ kind: 'free', vars: sorted }];
}

export function insertFrees(p: KirProgram): KirProgram {
  const freeable = (v: VarId): boolean => {
    const rel = p.variables[v]?.relation;
    return rel === undefined || p.relations.find((r) => r.name === rel)?.kind === 'temp';
  };
  // Recompute from scratch, so running the pass twice gives the same program.
  const stripped: KirProgram = {
    ...p,
    blocks: p.blocks.map((b) => ({ ...b, commands: b.commands.filter((c) => c.kind !== 'free') })),
  };
  const liveOut = liveOutSets(stripped);

  // Variables live at the end of each block's commands (its live-out plus what its branch reads).
  const liveAtEnd = new Map(
    stripped.blocks.map((b) => [b.label, new Set([...liveOut.get(b.label)!, ...terminatorUses(b.terminator)])]),
  );
  const predecessors = new Map<string, string[]>(stripped.blocks.map((b) => [b.label, []]));
  for (const b of stripped.blocks) for (const s of kirSuccessors(b.terminator)) predecessors.get(s)?.push(b.label);

  const blocks = stripped.blocks.map((b): KirBlock => {
    const out: KirCommand[] = [];
    const live = new Set(liveAtEnd.get(b.label)!);
    for (let i = b.commands.length - 1; i >= 0; i--) {
      const c = b.commands[i]!;
      const { uses, defs } = commandUseDef(stripped, c);
      const dead = [...uses, ...defs].filter((v) => !live.has(v) && freeable(v));
      out.push(...freeCommand(dead), c);
      for (const v of defs) live.delete(v);
      for (const v of uses) live.add(v);
    }
    // `live` is now this block's live-in: free what some predecessor left allocated but nothing here reads.
    const diedOnEdge = (predecessors.get(b.label) ?? [])
      .flatMap((pred) => [...liveAtEnd.get(pred)!])
      .filter((v) => !live.has(v) && freeable(v));
    out.push(...freeCommand(diedOnEdge));
    return { ...b, commands: out.reverse() };
  });
  return { ...stripped, blocks };
}
