import { describe, expect, it } from 'vitest';
import { renderDiagnostics } from '@vixen/queryplan';
import { compileLogic } from '../src/index.js';
import { errors, expectError, plan } from './helpers.js';

const EDGE = 'edge(x, y) -> int32(x), int32(y).\n';

describe('diagnostics', () => {
  it('syntax errors are located and say what was expected', () => {
    expectError('edge(0, 1).\nedge(1 2).', "expected ')' but found '2'", 2, 8);
  });

  it('undeclared predicate in a body', () => {
    expectError(`${EDGE}p(x) <- edge(x, y), reach(y).`, 'undeclared predicate reach', 2, 21);
  });

  it('arity mismatch against a declaration', () => {
    expectError(`${EDGE}edge(1, 2, 3).`, 'arity mismatch: edge expects 2 arguments (declared at main.logic:1:1), found 3', 2, 1);
  });

  it('arity mismatch against an earlier use', () => {
    expectError('n(1).\np(x) <- n(x, x).', 'arity mismatch: n expects 1 argument (first used at main.logic:1:1), found 2', 2, 9);
  });

  it('string constant in an int32 column', () => {
    expectError(`${EDGE}edge(1, "two").`, 'type mismatch: expected int32 for column 2 of edge but found string "two"', 2, 9);
    expectError(`${EDGE}p(x) <- edge(x, "a").`, 'expected int32 for column 2 of edge', 2, 17);
  });

  it('int64 literal in an int32 column', () => {
    expectError(`${EDGE}edge(1, 2L).`, 'expected int32 for column 2 of edge but found int64 literal 2L', 2, 9);
  });

  it('variable used at two types', () => {
    expectError(
      `${EDGE}name(n, s) -> int32(n), string(s).\np(x) <- name(x, s), edge(s, x).`,
      'type mismatch: variable s is string (column 2 of name at main.logic:3:17) but column 1 of edge is int32',
      3,
      26,
    );
  });

  it('head column type against a declaration', () => {
    expectError(`${EDGE}q(s) -> string(s).\nq(x) <- edge(x, _).`, 'expected string for column 1 of q but variable x is int32', 3, 3);
  });

  it('comparison between different types', () => {
    expectError(`${EDGE}p(x) <- edge(x, y), x < "a".`, 'type mismatch: cannot compare int32 with string', 2, 21);
    expectError(`${EDGE}name(s) -> string(s).\np(x) <- edge(x, _), name(s), x = s.`, 'cannot compare int32 with string', 3, 30);
  });

  it('unsafe rules', () => {
    expectError(`${EDGE}p(x, z) <- edge(x, y).`, 'unsafe rule: variable z in the head is not bound', 2, 6);
    expectError(`${EDGE}p(x) <- edge(x, y), z > 1.`, 'unsafe rule: variable z in a comparison is not bound', 2, 21);
    expectError(`${EDGE}p(x, _) <- edge(x, y).`, '_ is not allowed in the head', 2, 6);
  });

  it('duplicate declaration', () => {
    expectError(`${EDGE}edge(a, b) -> int32(a), int32(b).`, 'duplicate declaration of edge (first declared at main.logic:1:1)', 2, 1);
  });

  it('int32 literal out of range', () => {
    expectError(`${EDGE}edge(2147483648, 0).`, 'int32 literal 2147483648 is out of range', 2, 6);
    expectError(`${EDGE}edge(-2147483649, 0).`, 'out of range', 2, 6);
  });

  it('int64 literal out of range', () => {
    expectError('big(x) -> int64(x).\nbig(9223372036854775808).', 'int64 literal 9223372036854775808 is out of range', 2, 5);
  });

  it('nullary predicates are propositions', () => {
    expect(plan(`${EDGE}done() <- edge(_, _).\nloose(x) <- edge(x, _), !done().`).relations.map((r) => r.name)).toContain('done');
    expectError(`${EDGE}done() <- edge(_, _).\nagain(x) <- done(x), edge(x, _).`, 'arity mismatch: done expects 0 arguments', 3, 13);
  });

  it('non-ground facts', () => {
    expectError(`${EDGE}edge(x, 1).`, 'facts must be ground: expected a constant but found variable x', 2, 6);
  });

  it('uninferable IDB types', () => {
    const found = errors('a(x) <- b(x).\nb(x) <- a(x).');
    expect(found.map((e) => [e.message.slice(0, 45), e.line, e.column])).toEqual([
      ['cannot infer the type of column 1 of a; expec', 1, 1],
      ['cannot infer the type of column 1 of b; expec', 1, 9],
    ]);
  });

  it('declaration problems', () => {
    expectError('p(x, y) -> int32(x).', 'expected a type for y in the declaration of p', 1, 6);
    expectError('p(x) -> int32(x), string(x).', 'x already has type int32', 1, 19);
    expect(errors('p(x) -> int32(z).').map((e) => [e.message.split(',')[0], e.column])).toEqual([
      ['expected a type for x in the declaration of p', 3],
      ['z is not an argument of p', 15],
    ]);
  });

  it('recursion through aggregation names the cycle at the aggregated atom', () => {
    expectError(
      `${EDGE}c[x] = n <- agg<<n = count()>> r(x, _).\nr(x, y) <- edge(x, y).\nr(x, n) <- c[x] = n.`,
      'recursion through aggregation: c aggregates over r, which depends on c (cycle c -> r -> c)',
      2,
      32,
    );
  });

  describe('recursion through min and max', () => {
    const W = 'edge(x, y, w) -> int32(x), int32(y), int32(w).\nsource(s) -> int32(s).\nd[s] = v <- source(s), v = 0.\n';
    const minRule = 'd[y] = v <- agg<<v = min(c)>> d[x] = u, edge(x, y, w), c = u + w.\n';

    it('accepts min rules and plain rules of one head, and max alone', () => {
      expect(compileLogic([{ path: 'main.logic', text: `${W}${minRule}` }]).diagnostics).toEqual([]);
      const widest = `${W}d[y] = v <- agg<<v = max(c)>> d[x] = u, edge(x, y, w), c = u + w.\n`;
      expect(compileLogic([{ path: 'main.logic', text: widest }]).diagnostics).toEqual([]);
    });

    it('rejects min with max, count, sum or avg in one cycle, naming it', () => {
      for (const fn of ['max', 'sum']) {
        expectError(
          `${W}${minRule}e[y] = v <- agg<<v = ${fn}(u)>> d[y] = u.\nd[y] = v <- e[y] = v.`,
          `recursion through min and ${fn}: e has a ${fn} rule in a cycle through min (cycle e -> d -> e)`,
          5,
          1,
        );
      }
      expectError(
        `${W}${minRule}d[y] = v <- agg<<v = count()>> d[x] = _, edge(x, y, _).`,
        'recursion through min and count: d has a count rule in a cycle through min (cycle d -> d); expected the rules of a recursive min',
        5,
        1,
      );
    });

    it('rejects negation in the cycle at the negated atom', () => {
      expectError(
        `${W}d[y] = v <- agg<<v = min(c)>> d[x] = u, edge(x, y, w), c = u + w, !far(x).\nfar(x) <- d[x] = u, u > 10.`,
        'recursion through negation: d negates far, which depends on d (cycle d -> far -> d)',
        4,
        68,
      );
    });

    it('rejects a set predicate in the cycle and a head with two values', () => {
      expectError(
        `${W}d[y] = v <- agg<<v = min(c)>> e(x, u), edge(x, y, w), c = u + w.\ne(x, u) <- d[x] = u.`,
        'recursion through min: e is in a cycle through min (cycle e -> d -> e) but has no min rule',
        5,
        1,
      );
      expectError(
        `${W}m[y] = v, n <- agg<<v = min(c), n = min(w)>> m(x, u, _), edge(x, y, w), c = u + w.\nm[s] = 0, 0 <- source(s).`,
        'recursion through min: m (cycle m -> m) must hold one min value per key; expected one aggregate whose result is the head',
        4,
        1,
      );
    });
  });

  it('bad aggregate uses are located at the aggregate', () => {
    const cases: [string, string, number, number][] = [
      ['p[x] = n <- agg<<n = median(y)>> edge(x, y).', 'bad aggregate use: unknown aggregate median; expected count, sum, min, max or avg', 2, 18],
      ['s(x, v) -> int32(x), string(v).\np[x] = n <- agg<<n = sum(v)>> s(x, v).', 'bad aggregate use: sum needs a numeric argument but v is string', 3, 18],
      ['p[x] = n <- agg<<n = count(y)>> edge(x, y).', 'bad aggregate use: expected count() with no argument', 2, 18],
      ['p(x, n) <- edge(x, _), agg<<n = count()>> edge(x, _).', 'bad aggregate use: agg<< >> must be the whole rule body', 2, 24],
      ['p[x] = n <- agg<<n = sum(z)>> edge(x, y).', 'unsafe aggregate: variable z in sum(z) is not bound by a positive atom in the aggregated body', 2, 18],
      ['p[x] = x + 1 <- agg<<n = count()>> edge(x, _).', 'bad aggregate use: the head of an aggregation takes variables only', 2, 8],
      ['p[x] = y <- agg<<y = max(y)>> edge(x, y).', 'bad aggregate use: y is already bound in the aggregated body', 2, 18],
    ];
    for (const [rule, message, line, column] of cases) {
      expect(errors(`${EDGE}${rule}`)).toEqual([{ message: expect.stringContaining(message), file: 'main.logic', line, column }]);
    }
  });

  it('functional predicates: wrong numbers of keys or values', () => {
    const price = 'price[p] = v -> int32(p), int32(v).\n';
    expectError(`${EDGE}${price}q(x) <- price[x, 1] = x.`, 'arity mismatch: price[...] expects 1 key and 1 value (declared at main.logic:2:1), found 2 keys and 1 value', 3, 9);
    expectError(`${EDGE}${price}price[1] = 2, 3.`, 'arity mismatch: price[...] expects 1 key and 1 value (declared at main.logic:2:1), found 1 key and 2 values', 3, 1);
    expectError(`${EDGE}${price}q(x) <- price[x] = x, price(x, x, x).`, 'arity mismatch: price expects 2 arguments (declared at main.logic:2:1), found 3', 3, 23);
  });

  it('order clauses name existing predicates and columns; no recursion through a limit', () => {
    expectError(`${EDGE}order edge by z desc.`, 'order: edge has no column z; expected one of x, y', 2, 15);
    expectError(`${EDGE}order nope by x.`, 'order: unknown predicate nope', 2, 7);
    expectError(
      `${EDGE}p(x) <- edge(x, _).\np(y) <- q(x), edge(x, y).\nq(x) <- p(x).\norder p by x limit 2.`,
      'order: p has a limit and is read by the rule for q, which it depends on (recursion through a limit); expected rules that read a limited relation to come after it',
      5,
      1,
    );
    expect(compileLogic([{ path: 'main.logic', text: `${EDGE}p(x) <- edge(x, _).\norder p by x limit 2.\nq(x) <- p(x).` }]).diagnostics).toEqual([]);
  });

  it('built-ins: unknown names, argument counts and types', () => {
    expectError(`${EDGE}q(x) <- edge(x, _), string:lenght[x] = 2.`, 'unknown built-in string:lenght; expected one of date:parse, date:year', 2, 21);
    expectError(`${EDGE}q(x) <- edge(x, y), y = int32:from_nothing[x].`, 'unknown built-in int32:from_nothing', 2, 25);
    expectError(`${EDGE}q(x) <- edge(x, y), date:add_days[x] = y.`, 'date:add_days expects 2 arguments, found 1', 2, 21);
    expectError(`${EDGE}q(x) <- edge(x, _), date:year[x] = 2.`, 'type mismatch: expected date for argument 1 of date:year but variable x is int32', 2, 31);
    expectError(`${EDGE}q(x) <- edge(int32:from_int64[x], y).`, 'expected a variable or constant in a body atom, not int32:from_int64[...]', 2, 14);
  });

  it('string built-ins: argument counts, argument types, constant patterns and lengths', () => {
    const S = `${EDGE}s(x) -> string(x).\n`;
    expectError(`${S}q(x) <- s(x), string:like(x).`, 'string:like expects 2 arguments, found 1', 3, 15);
    expectError(`${S}q(x) <- s(x), string:startswith(x, "a", "b", "c").`, 'string:startswith expects 2 arguments, found 4', 3, 15);
    expectError(`${S}q(x) <- s(x), string:length(x).`, 'string:length expects 1 argument and its result, found 1', 3, 15);
    expectError(`${S}q(x) <- s(x), string:substring[x, 1] = x.`, 'string:substring expects 3 arguments, found 2', 3, 15);
    expectError(`${S}q(x) <- s(x), string:length[x, x] = 1.`, 'string:length expects 1 argument, found 2', 3, 15);
    expectError(`${EDGE}q(x) <- edge(x, _), string:like(x, "%a%").`, 'type mismatch: expected string for argument 1 of string:like but variable x is int32', 2, 33);
    expectError(`${EDGE}q(x) <- edge(x, _), string:length[x] = 2.`, 'type mismatch: expected string for argument 1 of string:length but variable x is int32', 2, 35);
    expectError(`${S}q(x) <- s(x), string:like(x, 5).`, 'type mismatch: expected string for argument 2 of string:like but found integer 5', 3, 30);
    expectError(`${S}q(x) <- s(x), n = string:length[x], n = "a".`, 'type mismatch: cannot compare int32 with string', 3, 37);
    expectError(
      `${S}q(x) <- s(x), s(p), string:like(x, p).`,
      'argument 2 of string:like must be a constant string: the device looks string:like up in a table built per constant',
      3,
      36,
    );
    expectError(`${S}q(x) <- s(x), s(p), !string:endswith(x, p).`, 'argument 2 of string:endswith must be a constant string', 3, 41);
    expectError(`${S}q(t) <- s(x), edge(i, _), t = string:substring[x, i, 2].`, 'argument 2 of string:substring must be a constant integer', 3, 51);
    expectError(`${S}q(t) <- s(x), t = string:substring[x, 1, -2].`, 'the length (argument 3) of string:substring must not be negative, found -2', 3, 42);
    expectError(`${S}string:like("a", "b").`, 'string:like is a built-in: facts and rules cannot define it', 3, 1);
    expectError(`${S}string:length(x, 1) <- s(x).`, 'string:length is a built-in: facts and rules cannot define it', 3, 1);
    expectError(`${S}string:upper[x] = x <- s(x).`, 'string:upper is in a built-in namespace: facts and rules cannot define it', 3, 1);
    expectError(`${S}q(t) <- s(x), t = string:substring[x, 1, 2L].`, 'type mismatch: expected int32 for argument 3 of string:substring but found int64 literal 2L', 3, 42);
  });

  it('integrity constraints need atoms or comparisons on the right', () => {
    expectError(`${EDGE}edge(x, y) -> agg<<n = count()>> edge(x, _).`, 'expected atoms, negated atoms or comparisons on the right of an integrity constraint', 2, 15);
  });

  it('recursion through negation names the cycle at the negated atom', () => {
    expectError(`${EDGE}p(x) <- edge(x, _), !p(x).`, 'recursion through negation: p negates p, which depends on p (cycle p -> p)', 2, 22);
    const found = errors(`${EDGE}p(x) <- edge(x, _), !q(x).\nq(x) <- edge(x, y), r(y).\nr(y) <- p(y).`);
    expect(found).toEqual([
      {
        message: expect.stringContaining('recursion through negation: p negates q, which depends on p (cycle p -> q -> r -> p)'),
        file: 'main.logic',
        line: 2,
        column: 22,
      },
    ]);
  });

  it('unsafe negation', () => {
    expectError(`${EDGE}p(x) <- edge(x, _), !edge(x, z).`, 'unsafe negation: variable z in !edge(...) is not bound by a positive atom', 2, 30);
    expect(errors(`${EDGE}p(x) <- !edge(x, _).`)[0]).toMatchObject({ message: 'unsafe rule: expected at least one positive atom in the body', line: 2, column: 1 });
  });

  it('unsafe assignment', () => {
    expectError(`${EDGE}p(x, c) <- edge(x, y), c = y * z.`, 'unsafe assignment to c: variable z is not bound by a positive atom or an earlier assignment', 2, 32);
    expect(errors(`${EDGE}p(x, c) <- edge(x, y), c = d + 1, d = c - 1.`).map((e) => [e.message.split(':')[0], e.column])).toEqual([
      ['unsafe assignment to c', 28],
      ['unsafe assignment to d', 39],
    ]);
  });

  it('type mismatch in arithmetic', () => {
    expectError(`${EDGE}m(d) -> decimal(d).\np(x, c) <- edge(x, y), m(d), c = y * d.`, 'type mismatch in arithmetic: cannot apply * to int32 and decimal', 3, 34);
    expectError(`${EDGE}s(t) -> string(t).\np(t) <- s(t), u = t + 1, edge(u, _).`, 'cannot apply + to string and an integer', 3, 19);
    expectError(`${EDGE}f(v) -> float32(v).\np(x) <- f(v), x = v % 2.`, 'operator % is not defined on float32', 3, 19);
    expectError(`${EDGE}q(s) -> string(s).\nq(x + 1) <- edge(x, _).`, 'expected string for column 1 of q but the arithmetic gives int32', 3, 3);
    expectError(`${EDGE}p(x) <- edge(x, _), x > 1.5d.`, 'type mismatch: cannot compare int32 with decimal', 2, 21);
  });

  it('bad literals', () => {
    expectError(`${EDGE}p(x) <- edge(x, _), x > 2.5u.`, 'bad literal 2.5u: the u suffix needs an integer', 2, 25);
    expectError('m(d) -> decimal(d).\nm(1.00001d).', 'bad literal 1.00001d: decimals have at most 4 fractional digits', 2, 3);
    expectError('m(d) -> uint32(d).\nm(4294967296u).', 'uint32 literal 4294967296 is out of range', 2, 3);
    expectError('m(d) -> uint32(d).\nm(-1).', 'uint32 literal -1 is out of range', 2, 3);
    expectError('m(d) -> decimal(d).\nm(1e3d).', 'bad literal 1e3d: decimal literals take no exponent', 2, 3);
    expectError('m(d) -> boolean(d).\nm(1).', 'expected boolean for column 1 of m but found integer 1', 2, 3);
  });

  it('date:parse of a bad date', () => {
    expectError('d(x) -> date(x).\nd(date:parse["2024-02-30"]).', 'bad date "2024-02-30" in date:parse: expected a calendar date as YYYY-MM-DD', 2, 14);
    expectError('d(x) -> date(x).\nd(date:parse["31/01/2024"]).', 'bad date "31/01/2024"', 2, 14);
    expectError('d(x) -> date(x).\nd(date:parse[3]).', 'expected a string constant in date:parse', 2, 3);
  });

  it('collects many errors in source order', () => {
    const found = errors(`${EDGE}edge(1, "a").\np(x) <- edge(x, y), q(y).\nr(x, z) <- edge(x, y).\nedge(1.`);
    expect(found.map((e) => [e.line, e.message.split(':')[0]])).toEqual([
      [2, 'type mismatch'],
      [3, 'undeclared predicate q'],
      [4, 'unsafe rule'],
      [5, "expected ')' but found '.'"],
    ]);
  });

  it('renders with file, line, column and a caret', () => {
    const r = compileLogic([{ path: 'main.logic', text: `${EDGE}edge(1, "two").` }]);
    expect(renderDiagnostics(r.diagnostics, r.sources)).toBe(
      [
        'main.logic:2:9: error: type mismatch: expected int32 for column 2 of edge but found string "two"',
        '  |',
        '2 | edge(1, "two").',
        '  |         ^^^^^',
      ].join('\n'),
    );
  });
});

