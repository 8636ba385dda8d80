/** Maps over the atoms of Soufflé formulas, aggregate bodies inside terms included. */
import type { SAtom, SFormula, SItem, STerm } from './ast.js';

export type AtomMap = (a: SAtom) => SFormula;

/** `a` with the atoms inside its arguments (in aggregate bodies) mapped; `a` itself kept. */
export function mapArgs(a: SAtom, f: AtomMap): SAtom {
  return { ...a, args: a.args.map((t) => mapTermAtoms(t, f)) };
}

export function mapAtoms(formula: SFormula, f: AtomMap): SFormula {
  switch (formula.kind) {
    case 'atom':
      return f(mapArgs(formula, f));
    case 'compare':
      return { ...formula, left: mapTermAtoms(formula.left, f), right: mapTermAtoms(formula.right, f) };
    case 'not':
      return { ...formula, body: mapAtoms(formula.body, f) };
    case 'bool':
      return formula;
    case 'and':
    case 'or':
      return { ...formula, items: formula.items.map((i) => mapAtoms(i, f)) };
  }
}

export function mapTermAtoms(t: STerm, f: AtomMap): STerm {
  switch (t.kind) {
    case 'var':
    case 'wildcard':
    case 'int':
    case 'float':
    case 'string':
      return t;
    case 'neg':
      return { ...t, operand: mapTermAtoms(t.operand, f) };
    case 'binary':
      return { ...t, left: mapTermAtoms(t.left, f), right: mapTermAtoms(t.right, f) };
    case 'call':
    case 'record':
    case 'branch':
      return { ...t, args: t.args.map((a) => mapTermAtoms(a, f)) };
    case 'aggregate':
      return { ...t, ...(t.target ? { target: mapTermAtoms(t.target, f) } : {}), body: mapAtoms(t.body, f) };
  }
}

/** Per relation, the relations its rules read, directly or through other relations' rules (itself if recursive). */
export function relationsRead(items: readonly SItem[]): (rel: string) => ReadonlySet<string> {
  const direct = new Map<string, Set<string>>();
  for (const item of items) {
    if (item.kind !== 'rule') continue;
    const body: string[] = [];
    mapAtoms(item.body, (a) => (body.push(a.rel), a));
    for (const h of item.heads) for (const rel of body) (direct.get(h.rel) ?? direct.set(h.rel, new Set()).get(h.rel)!).add(rel);
  }
  const closed = new Map<string, Set<string>>();
  return (rel) => {
    let seen = closed.get(rel);
    if (seen) return seen;
    seen = new Set<string>();
    const pending = [...(direct.get(rel) ?? [])];
    while (pending.length > 0) {
      const next = pending.pop()!;
      if (seen.has(next)) continue;
      seen.add(next);
      pending.push(...(direct.get(next) ?? []));
    }
    closed.set(rel, seen);
    return seen;
  };
}
