import { mkdtempSync, mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { VixenError, renderDiagnostic, type Column, type Diagnostic, type RelationDecl } from '@vixen/queryplan';
import { loadFactsDir, loadFactsFile } from '../src/facts/index.js';

const root = mkdtempSync(join(tmpdir(), 'vixen-facts-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));

let dirCount = 0;
/** A fresh directory holding `files` (name -> content). */
function dirWith(files: Record<string, string>): string {
  const dir = join(root, `d${dirCount++}`);
  mkdirSync(dir);
  for (const [name, text] of Object.entries(files)) writeFileSync(join(dir, name), text);
  return dir;
}

const edge: Column[] = [
  { name: 'x', type: 'int32' },
  { name: 'y', type: 'int32' },
];
const mixed: Column[] = [
  { name: 'id', type: 'int64' },
  { name: 'name', type: 'string' },
  { name: 'n', type: 'int32' },
];
const decl = (name: string, columns: Column[]): RelationDecl => ({ name, columns, kind: 'edb', output: false });

/** The diagnostics of the VixenError that `p` rejects with. */
async function failure(p: Promise<unknown>): Promise<Diagnostic[]> {
  const e = await p.then(
    () => undefined,
    (err: unknown) => err,
  );
  expect(e).toBeInstanceOf(VixenError);
  return (e as VixenError).diagnostics;
}

/** `line:column: message` of each diagnostic. */
async function located(p: Promise<unknown>): Promise<string[]> {
  return (await failure(p)).map((d) => `${d.span?.start.line}:${d.span?.start.column}: ${d.message}`);
}

describe('loadFactsFile formats', () => {
  it('reads .facts and .tsv (tab separated, no quoting)', async () => {
    const dir = dirWith({ 'edge.facts': '1\t2\n3\t4\n', 'm.tsv': '9007199254740993\ta "b" c\t-7\n-1\t\t0' });
    expect(await loadFactsFile(join(dir, 'edge.facts'), edge)).toEqual([[1, 2], [3, 4]]);
    expect(await loadFactsFile(join(dir, 'm.tsv'), mixed)).toEqual([
      [9007199254740993n, 'a "b" c', -7],
      [-1n, '', 0],
    ]);
  });

  it('reads .csv with RFC 4180 quoting, including quoted delimiters, quotes and newlines', async () => {
    const dir = dirWith({ 'm.csv': '1,plain,2\r\n2,"a,b",3\r\n3,"say ""hi""",4\r\n4,"two\r\nlines",5\r\n5,"",6\r\n' });
    expect(await loadFactsFile(join(dir, 'm.csv'), mixed)).toEqual([
      [1n, 'plain', 2],
      [2n, 'a,b', 3],
      [3n, 'say "hi"', 4],
      [4n, 'two\r\nlines', 5],
      [5n, '', 6],
    ]);
  });

  it('reads .tbl with and without the trailing delimiter', async () => {
    const dir = dirWith({ 'm.tbl': '1|Customer#1|25|\n2|x|-3\n' });
    expect(await loadFactsFile(join(dir, 'm.tbl'), mixed)).toEqual([
      [1n, 'Customer#1', 25],
      [2n, 'x', -3],
    ]);
  });

  it('skips empty lines, accepts blanks around numbers and a BOM, and keeps strings as-is', async () => {
    const dir = dirWith({ 'm.csv': '\ufeff 1 , x ,+2\n\n\n2,y,3\n\n' });
    expect(await loadFactsFile(join(dir, 'm.csv'), mixed)).toEqual([
      [1n, ' x ', 2],
      [2n, 'y', 3],
    ]);
  });

  it('reads the int32 and int64 extremes', async () => {
    const dir = dirWith({ 'r.csv': '-2147483648,-9223372036854775808\n2147483647,9223372036854775807\n' });
    const cols: Column[] = [
      { name: 'a', type: 'int32' },
      { name: 'b', type: 'int64' },
    ];
    expect(await loadFactsFile(join(dir, 'r.csv'), cols)).toEqual([
      [-(2 ** 31), -(2n ** 63n)],
      [2 ** 31 - 1, 2n ** 63n - 1n],
    ]);
  });

  it('streams a larger file', async () => {
    const n = 20_000;
    const text = Array.from({ length: n }, (_, i) => `${i}\t${i + 1}`).join('\n');
    const dir = dirWith({ 'edge.facts': text });
    const rows = await loadFactsFile(join(dir, 'edge.facts'), edge);
    expect(rows).toHaveLength(n);
    expect(rows[n - 1]).toEqual([n - 1, n]);
  });
});

describe('loadFactsFile errors', () => {
  it('reports bad values with file, line and column', async () => {
    const dir = dirWith({ 'edge.csv': '1,2\n3,abc\n\n"4",2147483648\n' });
    const path = join(dir, 'edge.csv');
    const diags = await failure(loadFactsFile(path, edge));
    expect(diags.map((d) => d.message)).toEqual([
      'expected int32 in column 2 (y) of edge, found "abc"',
      'expected int32 in column 2 (y) of edge, found "2147483648" (out of range)',
    ]);
    expect(diags[0]!.span).toEqual({
      file: path,
      start: { line: 2, column: 3, offset: 6 },
      end: { line: 2, column: 6, offset: 9 },
    });
    expect(diags[1]!.span?.start).toEqual({ line: 4, column: 5, offset: 15 });
    const source = new Map([[path, '1,2\n3,abc\n\n"4",2147483648\n']]);
    expect(renderDiagnostic(diags[0]!, source)).toContain('3,abc\n  |   ^^^');
  });

  it('reports wrong field counts', async () => {
    const dir = dirWith({ 'edge.tsv': '1\t2\n1\t2\t3\n1\n', 'edge.tbl': '1|2|\n1|2|3|\n' });
    expect(await located(loadFactsFile(join(dir, 'edge.tsv'), edge))).toEqual([
      '2:5: expected 2 fields, found 3',
      '3:1: expected 2 fields, found 1',
    ]);
    expect(await located(loadFactsFile(join(dir, 'edge.tbl'), edge))).toEqual(['2:5: expected 2 fields, found 3']);
  });

  it('reports int64 problems', async () => {
    const dir = dirWith({ 'm.facts': '1\ta\t1\n9223372036854775808\tb\t2\n1.5\tc\t3\n' });
    expect(await located(loadFactsFile(join(dir, 'm.facts'), mixed))).toEqual([
      '2:1: expected int64 in column 1 (id) of m, found "9223372036854775808" (out of range)',
      '3:1: expected int64 in column 1 (id) of m, found "1.5"',
    ]);
  });

  it('counts lines across quoted newlines and CRLF', async () => {
    const dir = dirWith({ 'm.csv': '1,"a\r\nb\r\nc",1\r\n2,"x",oops\r\n' });
    expect(await located(loadFactsFile(join(dir, 'm.csv'), mixed))).toEqual([
      '4:7: expected int32 in column 3 (n) of m, found "oops"',
    ]);
  });

  it('locates a field after a quoted newline on its own line', async () => {
    const dir = dirWith({ 'm.csv': '1,"a\nb",zz\n' });
    expect(await located(loadFactsFile(join(dir, 'm.csv'), mixed))).toEqual([
      '2:4: expected int32 in column 3 (n) of m, found "zz"',
    ]);
  });

  it('reports malformed CSV quoting', async () => {
    const dir = dirWith({ 'a.csv': '1,x,1\n2,"y"z,2\n', 'b.csv': '1,x,1\n2,"open,2\n3,x,3\n' });
    expect(await located(loadFactsFile(join(dir, 'a.csv'), mixed))).toEqual([
      '2:3: unexpected text after a closing quote',
    ]);
    expect(await located(loadFactsFile(join(dir, 'b.csv'), mixed))).toEqual(['2:3: unterminated quoted field']);
  });

  it('stops after 20 bad lines', async () => {
    const dir = dirWith({ 'edge.csv': 'x,1\n'.repeat(100) });
    expect(await failure(loadFactsFile(join(dir, 'edge.csv'), edge))).toHaveLength(20);
  });

  it('reports missing files and unsupported extensions', async () => {
    const dir = dirWith({});
    const missing = join(dir, 'nope.csv');
    expect((await failure(loadFactsFile(missing, edge)))[0]!.message).toBe(`facts file not found: ${missing}`);
    expect((await failure(loadFactsFile(join(dir, 'e.json'), edge)))[0]!.message).toMatch(
      /unsupported facts file .*e\.json: the extension must be one of \.csv, \.tsv, \.facts, \.tbl/,
    );
  });
});

describe('loadFactsDir', () => {
  const relations = [decl('edge', edge), decl('m', mixed), decl('other', edge)];

  it('loads each wanted relation from whichever format is present', async () => {
    const dir = dirWith({ 'edge.facts': '1\t2\n', 'm.tbl': '1|a|2|\n', 'unrelated.csv': 'zzz' });
    expect(await loadFactsDir(dir, relations, ['edge', 'm'])).toEqual({ edge: [[1, 2]], m: [[1n, 'a', 2]] });
  });

  it('loads optional relations only when their file exists', async () => {
    const dir = dirWith({ 'edge.csv': '1,2\n' });
    expect(await loadFactsDir(dir, relations, [], ['edge', 'other'])).toEqual({ edge: [[1, 2]] });
  });

  it('reports a missing directory', async () => {
    const dir = join(root, 'does-not-exist');
    expect((await failure(loadFactsDir(dir, relations, ['edge'])))[0]!.message).toBe(`facts directory not found: ${dir}`);
  });

  it('reports missing and ambiguous files together with bad lines', async () => {
    const dir = dirWith({ 'edge.csv': '1,2\n', 'edge.tsv': '1\t2\n', 'other.csv': '1,x\n' });
    const diags = await failure(loadFactsDir(dir, relations, ['edge', 'm', 'other']));
    expect(diags.map((d) => d.message)).toEqual([
      `ambiguous facts for relation edge in ${dir}: found edge.csv and edge.tsv; keep exactly one`,
      `no facts file for relation m in ${dir}: expected one of m.csv, m.tsv, m.facts, m.tbl, m.parquet, m.arrow, m.feather`,
      'expected int32 in column 2 (y) of other, found "x"',
    ]);
    expect(diags[2]!.span?.file).toBe(join(dir, 'other.csv'));
  });

  it('reports unknown relation names', async () => {
    const dir = dirWith({});
    expect((await failure(loadFactsDir(dir, relations, ['ghost'])))[0]!.message).toBe(
      'cannot load facts for ghost: no such relation',
    );
  });
});
