import { describe, expect, it } from 'vitest';
import { parse, type Clause, type Formula } from '../src/index.js';

function clauses(text: string): Clause[] {
  const r = parse(text, 'p.logic');
  expect(r.diagnostics).toEqual([]);
  return r.ast.clauses;
}

describe('parse', () => {
  it('parses a declaration with spans', () => {
    const [c] = clauses('edge(x, y) -> int32(x), string(y).');
    expect(c!.kind).toBe('decl');
    if (c!.kind !== 'decl') return;
    expect(c.head).toMatchObject({ kind: 'atom', pred: 'edge', args: [{ kind: 'var', name: 'x' }, { kind: 'var', name: 'y' }] });
    expect(c.head.span.start).toEqual({ line: 1, column: 1, offset: 0 });
    expect(c.head.span.end).toEqual({ line: 1, column: 11, offset: 10 });
    expect(c.span.end.column).toBe(35);
    expect(c.body).toMatchObject({
      kind: 'and',
      items: [
        { kind: 'atom', pred: 'int32' },
        { kind: 'atom', pred: 'string' },
      ],
    });
  });

  it('parses several facts per line, negative and int64 literals, strings with escapes', () => {
    const cs = clauses('edge(0, -7). edge(42L, 1).\nname("a\\"b\\\\c\\n\\t").');
    expect(cs.map((c) => c.kind)).toEqual(['fact', 'fact', 'fact']);
    const args = cs.map((c) => (c.kind === 'fact' && c.head.kind === 'atom' ? c.head.args : []));
    expect(args[0]).toMatchObject([{ kind: 'int', value: 0n, suffix: '' }, { kind: 'int', value: -7n }]);
    expect(args[0]![1]!.span.start.column).toBe(9);
    expect(args[1]![0]).toMatchObject({ kind: 'int', value: 42n, suffix: 'L' });
    expect(cs[1]!.span.start).toEqual({ line: 1, column: 14, offset: 13 });
    expect(args[2]![0]).toMatchObject({ kind: 'string', value: 'a"b\\c\n\t' });
    expect(args[2]![0]!.span.start).toEqual({ line: 2, column: 6, offset: 32 });
  });

  it('skips line and block comments', () => {
    const cs = clauses('// a comment\n/* multi\nline */ p(1). // trailing\n');
    expect(cs).toHaveLength(1);
    expect(cs[0]!.span.start).toMatchObject({ line: 3, column: 9 });
  });

  it('parses rules with wildcards, repeated variables and comparisons', () => {
    const [c] = clauses('p(x, z) <- e(x, y), e(y, z), x != z, z >= 3, x = y, _x < "s", x <= x, y > 0, e(x, _).');
    expect(c!.kind).toBe('rule');
    if (c!.kind !== 'rule' || c.body.kind !== 'and') throw new Error('expected a rule with a conjunction');
    const ops = c.body.items.map((f) => (f.kind === 'compare' ? f.op : f.kind));
    expect(ops).toEqual(['atom', 'atom', '!=', '>=', '=', '<', '<=', '>', 'atom']);
    expect(c.body.items[8]).toMatchObject({ args: [{ kind: 'var', name: 'x' }, { kind: 'wildcard' }] });
    const cmp = c.body.items[2]!;
    expect(cmp.span.start.column).toBe(30);
    expect(cmp.span.end.column).toBe(36);
  });

  it('accepts names with colons and underscores', () => {
    const [c] = clauses('string:thing(_a, b_1) <- q:r(_a, b_1).');
    expect(c).toMatchObject({ kind: 'rule', head: { pred: 'string:thing' }, body: { kind: 'atom', pred: 'q:r' } });
  });

  it('parses include and order clauses; keywords still work as names', () => {
    const cs = clauses('include "lib/x.logic".\norder(o, q) -> int32(o), int32(q).\norder answer by rev desc, d limit 10.');
    expect(cs[0]).toMatchObject({ kind: 'include', path: 'lib/x.logic' });
    expect(cs[1]).toMatchObject({ kind: 'decl', head: { pred: 'order' } });
    expect(cs[2]).toMatchObject({
      kind: 'order',
      pred: 'answer',
      keys: [
        { column: 'rev', descending: true },
        { column: 'd', descending: false },
      ],
      limit: { value: 10n },
    });
  });

  it('parses later-slice forms: disjunction, negation, arithmetic, functional atoms, aggregation', () => {
    const body = (text: string): Formula => {
      const [c] = clauses(text);
      if (c!.kind !== 'rule') throw new Error('expected a rule');
      return c.body;
    };
    expect(body('s(x) <- i(x, w), w < 10 ; sp(x).')).toMatchObject({ kind: 'or', items: [{ kind: 'and' }, { kind: 'atom' }] });
    expect(body('l(x) <- n(x), !e(x, _).')).toMatchObject({ kind: 'and', items: [{}, { kind: 'not', body: { kind: 'atom' } }] });
    expect(body('c(o, c) <- r(o, q, p), c = q * (p - 1) + -q.')).toMatchObject({
      items: [{}, { kind: 'compare', right: { kind: 'binary', op: '+', left: { kind: 'binary', op: '*' }, right: { kind: 'neg' } } }],
    });
    expect(body('x(s, n) <- w(s), string:length[s] = n.')).toMatchObject({
      items: [{}, { kind: 'funcAtom', pred: 'string:length', keys: [{ name: 's' }], values: [{ name: 'n' }] }],
    });
    const [f] = clauses('total[c] = t <- agg<<t = sum(v), k = count()>> sale(c, v), v > 0.');
    expect(f).toMatchObject({
      kind: 'rule',
      head: { kind: 'funcAtom', pred: 'total' },
      body: { kind: 'agg', bindings: [{ target: 't', fn: 'sum' }, { target: 'k', fn: 'count', args: [] }], body: { kind: 'and' } },
    });
    expect(body('r(x) <- q(x), x > 3.25d.')).toMatchObject({ items: [{}, { right: { kind: 'real', text: '3.25d' } }] });
  });
});

