/**
 * Soufflé's scoping of variables in aggregates (its ast/analysis/Aggregate.cpp and Ground.cpp), on one clause: a
 * head and a conjunction of literals. A variable of an aggregate is *injected* when it is grounded outside the
 * aggregate and not in its target expression: the aggregate is then evaluated once per binding of it. It is a
 * *witness* when it occurs outside every aggregate but is grounded only inside this one (a head-only variable, say).
 * Every other variable is local to the aggregate, whatever its name outside.
 */
import type { SAtom, SFormula, STerm } from './ast.js';

export type Aggregate = Extract<STerm, { kind: 'aggregate' }>;

/** A Soufflé clause after normalisation: one head, a conjunction of literals (atoms, comparisons, negations). */
export interface SClause {
  head: SAtom;
  body: SFormula[];
}

/** The literals of a normalised body (aggregate bodies are conjunctions too). */
export function literals(f: SFormula): SFormula[] {
  return f.kind === 'and' ? f.items : [f];
}

/** The terms directly inside a term, aggregates not looked into. */
function children(t: STerm): STerm[] {
  switch (t.kind) {
    case 'neg':
      return [t.operand];
    case 'binary':
      return [t.left, t.right];
    case 'call':
    case 'record':
    case 'branch':
      return t.args;
    default:
      return [];
  }
}

/** Every variable of a term, those inside aggregates included. */
export function termVars(t: STerm): string[] {
  if (t.kind === 'var') return [t.name];
  if (t.kind === 'aggregate') return [...(t.target ? termVars(t.target) : []), ...formulaVars(t.body)];
  return children(t).flatMap(termVars);
}

export function formulaVars(f: SFormula): string[] {
  return formulaTerms(f).flatMap(termVars);
}

/** The terms a formula holds directly (aggregates among them, not looked into). */
export function formulaTerms(f: SFormula): STerm[] {
  switch (f.kind) {
    case 'atom':
      return f.args;
    case 'compare':
      return [f.left, f.right];
    case 'not':
      return formulaTerms(f.body);
    case 'bool':
      return [];
    case 'and':
    case 'or':
      return f.items.flatMap(formulaTerms);
  }
}

/** Variables outside every aggregate. */
function shallowVars(t: STerm): string[] {
  if (t.kind === 'var') return [t.name];
  return t.kind === 'aggregate' ? [] : children(t).flatMap(shallowVars);
}

/** The outermost aggregates of a term. */
function outermost(t: STerm): Aggregate[] {
  return t.kind === 'aggregate' ? [t] : children(t).flatMap(outermost);
}

/** The outermost aggregates of a formula. */
export function formulaAggregates(f: SFormula): Aggregate[] {
  return formulaTerms(f).flatMap(outermost);
}

/** Atoms of a formula outside aggregates. */
function ownAtoms(f: SFormula): SAtom[] {
  switch (f.kind) {
    case 'atom':
      return [f];
    case 'not':
      return ownAtoms(f.body);
    case 'and':
    case 'or':
      return f.items.flatMap(ownAtoms);
    case 'compare':
    case 'bool':
      return [];
  }
}

/** Atoms of a formula, those in aggregate bodies included. */
export function allAtoms(f: SFormula): SAtom[] {
  const aggregates = formulaAggregates(f).flatMap((a) => [a, ...innerAggregates(a)]);
  return [...ownAtoms(f), ...aggregates.flatMap((a) => ownAtoms(a.body))];
}

/** Every aggregate nested in `a` (at any depth, `a` itself excluded). */
export function innerAggregates(a: Aggregate): Aggregate[] {
  const direct = [...(a.target ? outermost(a.target) : []), ...formulaAggregates(a.body)];
  return direct.flatMap((b) => [b, ...innerAggregates(b)]);
}

/** Rebuilds a term top-down: where `fn` gives a replacement it is used as is, elsewhere the children are mapped. */
export function mapTerm(t: STerm, fn: (t: STerm) => STerm | undefined): STerm {
  const replaced = fn(t);
  if (replaced) return replaced;
  switch (t.kind) {
    case 'neg':
      return { ...t, operand: mapTerm(t.operand, fn) };
    case 'binary':
      return { ...t, left: mapTerm(t.left, fn), right: mapTerm(t.right, fn) };
    case 'call':
    case 'record':
    case 'branch':
      return { ...t, args: t.args.map((a) => mapTerm(a, fn)) };
    case 'aggregate':
      return { ...t, ...(t.target ? { target: mapTerm(t.target, fn) } : {}), body: mapFormula(t.body, fn) };
    default:
      return t;
  }
}

