/**
 * Drops launches and clears whose result nothing reads: the output is freeable (a temporary or a QP `temp`
 * relation; edb/idb values are outputs) and dead after the command. The kernels stay in `kernels` until
 * compact-kernels renumbers them.
 */
import type { KirBlock, KirCommand, KirProgram } from '../ir.js';
import { commandUseDef, freeableVariable, liveOutSets, terminatorUses } from '../analysis/liveness.js';
import type { KirPass } from '../compile.js';

export const removeDeadKernels = { name: 'remove-dead-kernels', required: false, run } satisfies KirPass;

function run(p: KirProgram): KirProgram {
  const freeable = freeableVariable(p);
  const liveOut = liveOutSets(p);
  let changed = false;
  const blocks = p.blocks.map((b): KirBlock => {
    const live = new Set([...liveOut.get(b.label)!, ...terminatorUses(b.terminator)]);
    const kept: KirCommand[] = [];
    for (let i = b.commands.length - 1; i >= 0; i--) {
      const c = b.commands[i]!;
      const { uses, defs } = commandUseDef(p, c);
      if (c.kind !== 'free' && defs.every((v) => freeable(v) && !live.has(v))) {
        changed = true;
        continue;
      }
      for (const v of defs) live.delete(v);
      for (const v of uses) live.add(v);
      kept.push(c);
    }
    return kept.length === b.commands.length ? b : { ...b, commands: kept.reverse() };
  });
  return changed ? { ...p, blocks } : p;
}
