/**
 * Soufflé aggregates are values inside a rule (`n = count : { edge(x, _) }`), evaluated per binding of the
 * variables injected into them (scoping.ts); every other variable of the aggregate is local to it. LogiQL
 * aggregates are whole rules grouped by their head. So each aggregate is lifted into a helper rule
 * `$aggK(g..., r) <- agg<<r = fn(v)>> body`, grouped by the injected variables g, and the aggregate's place in
 * the rule becomes a variable read from `$aggK`. A count or sum over no tuples is 0 in Soufflé, so there the rule
 * also accepts `!$aggK(g..., _), r = 0`; with no injected variables that alternative reads the one-row relation
 * `$unit` so that it still has a positive atom.
 *
 * Soufflé aggregates over the tuples of a single-atom body as they are, but materialises a body of several atoms
 * (or with a nested aggregate, or a variable repeated in its atom) into a relation of the injected and local
 * variables only, dropping `_` columns: a sum there adds each distinct value once per distinct binding of the named
 * variables. Such a body becomes the helper rule `$aggK_body(g..., locals...)` that the aggregate then reads. The
 * same helper carries an atom of the rule grounding an injected variable that the body does not bind (`y < x`), as
 * Soufflé adds one.
 */
import type { SourceSpan } from '@vixen/queryplan';
import type { AggregateFn, SAtom, SFormula, STerm } from './ast.js';
import type { Fresh } from './normalize.js';
import {
  formulaAggregates,
  groundedVars,
  injectedVars,
  innerAggregates,
  literals,
  mapFormula,
  termVars,
  type Aggregate,
  type SClause,
} from './scoping.js';

/** A lifted aggregate: `head <- agg<<result = fn(arg)>> body`, the body free of aggregates. */
export interface AggregateRule {
  head: SAtom;
  result: string;
  fn: AggregateFn;
  /** The aggregated variable; absent for count. */
  arg?: string;
  body: SFormula[];
  span: SourceSpan;
}

export interface Lifted {
  /** The clause, each aggregate replaced by a variable read from its helper relation. */
  clause: SClause;
  aggregates: AggregateRule[];
  /** Materialised aggregate bodies: plain clauses, which may hold aggregates in turn (lift them again). */
  helpers: SClause[];
  usesUnit: boolean;
}

type Var = Extract<STerm, { kind: 'var' }>;

/** A relation holding the single fact `$unit(0).` (see above). */
export const UNIT = '$unit';

