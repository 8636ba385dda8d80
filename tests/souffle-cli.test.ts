/**
 * `vixen run` on Soufflé programs: Soufflé's flag spellings, `--dialect`, output files and `IO=stdout` exactly
 * as Soufflé writes them.
 */
import { copyFileSync, mkdtempSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, test } from 'vitest';
import { cli } from './helpers/cli.js';
import { formatSouffleFloat } from '@vixen/io';

const cases = join(import.meta.dirname, 'souffle');

const expected = (name: string, file: string): string => readFileSync(join(cases, name, 'expected', file), 'utf8');

describe('vixen run prog.dl', () => {
  test('-F DIR -D OUT writes <relation>.csv as Soufflé does', async () => {
    const out = mkdtempSync(join(tmpdir(), 'vixen-souffle-'));
    const dir = join(cases, 'tc-symbols');
    const r = await cli('run', join(dir, 'program.dl'), '-F', join(dir, 'facts'), '-D', out);
    expect(r.err).not.toMatch(/error/);
    expect(r.code).toBe(0);
    expect(readdirSync(out)).toEqual(['path.csv']);
    expect(readFileSync(join(out, 'path.csv'), 'utf8')).toBe(expected('tc-symbols', 'path.csv'));
  });

  test('--facts/--output-dir: IO=stdout is printed in Soufflé frames, filename= names the file', async () => {
    const out = mkdtempSync(join(tmpdir(), 'vixen-souffle-'));
    const dir = join(cases, 'io-directives');
    const r = await cli('run', join(dir, 'program.dl'), '--facts', join(dir, 'facts'), '--output-dir', out);
    expect(r.code).toBe(0);
    expect(r.out).toBe('---------------\nboth\n===============\n2\n3\n===============\n');
    expect(readdirSync(out)).toEqual(['either.tsv']);
    expect(readFileSync(join(out, 'either.tsv'), 'utf8')).toBe('1\n2\n3\n4\n');
  });

  test('-D - prints every output relation in Soufflé frames', async () => {
    const dir = join(cases, 'multi-head');
    const r = await cli('run', join(dir, 'program.dl'), '-D', '-');
    expect(r.code).toBe(0);
    const frame = (rel: string) => `---------------\n${rel}\n===============\n1\n2\n===============\n`;
    expect(r.out).toBe(frame('small') + frame('copy'));
  });

  test('records are written as Soufflé writes them, and shown one column per attribute', async () => {
    const out = mkdtempSync(join(tmpdir(), 'vixen-souffle-'));
    const dir = join(cases, 'adts');
    const written = await cli('run', join(dir, 'program.dl'), '-D', out, '--output', 'shape');
    expect(written.code).toBe(0);
    expect(readFileSync(join(out, 'shape.csv'), 'utf8')).toBe(expected('adts', 'shape.csv'));
    const shown = await cli('run', join(dir, 'program.dl'), '--output', 'shape', '--format', 'csv');
    expect(shown.code).toBe(0);
    expect(shown.out).toBe('s,c\n"$Circle([0, 0], 2)",$Red\n"$Circle([5, 5], 1)",$Blue\n$Empty,$Blue\n"$Square([1, 1], 3)",$Green\n');
  });

  test('printsize (qualifier or directive) prints <relation>\t<size> as Soufflé does, and writes no file', async () => {
    const tmp = mkdtempSync(join(tmpdir(), 'vixen-souffle-'));
    const prog = join(tmp, 'p.dl');
    writeFileSync(prog, '.decl q(x: number) printsize\nq(1). q(2). q(3).\n.decl r(x: number)\nr(x) :- q(x), x > 1.\n.printsize r\n');
    const r = await cli('run', prog, '-D', join(tmp, 'out'));
    expect(r.code).toBe(0);
    expect(r.out.split('\n').sort()).toEqual(['', 'q\t3', 'r\t2']);
    expect(r.err).not.toMatch(/wrote/);
  });

  test('a .pragma that only tunes Soufflé is accepted, with a note on stderr', async () => {
    const prog = join(mkdtempSync(join(tmpdir(), 'vixen-souffle-')), 'p.dl');
    writeFileSync(prog, '.pragma "magic-transform" "*"\n.decl q(x: number)\nq(1).\n.output q(IO=stdout)\n');
    const r = await cli('run', prog);
    expect(r.code).toBe(0);
    expect(r.err).toMatch(/p\.dl:1:1: warning: \.pragma "magic-transform" ignored: it only tunes how Soufflé evaluates the program/);
    expect(r.out).toBe('---------------\nq\n===============\n1\n===============\n');
  });

  test('a compiled Soufflé program keeps its IO directives', async () => {
    const tmp = mkdtempSync(join(tmpdir(), 'vixen-souffle-'));
    const dir = join(cases, 'input-file-options');
    expect((await cli('compile', join(dir, 'program.dl'), '-o', join(tmp, 'p.json'))).code).toBe(0);
    const r = await cli('run', join(tmp, 'p.json'), '-F', join(dir, 'facts'), '-D', join(tmp, 'out'));
    expect(r.code).toBe(0);
    expect(readFileSync(join(tmp, 'out', 'dept.csv'), 'utf8')).toBe(expected('input-file-options', 'dept.csv'));
  });

  test('a compiled Soufflé program keeps how its records are read and written', async () => {
    const tmp = mkdtempSync(join(tmpdir(), 'vixen-souffle-'));
    const dir = join(cases, 'record-input');
    expect((await cli('compile', join(dir, 'program.dl'), '-o', join(tmp, 'p.json'))).code).toBe(0);
    const r = await cli('run', join(tmp, 'p.json'), '-F', join(dir, 'facts'), '-D', join(tmp, 'out'));
    expect(r.code).toBe(0);
    for (const rel of ['labels', 'said']) expect(readFileSync(join(tmp, 'out', `${rel}.csv`), 'utf8')).toBe(expected('record-input', `${rel}.csv`));
  });

  test('floats are written with 9 significant digits', async () => {
    const out = mkdtempSync(join(tmpdir(), 'vixen-souffle-'));
    const dir = join(cases, 'float-arithmetic');
    const r = await cli('run', join(dir, 'program.dl'), '-F', join(dir, 'facts'), '-D', out);
    expect(r.code).toBe(0);
    expect(readFileSync(join(out, 'plus.csv'), 'utf8')).toContain('0.100000001\t0.200000003\t0.300000012\n');
    expect(readFileSync(join(out, 'scaled.csv'), 'utf8')).toBe(expected('float-arithmetic', 'scaled.csv'));
  });

  test('--dialect souffle reads a file of any name as Soufflé', async () => {
    const tmp = mkdtempSync(join(tmpdir(), 'vixen-souffle-'));
    const dir = join(cases, 'comparisons');
    copyFileSync(join(dir, 'program.dl'), join(tmp, 'program.txt'));
    const out = join(tmp, 'out');
    const r = await cli('run', join(tmp, 'program.txt'), '--dialect', 'souffle', '-F', join(dir, 'facts'), '-D', out);
    expect(r.code).toBe(0);
    expect(readFileSync(join(out, 'cmp.csv'), 'utf8')).toBe(expected('comparisons', 'cmp.csv'));
    const asLogic = await cli('run', join(tmp, 'program.txt'), '-F', join(dir, 'facts'));
    expect(asLogic.code).toBe(1);
  });

  test('without an output directory, file outputs are printed as tables', async () => {
    const dir = join(cases, 'multi-head');
    const r = await cli('run', join(dir, 'program.dl'));
    expect(r.code).toBe(0);
    expect(r.out).toContain('small (2 rows)');
    expect(r.out).toContain('copy (2 rows)');
  });

  test('an unsupported construct fails with its location', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'vixen-souffle-'));
    const file = join(dir, 'bad.dl');
    writeFileSync(file, '.decl q(x: number)\nq(1).\n.decl e(x: number, y: number) choice-domain x\n');
    const r = await cli('run', file);
    expect(r.code).toBe(1);
    expect(r.err).toContain('bad.dl:3:31: error: choice-domain is not supported');
  });
});

test('formatSouffleFloat prints like C++ ostream at precision 9', () => {
  const f = (x: number) => formatSouffleFloat(Math.fround(x));
  expect([f(0.5), f(1), f(100), f(0.1), f(-0.25), f(1e10), f(1e-5), f(123456789), f(0)]).toEqual([
    '0.5',
    '1',
    '100',
    '0.100000001',
    '-0.25',
    '1e+10',
    '9.99999975e-06',
    '123456792',
    '0',
  ]);
});
