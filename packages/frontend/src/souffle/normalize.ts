/**
 * Soufflé rules as Soufflé's own front end splits and rewrites them around its scoping analyses: one clause per
 * head and disjunct of the body (disjunctive normal form, aggregate bodies conjunctions); after witnesses are
 * grounded (witnesses.ts), arithmetic and aggregates in atom arguments bound to fresh variables (`fib(n - 1, x)`
 * is `fib(v, x), v = n - 1`), the `min`/`max` functors as one clause per case, and each aggregate's target
 * variables renamed apart (Soufflé's UniqueAggregationVariables: in `a = max a : r(a)` the inner `a` is another
 * variable).
 */
import type { SourceSpan } from '@vixen/queryplan';
import type { SAtom, SFormula, STerm } from './ast.js';
import { formulaVars, innerAggregates, literals, mapAtom, mapFormula, mapTerm, termVars, type SClause } from './scoping.js';

type Problem = [string, SourceSpan];

/** Fresh names for the variables the rewrites introduce. */
export type Fresh = (base: string) => string;

/** Literals are atoms, comparisons and their negations. */
function negate(l: SFormula): SFormula {
  return l.kind === 'not' ? l.body : { kind: 'not', body: l, span: l.span };
}

/** Disjunctive normal form: a list of conjunctions of literals (De Morgan through negations). */
export function dnf(f: SFormula): SFormula[][] {
  switch (f.kind) {
    case 'atom':
    case 'compare':
      return [[f]];
    case 'bool':
      return f.value ? [[]] : [];
    case 'not': {
      let result: SFormula[][] = [[]];
      for (const conj of dnf(f.body)) result = result.flatMap((left) => conj.map((l) => [...left, negate(l)]));
      return result;
    }
    case 'and': {
      let result: SFormula[][] = [[]];
      for (const item of f.items) {
        const d = dnf(item);
        result = result.flatMap((left) => d.map((right) => [...left, ...right]));
      }
      return result;
    }
    case 'or':
      return f.items.flatMap(dnf);
  }
}

/**
 * Aggregate bodies as conjunctions of literals; a disjunction there is reported (Soufflé rejects it too). Each
 * aggregate is marked `materialized` where Soufflé's MaterializeAggregationQueries would materialise its body:
 * several atoms, a nested aggregate, or a variable twice in its atom (arithmetic arguments included, so this is
 * decided before they are taken out of the atom).
 */
export function normalizeAggregates(f: SFormula, problems: Problem[]): SFormula {
  return mapFormula(f, normalizer(problems));
}

/** A head's aggregates (`p(x, count : { q(x, _) }) :- ...`) normalised as a body's are. */
export function normalizeHead(a: SAtom, problems: Problem[]): SAtom {
  return mapAtom(a, normalizer(problems));
}

function normalizer(problems: Problem[]): (t: STerm) => STerm | undefined {
  const fn = (t: STerm): STerm | undefined => {
    if (t.kind !== 'aggregate') return undefined;
    const disjuncts = dnf(mapFormula(t.body, fn));
    if (disjuncts.length > 1) problems.push(['disjunction (;) inside an aggregate is not supported', t.body.span]);
    if (disjuncts.length === 0) problems.push(['an aggregate whose body is always false is not supported', t.body.span]);
    const items = disjuncts[0] ?? [];
    const atoms = items.filter((l) => l.kind === 'atom');
    const names = atoms.flatMap(formulaVars);
    const materialized = atoms.length > 1 || innerAggregates(t).length > 0 || new Set(names).size < names.length;
    return { ...t, ...(t.target ? { target: mapTerm(t.target, fn) } : {}), body: { kind: 'and', items, span: t.body.span }, materialized };
  };
  return fn;
}

const isSimple = (t: STerm): boolean => t.kind === 'var' || t.kind === 'wildcard' || t.kind === 'int' || t.kind === 'float' || t.kind === 'string';

/** Arguments of `a` that are not variables or constants become fresh variables, each with its equality. */
function simpleAtom(a: SAtom, fresh: Fresh, out: SFormula[]): SAtom {
  const args = a.args.map((t): STerm => {
    if (isSimple(t)) return t;
    const v: STerm = { kind: 'var', name: fresh('arg'), span: t.span };
    out.push({ kind: 'compare', op: '=', left: v, right: t, span: t.span });
    return v;
  });
  return { ...a, args };
}

