/**
 * Soufflé's `btree_min` and `btree_max` relations keep, per key (every column but the last), the least or greatest
 * last column over all derivations. That is a lattice predicate (LANGUAGE.md "Recursion through min and max"):
 * the relation's own rules stay plain rules, and one more rule `p(k..., v) <- agg<<v = min(c)>> p(k..., c).`
 * makes it recurse through min, so the plan keeps one value per key and merges values as they improve.
 */
import type { SourceSpan } from '@vixen/queryplan';
import type { Clause, Term } from '../syntax/ast.js';

/** The qualifiers that make a relation a lattice, and the aggregate each combines values by. */
export const LATTICE_QUALIFIERS: Readonly<Record<string, 'min' | 'max'>> = { btree_min: 'min', btree_max: 'max' };

/** `p(k..., v) <- agg<<v = fn(c)>> p(k..., c).` for relation `rel` of `arity` columns. */
export function latticeRule(rel: string, arity: number, fn: 'min' | 'max', span: SourceSpan): Clause {
  const v = (name: string): Term => ({ kind: 'var', name, span });
  const keys = Array.from({ length: arity - 1 }, (_, i) => v(`$k${i}`));
  const atom = (value: string) => ({ kind: 'atom' as const, pred: rel, args: [...keys, v(value)], span, predSpan: span });
  return {
    kind: 'rule',
    head: atom('$v'),
    body: { kind: 'agg', bindings: [{ target: '$v', fn, args: [v('$c')], span }], body: atom('$c'), span },
    span,
  };
}
