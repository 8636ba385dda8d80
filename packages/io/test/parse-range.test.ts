/**
 * The byte parser of facts files (facts/parse-range.ts) and its split into ranges on worker threads
 * (facts/parse-file.ts): the rows of any split of a file into ranges, concatenated, equal file.ts's rows, and
 * every input file.ts would complain about, or that is outside the byte parser's simple forms, is left to file.ts.
 */
import { mkdtempSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { decodeRow } from '../src/encoding.js';
import { parseRange, type RangeTask } from '../src/facts/parse-range.js';
import { parseFileInParts, type ParsedPart } from '../src/facts/parse-file.js';
import { EncodedFacts, FactsCache, loadFactsFile, loadFactsFileInto, loadKeptColumns } from '../src/facts/index.js';
import type { Column, RelationDecl, Row, ScalarType } from '@vixen/queryplan';

const dir = mkdtempSync(join(tmpdir(), 'vixen-parse-range-'));
const columns: Column[] = [
  { name: 'k', type: 'int32' },
  { name: 's', type: 'string' },
  { name: 'd', type: 'decimal' },
  { name: 'day', type: 'date' },
  { name: 'u', type: 'uint32' },
  { name: 'big', type: 'int64' },
  { name: 'b', type: 'boolean' },
];
const types: ScalarType[] = columns.map((c) => c.type);

function write(name: string, text: string | Buffer): string {
  const path = join(dir, name);
  writeFileSync(path, text);
  return path;
}

/** The rows of parts, decoded with each part's own strings. */
function partRows(parts: readonly ParsedPart[]): Row[] {
  const width = types.reduce((n, t) => n + (t === 'int64' || t === 'decimal' ? 2 : 1), 0);
  const rows: Row[] = [];
  for (const p of parts) {
    for (const words of p.pieces) for (let at = 0; at < words.length; at += width) rows.push(decodeRow(words, at, types, { id: () => 0, text: (id) => p.strings.text(id) }));
  }
  return rows;
}

const task = (path: string, start: number, end: number): RangeTask => ({
  path,
  start,
  end,
  delimiter: '|'.charCodeAt(0),
  quoting: false,
  trailingDelimiter: true,
  types,
});

/** The rows of `path` parsed as ranges cut at `cuts` (byte offsets), or undefined when a range gave up. */
function rangeRows(path: string, cuts: number[]): Row[] | undefined {
  const size = statSync(path).size;
  const bounds = [0, ...cuts, size];
  const parts: ParsedPart[] = [];
  for (let i = 0; i + 1 < bounds.length; i++) {
    const r = parseRange(task(path, bounds[i]!, bounds[i + 1]!));
    if (!r.ok) return undefined;
    parts.push({ pieces: [r.words], strings: { text: (id) => Buffer.from(r.strings.bytes).toString('utf8', id === 0 ? 0 : r.strings.ends[id - 1]!, r.strings.ends[id]!) }, stringCount: r.strings.ends.length, columns: r.strings.columns });
  }
  return partRows(parts);
}

const line = (i: number): string =>
  `${i - 50}|${['a', 'ß', '', 'a b', 'ünï'][i % 5]}${i % 7}|${(i * 37) % 1000}.${i % 100}|199${i % 10}-0${(i % 9) + 1}-1${i % 10}|${i}|${i * 1e9}|${i % 2 === 0 ? 'true' : '0'}|`;

describe('parseRange', () => {
  it('gives file.ts rows for every split into ranges (BOM, empty lines, no final newline)', async () => {
    const text = '\uFEFF' + Array.from({ length: 40 }, (_, i) => line(i)).join('\n').replace(/\n(?=5)/g, '\n\n') + '\n' + line(99);
    const path = write('t.tbl', text);
    const expected = await loadFactsFile(path, columns);
    const size = statSync(path).size;
    expect(rangeRows(path, [])).toEqual(expected);
    for (let cut = 0; cut <= size; cut++) expect(rangeRows(path, [cut]), `cut at ${cut}`).toEqual(expected);
    for (let k = 0; k < 50; k++) {
      const cuts = Array.from({ length: 1 + (k % 6) }, (_, j) => Math.floor((size * (j + 1) * (k + 3)) / (7 * (k + 4)))).sort((a, b) => a - b);
      expect(rangeRows(path, cuts)).toEqual(expected);
    }
  });

  it('leaves to file.ts what it does not take', () => {
    const good = line(1);
    const cases: Record<string, string | Buffer> = {
      'carriage return': good + '\r\n',
      'NUL byte': good.replace('ß', 'ß\0') + '\n',
      'too few fields': '1|a|2.5|1995-01-01|\n',
      'too many fields': good + 'x|\n',
      'two trailing delimiters': good + '|\n',
      'bad integer': good.replace(/^-49/, 'x49') + '\n',
      'no such day': good.replace(/1991-02-11/, '1991-02-30') + '\n',
      'bad boolean': good.replace('|0|', '|maybe|') + '\n',
      'invalid UTF-8': Buffer.concat([Buffer.from('1|'), Buffer.from([0xff, 0xfe]), Buffer.from(good.slice(good.indexOf('|', 2)) + '\n')]),
    };
    expect(good).toContain('1991-02-11');
    for (const [name, text] of Object.entries(cases)) {
      const path = write('bad.tbl', text);
      expect(parseRange(task(path, 0, statSync(path).size)).ok, name).toBe(false);
    }
    const quoted = write('q.csv', '1,"a",2\n');
    expect(parseRange({ ...task(quoted, 0, 8), delimiter: 44, quoting: true, trailingDelimiter: false, types: ['int32', 'string', 'int32'] }).ok).toBe(false);
  });

  it('parses a large file on worker threads as file.ts does', async () => {
    const lines: string[] = [];
    for (let i = 0; i < 120_000; i++) lines.push(line(i));
    const path = write('big.tbl', lines.join('\n') + '\n');
    expect(statSync(path).size).toBeGreaterThan(1 << 22);
    const parts = await parseFileInParts(path, types);
    expect(parts!.length).toBeGreaterThan(1);
    expect(partRows(parts!)).toEqual(await loadFactsFile(path, columns));
    // The host cache projects kept columns of those parts on the workers, strings with the run's ids.
    for (const loadColumns of [[0, 1, 4], [2, 3], [1]]) {
      const decl: RelationDecl = { name: 'big', columns: loadColumns.map((c) => columns[c]!), kind: 'edb', output: false, pruned: { sourceColumns: columns, loadColumns } };
      const cached = new EncodedFacts();
      cached.strings.id('before');
      await new FactsCache().load(decl, path, cached);
      // Parsed by ranges on the workers, only the kept columns; file.ts's rows are the reference.
      const kept = new EncodedFacts();
      await loadKeptColumns(decl, path, kept);
      const plain = new EncodedFacts();
      await loadFactsFileInto(path, columns, plain.relation('big', decl.columns.map((c) => c.type)), plain.strings, 'big', undefined, loadColumns);
      for (const facts of [cached, kept]) {
        expect(facts.toRows().get('big')).toEqual(plain.toRows().get('big'));
        expect(new Set(facts.relations.get('big')!.usedStrings(facts.strings))).toEqual(new Set(plain.relations.get('big')!.usedStrings(plain.strings)));
      }
    }
    // Several string columns, some skipped: the kept ones' strings, and only theirs, reach the run.
    const texts: Column[] = [0, 1, 2].map((i) => ({ name: `t${i}`, type: 'string' }));
    const textPath = write('texts.tbl', Array.from({ length: 200_000 }, (_, i) => `a${i % 7}|b${i}|c${i % 3}|`).join('\n') + '\n');
    for (const loadColumns of [[2], [0, 2], [1]]) {
      const decl: RelationDecl = { name: 'texts', columns: loadColumns.map((c) => texts[c]!), kind: 'edb', output: false, pruned: { sourceColumns: texts, loadColumns } };
      const kept = new EncodedFacts();
      await loadKeptColumns(decl, textPath, kept);
      const plain = new EncodedFacts();
      await loadFactsFileInto(textPath, texts, plain.relation('texts', decl.columns.map((c) => c.type)), plain.strings, 'texts', undefined, loadColumns);
      expect(kept.toRows().get('texts')).toEqual(plain.toRows().get('texts'));
      expect(new Set(kept.relations.get('texts')!.usedStrings(kept.strings))).toEqual(new Set(plain.relations.get('texts')!.usedStrings(plain.strings)));
    }
    // One bad line anywhere: the whole file goes to file.ts.
    lines[77_777] = lines[77_777]!.replace('|', '|"');
    writeFileSync(path, lines.join('\n').replace('1995-', '1995+') + '\n');
    expect(await parseFileInParts(path, types)).toBeUndefined();
  }, 120_000);
});
