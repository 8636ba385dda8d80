import { describe, expect, it } from 'vitest';
import { printPlan, type QpProgram } from '@vixen/queryplan';
import { compileLogic, parseSouffle } from '../src/index.js';
import { withoutOrigins } from './helpers.js';

/** Diagnostics of a one-file Soufflé program, as message and position. */
function diagnostics(text: string): { message: string; severity: string; line?: number; column?: number }[] {
  const r = compileLogic([{ path: 'main.dl', text }]);
  return r.diagnostics.map((d) => ({ message: d.message, severity: d.severity, line: d.span?.start.line, column: d.span?.start.column }));
}

/** Asserts exactly one error, containing `message`, at line:column. */
function expectError(text: string, message: string, line: number, column: number): void {
  const found = diagnostics(text).filter((d) => d.severity === 'error');
  expect(found).toHaveLength(1);
  expect(found[0]!.message).toContain(message);
  expect([found[0]!.line, found[0]!.column]).toEqual([line, column]);
}

function plan(text: string, path = 'main.dl'): QpProgram {
  const r = compileLogic([{ path, text }]);
  expect(r.diagnostics.filter((d) => d.severity === 'error')).toEqual([]);
  return r.plan!;
}

const EDGE = '.decl edge(x: number, y: number)\n.input edge\n';

describe('soufflé parser', () => {
  it('parses directives, facts and rules with spans', () => {
    const { ast, diagnostics } = parseSouffle(
      '.decl p(x: number, y: symbol) btree\n.input p\n.output q, r(IO=stdout)\np(1, "a").\nq(x), r(x) :- p(x, _), !s(x) ; x < 3.\n',
      'a.dl',
    );
    expect(diagnostics).toEqual([]);
    expect(ast.items.map((i) => i.kind)).toEqual(['decl', 'io', 'io', 'fact', 'rule']);
    const decl = ast.items[0]!;
    expect(decl.kind === 'decl' && decl.attributes.map((a) => `${a.name.name}:${a.type.name}`)).toEqual(['x:number', 'y:symbol']);
    expect(decl.kind === 'decl' && decl.qualifiers.map((q) => q.name)).toEqual(['btree']);
    const out = ast.items[2]!;
    expect(out.kind === 'io' && out.targets.map((t) => [t.rel.name, t.options.map((o) => `${o.key}=${o.value}`)])).toEqual([
      ['q', []],
      ['r', ['IO=stdout']],
    ]);
    const rule = ast.items[4]!;
    expect(rule.kind).toBe('rule');
    if (rule.kind !== 'rule') return;
    expect(rule.heads.map((h) => h.rel)).toEqual(['q', 'r']);
    expect(rule.body.kind).toBe('or');
    expect(rule.span.start).toMatchObject({ line: 5, column: 1 });
    expect(rule.heads[1]!.relSpan.start).toMatchObject({ line: 5, column: 7 });
  });

  it('reads numbers in every Soufflé spelling and folds a leading minus', () => {
    const { ast } = parseSouffle('p(0x1F, 0b101, 7u, -3, 2.5, -1.5e2).', 'a.dl');
    const fact = ast.items[0]!;
    expect(fact.kind === 'fact' && fact.atom.args).toMatchObject([
      { kind: 'int', value: 31n, unsigned: false },
      { kind: 'int', value: 5n },
      { kind: 'int', value: 7n, unsigned: true },
      { kind: 'int', value: -3n },
      { kind: 'float', text: '2.5' },
      { kind: 'float', text: '-1.5e2' },
    ]);
  });

  it('parses aggregates with and without braces', () => {
    const { ast, diagnostics } = parseSouffle('h(n) :- n = sum y : { e(_, y) }, count : e(_, _) > 1.', 'a.dl');
    expect(diagnostics).toEqual([]);
    const rule = ast.items[0]!;
    if (rule.kind !== 'rule' || rule.body.kind !== 'and') throw new Error('expected a conjunction');
    expect(rule.body.items.map((f) => (f.kind === 'compare' ? [f.left.kind, f.right.kind] : f.kind))).toEqual([
      ['var', 'aggregate'],
      ['aggregate', 'int'],
    ]);
  });

  it('keeps going after a syntax error', () => {
    const { ast, diagnostics } = parseSouffle('p(1 2).\n.decl q(x: number)\nq(1).', 'a.dl');
    expect(diagnostics.map((d) => [d.message, d.span?.start.line, d.span?.start.column])).toEqual([["expected ')' but found '2'", 1, 5]]);
    expect(ast.items.map((i) => i.kind)).toEqual(['decl', 'fact']);
  });
});

