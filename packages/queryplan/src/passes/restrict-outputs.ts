/**
 * Compiling for known outputs: the derived relations a caller will not read back become temporaries, so later
 * stages may free them early, keep them in any order and drop work nobody needs (a named intermediate like
 * TPC-H's `line` otherwise stays a sorted, duplicate-free relation for a reader that never comes).
 */
import { errorAt, VixenError } from '../diagnostics.js';
import type { QpProgram, RelationDecl } from '../ir.js';
import { didYouMean, isInternalName } from '../names.js';
import type { QpPass, QpPassContext } from '../pipeline.js';

/**
 * Throws a VixenError naming the `outputs` that are no relation a run can return (temporaries are not), with the
 * nearest known name; the relations the compiler made (`$functional_p`) are not listed.
 */
export function checkOutputNames(relations: readonly RelationDecl[], outputs: readonly string[]): void {
  const known = relations.filter((r) => r.kind !== 'temp').map((r) => r.name);
  const unknown = outputs.filter((o) => !known.includes(o));
  if (unknown.length > 0) {
    const hint = unknown.length === 1 ? didYouMean(unknown[0]!, known) : '';
    const listed = known.filter((n) => !isInternalName(n));
    throw new VixenError(
      errorAt(`unknown output relation${unknown.length > 1 ? 's' : ''}: ${unknown.join(', ')} (known: ${listed.join(', ')})${hint}`),
    );
  }
}

/**
 * `plan` with exactly `outputs` marked output (when given); derived relations not among them become `temp`,
 * except those with inline facts, those a constraint check reads and those in `seeded` (rows from outside, e.g.
 * Soufflé `.input` files). Throws a VixenError naming outputs the program does not have.
 */
export const restrictOutputs = { name: 'restrict-outputs', required: true, run } satisfies QpPass;

function run(plan: QpProgram, { outputs, seeded = [] }: QpPassContext): QpProgram {
  if (!outputs) return plan;
  checkOutputNames(plan.relations, outputs);
  const wanted = new Set(outputs);
  const kept = new Set([...seeded, ...(plan.constraints ?? []).flatMap((c) => (c.kind === 'functional' ? [c.relation, c.text] : [c.relation]))]);
  const relations = plan.relations.map((r) => {
    if (wanted.has(r.name)) return { ...r, output: true };
    const internal = r.kind === 'idb' && !kept.has(r.name) && (plan.facts[r.name]?.length ?? 0) === 0;
    return internal ? { ...r, kind: 'temp' as const, output: false } : { ...r, output: false };
  });
  return { ...plan, relations };
}
