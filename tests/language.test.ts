/**
 * LANGUAGE.md features that golden cases cannot show: constraint and functional-dependency violations (API and
 * CLI exit status 3), decimal overflow of aggregates as a run-time error, output order through the CLI, and
 * compiled program files keeping orders and constraints.
 */
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { runCli } from '@vixen/cli';
import { compile, openGpu, Program, type Gpu } from '@vixen/runtime';
import { VixenError } from '@vixen/queryplan';

let gpu: Gpu;
beforeAll(async () => {
  gpu = await openGpu();
});
afterAll(() => gpu?.dispose());

const VIOLATING = `
price[p] = v -> int32(p), decimal(v).
price[1] = 2.5d. price[2] = 10d. price[3] = -1d. price[3] = 4d.
node(x) -> int32(x).
node(1). node(2).
edge(x, y) -> int32(x), int32(y).
edge(1, 2). edge(2, 3). edge(3, 3).
edge(x, y) -> node(x), node(y).
price[p] = v -> v >= 0d.
`;

describe('violations', () => {
  test('constraints and functional dependencies report their offending tuples, on the GPU and the interpreter', async () => {
    const program = compile(VIOLATING, { filename: 'v.logic' });
    const onGpu = await program.run({ gpu });
    const reference = await program.interpretChecked();
    for (const result of [onGpu, reference]) {
      const found = result.violations.map((v) => [v.constraint.kind, v.constraint.text, v.count, v.rows]);
      expect(found).toEqual([
        ['constraint', 'edge(x, y) -> node(x), node(y)', 2, [[2, 3], [3, 3]]],
        ['constraint', 'price[p] = v -> v >= 0d', 1, [[3, -10000n]]],
        ['functional', 'price', 2, [[3, -10000n], [3, 40000n]]],
      ]);
      expect(result.violations[0]!.constraint.span).toMatchObject({ file: 'v.logic', start: { line: 8, column: 1 } });
      // The functional dependency's offending rows are facts: each with where it was written.
      expect(result.violations[2]!.rowSpans?.map((s) => [s?.start.line, s?.start.column])).toEqual([[3, 34], [3, 50]]);
    }
  });

  test('string built-in tests in constraints: violated where the test fails (or, negated, holds)', async () => {
    const program = compile(
      'p(x) -> string(x).\np("abc"). p("xbc"). p("").\np(x) -> string:like(x, "%bc").\np(x) -> !string:startswith(x, "x").\np(x) -> string:length[x] = 3.',
      { filename: 's.logic' },
    );
    for (const result of [await program.run({ gpu }), await program.interpretChecked()]) {
      expect(result.violations.map((v) => [v.constraint.text, v.rows])).toEqual([
        ['p(x) -> string:like(x, "%bc")', [['']]],
        ['p(x) -> !string:startswith(x, "x")', [['xbc']]],
        ['p(x) -> string:length[x] = 3', [['']]],
      ]);
    }
  });

  test('a program whose constraints hold has no violations', async () => {
    const program = compile('p(x) -> int32(x).\np(1).\nq(x) <- p(x).\nq(x) -> p(x).\nf[x] = y <- p(x), y = x + 1.');
    expect((await program.run({ gpu })).violations).toEqual([]);
  });

  test('the CLI prints the violations on stderr, no results, and exits with 3', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'vixen-lang-'));
    const file = join(dir, 'v.logic');
    writeFileSync(file, VIOLATING);
    let out = '';
    let err = '';
    const code = await runCli(['node', 'vixen', 'run', file, '--reference'], (s) => (out += s), (s) => (err += s));
    expect(code).toBe(3);
    expect(out).toBe('');
    expect(err).toContain(`${file}:8:1: integrity constraint violated: edge(x, y) -> node(x), node(y) (2 offending tuples)\n  x = 2, y = 3\n  x = 3, y = 3`);
    expect(err).toContain(
      `${file}:3:34: functional dependency violated: price has more than one value for a key (2 offending tuples)\n  price[3] = -1  (${file}:3:34)\n  price[3] = 4  (${file}:3:50)`,
    );
  });
});

describe('aggregates at run time', () => {
  test('a decimal sum outside the 64-bit range is a run-time error on the GPU and in the interpreter', async () => {
    const program = compile('m(g, v) -> int32(g), decimal(v).\nm(1, 900000000000000d). m(1, 800000000000000d).\ns[g] = t <- agg<<t = sum(v)>> m(g, v).');
    await expect(program.run({ gpu })).rejects.toThrow(/decimal overflow/);
    await expect(program.interpret()).rejects.toThrow(VixenError);
  });

  test('a decimal sum whose partial sums overflow 64 bits but whose total fits is exact', async () => {
    const program = compile('m(g, v) -> int32(g), decimal(v).\nm(1, 900000000000000d). m(1, 800000000000000d). m(1, -900000000000000d).\ns[g] = t <- agg<<t = sum(v)>> m(g, v).');
    const rows = [[1, 800000000000000n * 10000n]];
    expect((await program.run({ gpu })).relations.get('s')).toEqual(rows);
    expect((await program.interpret()).get('s')).toEqual(rows);
  });
});

describe('output order', () => {
  test('order ... limit shapes what run returns and survives a compiled program file', async () => {
    const program = compile('s(k, v) -> int32(k), int32(v).\ns(1, 5). s(2, 9). s(3, 7). s(4, 9).\nt(k, v) <- s(k, v).\norder t by v desc, k desc limit 3.');
    const want = [[4, 9], [2, 9], [3, 7]];
    expect((await program.run({ gpu })).relations.get('t')).toEqual(want);
    expect((await program.interpret()).get('t')).toEqual(want);
    const loaded = Program.fromJSON(JSON.parse(JSON.stringify(program.toJSON())));
    expect((await loaded.run({ gpu })).relations.get('t')).toEqual(want);
  });

  test('countsOnly returns the outputs\' row counts (after the limit) and reads none of their rows', async () => {
    const program = compile('s(k, v) -> int32(k), int32(v).\ns(1, 5). s(2, 9). s(3, 7). s(4, 9).\nt(k, v) <- s(k, v).\nu(k) <- s(k, 9).\norder t by v desc limit 3.');
    const full = await program.run({ gpu });
    const counted = await program.run({ gpu, countsOnly: true });
    expect([...counted.counts]).toEqual([['t', 3], ['u', 2]]);
    expect([...full.counts]).toEqual([...full.tables].map(([name, t]) => [name, t.size]));
    expect(counted.tables.size).toBe(0);
    expect(counted.stats.readbackBytes).toBeLessThan(full.stats.readbackBytes);
  });
});
