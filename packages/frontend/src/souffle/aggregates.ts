/**
 * Soufflé aggregates are values inside a rule (`n = count : { edge(x, _) }`), evaluated per binding of the
 * variables they share with the rest of the rule. LogiQL aggregates are whole rules grouped by their head. So
 * each aggregate is lifted into a helper rule `$aggK(g..., r) <- agg<<r = fn(v)>> body`, grouped by the shared
 * variables g, and the aggregate's place in the rule becomes a variable read from `$aggK`. A count or sum over
 * no tuples is 0 in Soufflé, so there the rule also accepts `!$aggK(g..., _), r = 0`; with no shared variables
 * that alternative reads the one-row relation `$unit` so that it still has a positive atom.
 */
import type { SourceSpan } from '@vixen/queryplan';
import type { AggregateFn, SAtom, SFormula, STerm } from './ast.js';

/** A lifted aggregate: `head <- agg<<result = fn(arg)>> body`. */
export interface AggregateRule {
  head: SAtom;
  result: string;
  fn: AggregateFn;
  /** The aggregated variable; absent for count. */
  arg?: string;
  body: SFormula;
  span: SourceSpan;
}

/** A rule as the lifting sees it: heads and a body, either of which may hold aggregates. */
export interface LiftableRule {
  heads: SAtom[];
  body: SFormula;
}

type Var = Extract<STerm, { kind: 'var' }>;

/** A relation holding the single fact `$unit(0).` (see above). */
export const UNIT = '$unit';

function termVars(t: STerm): string[] {
  switch (t.kind) {
    case 'var':
      return [t.name];
    case 'neg':
      return termVars(t.operand);
    case 'binary':
      return [...termVars(t.left), ...termVars(t.right)];
    case 'call':
      return t.args.flatMap(termVars);
    case 'aggregate':
      return [...(t.target ? termVars(t.target) : []), ...formulaVars(t.body)];
    default:
      return [];
  }
}

function formulaVars(f: SFormula): string[] {
  switch (f.kind) {
    case 'atom':
      return f.args.flatMap(termVars);
    case 'compare':
      return [...termVars(f.left), ...termVars(f.right)];
    case 'not':
      return formulaVars(f.body);
    case 'and':
    case 'or':
      return f.items.flatMap(formulaVars);
  }
}

/** Replaces the outermost aggregates of terms by fresh variables, remembering each. */
class Replacer {
  readonly found: { aggregate: Extract<STerm, { kind: 'aggregate' }>; result: Var }[] = [];

  constructor(private readonly fresh: () => number) {}

  term(t: STerm): STerm {
    switch (t.kind) {
      case 'aggregate': {
        const result: Var = { kind: 'var', name: `$agg${this.fresh()}`, span: t.span };
        this.found.push({ aggregate: t, result });
        return result;
      }
      case 'neg':
        return { ...t, operand: this.term(t.operand) };
      case 'binary':
        return { ...t, left: this.term(t.left), right: this.term(t.right) };
      case 'call':
        return { ...t, args: t.args.map((a) => this.term(a)) };
      default:
        return t;
    }
  }

  atom(a: SAtom): SAtom {
    return { ...a, args: a.args.map((t) => this.term(t)) };
  }

  formula(f: SFormula): SFormula {
    switch (f.kind) {
      case 'atom':
        return this.atom(f);
      case 'compare':
        return { ...f, left: this.term(f.left), right: this.term(f.right) };
      case 'not':
        return { ...f, body: this.formula(f.body) };
      case 'and':
      case 'or':
        return { ...f, items: f.items.map((i) => this.formula(i)) };
    }
  }
}

/**
 * `rule` without aggregates (each replaced by a variable read from its helper relation), and the helper
 * rules, whose bodies may hold aggregates in turn (lift them again).
 */
export function liftAggregates(
  rule: LiftableRule,
  fresh: () => number,
): { rule: LiftableRule; lifted: AggregateRule[]; usesUnit: boolean } {
  const replacer = new Replacer(fresh);
  const heads = rule.heads.map((h) => replacer.atom(h));
  let body = replacer.formula(rule.body);
  if (replacer.found.length === 0) return { rule, lifted: [], usesUnit: false };
  const outside = new Set([...heads.flatMap((h) => h.args.flatMap(termVars)), ...formulaVars(body)]);
  const lifted: AggregateRule[] = [];
  const extra: SFormula[] = [];
  let usesUnit = false;
  for (const { aggregate, result } of replacer.found) {
    const span = aggregate.span;
    const inside = [...new Set(termVars(aggregate))];
    const group: Var[] = inside.filter((v) => outside.has(v)).map((name) => ({ kind: 'var', name, span }));
    const rel = result.name;
    let aggBody = aggregate.body;
    let arg: string | undefined;
    if (aggregate.target?.kind === 'var' && !outside.has(aggregate.target.name)) {
      arg = aggregate.target.name;
    } else if (aggregate.target) {
      // `sum x * 2 : { ... }` aggregates a value computed in the body.
      arg = `${rel}_value`;
      const value: SFormula = { kind: 'compare', op: '=', left: { kind: 'var', name: arg, span }, right: aggregate.target, span };
      aggBody = { kind: 'and', items: [aggregate.body, value], span };
    }
    const head: SAtom = { kind: 'atom', rel, args: [...group, result], span, relSpan: aggregate.fnSpan };
    lifted.push({ head, result: result.name, fn: aggregate.fn, ...(arg ? { arg } : {}), body: aggBody, span });
    let read: SFormula = head;
    if (aggregate.fn === 'count' || aggregate.fn === 'sum') {
      const none: SFormula = { kind: 'not', body: { ...head, args: [...group, { kind: 'wildcard', span }] }, span };
      const zero: SFormula = { kind: 'compare', op: '=', left: result, right: { kind: 'int', value: 0n, unsigned: false, span }, span };
      const unit: SAtom[] = group.length > 0 ? [] : [{ kind: 'atom', rel: UNIT, args: [{ kind: 'wildcard', span }], span, relSpan: span }];
      usesUnit ||= unit.length > 0;
      read = { kind: 'or', items: [head, { kind: 'and', items: [...unit, none, zero], span }], span };
    }
    extra.push(read);
  }
  body = { kind: 'and', items: [body, ...extra], span: body.span };
  return { rule: { heads, body }, lifted, usesUnit };
}
