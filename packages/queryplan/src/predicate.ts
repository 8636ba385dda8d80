/** Walks over predicates: an `any` nests conjunctions of predicates, so its comparisons' operands are reached here. */
import type { Expr, Predicate } from './ir.js';

/** The comparisons' operands of `p`, left before right, an `any`'s alternatives in order. */
export function predicateOperands(p: Predicate): Expr[] {
  switch (p.kind) {
    case 'compare':
      return [p.left, p.right];
    case 'any':
      return p.alternatives.flatMap((alt) => alt.flatMap(predicateOperands));
  }
}

/** `p` with every comparison operand replaced by `f` of it. */
export function mapOperands(p: Predicate, f: (e: Expr) => Expr): Predicate {
  switch (p.kind) {
    case 'compare':
      return { ...p, left: f(p.left), right: f(p.right) };
    case 'any':
      return { kind: 'any', alternatives: p.alternatives.map((alt) => alt.map((q) => mapOperands(q, f))) };
  }
}
