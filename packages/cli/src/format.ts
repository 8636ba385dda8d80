/** Renders result relations as text tables, CSV or JSON, and writes per-relation files. */
import { statSync } from 'node:fs';
import { join } from 'node:path';
import { formatValue, formatViolation, VixenError, type RelationDecl, type Row, type Value, type Violation } from '@vixen/queryplan';
import { ResultTable } from '@vixen/runtime';
import { souffleRecordView, writeFilesAtomically, writeLines } from '@vixen/io';
import type { SouffleIo } from '@vixen/frontend';

export type OutputFormat = 'table' | 'csv' | 'json' | 'count';

function columnNames(decl: RelationDecl): string[] {
  return decl.columns.map((c) => c.name);
}

/** Each value's text, by its column's type (dates, decimals and floats need it). */
function rowTexts(decl: RelationDecl, row: readonly Value[]): string[] {
  return row.map((v, i) => formatValue(v, decl.columns[i]?.type));
}

/**
 * JSON value: int64 and decimal as strings (JSON numbers lose precision past 2^53), dates as YYYY-MM-DD,
 * float32 as its shortest round-trip number (a string when not finite).
 */
function jsonValue(decl: RelationDecl, v: Value, i: number): Value {
  const type = decl.columns[i]?.type;
  if (type === 'float32') return Number.isFinite(v) ? Number(formatValue(v, type)) : String(v);
  return typeof v === 'bigint' || type === 'date' ? formatValue(v, type) : v;
}

function table(decl: RelationDecl, rows: readonly Row[]): string {
  const header = columnNames(decl);
  const cells = rows.map((r) => rowTexts(decl, r));
  // A loop, not Math.max(...cells): spreading 10^5 rows as arguments overflows the stack.
  const widths = header.map((h, i) => cells.reduce((w, r) => Math.max(w, r[i]!.length), h.length));
  const numeric = decl.columns.map((c) => c.type !== 'string' && c.type !== 'boolean' && c.type !== 'date');
  const line = (vals: string[]) =>
    vals.map((v, i) => (numeric[i] ? v.padStart(widths[i]!) : v.padEnd(widths[i]!))).join('  ').trimEnd();
  const title = `${decl.name} (${rows.length} row${rows.length === 1 ? '' : 's'})`;
  return [title, line(header), widths.map((w) => '-'.repeat(w)).join('  '), ...cells.map(line)].join('\n');
}

function csvField(v: string): string {
  return /[",\n\r]/.test(v) ? `"${v.replaceAll('"', '""')}"` : v;
}

/** RFC 4180 lines of `rows` (as `--facts` reads `.csv`), after a header line of column names when asked. */
function* csvLines(decl: RelationDecl, rows: Iterable<Row>, header: boolean): IterableIterator<string> {
  if (header) yield columnNames(decl).map(csvField).join(',');
  for (const r of rows) yield rowTexts(decl, r).map(csvField).join(',');
}

/**
 * Writes the relations in `format` through `write`; CSV streams rows, so it suits relations of any size. CSV of one
 * relation is plain CSV with a header; several relations sharing the output are each framed by a `# name` line.
 */
export function renderResults(
  format: OutputFormat,
  tables: ReadonlyMap<string, ResultTable>,
  decls: ReadonlyMap<string, RelationDecl>,
  write: (text: string) => void,
): void {
  switch (format) {
    case 'table':
      write([...tables].map(([name, t]) => table(decls.get(name)!, t.rows())).join('\n\n') + '\n');
      return;
    case 'csv': {
      const framed = tables.size > 1;
      let first = true;
      for (const [name, t] of tables) {
        if (framed) write(`${first ? '' : '\n'}# ${name}\n`);
        first = false;
        writeLines(csvLines(decls.get(name)!, t, true), write);
      }
      return;
    }
    case 'json': {
      const obj = Object.fromEntries(
        [...tables].map(([name, t]) => {
          const decl = decls.get(name)!;
          return [name, { columns: columnNames(decl), rows: t.rows().map((r) => r.map((v, i) => jsonValue(decl, v, i))) }];
        }),
      );
      write(JSON.stringify(obj, null, 2) + '\n');
      return;
    }
    case 'count':
      renderCounts(new Map([...tables].map(([name, t]) => [name, t.size])), write);
      return;
  }
}

/** `--format count`: rows per relation, from the tables or from the counts alone (RunOptions.countsOnly). */
export function renderCounts(counts: ReadonlyMap<string, number>, write: (s: string) => void): void {
  write([...counts].map(([name, n]) => `${name}: ${n} row${n === 1 ? '' : 's'}`).join('\n') + '\n');
}

/** Soufflé relations with record attributes as renderResults shows them: one column per attribute, as printed. */
export function souffleRecordResults(
  io: SouffleIo,
  tables: ReadonlyMap<string, ResultTable>,
  decls: ReadonlyMap<string, RelationDecl>,
): { tables: Map<string, ResultTable>; decls: Map<string, RelationDecl> } {
  const shownTables = new Map(tables);
  const shownDecls = new Map(decls);
  for (const [name, table] of tables) {
    const layout = io.records?.[name];
    if (!layout) continue;
    const view = souffleRecordView(decls.get(name)!, layout);
    shownDecls.set(name, view.decl);
    shownTables.set(name, ResultTable.fromRows(view.decl.columns.map((c) => c.type), table.rows().map(view.row)));
  }
  return { tables: shownTables, decls: shownDecls };
}

/** Fails before a run whose --output-dir could not be written: a path that exists and is not a directory. */
export function checkOutputDir(dir: string): void {
  let isDirectory: boolean | undefined;
  try {
    isDirectory = statSync(dir, { throwIfNoEntry: false })?.isDirectory();
  } catch (e) {
    // A path through a file (ENOTDIR) or an unreadable folder.
    throw new VixenError({ severity: 'error', message: `output directory ${dir} cannot be used: ${(e as Error).message}` });
  }
  if (isDirectory === false) throw new VixenError({ severity: 'error', message: `output directory ${dir} is not a directory` });
}

/**
 * Writes `<relation>.csv` (comma-separated with RFC 4180 quoting, no header: what `--facts` reads back as the same
 * rows) per relation, streaming rows. Every file is written under a temporary name first and renamed into place only
 * when all were written, so a failure leaves earlier results intact.
 */
export function writeOutputDir(dir: string, tables: ReadonlyMap<string, ResultTable>, decls: ReadonlyMap<string, RelationDecl>): string[] {
  const files = [...tables].map(([name, t]) => ({
    path: join(dir, `${name}.csv`),
    write: (out: (text: string) => void) => {
      writeLines(csvLines(decls.get(name)!, t, false), out);
    },
  }));
  return writeFilesAtomically(dir, files, `output files in ${dir}`);
}

/** Violated constraints after a run: the CLI prints them on stderr and exits with status 3. */
export class ConstraintViolations extends Error {
  constructor(violations: readonly Violation[], decls: ReadonlyMap<string, RelationDecl>) {
    super(violations.map((v) => `error: ${formatViolation(v, decls.get(v.constraint.relation)!.columns)}`).join('\n') + '\n');
    this.name = 'ConstraintViolations';
  }
}
