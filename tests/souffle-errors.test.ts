/**
 * Soufflé constructs outside the supported subset: each is a located error that names the construct, and the
 * program is rejected (never run with a different meaning). Also the preprocessor's limits.
 */
import { describe, expect, test } from 'vitest';
import { compile } from '@vixen/runtime';
import { VixenError, type Diagnostic } from '@vixen/queryplan';

const q = '.decl q(x: number)\nq(1).\n';
const r = `${q}.decl r(x: number)\n`;

/** [construct, program, message, line, column] of the first error. */
const cases: Array<[string, string, RegExp, number, number]> = [
  ['recursive record type', `${q}.type L = [h: number, t: L]\n.decl l(x: L)\n`, /^recursive record types are not supported: L contains itself \(L -> L\)$/, 3, 7],
  ['ordering records', `${q}.type P = [x: number]\n.decl p(a: P)\np([1]).\n.decl s(a: P)\ns(a) :- p(a), p(b), a < b.\n`, /^comparing records or ADT values with < is not supported/, 7, 21],
  ['records in arithmetic', `${q}.type P = [x: number]\n.decl p(a: P)\np([1]).\n.decl s(a: number)\ns(a + 1) :- p(a).\n`, /^a is a record or ADT value: records are supported only as relation arguments and in = and != comparisons$/, 7, 3],
  ['record of the wrong arity', `${q}.type P = [x: number]\n.decl p(a: P)\np([1, 2]).\n`, /^a record of type P has 1 field\(s\), found 2$/, 5, 3],
  ['unknown branch', `${q}.type T = A {} | B {x: number}\n.decl t(a: T)\nt($C).\n`, /^\$C is no branch of type T \(expected \$A, \$B\)$/, 5, 3],
  ['nil for an ADT', `${q}.type T = A {} | B {}\n.decl t(a: T)\nt(nil).\n`, /^nil is a record: expected a value of type T$/, 5, 3],
  ['record variable of two types', `${q}.type P = [x: number]\n.type R = [x: number]\n.decl p(a: P)\n.decl r(a: R)\np([1]).\nr(a) :- p(a).\n`, /^variable a is of type R and of type P$/, 8, 11],
  ['counter $ in a body', `${r}r(x) :- q(_), x = $.\n`, /^autoinc\(\) is not supported here: it must be a head argument/, 4, 19],
  ['counter with arguments', `${q}.decl b(c: number, x: number)\nb($(x), x) :- q(x).\n`, /^autoinc\(\) is not supported here: autoinc takes no arguments, found 1$/, 4, 3],
  ['counter in a printed relation', `${q}.decl b(c: number, x: number)\n.output b\nb($, x) :- q(x).\n`, /^autoinc\(\) is not supported here: b is printed/, 5, 3],
  ['counter values used', `${q}.decl b(c: number, x: number)\n.decl o(c: number)\n.output o\nb($, x) :- q(x).\no(c) :- b(c, _).\n`, /^autoinc\(\) is not supported here: a rule uses the numbers of b as values/, 7, 3],
  ['counter over two variables', `${q}.decl b(c: number, x: number, y: number)\nb(autoinc(), x, y) :- q(x), q(y).\n`, /^autoinc\(\) is not supported here: Vixen numbers the matches of a rule body by its one variable/, 4, 3],
  ['counter in recursion', `${q}.decl b(c: number, x: number)\nb(0, 1).\nb($, x) :- b(_, x).\n`, /^autoinc\(\) is not supported here: b is recursive/, 5, 3],
  ['counter beside facts', `${q}.decl b(c: number, x: number)\nb(0, 1).\nb($, x) :- q(x).\n`, /^autoinc\(\) is not supported here: b also has facts/, 4, 1],
  ['component with too few type arguments', `${q}.comp C<T> {\n  .decl c(x: T)\n}\n.init c = C\n`, /^component C takes 1 type parameter\(s\), found 0$/, 6, 11],
  ['instance of an unknown component', `${q}.init c = C\n`, /^unknown component C$/, 3, 11],
  ['choice-domain', `${q}.decl c(x: number, y: number) choice-domain x\nc(x, x) :- q(x).\n`, /^choice-domain is not supported$/, 3, 31],
  ['subsumption', `${r}r(x) <= r(y) :- q(x), q(y), x < y.\n`, /^subsumption \(<=\) is not supported here: only one that keeps the least or greatest last column per key/, 4, 6],
  ['subsumption across keys', `${q}.decl d(x: number, v: number)\nd(x, x) :- q(x).\nd(x, a) <= d(y, b) :- b < a.\n`, /^subsumption \(<=\) is not supported here/, 5, 9],
  ['subsumption on a symbol', `${q}.decl d(x: number, v: symbol)\nd(x, "a") :- q(x).\nd(x, a) <= d(x, b) :- b < a.\n`, /^subsumption on d is not supported: it prefers by the last column, which is a symbol$/, 5, 12],
  ['subsumption in mutual recursion', `${q}.decl d(x: number, v: number)\n.decl e(x: number, v: number)\nd(x, x) :- q(x).\nd(x, v) :- e(x, v).\ne(x, v) :- d(x, v).\nd(x, a) <= d(x, b) :- b < a.\n`, /^subsumption on d is not supported: d is recursive with e/, 8, 1],
  ['subsumptions both ways', `${q}.decl d(x: number, v: number)\nd(x, x) :- q(x).\nd(x, a) <= d(x, b) :- b < a.\nd(x, a) <= d(x, b) :- a < b.\n`, /^subsumption on d is not supported: its subsumptions keep both/, 6, 1],
  ['subsumption against btree_max', `${q}.decl d(x: number, v: number) btree_max\nd(x, x) :- q(x).\nd(x, a) <= d(x, b) :- b < a.\n`, /^subsumption on d is not supported: it keeps the min, its declaration the max$/, 5, 12],
  ['functor declaration', `${q}.functor f(x: number): number\n`, /^the \.functor directive is not supported$/, 3, 1],
  ['user-defined functor', `${r}r(y) :- q(x), y = @f(x).\n`, /^user-defined functors are not supported: @f$/, 4, 19],
  ['eqrel of two types', `${q}.decl e(x: number, y: symbol) eqrel\n`, /^an eqrel relation has two attributes of one type: e has two types$/, 3, 31],
  ['plan', `${r}r(x) :- q(x), q(x).\n.plan 0: (1, 2)\n`, /^the \.plan directive is not supported$/, 5, 1],
  ['pragma', `.pragma "provenance" "explain"\n${q}`, /^the pragma "provenance" is not supported$/, 1, 1],
  ['cat of a variable', `.decl w(s: symbol)\n.input w\n.decl s(s: symbol)\ns(t) :- w(x), t = cat(x, "b").\n`, /^cat with non-constant arguments is not supported: it makes new strings/, 4, 19],
  ['substr with a variable length', `.decl w(s: symbol)\n.input w\n.decl s(s: symbol)\ns(t) :- w(x), t = substr(x, 0, strlen(x) - 1).\n`, /^substr with a non-constant index or length is not supported/, 4, 19],
  ['ord in an order comparison', `.decl w(s: symbol)\n.input w\n.decl s(s: symbol)\ns(x) :- w(x), w(y), ord(x) < ord(y).\n`, /^ord is not supported/, 4, 21],
  ['+ on a symbol variable', `.decl w(s: symbol)\n.input w\n.decl s(s: symbol)\ns(t) :- w(x), t = x + "b".\n`, /^cat with non-constant arguments is not supported: it makes new strings/, 4, 19],
  ['range in a fact with computed bounds', `.decl r(x: number)\nr(range(0, 1 + 1)).\n`, /^range with non-constant arguments in a fact is not supported$/, 2, 3],
  ['range bounded by its own value', `.decl r(x: number)\nr(y) :- y = range(0, y).\n`, /^range with bounds that only the range itself binds is not supported$/, 2, 13],
  ['range in an aggregate', `.decl r(x: number)\nr(c) :- c = count : { y = range(0, 3) }.\n`, /^range inside an aggregate is not supported$/, 2, 27],
  ['a huge range', `.decl r(x: number)\nr(y) :- y = range(0, 1000000000).\n`, /^a range of more than 100000 values is not supported/, 2, 13],
  ['btree_sum', `.decl p(x: number, c: number) btree_sum\np(1, 2).\n`, /^the btree_sum qualifier is not supported/, 1, 31],
  ['btree_min', `.decl p(x: number, s: symbol) btree_min\np(1, "a").\n`, /^a btree_min relation keeps the min of its last column, which must be a number: p has a symbol there$/, 1, 31],
  ['to_string of a variable', `.decl n(x: number)\n.input n\n.decl s(s: symbol)\ns(t) :- n(x), t = to_string(x).\n`, /^to_string with non-constant arguments is not supported/, 4, 19],
  ['contains with a variable substring', `.decl w(s: symbol)\n.input w\n.decl s(s: symbol)\ns(x) :- w(x), w(y), contains(y, x).\n`, /^contains\(sub, s\) with a non-constant substring is not supported/, 4, 21],
  ['match with a variable pattern', `.decl w(s: symbol)\n.input w\n.decl s(s: symbol)\ns(x) :- w(x), w(y), match(y, x).\n`, /^match\(pattern, s\) with a non-constant pattern is not supported/, 4, 21],
  ['regular expression with lookbehind', `.decl w(s: symbol)\nw("a").\n.decl s(s: symbol)\ns(x) :- w(x), match("(?<=a)b", x).\n`, /^the regular expression "\(\?<=a\)b" is not supported/, 4, 15],
  ['ord', `.decl w(s: symbol)\nw("a").\n${r}r(n) :- w(x), n = ord(x).\n`, /^ord is not supported/, 6, 19],
  ['other functor', `${r}r(n) :- q(x), n = f(x).\n`, /^functors are not supported: f\(\.\.\.\)/, 4, 19],
  ['min functor inside an aggregate', `${r}r(n) :- n = count : { q(x), min(x, 3) = 1 }.\n`, /^the min functor inside an aggregate is not supported$/, 4, 29],
  ['max functor of one argument', `${r}r(n) :- q(x), n = max(x).\n`, /^the max functor takes two arguments or more$/, 4, 19],
  ['mean aggregate', `${q}.decl m(x: float)\nm(a) :- a = mean x : { q(x) }.\n`, /^the mean aggregate is not supported$/, 4, 13],
  ['type cast', `${r}r(n) :- q(x), n = as(x, number).\n`, /^type casts as\(\.\.\.\) are not supported$/, 4, 19],
  ['power', `${r}r(n) :- q(x), n = x ^ 2.\n`, /^the power operator \^ is not supported yet$/, 4, 19],
  ['unary operator between operands', `${r}r(n) :- q(x), n = x bnot 3.\n`, /^bnot takes one operand, as in bnot x$/, 4, 21],
  ['aggregate over false', `${r}r(n) :- n = count : { q(_), false }.\n`, /^an aggregate whose body is always false is not supported$/, 4, 23],
  ['witness of a count', `${r}.decl e(x: number, y: number)\ne(1, 2).\n.decl d(x: number, n: number)\nd(x, n) :- n = count : { e(x, _) }.\n`, /^witness problem: x grounded only inside this count aggregate but used outside it/, 7, 16],
  ['count over several atoms with _', `${r}r(n) :- n = count : { q(x), q(_) }.\n`, /^count over several atoms with _ arguments is not supported/, 4, 13],
  ['witness of a max over an expression', `${q}.decl s(x: number, n: number)\ns(x, n) :- n = max x + 1 : { q(x) }.\n`, /^witness x of a max over an expression is not supported/, 4, 16],
  ['witness of a nested aggregate', `${q}.decl s(x: number, n: number)\ns(x, n) :- n = count : { q(y), y = max z : q(x) }.\n`, /^witness x of a nested aggregate/, 4, 36],
  ['limitsize', `${q}.limitsize q\n`, /^the \.limitsize directive is not supported$/, 3, 1],
  ['mixed union type', '.type A <: number\n.type B <: symbol\n.type U = A | B\n.decl u(x: U)\n', /^union type U mixes number and symbol/, 3, 1],
  ['nullary input', `.decl flag()\n.input flag\n`, /^reading a nullary relation from a file is not supported: flag\(\)/, 2, 8],
  ['other IO kind', `${q}.output q(IO=sqlite)\n`, /^IO=sqlite is not supported: expected IO=file or IO=stdout$/, 3, 11],
  ['unknown IO option', `${q}.input q(headers=true)\n`, /^the IO option headers is not supported/, 3, 10],
  ['#ifdef', `#ifdef X\n${q}#endif\n`, /^the preprocessor directive #ifdef is not supported/, 1, 1],
  ['function-like macro', `#define F(x) x\n${q}`, /^function-like macros are not supported: #define F/, 1, 1],
  ['#include <...>', `#include <std.dl>\n${q}`, /only quoted includes are supported/, 1, 1],
  ['missing include', `#include "nope.dl"\n${q}`, /^cannot read included file 'nope\.dl'$/, 1, 1],
];

function errors(text: string, files: Record<string, string> = {}): Diagnostic[] {
  try {
    compile(text, { filename: 'p.dl', readFile: (path) => files[path] });
  } catch (e) {
    if (e instanceof VixenError) return e.diagnostics.filter((d) => d.severity === 'error');
    throw e;
  }
  return [];
}

describe('unsupported Soufflé constructs are located errors', () => {
  for (const [construct, text, message, line, column] of cases) {
    test(construct, () => {
      const [first] = errors(text);
      expect(first?.message).toMatch(message);
      expect(first?.span).toMatchObject({ file: 'p.dl', start: { line, column } });
    });
  }
});

describe('preprocessor', () => {
  test('an include cycle is reported where the include stands', () => {
    const [first] = errors('#include "a.dl"\n.decl q(x: number)\n', { 'a.dl': '#include "p.dl"\n' });
    expect(first?.message).toBe('include cycle: p.dl -> a.dl -> p.dl');
    expect(first?.span).toMatchObject({ file: 'a.dl', start: { line: 1, column: 1 } });
  });

  test('an error in an included file points into that file', () => {
    const [first] = errors('#include "a.dl"\n', { 'a.dl': '.decl q(x: number)\nq(x) :- r(x).\n' });
    expect(first?.message).toMatch(/^undefined relation r/);
    expect(first?.span).toMatchObject({ file: 'a.dl', start: { line: 2, column: 9 } });
  });

  test('a macro use is located where the name is written, and #undef ends it', () => {
    const text = '#define REL missing\n.decl q(x: number)\nq(1).\n#undef REL\nq(x) :- q(x), REL(x).\n';
    const diags = errors(text);
    expect(diags.map((d) => d.message)).toEqual(['undefined relation REL: expected a .decl for it']);
    const before = errors('#define REL missing\n.decl q(x: number)\nq(x) :- REL(x).\n');
    expect(before[0]?.message).toBe('undefined relation missing: expected a .decl for it');
    expect(before[0]?.span).toMatchObject({ start: { line: 3, column: 9 } });
  });
});
