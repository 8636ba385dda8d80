/**
 * A second, independent oracle: naive bottom-up evaluation of a generated program straight from its
 * generator form, sharing no code with Vixen. It checks the front end's lowering (which the reference
 * interpreter, running the same query plan as the GPU, cannot).
 */
import type { Row, Value } from '@vixen/queryplan';
import { rowKey, type Atom, type BodyLiteral, type CmpOp, type GenProgram, type Term } from './generate.js';

type Binding = Map<string, Value>;

function cmp(a: Value, b: Value): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

function holds(op: CmpOp, a: Value, b: Value): boolean {
  const c = cmp(a, b);
  switch (op) {
    case '=':
      return c === 0;
    case '!=':
      return c !== 0;
    case '<':
      return c < 0;
    case '<=':
      return c <= 0;
    case '>':
      return c > 0;
    case '>=':
      return c >= 0;
  }
}

function termValue(t: Term, b: Binding): Value | undefined {
  return t.kind === 'const' ? t.value : t.kind === 'var' ? b.get(t.name) : undefined;
}

/** Extends `b` by matching `row` against `atom`; undefined when they disagree. */
function match(atom: Atom, row: Row, b: Binding): Binding | undefined {
  let out = b;
  for (let i = 0; i < atom.args.length; i++) {
    const t = atom.args[i]!;
    const v = row[i]!;
    if (t.kind === 'wild') continue;
    const have = termValue(t, out);
    if (have !== undefined) {
      if (have !== v) return undefined;
    } else if (t.kind === 'var') {
      if (out === b) out = new Map(b);
      out.set(t.name, v);
    }
  }
  return out;
}

function evalBody(body: BodyLiteral[], rels: Map<string, Map<string, Row>>): Binding[] {
  let bindings: Binding[] = [new Map()];
  for (const lit of body) {
    if (lit.kind !== 'atom') continue;
    const rows = [...rels.get(lit.atom.rel)!.values()];
    const next: Binding[] = [];
    for (const b of bindings) {
      for (const r of rows) {
        const m = match(lit.atom, r, b);
        if (m) next.push(m);
      }
    }
    bindings = next;
  }
  // Assignments come after the atoms, in order; comparisons and negated atoms filter once everything is bound.
  for (const lit of body) {
    if (lit.kind !== 'assign') continue;
    bindings = bindings.map((b) => {
      const [x, y] = [termValue(lit.from, b)!, termValue(lit.by, b)!];
      const v = typeof x === 'bigint' ? (lit.op === '+' ? x + (y as bigint) : x - (y as bigint)) : lit.op === '+' ? (x as number) + (y as number) : (x as number) - (y as number);
      return new Map(b).set(lit.name, v);
    });
  }
  for (const lit of body) {
    if (lit.kind === 'cmp') bindings = bindings.filter((b) => holds(lit.op, termValue(lit.left, b)!, termValue(lit.right, b)!));
    if (lit.kind === 'neg') {
      const rows = [...rels.get(lit.atom.rel)!.values()];
      bindings = bindings.filter((b) => !rows.some((r) => match(lit.atom, r, b)));
    }
  }
  return bindings;
}

function sortRows(rows: Row[]): Row[] {
  return rows.sort((a, b) => {
    for (let i = 0; i < a.length; i++) {
      const c = cmp(a[i]!, b[i]!);
      if (c !== 0) return c;
    }
    return 0;
  });
}

/**
 * Every relation's rows (sorted by columns), by naive fixpoint iteration. A lattice relation is held by key (all
 * columns but the last): a row replaces the key's row when its value is better, and an aggregate rule into it is
 * one derivation per binding with the aggregated value (the best of them wins the same way).
 */
export function evaluate(p: GenProgram): Map<string, Row[]> {
  const rels = new Map<string, Map<string, Row>>(p.relations.map((r) => [r.name, new Map()]));
  const lattice = new Map(p.relations.filter((r) => r.lattice).map((r) => [r.name, r.lattice!]));
  const add = (name: string, row: Row): boolean => {
    const rel = rels.get(name)!;
    const kind = lattice.get(name);
    const k = rowKey(kind ? row.slice(0, -1) : row);
    const old = rel.get(k);
    if (old && (!kind || cmp(row.at(-1)!, old.at(-1)!) * (kind === 'min' ? 1 : -1) >= 0)) return false;
    rel.set(k, row);
    return true;
  };
  for (const facts of [p.inlineFacts, p.apiFacts]) {
    for (const [name, rows] of Object.entries(facts)) for (const r of rows) add(name, r);
  }
  const fixpoint = (rules: GenProgram['rules']): void => {
    for (let changed = true; changed; ) {
      changed = false;
      for (const rule of rules) {
        const agg = rule.agg;
        for (const b of evalBody(rule.body, rels)) {
          const head = rule.head.args.map((t) => (agg && t.kind === 'var' && t.name === agg.result ? b.get(agg.arg)! : termValue(t, b)!));
          if (add(rule.head.rel, head)) changed = true;
        }
      }
    }
  };
  // A rule reading a lattice relation into a set one runs once the lattice values are final (a later stratum):
  // it would keep rows made from values that improve later.
  const readsLattice = (r: GenProgram['rules'][number]): boolean =>
    !lattice.has(r.head.rel) && r.body.some((l) => l.kind === 'atom' && lattice.has(l.atom.rel));
  fixpoint(p.rules.filter((r) => !readsLattice(r)));
  fixpoint(p.rules);
  return new Map([...rels].map(([name, rows]) => [name, sortRows([...rows.values()])]));
}