describe('soufflé programs', () => {
  it('lowers to the same plan as the LogiQL program', () => {
    const dl = plan(`${EDGE}.decl path(x: number, y: number)\n.output path\npath(x, y) :- edge(x, y).\npath(x, z) :- path(x, y), edge(y, z).\n`);
    const logic = compileLogic([
      {
        path: 'main.logic',
        text: 'edge(x, y) -> int32(x), int32(y).\npath(x, y) -> int32(x), int32(y).\npath(x, y) <- edge(x, y).\npath(x, z) <- path(x, y), edge(y, z).\n',
      },
    ]).plan!;
    expect(printPlan(withoutOrigins(dl))).toEqual(printPlan(withoutOrigins(logic)));
    // Soufflé rules name their own source lines.
    const join = dl.blocks.flatMap((b) => b.commands).find((c) => c.kind === 'mapJoin')!;
    expect(join.rules).toEqual([{ file: 'main.dl', line: 6, text: 'path(x, z) :- path(x, y), edge(y, z)' }]);
  });

  it('prints only .output relations', () => {
    const p = plan(`${EDGE}.decl a(x: number)\n.decl b(x: number) output\n.output edge\na(x) :- edge(x, _).\nb(x) :- a(x).\n`);
    const printed = p.relations.filter((r) => r.output).map((r) => r.name);
    expect(printed).toEqual(['edge', 'b']);
  });

  it('maps Soufflé types, aliases included', () => {
    const p = plan('.type Id <: number\n.type Name = symbol\n.number_type N\n.decl p(a: Id, b: Name, c: unsigned, d: float, e: N)\np(1, "x", 2, 2.5, 3).\n.output p');
    expect(p.relations[0]!.columns.map((c) => c.type)).toEqual(['int32', 'string', 'uint32', 'float32', 'int32']);
  });

  it('allows uses before declarations, multi-head rules and disjunctions anywhere', () => {
    const p = plan(`a(x), b(x) :- edge(x, y), (y < 2 ; y > 5).\n${EDGE}.decl a(x: number)\n.decl b(x: number)\n.output a, b\n`);
    const commands = p.blocks.flatMap((b) => b.commands).filter((c) => c.kind === 'union').map((c) => c.target);
    expect(commands).toEqual(['a', 'a', 'b', 'b']);
  });

  it('lowers aggregates to helper relations that are not printed', () => {
    const p = plan(`${EDGE}.decl deg(x: number, n: number)\n.output deg\ndeg(x, n) :- edge(x, _), n = count : { edge(x, _) }.\n`);
    expect(p.relations.filter((r) => r.kind !== 'temp').map((r) => [r.name, r.output])).toEqual([
      ['edge', false],
      ['deg', true],
      ['$agg1', false],
    ]);
    expect(p.blocks.flatMap((b) => b.commands).some((c) => c.kind === 'aggregate')).toBe(true);
  });
});

