/** Expression helpers shared by the KIR passes that rewrite filters and projections. */
import { mapOperands, type Expr, type Predicate, type ScalarType } from '@vixen/queryplan';

/** `e` over the columns `project` computes (`project` absent: `e` itself), built from fresh nodes (codegen keys constants by node). */
export function substitute(e: Expr, project?: readonly Expr[]): Expr {
  switch (e.kind) {
    case 'col':
      return project ? substitute(project[e.index]!) : { ...e };
    case 'const':
      return { ...e };
    case 'binary':
      return { ...e, left: substitute(e.left, project), right: substitute(e.right, project) };
    case 'call':
      return { ...e, args: e.args.map((a) => substitute(a, project)) };
  }
}

export function substitutePredicate(p: Predicate, project?: readonly Expr[]): Predicate {
  return mapOperands(p, (e) => substitute(e, project));
}

/**
 * A pipeline row of columns `types` (scanned row ++ build rows) where the `width` columns from `at` (one of its
 * rows) become `kept` columns, old column at + c at new column at + to(c) (undefined: not read), and the columns
 * after them shift: each old column's expression over the new row, for substitute.
 */
export function resegment(types: readonly ScalarType[], at: number, width: number, kept: number, to: (c: number) => number | undefined): Expr[] {
  const row: Expr[] = [];
  types.forEach((type, c) => {
    let index: number | undefined;
    if (c < at) index = c;
    else if (c >= at + width) index = c - width + kept;
    else {
      const moved = to(c - at);
      index = moved === undefined ? undefined : at + moved;
    }
    if (index !== undefined) row[c] = { kind: 'col', index, type };
  });
  return row;
}

/** Columns an expression reads. */
export function exprColumns(e: Expr): number[] {
  switch (e.kind) {
    case 'col':
      return [e.index];
    case 'const':
      return [];
    case 'binary':
      return [...exprColumns(e.left), ...exprColumns(e.right)];
    case 'call':
      return e.args.flatMap(exprColumns);
  }
}

function sameExpr(a: Expr, b: Expr): boolean {
  if (a.kind !== b.kind || a.type !== b.type) return false;
  switch (a.kind) {
    case 'col':
      return a.index === (b as typeof a).index;
    case 'const':
      return a.value === (b as typeof a).value;
    case 'binary': {
      const o = b as typeof a;
      return a.op === o.op && sameExpr(a.left, o.left) && sameExpr(a.right, o.right);
    }
    case 'call': {
      const o = b as typeof a;
      return a.fn === o.fn && a.args.length === o.args.length && a.args.every((x, i) => sameExpr(x, o.args[i]!));
    }
  }
}

/**
 * Whether `p` is false on every row: `e != e`, `e < e` or `e > e` for one deterministic expression (not float32,
 * where a NaN differs from itself), or an `any` none of whose alternatives can hold.
 */
export function neverHolds(p: Predicate): boolean {
  if (p.kind === 'any') return p.alternatives.every((alt) => alt.some(neverHolds));
  return (p.op === '!=' || p.op === '<' || p.op === '>') && p.left.type !== 'float32' && sameExpr(p.left, p.right);
}