describe('include', () => {
  const files: Record<string, string> = {
    'lib/types.logic': 'edge(x, y) -> int32(x), int32(y).\ninclude "facts.logic".',
    'lib/facts.logic': 'edge(1, 2).',
    'loop/a.logic': 'include "b.logic".\na(1).',
    'loop/b.logic': 'include "a.logic".\nb(1).',
    'bad/x.logic': 'edge(1, "x").',
  };
  const readFile = (path: string): string | undefined => files[path];

  it('resolves paths relative to the includer, includes each file once, records sources', () => {
    const r = compileLogic(
      [{ path: 'main.logic', text: 'include "lib/types.logic".\ninclude "lib/types.logic".\np(x, y) <- edge(x, y).' }],
      { readFile },
    );
    expect(r.diagnostics).toEqual([]);
    expect(r.plan!.facts['edge']).toEqual([[1, 2]]);
    expect([...r.sources.keys()]).toEqual(['main.logic', 'lib/types.logic', 'lib/facts.logic']);
  });

  it('reports cycles at the include that closes them', () => {
    const found = errors('include "loop/a.logic".', { readFile });
    expect(found).toEqual([
      { message: 'include cycle: loop/a.logic -> loop/b.logic -> loop/a.logic', file: 'loop/b.logic', line: 1, column: 1 },
    ]);
  });

  it('reports missing files and errors inside included files', () => {
    expectError('include "nope.logic".', "cannot read included file 'nope.logic'", 1, 9, { readFile });
    const found = errors('edge(x, y) -> int32(x), int32(y).\ninclude "bad/x.logic".', { readFile });
    expect(found).toMatchObject([{ file: 'bad/x.logic', line: 1, column: 9, message: expect.stringContaining('type mismatch') }]);
  });
});
