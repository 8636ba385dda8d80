/**
 * Soufflé's `+` on symbols concatenates (`"pre-" + s`). It becomes `cat(...)`, so that the string functor rules
 * apply: evaluated when compiling where its arguments are constants (or become so, see specializeTests), a located
 * "not supported" error otherwise. A `+` is on symbols where a side is a string, a functor that makes one, or a
 * variable that a positive atom of the rule binds at a symbol column; Soufflé's type checker allows no mixing.
 */
import type { ScalarType } from '@vixen/queryplan';
import type { SAtom, SFormula, STerm } from './ast.js';
import { mapAtom, mapFormula, mapTerm } from './scoping.js';

const MAKES_SYMBOLS: ReadonlySet<string> = new Set(['cat', 'substr', 'to_string']);

type ColumnType = (rel: string, column: number) => ScalarType | undefined;

/** Variables that positive atoms of `f` (outside aggregates) bind at symbol columns. */
function symbolVars(f: SFormula, columnType: ColumnType, into: Set<string>): Set<string> {
  switch (f.kind) {
    case 'atom':
      f.args.forEach((t, i) => t.kind === 'var' && columnType(f.rel, i) === 'string' && into.add(t.name));
      break;
    case 'and':
    case 'or':
      for (const g of f.items) symbolVars(g, columnType, into);
      break;
    case 'compare':
    case 'not':
    case 'bool':
      break;
  }
  return into;
}

/** The replacement of each `+` on symbols by a `cat` call (nested ones flattened), for mapTerm. */
function concatCalls(symbols: ReadonlySet<string>): (t: STerm) => STerm | undefined {
  const isSymbol = (u: STerm): boolean =>
    u.kind === 'string' || (u.kind === 'call' && MAKES_SYMBOLS.has(u.name)) || (u.kind === 'var' && symbols.has(u.name));
  const fn = (t: STerm): STerm | undefined => {
    if (t.kind !== 'binary' || t.op !== '+') return undefined;
    const [left, right] = [mapTerm(t.left, fn), mapTerm(t.right, fn)];
    if (!isSymbol(left) && !isSymbol(right)) return { ...t, left, right };
    // `a + b + c` is `(a + b) + c`: one cat of three.
    const first = left.kind === 'call' && left.name === 'cat' ? left.args : [left];
    return { kind: 'call', name: 'cat', args: [...first, right], span: t.span, nameSpan: t.span };
  };
  return fn;
}

/** `t` with its `+` on symbols as `cat` calls. */
export function concatTerm(t: STerm, symbols: ReadonlySet<string>): STerm {
  return mapTerm(t, concatCalls(symbols));
}

/** `rule` with its `+` on symbols as `cat` calls. */
export function symbolConcat<R extends { heads: SAtom[]; body: SFormula }>(rule: R, columnType: ColumnType): R {
  const fn = concatCalls(symbolVars(rule.body, columnType, new Set()));
  return { ...rule, heads: rule.heads.map((h) => mapAtom(h, fn)), body: mapFormula(rule.body, fn) };
}