/** A conjunction with every atom's arguments simple, aggregate bodies included. */
function simpleBody(body: SFormula[], fresh: Fresh): SFormula[] {
  const out: SFormula[] = [];
  const inner = (t: STerm): STerm | undefined =>
    t.kind === 'aggregate' ? { ...t, body: { kind: 'and', items: simpleBody(literals(t.body), fresh), span: t.body.span } } : undefined;
  for (const l of body) {
    const mapped = mapFormula(l, inner);
    if (mapped.kind === 'atom') out.push(simpleAtom(mapped, fresh, out));
    else if (mapped.kind === 'not' && mapped.body.kind === 'atom') out.push({ ...mapped, body: simpleAtom(mapped.body, fresh, out) });
    else if (mapped.kind === 'compare' && mapped.op === '=') out.push({ ...mapped, left: named(mapped.left, mapped.right, fresh), right: named(mapped.right, mapped.left, fresh) });
    else out.push(mapped);
  }
  return out;
}

/** `_` equated to an aggregate (`_ = max h : { ... }`, which only asks that it has a value) as a fresh variable. */
function named(t: STerm, other: STerm, fresh: Fresh): STerm {
  return t.kind === 'wildcard' && other.kind === 'aggregate' ? { kind: 'var', name: fresh('value'), span: t.span } : t;
}

/** `clause` with arithmetic and aggregates out of atom arguments, in the head too. */
export function simpleArguments(clause: SClause, fresh: Fresh): SClause {
  const extra: SFormula[] = [];
  const head = simpleAtom(clause.head, fresh, extra);
  return { head, body: simpleBody([...clause.body, ...extra], fresh) };
}

type Call = Extract<STerm, { kind: 'call' }>;
const isExtreme = (t: STerm): t is Call => t.kind === 'call' && (t.name === 'min' || t.name === 'max');

/**
 * Soufflé's `min(a, b)` and `max(a, b)` functors (more arguments fold from the left), each as a fresh variable v
 * and one clause per case: `v = a, a <= b` or `v = b, b < a` for min. The cases exclude each other, so each
 * binding of the rule takes exactly one. Inside an aggregate the cases would be a disjunction there: reported.
 */
export function extremes(clause: SClause, fresh: Fresh, problems: Problem[]): SClause[] {
  const cases: SFormula[][][] = [];
  const replace = (t: STerm): STerm | undefined => {
    if (t.kind === 'aggregate') {
      // Visits every term of the aggregate (nothing is replaced).
      mapTerm(t, (x) => void (isExtreme(x) && problems.push([`the ${x.name} functor inside an aggregate is not supported`, x.nameSpan])));
      return t;
    }
    if (!isExtreme(t)) return undefined;
    const [first, ...rest] = t.args.map((a) => mapTerm(a, replace));
    return rest.reduce((a: STerm, b: STerm): STerm => {
      const v: STerm = { kind: 'var', name: fresh(t.name), span: t.span };
      const eq = (x: STerm): SFormula => ({ kind: 'compare', op: '=', left: v, right: x, span: t.span });
      const cmp = (op: '<=' | '<' | '>=' | '>', x: STerm, y: STerm): SFormula => ({ kind: 'compare', op, left: x, right: y, span: t.span });
      const [keep, take] = t.name === 'min' ? (['<=', '<'] as const) : (['>=', '>'] as const);
      cases.push([
        [eq(a), cmp(keep, a, b)],
        [eq(b), cmp(take, b, a)],
      ]);
      return v;
    }, first!);
  };
  const body = clause.body.map((l) => mapFormula(l, replace));
  const bodies = cases.reduce((acc, alternatives) => acc.flatMap((b) => alternatives.map((c) => [...b, ...c])), [body]);
  return bodies.map((b) => ({ head: clause.head, body: b }));
}

/** Occurrences of each variable name in a clause. */
function occurrences(clause: SClause): Map<string, number> {
  const counts = new Map<string, number>();
  for (const n of [...clause.head.args.flatMap(termVars), ...clause.body.flatMap(formulaVars)]) counts.set(n, (counts.get(n) ?? 0) + 1);
  return counts;
}

/** Each aggregate's target variables renamed within it where the clause uses the name outside it too. */
export function renameTargets(clause: SClause, fresh: Fresh): SClause {
  const total = occurrences(clause);
  const rename = (t: STerm): STerm | undefined => {
    if (t.kind !== 'aggregate') return undefined;
    const inside = new Map<string, number>();
    for (const n of termVars(t)) inside.set(n, (inside.get(n) ?? 0) + 1);
    const clashing = [...new Set(t.target ? termVars(t.target) : [])].filter((n) => total.get(n)! > inside.get(n)!);
    // Inner aggregates first, as Soufflé renames in post-order.
    const renamedInner: STerm = { ...t, ...(t.target ? { target: mapTerm(t.target, rename) } : {}), body: mapFormula(t.body, rename) };
    if (clashing.length === 0) return renamedInner;
    const names = new Map(clashing.map((n) => [n, fresh(n)]));
    return mapTerm(renamedInner, (v) => (v.kind === 'var' && names.has(v.name) ? { ...v, name: names.get(v.name)! } : undefined));
  };
  return { head: mapAtom(clause.head, rename), body: clause.body.map((l) => mapFormula(l, rename)) };
}
