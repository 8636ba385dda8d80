/**
 * Makes copies (`x := copy y`) dead, within each block, for remove-dead-kernels to drop:
 * - forward: while neither x nor y is written again (a kernel's output replaces its variable's old value, so a
 *   write to either ends the alias), a later read of x reads y instead when x is freeable (the copy then dies);
 *   when only y is freeable (x holds a QP edb/idb relation, which lives to the end), a later read of y reads x,
 *   so that the copy is y's last read and coalescing can write x in its place;
 * - backward (coalescing): `t := K(...)` ... `x := copy t`, where that copy is the only read of the value and
 *   nothing between reads or writes x, becomes `x := K(...)`.
 */
import { withInputs, type KirBlock, type KirCommand, type KirKernel, type KirProgram, type VarId } from '../ir.js';
import { commandUseDef, freeableVariable, liveOutSets, terminatorUses } from '../analysis/liveness.js';
import type { KirPass } from '../compile.js';

type Freeable = (v: VarId) => boolean;

function forward(freeable: Freeable, kernels: KirKernel[], b: KirBlock): KirBlock {
  /** Variable -> the variable its reads go to instead (both hold the same value). */
  const alias = new Map<VarId, VarId>();
  const kill = (v: VarId): void => {
    for (const [x, y] of [...alias]) if (x === v || y === v) alias.delete(x);
  };
  const through = (v: VarId): VarId => alias.get(v) ?? v;
  for (const c of b.commands) {
    if (c.kind === 'launch') {
      const k = withInputs(kernels[c.kernel]!, through);
      kernels[c.kernel] = k;
      kill(k.output);
      if (k.kind === 'copy' && k.input !== k.output) {
        if (freeable(k.output)) alias.set(k.output, k.input);
        else if (freeable(k.input)) alias.set(k.input, k.output);
      }
    } else {
      for (const v of c.kind === 'free' ? c.vars : [c.var]) kill(v);
    }
  }
  const t = b.terminator;
  if (t.kind !== 'branch' || t.condition.vars.every((v) => through(v) === v)) return b;
  return { ...b, terminator: { ...t, condition: { ...t.condition, vars: t.condition.vars.map(through) } } };
}

/** One coalescing in `commands` (returns the new list), or undefined when none applies. */
function coalesceOnce(
  p: KirProgram,
  freeable: Freeable,
  kernels: KirKernel[],
  commands: readonly KirCommand[],
  liveAtEnd: ReadonlySet<VarId>,
): KirCommand[] | undefined {
  const useDef = commands.map((c) => commandUseDef({ ...p, kernels }, c));
  // liveAfter[j]: variables read after command j before being written again.
  const liveAfter: Array<Set<VarId>> = [];
  const live = new Set(liveAtEnd);
  for (let j = commands.length - 1; j >= 0; j--) {
    liveAfter[j] = new Set(live);
    for (const v of useDef[j]!.defs) live.delete(v);
    for (const v of useDef[j]!.uses) live.add(v);
  }
  const touches = (c: KirCommand, v: VarId, i: number): boolean =>
    c.kind === 'free' ? c.vars.includes(v) : useDef[i]!.uses.includes(v) || useDef[i]!.defs.includes(v);
  for (let j = 0; j < commands.length; j++) {
    const cj = commands[j]!;
    if (cj.kind !== 'launch') continue;
    const copy = kernels[cj.kernel]!;
    if (copy.kind !== 'copy' || copy.input === copy.output) continue;
    const t = copy.input;
    const x = copy.output;
    if (!freeable(t) || liveAfter[j]!.has(t)) continue;
    let i = j - 1;
    while (i >= 0 && !touches(commands[i]!, t, i) && !touches(commands[i]!, x, i)) i--;
    const ci = commands[i];
    if (ci?.kind !== 'launch') continue;
    const k = kernels[ci.kernel]!;
    // The value must come from a kernel that does not also read x (no in-place rewrite of x).
    if (k.output !== t || useDef[i]!.uses.includes(x)) continue;
    kernels[ci.kernel] = { ...k, output: x };
    return commands.filter((_, n) => n !== j);
  }
  return undefined;
}

export const propagateCopies = { name: 'propagate-copies', required: false, run } satisfies KirPass;

function run(p: KirProgram): KirProgram {
  const kernels = [...p.kernels];
  const freeable = freeableVariable(p);
  const forwarded = p.blocks.map((b) => forward(freeable, kernels, b));
  const liveOut = liveOutSets({ ...p, kernels, blocks: forwarded });
  const blocks = forwarded.map((b) => {
    const liveAtEnd = new Set([...liveOut.get(b.label)!, ...terminatorUses(b.terminator)]);
    let commands: KirCommand[] = b.commands;
    const coalesce = (): KirCommand[] | undefined => coalesceOnce(p, freeable, kernels, commands, liveAtEnd);
    for (let next = coalesce(); next; next = coalesce()) commands = next;
    return commands === b.commands ? b : { ...b, commands };
  });
  const changed = kernels.some((k, i) => k !== p.kernels[i]) || blocks.some((b, i) => b !== p.blocks[i]);
  return changed ? { ...p, kernels, blocks } : p;
}
