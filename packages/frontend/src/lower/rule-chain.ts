/**
 * One rule body as a chain of QP commands: the first atom is a mapFilter (skipped when it would copy the
 * relation unchanged), each further atom a mapJoin on the variables it shares with what came before (none: a
 * product). Constants and repeated variables become filters, comparisons are applied at the first step that
 * binds all their variables, and each step keeps only the variables still needed. Assigned variables are
 * computed where they are first needed (their expressions substituted, or projected into a column when a
 * later step needs them). Every `/` and `%` adds a `divisor != 0` filter, so a binding that divides by zero
 * yields no tuple. Negated atoms run after the joins as an anti-join: keys := the intermediate's rows that
 * match the atom (a mapJoin projecting the intermediate's columns), then intermediate := intermediate − keys.
 * The last step projects the head columns.
 */
import { predicateOperands, printPredicate, zeroOf, type Column, type Expr, type Predicate, type QpCommand, type ScalarType } from '@vixen/queryplan';
import type { TypedAtom, TypedComparison, TypedRule, TypedTerm } from '../check/program.js';

export interface ChainResult {
  commands: QpCommand[];
  /** Temp relation holding the head tuples this body derives. */
  result: string;
}

/** The variables of `t`, in order (repeats kept). */
export function termVars(t: TypedTerm): string[] {
  switch (t.kind) {
    case 'var':
      return [t.name];
    case 'binary':
      return [...termVars(t.left), ...termVars(t.right)];
    case 'call':
      return t.args.flatMap(termVars);
    case 'const':
    case 'wildcard':
      return [];
  }
}

function varsOf(terms: readonly TypedTerm[]): string[] {
  return terms.flatMap(termVars);
}

/** Starts at atom `first`, then repeatedly takes the atom sharing most bound variables (ties: source order). */
export function joinOrder(atoms: readonly TypedAtom[], first: number): number[] {
  const order = [first];
  const bound = new Set(varsOf(atoms[first]!.args));
  const rest = atoms.map((_, i) => i).filter((i) => i !== first);
  while (rest.length > 0) {
    const shared = rest.map((i) => new Set(varsOf(atoms[i]!.args).filter((v) => bound.has(v))).size);
    const pick = shared.indexOf(Math.max(...shared));
    const [next] = rest.splice(pick, 1);
    order.push(next!);
    for (const v of varsOf(atoms[next!]!.args)) bound.add(v);
  }
  return order;
}

const col = (index: number, type: ScalarType): Expr => ({ kind: 'col', index, type });

/** `divisor != 0` for every division and remainder in `e`, inner ones first. */
function divisorGuards(e: Expr): Predicate[] {
  if (e.kind === 'call') return e.args.flatMap(divisorGuards);
  if (e.kind !== 'binary') return [];
  const inner = [...divisorGuards(e.left), ...divisorGuards(e.right)];
  if (e.op !== '/' && e.op !== '%') return inner;
  return [...inner, { kind: 'compare', op: '!=', left: e.right, right: { kind: 'const', type: e.type, value: zeroOf(e.type) } }];
}

/**
 * @param sources relation read at each body atom position (a delta or the full relation)
 * @param first atom to start from (the delta atom of a semi-naive variant)
 */