export function mapFormula(f: SFormula, fn: (t: STerm) => STerm | undefined): SFormula {
  switch (f.kind) {
    case 'atom':
      return mapAtom(f, fn);
    case 'compare':
      return { ...f, left: mapTerm(f.left, fn), right: mapTerm(f.right, fn) };
    case 'not':
      return { ...f, body: mapFormula(f.body, fn) };
    case 'bool':
      return f;
    case 'and':
    case 'or':
      return { ...f, items: f.items.map((i) => mapFormula(i, fn)) };
  }
}

export function mapAtom(a: SAtom, fn: (t: STerm) => STerm | undefined): SAtom {
  return { ...a, args: a.args.map((t) => mapTerm(t, fn)) };
}

/** How the ground analysis sees an aggregate: a grounded or ungrounded value, or a scope it looks into. */
type AggregateView = 'grounded' | 'ungrounded' | 'open';

/**
 * Variables grounded by a conjunction: arguments of positive atoms, and whatever an equality links to a grounded
 * value (a constant, an aggregate, arithmetic on grounded values). Nothing under a negation grounds.
 */
export function groundedVars(body: SFormula[], view: (a: Aggregate) => AggregateView): Set<string> {
  const grounded = new Set<string>();
  const equalities: [STerm, STerm][] = [];
  const visitTerm = (t: STerm): void => {
    for (const a of outermost(t)) {
      if (view(a) !== 'open') continue;
      if (a.target) visitTerm(a.target);
      literals(a.body).forEach(visit);
    }
  };
  const visit = (f: SFormula): void => {
    switch (f.kind) {
      case 'atom':
        for (const t of f.args) if (t.kind === 'var') grounded.add(t.name);
        f.args.forEach(visitTerm);
        return;
      case 'compare':
        if (f.op === '=') equalities.push([f.left, f.right]);
        visitTerm(f.left);
        visitTerm(f.right);
        return;
      case 'not':
      case 'bool':
        return;
      case 'and':
      case 'or':
        f.items.forEach(visit);
        return;
    }
  };
  body.forEach(visit);
  const isGrounded = (t: STerm): boolean => {
    switch (t.kind) {
      case 'var':
        return grounded.has(t.name);
      case 'wildcard':
        return false;
      case 'int':
      case 'float':
      case 'string':
        return true;
      case 'neg':
        return isGrounded(t.operand);
      case 'binary':
        return isGrounded(t.left) && isGrounded(t.right);
      case 'call':
      case 'record':
      case 'branch':
        return t.args.every(isGrounded);
      case 'aggregate':
        return view(t) !== 'ungrounded';
    }
  };
  for (let changed = true; changed; ) {
    changed = false;
    for (const [l, r] of equalities) {
      for (const [a, b] of [
        [l, r],
        [r, l],
      ] as const) {
        if (a.kind === 'var' && !grounded.has(a.name) && isGrounded(b)) {
          grounded.add(a.name);
          changed = true;
        }
      }
    }
  }
  return grounded;
}

function contains(outer: Aggregate, inner: Aggregate): boolean {
  return innerAggregates(outer).includes(inner);
}

/** The variables injected into `a` (an aggregate of `clause`, at any depth), in order of appearance. */
export function injectedVars(clause: SClause, a: Aggregate): string[] {
  const grounded = groundedVars(clause.body, (b) => (b === a ? 'ungrounded' : contains(b, a) ? 'open' : 'grounded'));
  const targets = new Set(a.target ? termVars(a.target) : []);
  return [...new Set(termVars(a))].filter((v) => grounded.has(v) && !targets.has(v));
}

/** The witnesses of `a` (an aggregate of `clause`), less those of aggregates nested in it. */
export function witnessVars(clause: SClause, a: Aggregate): string[] {
  const outside = new Set([...clause.head.args.flatMap(shallowVars), ...clause.body.flatMap(formulaTerms).flatMap(shallowVars)]);
  const groundedOutside = groundedVars(clause.body, () => 'grounded');
  const groundedInside = groundedVars(literals(a.body), () => 'open');
  const excluded = new Set([...injectedVars(clause, a), ...innerAggregates(a).flatMap((b) => witnessVars(clause, b))]);
  return [...outside].filter((v) => !groundedOutside.has(v) && groundedInside.has(v) && !excluded.has(v));
}
