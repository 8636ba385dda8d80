/**
 * Range restriction: every variable of the head, of a negated atom and of a comparison must be bound by a
 * positive body atom or by an assignment `v = expr` whose right side is bound, so each rule denotes a finite
 * relation. This pass also decides which `=` comparisons are such assignments, and orders them. `_` only
 * makes sense inside a body atom. Unsafe rules are dropped (their heads marked incomplete) so later passes only
 * see safe ones.
 */
import { errorAt, type Diagnostic } from '@vixen/queryplan';
import type { CoreAssignment, CoreComparison, CoreRule, ResolvedProgram, SimpleTerm } from './program.js';

/** Variable occurrences in a term, left to right. */
export function termVars(t: SimpleTerm): Extract<SimpleTerm, { kind: 'var' }>[] {
  switch (t.kind) {
    case 'var':
      return [t];
    case 'binary':
      return [...termVars(t.left), ...termVars(t.right)];
    case 'call':
      return t.args.flatMap(termVars);
    default:
      return [];
  }
}

function wildcards(t: SimpleTerm): SimpleTerm[] {
  if (t.kind === 'call') return t.args.flatMap(wildcards);
  return t.kind === 'wildcard' ? [t] : t.kind === 'binary' ? [...wildcards(t.left), ...wildcards(t.right)] : [];
}

/**
 * Splits `rule.comparisons` into assignments (an `=` with a variable on one side that nothing else binds and
 * a bound other side) and filters, binding assigned variables in turn.
 */
function findAssignments(rule: CoreRule, bound: Set<string>): { assignments: CoreAssignment[]; comparisons: CoreComparison[] } {
  const assignments: CoreAssignment[] = [];
  let rest = [...rule.comparisons];
  const isBound = (t: SimpleTerm) => wildcards(t).length === 0 && termVars(t).every((v) => bound.has(v.name));
  for (let found = true; found; ) {
    found = false;
    for (const c of rest) {
      if (c.op !== '=') continue;
      const sides: [SimpleTerm, SimpleTerm][] = [
        [c.left, c.right],
        [c.right, c.left],
      ];
      const pick = sides.find(([target, value]) => target.kind === 'var' && !bound.has(target.name) && isBound(value));
      if (!pick) continue;
      const name = (pick[0] as Extract<SimpleTerm, { kind: 'var' }>).name;
      assignments.push({ name, expr: pick[1], span: c.span });
      bound.add(name);
      rest = rest.filter((x) => x !== c);
      found = true;
      break;
    }
  }
  return { assignments, comparisons: rest };
}

export function checkSafety(program: ResolvedProgram, diagnostics: Diagnostic[]): ResolvedProgram {
  const incomplete = new Set(program.incomplete);
  const rules: CoreRule[] = [];
  for (const rule of program.rules) {
    const before = diagnostics.length;
    if (rule.atoms.length === 0) {
      diagnostics.push(errorAt('unsafe rule: expected at least one positive atom in the body', rule.span));
    }
    const bound = new Set(rule.atoms.flatMap((a) => a.args.flatMap((t) => termVars(t).map((v) => v.name))));
    const { assignments, comparisons } = findAssignments(rule, bound);
    const check = (t: SimpleTerm, where: string, unbound: (name: string) => string): void => {
      for (const w of wildcards(t)) {
        diagnostics.push(errorAt(`_ is not allowed in ${where}; expected a variable or a constant`, w.span));
      }
      for (const v of termVars(t)) if (!bound.has(v.name)) diagnostics.push(errorAt(unbound(v.name), v.span));
    };
    const notBound = (where: string) => (name: string) =>
      `unsafe rule: variable ${name} in ${where} is not bound by a positive atom in the body`;
    // A variable whose assignment failed is reported there, not again at each use.
    const failed = new Set<string>();
    for (const c of comparisons) {
      // `v = expr` with v free everywhere else is a failed assignment: blame the unbound right side.
      const target = c.op !== '=' ? undefined : [c.left, c.right].find((t) => t.kind === 'var' && !bound.has(t.name));
      if (target?.kind === 'var') {
        const value = target === c.left ? c.right : c.left;
        if (termVars(value).some((v) => !bound.has(v.name)) || wildcards(value).length > 0) {
          failed.add(target.name);
          check(value, 'an assignment', (name) => `unsafe assignment to ${target.name}: variable ${name} is not bound by a positive atom or an earlier assignment`);
          continue;
        }
      }
      check(c.left, 'a comparison', notBound('a comparison'));
      check(c.right, 'a comparison', notBound('a comparison'));
    }
    for (const v of failed) bound.add(v);
    for (const b of rule.aggregate ?? []) {
      if (b.arg !== undefined && !bound.has(b.arg)) {
        diagnostics.push(errorAt(`unsafe aggregate: variable ${b.arg} in ${b.fn}(${b.arg}) is not bound by a positive atom in the aggregated body`, b.span));
      }
      if (bound.has(b.target)) {
        diagnostics.push(errorAt(`bad aggregate use: ${b.target} is already bound in the aggregated body; expected a new variable for the result`, b.span));
      }
    }
    for (const b of rule.aggregate ?? []) bound.add(b.target);
    for (const t of rule.head.args) check(t, 'the head', notBound('the head'));
    for (const a of rule.negated) {
      // `_` in a negated atom means "any value": !edge(x, _) holds when x has no edge at all.
      for (const v of a.args.flatMap(termVars)) {
        if (!bound.has(v.name)) {
          diagnostics.push(errorAt(`unsafe negation: variable ${v.name} in !${a.pred}(...) is not bound by a positive atom in the body`, v.span));
        }
      }
    }
    if (diagnostics.length === before) rules.push({ ...rule, assignments, comparisons });
    else incomplete.add(rule.head.pred);
  }
  return { ...program, rules, incomplete };
}
