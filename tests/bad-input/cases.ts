/**
 * The bad-input corpus: one case per kind of bad input, each with the message (file:line:column where there is a
 * place) and the exit status it must give. Inputs live next to this file (`<case>.logic`, `<case>.json`,
 * `facts-<case>/`); the few that cannot live in git (10 MB lines, chmod 000) and the binary ones (Parquet written by
 * DuckDB, Arrow IPC by apache-arrow, some then cut short or overwritten) are made by `setup` in a temporary folder.
 * Some cases are inputs that look odd but are accepted, with the output they must give.
 * tests/bad-input.test.ts runs every CLI case through `runCli` and every API case through the library.
 *
 * Decisions the cases pin down: a UTF-8 BOM is accepted (and dropped) in sources and facts files; CRLF line
 * endings are accepted; an empty facts file is an empty relation and an empty source an empty program; invalid
 * UTF-8 and NUL bytes are errors at the first bad field or character; fields of columns no rule reads (pruneColumns)
 * are skipped unchecked. Exit status: 1 bad input, 2 bad command
 * line (commander's usage errors), 4 a run limit (tests/cli-profile.test.ts).
 */
import { chmodSync, cpSync, readFileSync, rmSync, truncateSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { crc32 } from 'node:zlib';
import { DuckDBInstance } from '@duckdb/node-api';
import * as A from 'apache-arrow';
import { compile, Program } from '@vixen/runtime';

export interface Paths {
  /** A file in tests/bad-input. */
  bad(name: string): string;
  /** A file in this case's temporary folder (for inputs `setup` makes). */
  gen(name: string): string;
}

export interface CliCase {
  kind: 'source' | 'facts' | 'store' | 'options' | 'program-json';
  name: string;
  args(p: Paths): string[];
  code: number;
  stderr: RegExp;
  /** Expected stdout (default: nothing). */
  stdout?: string;
  setup?(p: Paths): void | Promise<void>;
  /**
   * A file setup made unreadable. Where this user can still read it (root), the case runs the CLI as uid 65534
   * through setpriv, and is skipped with the reason where that is not possible.
   */
  unreadable?(p: Paths): string;
}

export interface ApiCase {
  kind: 'api';
  name: string;
  call(): unknown;
  message: RegExp;
}

const types = 'all-types.logic';
const facts = (folder: string) => (p: Paths) => ['run', p.bad(types), '--facts', p.bad(folder), '--output', 'row', '--format', 'csv'];
const edge = (p: Paths) => ['run', p.bad('uses-edge.logic')];
const tcSource = 'edge(x, y) -> int32(x), int32(y).\npath(x, y) <- edge(x, y).\npath(x, z) <- path(x, y), edge(y, z).\n';
const tc = compile(tcSource, { filename: 'tc.logic' });
/** A fixed ASCII prefix of a valid all-types row, up to its string column. */
const typedPrefix = '1,2,3,1.5,2.25,true,2024-01-02,';
const tenMegabytes = 10_000_000;
/** Runs all-types.logic on the store `dir` gives (default: the broken copy setup made). */
const storeRun = (dir: (p: Paths) => string = (p) => p.gen('store')) => (p: Paths) => ['run', p.bad(types), '--facts', dir(p), '--output', 'row', '--format', 'csv'];
/** The parts of a store manifest the cases break. */
interface Manifest {
  version: number;
  relations: { t: { columns: Array<{ crc32: number; encoding?: Record<string, unknown> }> } };
}
/** Rewrites the manifest of the store `dir` as `change` changes it. */
const editManifest = (dir: string, change: (m: Manifest) => unknown): void => {
  const path = join(dir, 'vixen-store.json');
  const manifest = JSON.parse(readFileSync(path, 'utf8')) as Manifest;
  change(manifest);
  writeFileSync(path, JSON.stringify(manifest));
};
/** A setup that copies store-all-types to the case's folder and breaks the copy with `breakIt`. */
const brokenStore = (breakIt: (dir: string) => void) => (p: Paths) => {
  cpSync(p.bad('store-all-types'), p.gen('store'), { recursive: true });
  breakIt(p.gen('store'));
};

/** Writes the rows of `select` to `path` as Parquet, with DuckDB (binary facts cannot live in the corpus as text). */
async function parquet(path: string, select: string): Promise<void> {
  const db = await DuckDBInstance.create(':memory:', { threads: '1' });
  const connection = await db.connect();
  try {
    await connection.run(`COPY (${select}) TO '${path.replaceAll("'", "''")}' (FORMAT PARQUET)`);
  } finally {
    connection.closeSync();
    db.closeSync();
  }
}
/** One all-types row, typed as all-types.logic declares t. */
const typedRow = `SELECT 1::INTEGER i, 2::UINTEGER u, 3::BIGINT l, 1.5::FLOAT f, 2.25::DECIMAL(15,2) d, true b, DATE '2024-01-02' dt, 'böm' s`;
/** The all-types row as an Arrow IPC file (the file format), with `s` as given. */
const typedArrow = (s: A.Vector): Uint8Array =>
  A.tableToIPC(
    new A.Table({
      i: A.vectorFromArray([1], new A.Int32()),
      u: A.vectorFromArray([2], new A.Uint32()),
      l: A.vectorFromArray([3n], new A.Int64()),
      f: A.vectorFromArray([1.5], new A.Float32()),
      d: A.makeVector(A.makeData({ type: new A.Decimal(2, 15, 128), length: 1, data: Uint32Array.of(225, 0, 0, 0) })),
      b: A.vectorFromArray([true], new A.Bool()),
      dt: A.vectorFromArray([new Date(Date.UTC(2024, 0, 2))], new A.DateDay()),
      s,
    }),
    'file',
  );
/** Runs all-types.logic on the facts that `setup` wrote into the case's folder. */
const genFacts = (p: Paths) => ['run', p.bad(types), '--facts', p.gen('.'), '--output', 'row', '--format', 'csv'];
/** Overwrites the middle of the file: the format's markers at both ends stay, its contents do not. */
const scramble = (path: string): void => {
  const bytes = readFileSync(path);
  bytes.fill(0x5a, 8, bytes.length >> 1);
  writeFileSync(path, bytes);
};
const truncate = (path: string): void => writeFileSync(path, readFileSync(path).subarray(0, -200));
/** A setup that writes the case's facts file `name` with `write`, then breaks it with `breakIt`. */
const broken = (name: string, write: (path: string) => void | Promise<void>, breakIt: (path: string) => void) => async (p: Paths) => {
  await write(p.gen(name));
  breakIt(p.gen(name));
};

export const cliCases: CliCase[] = [
  // Program source.
  // A '.' left off is reported after the clause it ends, not at the start of the next line.
  { kind: 'source', name: 'syntax error', args: (p) => ['run', p.bad('syntax-error.logic')], code: 1, stderr: /syntax-error\.logic:2:25: error: expected '\.' to end the clause before 'path' on line 3\n/ },
  { kind: 'source', name: 'a mistyped predicate', args: (p) => ['run', p.bad('mistyped-predicate.logic')], code: 1, stderr: /mistyped-predicate\.logic:2:15: error: undeclared predicate edeg: expected a declaration, facts or rules for it; did you mean edge\?/ },
  { kind: 'source', name: 'undeclared predicate', args: (p) => ['run', p.bad('undeclared-predicate.logic')], code: 1, stderr: /undeclared-predicate\.logic:2:27: error: undeclared predicate node/ },
  { kind: 'source', name: 'atom arity mismatch', args: (p) => ['run', p.bad('arity-mismatch.logic')], code: 1, stderr: /arity-mismatch\.logic:2:15: error: .*(arity|argument)/i },
  { kind: 'source', name: 'type mismatch', args: (p) => ['run', p.bad('type-mismatch.logic')], code: 1, stderr: /type-mismatch\.logic:3:31: error: .*(type|int32|string)/i },
  { kind: 'source', name: 'string built-in: pattern not a constant', args: (p) => ['run', p.bad('string-pattern-variable.logic')], code: 1, stderr: /string-pattern-variable\.logic:3:48: error: argument 2 of string:like must be a constant string/ },
  { kind: 'source', name: 'string built-in: wrong arity', args: (p) => ['run', p.bad('string-arity.logic')], code: 1, stderr: /string-arity\.logic:2:25: error: string:substring expects 3 arguments, found 2/ },
  { kind: 'source', name: 'string built-in: not a string', args: (p) => ['run', p.bad('string-non-string.logic')], code: 1, stderr: /string-non-string\.logic:2:43: error: type mismatch: expected string for argument 1 of string:startswith but variable k is int32/ },
  { kind: 'source', name: 'a key constraint that is not a key', args: (p) => ['run', p.bad('key-malformed.logic')], code: 1, stderr: /key-malformed\.logic:2:36: error: expected a key: .*expected only equalities of a column's two variables on the right/ },
  { kind: 'source', name: 'a key of a derived relation', args: (p) => ['run', p.bad('key-derived.logic')], code: 1, stderr: /key-derived\.logic:3:1: error: copy is derived by rules: keys can be declared for base relations only/ },
  { kind: 'source', name: 'recursion through min and max', args: (p) => ['run', p.bad('recursive-min-max.logic')], code: 1, stderr: /recursive-min-max\.logic:4:1: error: recursion through min and max: dist has a max rule in a cycle through min \(cycle dist -> dist\)/ },
  { kind: 'source', name: 'unsafe head variable', args: (p) => ['run', p.bad('unsafe-head.logic')], code: 1, stderr: /unsafe-head\.logic:2:9: error: .*z/ },
  { kind: 'source', name: 'unterminated string literal', args: (p) => ['run', p.bad('unterminated-string.logic')], code: 1, stderr: /unterminated-string\.logic:2:3: error: unterminated string literal/ },
  { kind: 'source', name: 'invalid UTF-8 in a source', args: (p) => ['run', p.bad('source-invalid-utf8.logic')], code: 1, stderr: /source-invalid-utf8\.logic:3:7: error: invalid UTF-8 in program file/ },
  { kind: 'source', name: 'NUL byte in a source', args: (p) => ['run', p.bad('source-nul-byte.logic')], code: 1, stderr: /source-nul-byte\.logic:2:6: error: unexpected character "\\u0000"/ },
  { kind: 'source', name: 'UTF-8 BOM in a source is accepted', args: (p) => ['run', p.bad('source-utf8-bom.logic'), '--format', 'csv'], code: 0, stderr: /adapter:/, stdout: 'x\n1\n' },
  { kind: 'source', name: 'CRLF line endings in a source are accepted', args: (p) => ['run', p.bad('source-crlf.logic'), '--format', 'csv'], code: 0, stderr: /adapter:/, stdout: 'x\n1\n' },
  { kind: 'source', name: 'CRLF source errors keep their line and column', args: (p) => ['run', p.bad('source-crlf-error.logic')], code: 1, stderr: /source-crlf-error\.logic:3:15: error: undeclared predicate r/ },
  { kind: 'source', name: 'empty source is an empty program', args: (p) => ['run', p.bad('source-empty.logic'), '--format', 'csv'], code: 0, stderr: /adapter:/, stdout: '' },
  {
    kind: 'source',
    name: 'a 10 MB string literal is accepted',
    setup: (p) => writeFileSync(p.gen('big.logic'), `p(s) -> string(s).\np("${'a'.repeat(tenMegabytes)}").\nq(s) <- p(s).\n`),
    args: (p) => ['run', p.gen('big.logic'), '--output', 'q', '--format', 'csv'],
    code: 0,
    stderr: /adapter:/,
    stdout: `s\n${'a'.repeat(tenMegabytes)}\n`,
  },
  {
    kind: 'source',
    name: 'an error on a 10 MB line shows a window of it',
    setup: (p) => writeFileSync(p.gen('big-error.logic'), `p(s) -> string(s).\np("${'a'.repeat(tenMegabytes)}") q.\n`),
    args: (p) => ['run', p.gen('big-error.logic')],
    code: 1,
    stderr: /^\S*big-error\.logic:2:10000007: error: expected .* but found 'q'\n {2}\|\n2 \| \.\.\.a{40,80}"\) q\.\n {2}\| {60,90}\^\n$/,
  },
  { kind: 'source', name: 'missing program file', args: (p) => ['run', p.bad('nope.logic')], code: 1, stderr: /error: cannot read program file .*nope\.logic: no such file/ },
  { kind: 'source', name: 'directory as program file', args: (p) => ['run', p.bad('directory.logic')], code: 1, stderr: /error: cannot read program file .*directory\.logic: it is a directory/ },
  {
    kind: 'source',
    name: 'unreadable program file',
    setup: (p) => {
      writeFileSync(p.gen('unreadable.logic'), 'p(x) -> int32(x).\n');
      chmodSync(p.gen('unreadable.logic'), 0o000);
    },
    unreadable: (p) => p.gen('unreadable.logic'),
    args: (p) => ['run', p.gen('unreadable.logic')],
    code: 1,
    stderr: /error: cannot read program file .*unreadable\.logic: permission denied/,
  },

  // Facts files.
  { kind: 'facts', name: 'facts line that does not parse', args: (p) => [...edge(p), '--facts', p.bad('facts-bad')], code: 1, stderr: /facts-bad\/edge\.csv:2:3: error: expected int32 in column 2 \(y\) of edge, found "x4"/ },
  { kind: 'facts', name: 'facts line with the wrong arity', args: (p) => [...edge(p), '--facts', p.bad('facts-arity')], code: 1, stderr: /facts-arity\/edge\.csv:2:5: error: expected 2 fields, found 3/ },
  { kind: 'facts', name: 'int32 that is not a number', args: facts('facts-int32-not-a-number'), code: 1, stderr: /t\.csv:1:1: error: expected int32 in column 1 \(i\) of t, found "x1"\n/ },
  { kind: 'facts', name: 'int32 out of range', args: facts('facts-int32-out-of-range'), code: 1, stderr: /t\.csv:1:1: error: expected int32 in column 1 \(i\) of t, found "3000000000" \(out of range\)/ },
  { kind: 'facts', name: 'negative uint32', args: facts('facts-uint32-negative'), code: 1, stderr: /t\.csv:1:3: error: expected uint32 in column 2 \(u\) of t, found "-1" \(out of range\)/ },
  { kind: 'facts', name: 'int64 out of range', args: facts('facts-int64-out-of-range'), code: 1, stderr: /t\.csv:1:5: error: expected int64 in column 3 \(l\) of t, found "9223372036854775808" \(out of range\)/ },
  { kind: 'facts', name: 'malformed float32', args: facts('facts-float32-malformed'), code: 1, stderr: /t\.csv:1:7: error: expected float32 in column 4 \(f\) of t, found "1\.5\.1"/ },
  { kind: 'facts', name: 'decimal overflow', args: facts('facts-decimal-out-of-range'), code: 1, stderr: /t\.csv:1:11: error: expected decimal in column 5 \(d\) of t, found "99999999999999999999\.25" \(out of range\)/ },
  { kind: 'facts', name: 'decimal with more than 4 fractional digits', args: facts('facts-decimal-too-precise'), code: 1, stderr: /t\.csv:1:11: error: expected decimal .*found "2\.12345" \(more than 4 fractional digits\)/ },
  { kind: 'facts', name: 'malformed boolean', args: facts('facts-boolean-malformed'), code: 1, stderr: /t\.csv:1:16: error: expected boolean in column 6 \(b\) of t, found "yes"/ },
  { kind: 'facts', name: 'date that does not exist', args: facts('facts-date-no-such-day'), code: 1, stderr: /t\.csv:1:21: error: expected date in column 7 \(dt\) of t, found "2023-02-29" \(no such day\)/ },
  { kind: 'facts', name: 'date overflow', args: facts('facts-date-out-of-range'), code: 1, stderr: /t\.csv:1:21: error: expected date .*found "10000-01-01" \(out of range: years 0000 to 9999\)/ },
  { kind: 'facts', name: 'date in another format', args: facts('facts-date-malformed'), code: 1, stderr: /t\.csv:1:21: error: expected date .*found "02\/01\/2024" \(expected YYYY-MM-DD\)/ },
  { kind: 'facts', name: 'invalid UTF-8 in a facts file', args: facts('facts-invalid-utf8'), code: 1, stderr: /facts-invalid-utf8\/t\.csv:2:32: error: invalid UTF-8 in field 8: facts files must be UTF-8/ },
  { kind: 'facts', name: 'NUL byte in a facts file', args: facts('facts-nul-byte'), code: 1, stderr: /facts-nul-byte\/t\.csv:2:32: error: NUL byte in field 8/ },
  { kind: 'facts', name: 'UTF-8 BOM in a facts file is accepted', args: facts('facts-utf8-bom'), code: 0, stderr: /adapter:/, stdout: 'i,s\n1,böm\n' },
  { kind: 'facts', name: 'UTF-8 BOM does not shift columns', args: facts('facts-utf8-bom-error'), code: 1, stderr: /facts-utf8-bom-error\/t\.csv:1:1: error: expected int32 .*found "x"/ },
  { kind: 'facts', name: 'CRLF line endings in a facts file are accepted', args: facts('facts-crlf'), code: 0, stderr: /adapter:/, stdout: 'i,s\n1,first\n2,second\n' },
  { kind: 'facts', name: 'CRLF facts errors keep their line and column', args: facts('facts-crlf-error'), code: 1, stderr: /facts-crlf-error\/t\.csv:2:16: error: expected boolean .*found "maybe"/ },
  { kind: 'facts', name: 'empty facts file is an empty relation', args: facts('facts-empty-file'), code: 0, stderr: /adapter:/, stdout: 'i,s\n' },
  {
    kind: 'facts',
    name: 'a bad field in a column the program never reads is not checked',
    args: (p) => ['run', p.bad('reads-two-columns.logic'), '--facts', p.bad('facts-boolean-malformed'), '--format', 'csv'],
    code: 0,
    stderr: /adapter:/,
    stdout: 'i,s\n1,a\n',
  },
  {
    kind: 'facts',
    name: 'facts that break a declared key',
    args: (p) => ['run', p.bad('keyed-item.logic'), '--facts', p.bad('facts-key-broken')],
    code: 3,
    stderr: /keyed-item\.logic:2:1: key violated: item has several rows with one key \(item\(o, ln, p\), item\(o, ln, p2\) -> p = p2\) \(1 offending tuple\)\n  o = 2, ln = 1\n$/,
  },
  {
    kind: 'facts',
    name: 'facts that break a declared key, reference interpreter',
    args: (p) => ['run', p.bad('keyed-item.logic'), '--facts', p.bad('facts-key-broken'), '--reference'],
    code: 3,
    stderr: /keyed-item\.logic:2:1: key violated: item has several rows with one key .*\n  o = 2, ln = 1\n$/,
  },
  { kind: 'facts', name: 'unterminated quoted field', args: facts('facts-unterminated-quote'), code: 1, stderr: /facts-unterminated-quote\/t\.csv:1:32: error: unterminated quoted field/ },
  {
    kind: 'facts',
    name: 'a 10 MB line is accepted',
    setup: (p) => writeFileSync(p.gen('t.csv'), `${typedPrefix}${'a'.repeat(tenMegabytes)}\n2,2,3,1.5,2.25,true,2024-01-02,b\n`),
    args: (p) => ['run', p.bad(types), '--facts', p.gen('.'), '--output', 'row', '--format', 'csv'],
    code: 0,
    stderr: /adapter:/,
    stdout: `i,s\n1,${'a'.repeat(tenMegabytes)}\n2,b\n`,
  },
  {
    kind: 'facts',
    name: 'a bad 10 MB field is cut short in the message',
    setup: (p) => writeFileSync(p.gen('t.csv'), `${typedPrefix}a\n${'9'.repeat(tenMegabytes)},2,3,1.5,2.25,true,2024-01-02,b\n`),
    args: (p) => ['run', p.bad(types), '--facts', p.gen('.')],
    code: 1,
    stderr: /t\.csv:2:1: error: expected int32 in column 1 \(i\) of t, found "9{40}"\.\.\. \(10000000 characters\) \(out of range\)\n$/,
  },
  {
    kind: 'facts',
    name: 'Parquet facts are accepted',
    setup: (p) => parquet(p.gen('t.parquet'), typedRow),
    args: genFacts,
    code: 0,
    stderr: /adapter:/,
    stdout: 'i,s\n1,böm\n',
  },
  {
    kind: 'facts',
    name: 'corrupt Parquet file',
    setup: broken('t.parquet', (f) => parquet(f, `SELECT t.* FROM (${typedRow}) t, range(1000)`), scramble),
    args: genFacts,
    code: 1,
    stderr: /^error: \S*t\.parquet: not a valid Parquet file: .+\n$/,
  },
  {
    kind: 'facts',
    name: 'truncated Parquet file',
    setup: broken('t.parquet', (f) => parquet(f, typedRow), truncate),
    args: genFacts,
    code: 1,
    stderr: /^error: \S*t\.parquet: not a valid Parquet file: parquet file invalid/,
  },
  {
    kind: 'facts',
    name: 'Parquet file with the wrong column count',
    setup: (p) => parquet(p.gen('t.parquet'), 'SELECT 1::INTEGER i, 2::UINTEGER u'),
    args: genFacts,
    code: 1,
    stderr: /^error: \S*t\.parquet: expected 8 columns for t, found 2 \(i, u\); Parquet columns are matched to the declaration by position\n$/,
  },
  {
    kind: 'facts',
    name: 'Parquet column of the wrong type',
    setup: (p) => parquet(p.gen('t.parquet'), `SELECT 1.5::DOUBLE i, * EXCLUDE (i) FROM (${typedRow})`),
    args: genFacts,
    code: 1,
    stderr: /^error: \S*t\.parquet: expected int32 in column 1 \(i; Parquet "i"\) of t, found DOUBLE\n$/,
  },
  {
    kind: 'facts',
    name: 'null in a Parquet file',
    setup: (p) => parquet(p.gen('t.parquet'), `SELECT t.* REPLACE (CASE WHEN r = 2 THEN NULL ELSE s END AS s) FROM (${typedRow}) t, range(3) x(r)`),
    args: genFacts,
    code: 1,
    stderr: /^error: \S*t\.parquet: row 3: expected string in column 8 \(s; Parquet "s"\) of t, found null \(Vixen has no nulls\)\n$/,
  },
  {
    kind: 'facts',
    name: 'corrupt Arrow file',
    setup: broken('t.arrow', (f) => writeFileSync(f, typedArrow(A.vectorFromArray(['böm'], new A.Utf8()))), scramble),
    args: genFacts,
    code: 1,
    stderr: /^error: \S*t\.arrow: not a valid Arrow file: .+\n$/,
  },
  {
    kind: 'facts',
    name: 'truncated Arrow file',
    setup: broken('t.arrow', (f) => writeFileSync(f, typedArrow(A.vectorFromArray(['böm'], new A.Utf8()))), truncate),
    args: genFacts,
    code: 1,
    stderr: /^error: \S*t\.arrow: not a valid Arrow file: it starts as the IPC file format but does not end with its footer \(cut short\?\)\n$/,
  },
  {
    kind: 'facts',
    name: 'Arrow column of the wrong type',
    setup: (p) => writeFileSync(p.gen('t.arrow'), typedArrow(A.vectorFromArray([7], new A.Int32()))),
    args: genFacts,
    code: 1,
    stderr: /^error: \S*t\.arrow: expected string in column 8 \(s; Arrow "s"\) of t, found Int32\n$/,
  },
  { kind: 'facts', name: 'missing facts file', args: (p) => [...edge(p), '--facts', p.bad('facts-empty')], code: 1, stderr: /error: no facts file for relation edge in .*facts-empty: expected one of edge\.csv, edge\.tsv/ },
  { kind: 'facts', name: 'two facts files for one relation', args: (p) => [...edge(p), '--facts', p.bad('facts-ambiguous')], code: 1, stderr: /error: ambiguous facts for relation edge .*found edge\.csv and edge\.tsv/ },
  { kind: 'facts', name: 'directory as facts file', args: (p) => [...edge(p), '--facts', p.bad('facts-directory-as-file')], code: 1, stderr: /error: facts file is a directory: .*facts-directory-as-file\/edge\.csv/ },
  { kind: 'facts', name: 'missing facts directory', args: (p) => [...edge(p), '--facts', p.bad('no-such-dir')], code: 1, stderr: /error: facts directory not found: .*no-such-dir/ },
  { kind: 'facts', name: 'file as facts directory', args: (p) => [...edge(p), '--facts', p.bad('not-a-directory.csv')], code: 1, stderr: /error: facts path is not a directory: .*not-a-directory\.csv/ },
  {
    kind: 'facts',
    name: 'unreadable facts file',
    setup: (p) => {
      writeFileSync(p.gen('edge.csv'), '1,2\n');
      chmodSync(p.gen('edge.csv'), 0o000);
    },
    unreadable: (p) => p.gen('edge.csv'),
    args: (p) => [...edge(p), '--facts', p.gen('.')],
    code: 1,
    stderr: /error: cannot read facts file .*edge\.csv: .*permission denied/,
  },

  // Columnar stores (vixen import): store-all-types is facts-crlf's t, imported (every column one byte a value: a
  // frame of reference); store-v2 is its columns i and s as a version 2 store (before column encodings) wrote them
  // (`vixen import --columns read` of store-v2.logic). setup copies a store and breaks the copy.
  { kind: 'store', name: 'a store is read as its facts were', args: storeRun((p) => p.bad('store-all-types')), code: 0, stderr: /adapter:/, stdout: 'i,s\n1,first\n2,second\n' },
  { kind: 'store', name: 'a store of version 2 (device words) is still read', args: (p) => ['run', p.bad('store-v2.logic'), '--facts', p.bad('store-v2'), '--format', 'csv'], code: 0, stderr: /adapter:/, stdout: 'i,s\n1,first\n2,second\n' },
  {
    kind: 'store',
    name: 'a store of another version',
    setup: brokenStore((dir) => editManifest(dir, (m) => (m.version = 4))),
    args: storeRun(),
    code: 1,
    stderr: /^error: .*store\/vixen-store\.json: store version 4 is not supported \(this Vixen reads versions 1, 2 and 3; import the facts again with vixen import\)\n$/,
  },
  {
    kind: 'store',
    name: 'a corrupt store manifest',
    setup: brokenStore((dir) => writeFileSync(join(dir, 'vixen-store.json'), '{"format": "vixen-store", "version": 3, "relations": {"t": {"rows": 2}}}')),
    args: storeRun(),
    code: 1,
    stderr: /^error: .*store\/vixen-store\.json: corrupt store manifest: relations\.t\.columns: /,
  },
  {
    kind: 'store',
    name: 'a column encoding this Vixen does not know',
    setup: brokenStore((dir) => editManifest(dir, (m) => (m.relations.t.columns[7]!.encoding = { kind: 'rle', width: 1 }))),
    args: storeRun(),
    code: 1,
    stderr: /^error: .*store\/vixen-store\.json: corrupt store manifest: relations\.t\.columns\.7\.encoding\.kind: Invalid discriminator value\. Expected 'words' \| 'frame'\n$/,
  },
  {
    kind: 'store',
    name: 'a narrow column of a width the format does not have',
    setup: brokenStore((dir) => editManifest(dir, (m) => (m.relations.t.columns[0]!.encoding!.width = 8))),
    args: storeRun(),
    code: 1,
    stderr: /^error: .*store\/vixen-store\.json: corrupt store manifest: relations\.t\.columns\.0\.encoding\.width: Invalid option: expected one of 1\|2\|3\|4\n$/,
  },
  {
    kind: 'store',
    name: 'a frame of reference whose base has the wrong number of words',
    setup: brokenStore((dir) => editManifest(dir, (m) => (m.relations.t.columns[2]!.encoding!.base = [0]))),
    args: storeRun(),
    code: 1,
    stderr: /^error: .*store\/vixen-store\.json: corrupt store manifest: relations\.t\.columns\.2\.encoding\.base: expected as many base words as the type has words\n$/,
  },
  {
    kind: 'store',
    name: 'a frame of reference with a step of zero',
    setup: brokenStore((dir) => editManifest(dir, (m) => (m.relations.t.columns[0]!.encoding!.step = 0))),
    args: storeRun(),
    code: 1,
    stderr: /^error: .*store\/vixen-store\.json: corrupt store manifest: relations\.t\.columns\.0\.encoding\.step: Too small: expected number to be >=1\n$/,
  },
  {
    kind: 'store',
    name: 'a version 3 column without its encoding',
    setup: brokenStore((dir) => editManifest(dir, (m) => delete m.relations.t.columns[0]!.encoding)),
    args: storeRun(),
    code: 1,
    stderr: /^error: .*store\/vixen-store\.json: corrupt store manifest: relations\.t\.columns\.0\.encoding: Invalid input: expected object, received undefined\n$/,
  },
  {
    kind: 'store',
    name: 'a column encoding wider than its file (size and checksum matching)',
    setup: brokenStore((dir) => editManifest(dir, (m) => (m.relations.t.columns[0]!.encoding!.width = 2))),
    args: storeRun(),
    code: 1,
    stderr: /^error: store file .*store\/t\/0\.u8: the manifest gives it 2 bytes for 2 rows of int32 at 2 bytes each \(corrupt manifest\)\n$/,
  },
  { kind: 'store', name: 'a missing column file', setup: brokenStore((dir) => rmSync(join(dir, 't/7.u8'))), args: storeRun(), code: 1, stderr: /^error: store file missing: .*store\/t\/7\.u8\n$/ },
  { kind: 'store', name: 'a truncated column file', setup: brokenStore((dir) => truncateSync(join(dir, 't/0.u8'), 1)), args: storeRun(), code: 1, stderr: /^error: store file .*store\/t\/0\.u8 has 1 bytes, the manifest says 2 \(truncated or rewritten: import the facts again\)\n$/ },
  {
    kind: 'store',
    name: 'a column file with a bad checksum',
    setup: brokenStore((dir) => {
      const bytes = readFileSync(join(dir, 't/0.u8'));
      bytes[0]! ^= 0x10;
      writeFileSync(join(dir, 't/0.u8'), bytes);
    }),
    args: storeRun(),
    code: 1,
    stderr: /^error: store file .*store\/t\/0\.u8 is corrupt: its CRC-32 differs from the manifest's \(import the facts again\)\n$/,
  },
  {
    kind: 'store',
    name: 'a string id outside its dictionary (a file written wrong, its checksum matching)',
    setup: brokenStore((dir) => {
      const file = join(dir, 't/7.u8');
      const bytes = readFileSync(file);
      bytes[1] = 7;
      writeFileSync(file, bytes);
      editManifest(dir, (m) => (m.relations.t.columns[7]!.crc32 = crc32(bytes)));
    }),
    args: storeRun(),
    code: 1,
    stderr: /^error: store .*store: relation t holds a string id outside its column's dictionary \(corrupt store: import the facts again\)\n$/,
  },
  {
    kind: 'store',
    name: 'a declaration the store does not fit',
    args: (p) => ['run', p.bad('store-retyped.logic'), '--facts', p.bad('store-all-types')],
    code: 1,
    stderr: /^error: relation t, column 8 \(s\): the program declares int32, store .*store-all-types holds string \(column s\)\n$/,
  },
  {
    kind: 'store',
    name: 'import over a folder that is not a store',
    args: (p) => ['import', p.bad(types), '--facts', p.bad('facts-crlf'), '-o', p.bad('facts-crlf')],
    code: 1,
    stderr: /^error: .*facts-crlf exists and is not a Vixen store \(no vixen-store\.json\)/,
  },

  // Command-line options.
  { kind: 'options', name: 'unknown flag', args: (p) => [...edge(p), '--frobnicate'], code: 2, stderr: /^error: unknown option '--frobnicate'\n$/ },
  { kind: 'options', name: 'unknown command', args: () => ['frobnicate'], code: 2, stderr: /^error: unknown command 'frobnicate'\n$/ },
  { kind: 'options', name: 'missing argument', args: () => ['run'], code: 2, stderr: /^error: missing required argument 'file'\n$/ },
  { kind: 'options', name: 'bad --format', args: (p) => [...edge(p), '--format', 'xml'], code: 2, stderr: /argument 'xml' is invalid\. Allowed choices are table, csv, json/ },
  { kind: 'options', name: 'number that is not a number', args: (p) => [...edge(p), '--max-iterations', 'many'], code: 1, stderr: /^error: option --max-iterations: .*expected number, received NaN\n$/ },
  { kind: 'options', name: 'negative limit', args: (p) => [...edge(p), '--max-tuples', '-5'], code: 1, stderr: /^error: option --max-tuples: .*expected number to be >0\n$/ },
  { kind: 'options', name: 'zero timeout', args: (p) => [...edge(p), '--timeout', '0'], code: 1, stderr: /^error: option --timeout: .*expected number to be >0\n$/ },
  { kind: 'options', name: 'fractional iteration limit', args: (p) => [...edge(p), '--max-iterations', '2.5'], code: 1, stderr: /^error: option --max-iterations: .*expected int/ },
  { kind: 'options', name: 'bad byte size', args: (p) => [...edge(p), '--max-device-memory', 'lots'], code: 1, stderr: /^error: option --max-device-memory: 'lots' is not a byte size/ },
  // A budget below one relation's buffer: neither spilling nor partitions help, so the run stops naming the relation,
  // its size and the budget.
  {
    kind: 'options',
    name: 'a device memory budget below one relation',
    args: (p) => ['run', p.bad('uses-edge.logic'), '--facts', p.bad('facts-edge'), '--max-device-memory', '100'],
    code: 4,
    stderr: /^error: device memory limit exceeded: loading the facts of edge made relation edge of 3 rows, 256 bytes, more than the whole budget; the limit is 100 bytes \(maxDeviceMemory \/ --max-device-memory\); stopped after/,
  },
  { kind: 'options', name: 'a run limit with --reference', args: (p) => [...edge(p), '--reference', '--timeout', '5'], code: 1, stderr: /^error: the reference interpreter does not enforce run limits \(timeout\)\n$/ },
  { kind: 'options', name: 'unknown output relation', args: (p) => [...edge(p), '--output', 'nosuch'], code: 1, stderr: /^error: unknown output relation: nosuch \(known: edge, path\)\n$/ },
  // Relations the compiler made ($functional_passed) are neither listed nor offered.
  { kind: 'options', name: 'a mistyped output relation', args: (p) => ['run', p.bad('functional.logic'), '--output', 'topp'], code: 1, stderr: /^error: unknown output relation: topp \(known: score, passed, top\); did you mean top\?\n$/ },
  { kind: 'options', name: '--output-dir that is a file', args: (p) => [...edge(p), '--output-dir', p.bad('uses-edge.logic')], code: 1, stderr: /^error: output directory .*uses-edge\.logic is not a directory\n$/ },
  { kind: 'options', name: '--output-dir under a file', args: (p) => [...edge(p), '--output-dir', join(p.bad('uses-edge.logic'), 'out')], code: 1, stderr: /^error: output directory .*uses-edge\.logic\/out cannot be used: ENOTDIR/ },

  // Compiled program files.
  { kind: 'program-json', name: 'corrupt program JSON', args: (p) => ['run', p.bad('corrupt.json')], code: 1, stderr: /^error: .*corrupt\.json: not valid JSON: Unterminated string/ },
  { kind: 'program-json', name: 'program file of another version', args: (p) => ['run', p.bad('wrong-version.json')], code: 1, stderr: /^error: .*wrong-version\.json: program file version 99 is not supported \(this Vixen reads version 1\)/ },
  { kind: 'program-json', name: 'missing program JSON', args: (p) => ['run', p.bad('nope.json')], code: 1, stderr: /^error: cannot read program file .*nope\.json: no such file/ },
];

/** Library arguments of the wrong shape: a VixenError naming the argument, before any device work. */
export const apiCases: ApiCase[] = [
  { kind: 'api', name: 'compile of a number', call: () => compile(42 as never), message: /^invalid compile arguments: source: expected source text or an array of \{ path, text \} files$/ },
  { kind: 'api', name: 'compile with a non-string file name', call: () => compile(tcSource, { filename: 3 } as never), message: /^invalid compile arguments: options\.filename: .*expected string, received number$/ },
  { kind: 'api', name: 'a limit given as text', call: () => tc.run({ maxIterations: '5' } as never), message: /^invalid run options: maxIterations: .*expected number, received string$/ },
  { kind: 'api', name: 'a fractional tuple limit', call: () => tc.run({ maxTuples: 1.5 }), message: /^invalid run options: maxTuples: expected a positive whole number$/ },
  { kind: 'api', name: 'a negative timeout', call: () => tc.run({ timeout: -1 }), message: /^invalid run options: timeout: expected a positive number of seconds$/ },
  { kind: 'api', name: 'outputs as one string', call: () => tc.run({ outputs: 'path' } as never), message: /^invalid run options: outputs: .*expected array, received string$/ },
  { kind: 'api', name: 'an unknown backend', call: () => tc.run({ backend: 'metal' } as never), message: /^invalid run options: backend: .*"auto"\|"vulkan"\|"opengles"/ },
  { kind: 'api', name: 'facts rows that are not arrays', call: () => tc.run({ facts: { edge: [1, 2] } } as never), message: /^invalid run options: facts\.edge\.0: .*expected array, received number/ },
  { kind: 'api', name: 'a progress callback that is not a function', call: () => tc.run({ onProgress: true } as never), message: /^invalid run options: onProgress: expected a function$/ },
  { kind: 'api', name: 'interpret options of the wrong type', call: () => tc.interpret({ factsDir: 7 } as never), message: /^invalid interpret options: factsDir: .*expected string, received number$/ },
  { kind: 'api', name: 'facts row of the wrong arity', call: () => tc.run({ facts: { edge: [[1]] } }), message: /^facts for edge, row 1: expected 2 values, found 1$/ },
  { kind: 'api', name: 'facts value of the wrong type', call: () => tc.run({ facts: { edge: [[1, 'two']] } }), message: /^facts for edge, row 1: expected int32 in column 2 \(y\), found string "two"$/ },
  { kind: 'api', name: 'facts for an unknown relation', call: () => tc.run({ facts: { nodes: [[1]] } }), message: /^facts given for unknown relation nodes$/ },
  { kind: 'api', name: 'facts for a mistyped relation', call: () => tc.run({ facts: { egde: [[1, 2]] } }), message: /^facts given for unknown relation egde; did you mean edge\?$/ },
  // e.message carries the place, as the CLI prints it.
  { kind: 'api', name: 'a source error', call: () => compile('p(x) -> int32(x).\nr(x) <- p(x), q(x).', { filename: 'r.logic' }), message: /^r\.logic:2:15: undeclared predicate q: / },
  {
    kind: 'api',
    name: 'returning a base relation the program reads only in part',
    call: () => compile('e(x, y) -> int32(x), int32(y).\np(x) <- e(x, _).').run({ facts: { e: [[1, 2]] }, outputs: ['e'] }),
    message: /^cannot return base relation e: the program reads only its column x, so only those are kept/,
  },
  // Facts rows through the API have every column, pruned or not, and are checked in full.
  {
    kind: 'api',
    name: 'facts value of the wrong type in a column no rule reads',
    call: () => compile('e(x, y) -> int32(x), int32(y).\np(x) <- e(x, _).').run({ facts: { e: [[1, 'two']] } }),
    message: /^facts for e, row 1: expected int32 in column 2 \(y\), found string "two"$/,
  },
  { kind: 'api', name: 'a program file object of the wrong shape', call: () => Program.fromJSON({ format: 'vixen-program' }, 'p.json'), message: /^p\.json: not a Vixen 1 program file: version: .*; kir: .*; shaders: / },
];

export const badInputDir = import.meta.dirname;
export const pathsIn = (tmp: string): Paths => ({ bad: (n) => join(badInputDir, n), gen: (n) => join(tmp, n) });
