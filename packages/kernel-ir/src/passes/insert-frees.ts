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
import type { KirBlock, KirCommand, KirProgram, VarId } from '../ir.js';
import { kirSuccessors } from '../ir.js';
import { commandUseDef, freeableVariable, liveOutSets, terminatorUses } from '../analysis/liveness.js';
import type { KirPass } from '../compile.js';

function freeCommand(vars: Iterable<VarId>): KirCommand[] {
  const sorted = [...new Set(vars)].sort((a, b) => a - b);
  return sorted.length === 0 ? [] : [{ kind: 'free', vars: sorted }];
}

export const insertFrees = { name: 'insert-frees', required: true, run } satisfies KirPass;

function run(p: KirProgram): KirProgram {
  const freeable = freeableVariable(p);
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