describe('parse errors', () => {
  const errorsOf = (text: string) =>
    parse(text, 'e.logic').diagnostics.map((d) => ({ message: d.message, line: d.span?.start.line, column: d.span?.start.column }));

  it('names what was expected, at the offending token', () => {
    expect(errorsOf('p(x) <- q(x) r(x).')).toEqual([{ message: "expected '.' but found 'r'", line: 1, column: 14 }]);
    expect(errorsOf('p x.')).toEqual([{ message: "expected '(' or '[' but found 'x'", line: 1, column: 3 }]);
    expect(errorsOf('p(x) <- .')).toEqual([{ message: "expected an atom or a comparison but found '.'", line: 1, column: 9 }]);
  });

  it('reports a missing end at the end of the last token', () => {
    expect(errorsOf('edge(0, 1')).toEqual([{ message: "expected ')' but found end of input", line: 1, column: 10 }]);
  });

  it('recovers at the next clause and keeps going', () => {
    const r = parse('p(1) q(2).\np(.\np(3).', 'e.logic');
    expect(r.diagnostics.map((d) => d.span?.start.line)).toEqual([1, 2]);
    expect(r.ast.clauses).toHaveLength(1);
  });

  it('reports lexical errors', () => {
    expect(errorsOf('p(1). @')).toEqual([{ message: 'unexpected character "@"', line: 1, column: 7 }]);
    expect(errorsOf('p(1).\n/* open')[0]).toEqual({ message: "unterminated comment: expected '*/'", line: 2, column: 1 });
    expect(errorsOf('p("abc).')[0]).toMatchObject({ message: expect.stringContaining('unterminated string'), line: 1, column: 3 });
    expect(errorsOf('p("a\\qb").')).toEqual([{ message: expect.stringContaining('unknown escape sequence \\q'), line: 1, column: 5 }]);
  });

  it('rejects atoms used as values and bare variables as literals', () => {
    expect(errorsOf('p(q(1)).')[0]).toMatchObject({ message: expect.stringContaining('expected a variable or constant'), column: 3 });
    expect(errorsOf('p(x) <- q(x), x.')[0]).toMatchObject({ message: 'expected an atom or a comparison', column: 15 });
  });
});
