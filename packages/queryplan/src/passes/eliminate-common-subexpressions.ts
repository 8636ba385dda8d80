/**
 * Common subexpression elimination on the plan: within a block, a command into a temporary that repeats an
 * earlier one (same kind, inputs, keys, filter and projection; no input written in between) is dropped, and
 * its target read as the earlier target instead. Rules with the same body prefix (rules for several heads over
 * the same join, the variants of a disjunction) then share their mapFilters, mapJoins, anti-joins and aggregates.
 */
import { commandInputs, relationUses, type QpCommand, type QpProgram } from '../ir.js';
import { printCommand } from '../print.js';
import { unionOrigins } from '../rule-origin.js';
import type { QpPass } from '../pipeline.js';

/** The command with every relation it reads renamed through `rename`. */
function renameInputs(c: QpCommand, rename: (name: string) => string): QpCommand {
  switch (c.kind) {
    case 'mapFilter':
    case 'copy':
    case 'aggregate':
    case 'limit':
      return { ...c, source: rename(c.source) };
    case 'mapJoin':
    case 'union':
    case 'difference':
      return { ...c, left: rename(c.left), right: rename(c.right) };
    case 'clear':
      return c;
  }
}

export const eliminateCommonSubexpressions = { name: 'eliminate-common-subexpressions', required: false, run } satisfies QpPass;

function run(plan: QpProgram): QpProgram {
  const kinds = new Map(plan.relations.map((r) => [r.name, r.kind]));
  const { writes } = relationUses(plan);
  // Only temporaries written once are merged: each then always holds the value of its one command.
  const single = (name: string): boolean => kinds.get(name) === 'temp' && writes.get(name) === 1;
  const types = new Map(plan.relations.map((r) => [r.name, r.columns.map((col) => col.type).join()]));

  const renamed = new Map<string, string>();
  const rename = (name: string): string => renamed.get(name) ?? name;
  const blocks = plan.blocks.map((b) => {
    /** Computation text (the command without its target) -> the temporary holding it and what it read. */
    const available = new Map<string, { target: string; inputs: string[]; at: number }>();
    const commands: QpCommand[] = [];
    for (const original of b.commands) {
      const c = renameInputs(original, rename);
      const key = c.kind === 'clear' ? undefined : printCommand({ ...c, target: '' });
      const earlier = key === undefined ? undefined : available.get(key);
      if (earlier && single(c.target) && types.get(earlier.target) === types.get(c.target)) {
        renamed.set(c.target, earlier.target);
        const kept = commands[earlier.at]!;
        commands[earlier.at] = { ...kept, ...unionOrigins(kept.rules, c.rules) };
        continue;
      }
      commands.push(c);
      // A write invalidates what was computed from the old value.
      for (const [k, a] of available) if (a.target === c.target || a.inputs.includes(c.target)) available.delete(k);
      if (key !== undefined && single(c.target)) available.set(key, { target: c.target, inputs: commandInputs(c), at: commands.length - 1 });
    }
    return { ...b, commands };
  });
  if (renamed.size === 0) return plan;
  return {
    ...plan,
    relations: plan.relations.filter((r) => !renamed.has(r.name)),
    // Again over every block: one placed before a merge may read the dropped temporary too.
    blocks: blocks.map((b) => {
      const t = b.terminator;
      const commands = b.commands.map((c) => renameInputs(c, rename));
      return { ...b, commands, terminator: t.kind === 'branch' ? { ...t, condition: { ...t.condition, relations: t.condition.relations.map(rename) } } : t };
    }),
  };
}
