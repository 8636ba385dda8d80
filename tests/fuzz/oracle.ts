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
  // Comparisons filter once everything is bound: body order does not matter.
  for (const lit of body) {
    if (lit.kind !== 'cmp') continue;
    bindings = bindings.filter((b) => holds(lit.op, termValue(lit.left, b)!, termValue(lit.right, b)!));
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

/** Every relation's rows (sorted by columns), by naive fixpoint iteration. */
export function evaluate(p: GenProgram): Map<string, Row[]> {
  const rels = new Map<string, Map<string, Row>>(p.relations.map((r) => [r.name, new Map()]));
  const add = (name: string, row: Row): boolean => {
    const rel = rels.get(name)!;
    const k = rowKey(row);
    if (rel.has(k)) return false;
    rel.set(k, row);
    return true;
  };
  for (const facts of [p.inlineFacts, p.apiFacts]) {
    for (const [name, rows] of Object.entries(facts)) for (const r of rows) add(name, r);
  }
  for (let changed = true; changed; ) {
    changed = false;
    for (const rule of p.rules) {
      for (const b of evalBody(rule.body, rels)) {
        if (add(rule.head.rel, rule.head.args.map((t) => termValue(t, b)!))) changed = true;
      }
    }
  }
  return new Map([...rels].map(([name, rows]) => [name, sortRows([...rows.values()])]));
}