describe('soufflé diagnostics', () => {
  it('syntax errors say what was expected', () => {
    expectError(`${EDGE}edge(1, 2) edge(2, 3).`, "expected '.', ':-' or '<=' but found 'edge'", 3, 12);
    expectError('.decl p(x number)', "expected ':' but found 'number'", 1, 11);
  });

  it('undefined relation', () => {
    expectError(`${EDGE}.decl p(x: number)\np(x) :- edge(x, y), reach(y).`, 'undefined relation reach: expected a .decl for it', 4, 21);
    expectError('.decl p(x: number)\n.output q', 'undefined relation q', 2, 9);
  });

  it('arity mismatch', () => {
    expectError(`${EDGE}edge(1, 2, 3).`, 'arity mismatch: edge expects 2 arguments (declared at main.dl:1:7), found 3', 3, 1);
  });

  it('unknown types', () => {
    expectError('.decl p(x: numbr)', 'unknown type numbr: expected number, unsigned, float, symbol or a .type name', 1, 12);
    expectError('.type T = number | symbol\n.decl p(x: T)', 'union type T mixes number and symbol: unions of different primitive types are not supported', 1, 1);
  });

  it('type mismatches', () => {
    expectError(`${EDGE}edge(1, "two").`, 'type mismatch: expected int32 for column 2 of edge but found string "two"', 3, 9);
    expectError(`${EDGE}.decl s(x: symbol)\ns(x) :- edge(x, _).`, 'type mismatch: expected string for column 1 of s but variable x is int32', 4, 3);
  });

  it('ungrounded variables', () => {
    expectError(`${EDGE}.decl p(x: number)\np(z) :- edge(x, _).`, 'unsafe rule: variable z in the head is not bound', 4, 3);
    expectError(`${EDGE}.decl p(x: number)\np(x) :- edge(x, _), !edge(y, x).`, 'unsafe negation: variable y', 4, 27);
  });

  it('recursion through negation and aggregation', () => {
    expectError(`${EDGE}.decl p(x: number)\np(x) :- edge(x, _), !p(x).`, 'recursion through negation', 4, 22);
  });

  it('unsupported Soufflé features are located', () => {
    expectError(`${EDGE}.decl p(x: symbol)\np(s) :- edge(x, _), s = to_string(x).`, 'to_string with non-constant arguments is not supported', 4, 25);
    expectError(`${EDGE}.decl p(x: number)\np(y) :- edge(x, _), y = x ^ 2.`, 'the power operator ^ is not supported yet', 4, 25);
    expectError('#if 1\n.decl p(x: number)\np(1).', 'the preprocessor directive #if is not supported', 1, 1);
    expectError('.decl p(x: number)\n.limitsize p\np(1).', 'the .limitsize directive is not supported', 2, 1);
    expectError('.decl p(x: number) eqrel', 'an eqrel relation has two attributes of one type: p has 1', 1, 20);
  });

  it('IO options: file names and delimiters, IO=stdout for outputs', () => {
    expect(diagnostics('.decl p(x: number)\n.input p(IO=file, filename="data/x.txt", delimiter=",")')).toEqual([]);
    expect(diagnostics('.decl p(x: number)\np(1).\n.output p(IO=stdout)\n.output p(filename="p.tsv")')).toEqual([]);
    expectError('.decl p(x: number)\n.input p(IO=sqlite)', 'IO=sqlite is not supported', 2, 10);
    expectError('.decl p(x: number)\n.input p(IO=stdout)', 'IO=stdout is not supported: expected IO=file', 2, 10);
    expectError('.decl p(x: number)\np(1).\n.output p(compress=true)', 'the IO option compress is not supported', 3, 11);
    expectError('.decl p(x: number)\np(1).\n.output p(IO=stdout, filename="x")', 'filename is meaningless with IO=stdout', 3, 22);
  });

  it('warns about relations that can never hold tuples', () => {
    expect(diagnostics('.decl p(x: number)\n.decl q(x: number)\n.output q\nq(x) :- p(x).')).toEqual([
      { message: 'relation p has no facts or rules and is not .input: it is always empty', severity: 'warning', line: 1, column: 7 },
    ]);
  });

  it('an invalid regular expression matches nothing, with a warning (as Soufflé does)', () => {
    expect(diagnostics('.decl w(s: symbol)\nw("a[").\n.decl m(s: symbol)\n.output m\nm(x) :- w(x), match("a[", x).')).toEqual([
      { message: 'match never holds: the regular expression "a[" is invalid (Invalid regular expression: /a[/: Unterminated character class)', severity: 'warning', line: 5, column: 15 },
    ]);
  });

  it('.type number names the primitive type: a warning, not an error', () => {
    expect(diagnostics('.type number\n.decl p(x: number)\n.output p\np(1).')).toEqual([
      { message: '.type number is the primitive type: the declaration is ignored', severity: 'warning', line: 1, column: 7 },
    ]);
  });
});
