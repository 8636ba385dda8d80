/**
 * Witnesses of `min`/`max` aggregates, grounded as Soufflé's GroundWitnesses transform does: in
 * `longest(x, y, l) :- l = max m : len(x, y, m).` the head's x and y occur only inside the aggregate, so they are
 * renamed apart inside it and the aggregate's body is added to the rule with its target replaced by the aggregate:
 * `longest(x, y, l) :- l = max m : len(x1, y1, m), len(x, y, max m : len(x1, y1, m)).` Every tuple reaching the
 * extreme value is a witness, so the answer is deterministic. A witness of `count` or `sum` is an error in Soufflé
 * ("witness problem"); witnesses of nested aggregates are not supported.
 */
import type { SourceSpan } from '@vixen/queryplan';
import type { Fresh } from './normalize.js';
import { formulaAggregates, innerAggregates, literals, mapFormula, mapTerm, witnessVars, type Aggregate, type SClause } from './scoping.js';

export function groundWitnesses(clause: SClause, fresh: Fresh, problems: [string, SourceSpan][]): SClause {
  const fixes: { aggregate: Aggregate; witnesses: string[] }[] = [];
  for (const aggregate of clause.body.flatMap(formulaAggregates)) {
    for (const inner of innerAggregates(aggregate)) {
      const w = witnessVars(clause, inner);
      if (w.length > 0) problems.push([`witness ${w.join(', ')} of a nested aggregate (used outside it, grounded only inside it) is not supported`, inner.fnSpan]);
    }
    const witnesses = witnessVars(clause, aggregate);
    if (witnesses.length === 0) continue;
    if (aggregate.fn !== 'min' && aggregate.fn !== 'max') {
      problems.push([`witness problem: ${witnesses.join(', ')} grounded only inside this ${aggregate.fn} aggregate but used outside it; only min and max have witnesses`, aggregate.fnSpan]);
    } else if (aggregate.target?.kind !== 'var') {
      problems.push([`witness ${witnesses.join(', ')} of a ${aggregate.fn} over an expression is not supported (aggregate a variable)`, aggregate.fnSpan]);
    } else {
      fixes.push({ aggregate, witnesses });
    }
  }
  let body = clause.body;
  for (const { aggregate, witnesses } of fixes) {
    const names = new Map(witnesses.map((w) => [w, fresh(`${w}_w`)]));
    const renamed = mapTerm(aggregate, (t) => (t.kind === 'var' && names.has(t.name) ? { ...t, name: names.get(t.name)! } : undefined));
    const target = renamed.kind === 'aggregate' && renamed.target?.kind === 'var' ? renamed.target.name : undefined;
    // Each copy of the aggregate is an aggregate of its own (the scoping analyses tell them apart by identity).
    const copies = literals(aggregate.body).map((l) => mapFormula(l, (t) => (t.kind === 'var' && t.name === target ? structuredClone(renamed) : undefined)));
    body = [...body.map((l) => mapFormula(l, (t) => (t === aggregate ? renamed : undefined))), ...copies];
  }
  return { head: clause.head, body };
}