export function compileRuleBody(
  rule: TypedRule,
  sources: readonly string[],
  first: number,
  headColumns: readonly Column[],
  newTemp: (columns: Column[]) => string,
): ChainResult {
  const order = joinOrder(rule.atoms, first);
  const assigned = new Map(rule.assignments.map((a) => [a.name, a.expr]));
  let pending: TypedComparison[] = [...rule.comparisons];
  const commands: QpCommand[] = [];
  // The current intermediate: its relation and the variable held in each column.
  let current: { name: string; vars: Column[] } | undefined;

  /** Expression of `t` over a tuple whose columns hold the variables in `at`; undefined if not all are there. */
  const exprIn = (at: ReadonlyMap<string, { index: number; type: ScalarType }>, t: TypedTerm): Expr | undefined => {
    switch (t.kind) {
      case 'const':
        return { kind: 'const', type: t.type, value: t.value };
      case 'var': {
        const here = at.get(t.name);
        if (here) return col(here.index, here.type);
        const def = assigned.get(t.name);
        return def && exprIn(at, def);
      }
      case 'binary': {
        const left = exprIn(at, t.left);
        const right = exprIn(at, t.right);
        return left && right && { kind: 'binary', op: t.op, left, right, type: t.type };
      }
      case 'call': {
        const args = t.args.map((a) => exprIn(at, a));
        return args.every((a) => a !== undefined) ? { kind: 'call', fn: t.fn, args: args as Expr[], type: t.type } : undefined;
      }
      case 'wildcard':
        throw new Error('internal compiler error: _ outside a body atom passed the safety check');
    }
  };
  const needed = (t: TypedTerm, at: ReadonlyMap<string, unknown>): Expr => {
    const e = exprIn(at as ReadonlyMap<string, { index: number; type: ScalarType }>, t);
    if (!e) throw new Error('internal compiler error: a variable is unbound at its use');
    return e;
  };
  /** Filter and projection with the divisor guards of the projection added to the filter, each predicate once. */
  const guarded = (filter: Predicate[], project: Expr[]) => {
    const all = [...filter, ...project.flatMap(divisorGuards)];
    const text = all.map(printPredicate);
    return { filter: all.filter((_, i) => text.indexOf(text[i]!) === i), project };
  };
  const withGuards = (p: Predicate): Predicate[] => [...predicateOperands(p).flatMap(divisorGuards), p];

  const finalHere = rule.negated.length === 0;
  order.forEach((atomIndex, step) => {
    const atom = rule.atoms[atomIndex]!;
    const leftArity = current?.vars.length ?? 0;
    // Column of each bound variable in the step's input tuple (left columns, then the atom's).
    const at = new Map<string, { index: number; type: ScalarType }>();
    current?.vars.forEach((v, index) => at.set(v.name, { index, type: v.type }));
    const filter: Predicate[] = [];
    const leftKeys: number[] = [];
    const rightKeys: number[] = [];
    atom.args.forEach((t, j) => {
      const here = col(leftArity + j, t.type);
      if (t.kind === 'const') {
        filter.push({ kind: 'compare', op: '=', left: here, right: t });
      } else if (t.kind === 'var') {
        const seen = at.get(t.name);
        if (!seen) {
          at.set(t.name, { index: leftArity + j, type: t.type });
        } else if (seen.index < leftArity && !leftKeys.includes(seen.index)) {
          leftKeys.push(seen.index);
          rightKeys.push(j);
        } else {
          // Repeated within this atom (or a second match of a key): compare with the first occurrence.
          filter.push({ kind: 'compare', op: '=', left: here, right: col(seen.index, t.type) });
        }
      }
    });
    const ready = pending.filter((c) => exprIn(at, c.left) && exprIn(at, c.right));
    pending = pending.filter((c) => !ready.includes(c));
    for (const c of ready) filter.push(...withGuards({ kind: 'compare', op: c.op, left: needed(c.left, at), right: needed(c.right, at) }));

    const last = step === order.length - 1;
    let project: Expr[];
    let columns: Column[];
    if (last && finalHere) {
      project = rule.head.args.map((t) => needed(t, at));
      columns = [...headColumns];
    } else {
      const later = new Set([
        ...order.slice(step + 1).flatMap((i) => varsOf(rule.atoms[i]!.args)),
        ...pending.flatMap((c) => varsOf([c.left, c.right])),
        ...varsOf(rule.head.args),
        ...rule.negated.flatMap((a) => varsOf(a.args)),
      ]);
      // An assigned variable needed later is projected once computable here, else its inputs are kept.
      const kept: { name: string; expr: Expr; type: ScalarType }[] = [];
      const keep = (name: string): void => {
        if (kept.some((k) => k.name === name)) return;
        const here = at.get(name);
        if (here) return void kept.push({ name, expr: col(here.index, here.type), type: here.type });
        const def = assigned.get(name);
        if (!def) return;
        const e = exprIn(at, def);
        if (e) kept.push({ name, expr: e, type: def.type });
        else for (const v of termVars(def)) keep(v);
      };
      for (const [name] of at) if (later.has(name)) keep(name);
      for (const name of later) if (!at.has(name)) keep(name);
      // A relation needs a column: when nothing is needed later, keep one to carry "some match exists" (a nullary
      // atom has none to keep: its zero-width rows carry it).
      if (kept.length === 0 && (at.size > 0 || atom.args.length > 0)) {
        const [name, b] = [...at.entries()][0] ?? ['_', { index: leftArity, type: atom.args[0]!.type }];
        kept.push({ name, expr: col(b.index, b.type), type: b.type });
      }
      project = kept.map((k) => k.expr);
      columns = kept.map((k) => ({ name: k.name, type: k.type }));
    }
    const guardedStep = guarded(filter, project);
    const source = sources[atomIndex]!;
    const identity =
      !current &&
      guardedStep.filter.length === 0 &&
      project.length === atom.args.length &&
      project.every((e, i) => e.kind === 'col' && e.index === i);
    if (identity && !(last && finalHere)) {
      // The atom's relation is already the intermediate: join it directly.
      current = { name: source, vars: columns };
      return;
    }
    const target = newTemp(columns);
    commands.push(
      current
        ? { kind: 'mapJoin', target, left: current.name, right: source, leftKeys, rightKeys, ...guardedStep }
        : { kind: 'mapFilter', target, source, ...guardedStep },
    );
    current = { name: target, vars: columns };
  });
  if (finalHere) return { commands, result: current!.name };

  for (const neg of rule.negated) {
    const t = current!;
    const at = new Map(t.vars.map((v, index) => [v.name, { index, type: v.type }]));
    const filter: Predicate[] = [];
    const leftKeys: number[] = [];
    const rightKeys: number[] = [];
    const firstAt = new Map<string, number>();
    neg.args.forEach((a, j) => {
      const here = col(t.vars.length + j, a.type);
      if (a.kind === 'const') {
        filter.push({ kind: 'compare', op: '=', left: here, right: a });
      } else if (a.kind === 'var') {
        const seen = firstAt.get(a.name);
        if (seen !== undefined) {
          filter.push({ kind: 'compare', op: '=', left: here, right: col(t.vars.length + seen, a.type) });
          return;
        }
        firstAt.set(a.name, j);
        leftKeys.push(at.get(a.name)!.index);
        rightKeys.push(j);
      }
    });
    const identity = t.vars.map((v, index) => col(index, v.type));
    const keys = newTemp(t.vars);
    const rest = newTemp(t.vars);
    commands.push(
      { kind: 'mapJoin', target: keys, left: t.name, right: neg.pred, leftKeys, rightKeys, filter, project: identity },
      { kind: 'difference', target: rest, left: t.name, right: keys },
    );
    current = { name: rest, vars: t.vars };
  }
  const at = new Map(current!.vars.map((v, index) => [v.name, { index, type: v.type }]));
  const last = guarded([], rule.head.args.map((t) => needed(t, at)));
  // The anti-joined intermediate may already be the head tuples.
  const same = last.filter.length === 0 && last.project.length === current!.vars.length && last.project.every((e, i) => e.kind === 'col' && e.index === i);
  if (same) return { commands, result: current!.name };
  const target = newTemp([...headColumns]);
  commands.push({ kind: 'mapFilter', target, source: current!.name, ...last });
  return { commands, result: target };
}