export function liftAggregates(clause: SClause, fresh: Fresh, problems: [string, SourceSpan][]): Lifted {
  const found: { aggregate: Aggregate; result: Var }[] = [];
  const replace = (t: STerm): STerm | undefined => {
    if (t.kind !== 'aggregate') return undefined;
    const result: Var = { kind: 'var', name: fresh('agg'), span: t.span };
    found.push({ aggregate: t, result });
    return result;
  };
  const body = clause.body.map((l) => mapFormula(l, replace));
  if (found.length === 0) return { clause, aggregates: [], helpers: [], usesUnit: false };
  const aggregates: AggregateRule[] = [];
  const helpers: SClause[] = [];
  const reads: SFormula[] = [];
  let usesUnit = false;
  for (const { aggregate, result } of found) {
    const span = aggregate.span;
    const variable = (name: string): Var => ({ kind: 'var', name, span });
    const group = injectedVars(clause, aggregate).map(variable);
    const rel = result.name;
    let aggBody = literals(aggregate.body);
    const atoms = aggBody.filter((l): l is SAtom => l.kind === 'atom');
    // Decided on the body as written (normalize.ts): a guess here could sum other tuples than Soufflé does.
    if (aggregate.materialized === undefined) throw new Error(`internal: aggregate at ${aggregate.span.start.line}:${aggregate.span.start.column} was not normalised`);
    const materialized = aggregate.materialized;
    const bound = groundedVars(aggBody, () => 'grounded');
    const grounding = group.filter((v) => !bound.has(v.name)).map((v) => groundingAtom(clause.body, v, problems));
    if (materialized || grounding.length > 0) {
      if (aggregate.fn === 'count' && materialized && atoms.some((a) => a.args.some((t) => t.kind === 'wildcard'))) {
        // Which columns Soufflé counts distinct tuples of here has changed between its versions.
        problems.push(['count over several atoms with _ arguments is not supported: name the _ variables', aggregate.fnSpan]);
      }
      let columns: string[];
      if (materialized) {
        const innerLocals = new Set(innerAggregates(aggregate).flatMap((b) => termVars(b).filter((v) => !injectedVars(clause, b).includes(v))));
        columns = termVars(aggregate).filter((v) => group.some((g) => g.name === v) || !innerLocals.has(v));
      } else {
        // One atom's tuples as they are: its `_` columns kept, as named ones.
        aggBody = aggBody.map((l) => (l.kind === 'atom' ? nameWildcards(l, fresh) : l));
        columns = aggBody.flatMap((l) => (l.kind === 'atom' ? l.args.flatMap(termVars) : []));
      }
      const args = [...new Set([...group.map((g) => g.name), ...columns])].map(variable);
      const head: SAtom = { kind: 'atom', rel: `${rel}_body`, args, span, relSpan: aggregate.fnSpan };
      helpers.push({ head, body: [...aggBody, ...grounding.filter((a) => a !== undefined)] });
      aggBody = [head];
    }
    let arg: string | undefined;
    if (aggregate.target?.kind === 'var') {
      arg = aggregate.target.name;
    } else if (aggregate.target) {
      // `sum x * 2 : { ... }` aggregates a value computed in the body.
      arg = `${rel}_value`;
      aggBody = [...aggBody, { kind: 'compare', op: '=', left: variable(arg), right: aggregate.target, span }];
    }
    const head: SAtom = { kind: 'atom', rel, args: [...group, result], span, relSpan: aggregate.fnSpan };
    aggregates.push({ head, result: result.name, fn: aggregate.fn, ...(arg ? { arg } : {}), body: aggBody, span });
    let read: SFormula = head;
    if (aggregate.fn === 'count' || aggregate.fn === 'sum') {
      const none: SFormula = { kind: 'not', body: { ...head, args: [...group, { kind: 'wildcard', span }] }, span };
      const zero: SFormula = { kind: 'compare', op: '=', left: result, right: { kind: 'int', value: 0n, unsigned: false, span }, span };
      const unit: SAtom[] = group.length > 0 ? [] : [{ kind: 'atom', rel: UNIT, args: [{ kind: 'wildcard', span }], span, relSpan: span }];
      usesUnit ||= unit.length > 0;
      read = { kind: 'or', items: [head, { kind: 'and', items: [...unit, none, zero], span }], span };
    }
    reads.push(read);
  }
  return { clause: { head: clause.head, body: [...body, ...reads] }, aggregates, helpers, usesUnit };
}

function nameWildcards(a: SAtom, fresh: Fresh): SAtom {
  return { ...a, args: a.args.map((t): STerm => (t.kind === 'wildcard' ? { kind: 'var', name: fresh('w'), span: t.span } : t)) };
}

/** An atom of the rule's body binding `v`, its other arguments `_`; undefined after reporting that there is none. */
function groundingAtom(body: SFormula[], v: Var, problems: [string, SourceSpan][]): SAtom | undefined {
  const atom = body.find((l): l is SAtom => l.kind === 'atom' && formulaAggregates(l).length === 0 && l.args.some((t) => t.kind === 'var' && t.name === v.name));
  if (!atom) {
    problems.push([`${v.name} is used inside the aggregate but bound outside it by no atom: not supported`, v.span]);
    return undefined;
  }
  return { ...atom, args: atom.args.map((t): STerm => (t.kind === 'var' && t.name === v.name ? t : { kind: 'wildcard', span: t.span })) };
}
