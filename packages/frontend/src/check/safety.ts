/**
 * Range restriction: every variable of the head and of a comparison must be bound by a positive body atom,
 * so each rule denotes a finite relation. `_` only makes sense inside a body atom. Unsafe rules are dropped
 * (their heads marked incomplete) so later passes only see safe ones.
 */
import { errorAt, type Diagnostic } from '@vixen/queryplan';
import type { ResolvedProgram, SimpleTerm } from './program.js';

export function checkSafety(program: ResolvedProgram, diagnostics: Diagnostic[]): ResolvedProgram {
  const incomplete = new Set(program.incomplete);
  const rules = program.rules.filter((rule) => {
    const before = diagnostics.length;
    if (rule.atoms.length === 0) {
      diagnostics.push(errorAt('unsafe rule: expected at least one positive atom in the body', rule.span));
    }
    const bound = new Set(rule.atoms.flatMap((a) => a.args.flatMap((t) => (t.kind === 'var' ? [t.name] : []))));
    const check = (t: SimpleTerm, where: string): void => {
      if (t.kind === 'wildcard') {
        diagnostics.push(errorAt(`_ is not allowed in ${where}; expected a variable or a constant`, t.span));
      } else if (t.kind === 'var' && !bound.has(t.name)) {
        diagnostics.push(
          errorAt(`unsafe rule: variable ${t.name} in ${where} is not bound by a positive atom in the body`, t.span),
        );
      }
    };
    for (const t of rule.head.args) check(t, 'the head');
    for (const c of rule.comparisons) {
      check(c.left, 'a comparison');
      check(c.right, 'a comparison');
    }
    if (diagnostics.length === before) return true;
    incomplete.add(rule.head.pred);
    return false;
  });
  return { preds: program.preds, rules, incomplete };
}
