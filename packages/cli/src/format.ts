/** Renders result relations as text tables, CSV or JSON, and writes per-relation files. */
import { mkdirSync, renameSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { formatValue, formatViolation, VixenError, type RelationDecl, type Row, type Value, type Violation } from '@vixen/queryplan';

export type OutputFormat = 'table' | 'csv' | 'json';

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
  const widths = header.map((h, i) => Math.max(h.length, ...cells.map((r) => r[i]!.length)));
  const numeric = decl.columns.map((c) => c.type !== 'string' && c.type !== 'boolean' && c.type !== 'date');
  const line = (vals: string[]) =>
    vals.map((v, i) => (numeric[i] ? v.padStart(widths[i]!) : v.padEnd(widths[i]!))).join('  ').trimEnd();
  const title = `${decl.name} (${rows.length} row${rows.length === 1 ? '' : 's'})`;
  return [title, line(header), widths.map((w) => '-'.repeat(w)).join('  '), ...cells.map(line)].join('\n');
}

function csvField(v: string): string {
  return /[",\n\r]/.test(v) ? `"${v.replaceAll('"', '""')}"` : v;
}

export function renderResults(
  format: OutputFormat,
  relations: ReadonlyMap<string, readonly Row[]>,
  decls: ReadonlyMap<string, RelationDecl>,
): string {
  switch (format) {
    case 'table':
      return [...relations].map(([name, rows]) => table(decls.get(name)!, rows)).join('\n\n') + '\n';
    case 'csv':
      return [...relations]
        .map(([name, rows]) =>
          [`# ${name}`, columnNames(decls.get(name)!).join(','), ...rows.map((r) => rowTexts(decls.get(name)!, r).map(csvField).join(','))].join('\n'),
        )
        .join('\n\n') + '\n';
    case 'json': {
      const obj = Object.fromEntries(
        [...relations].map(([name, rows]) => {
          const decl = decls.get(name)!;
          return [name, { columns: columnNames(decl), rows: rows.map((r) => r.map((v, i) => jsonValue(decl, v, i))) }];
        }),
      );
      return JSON.stringify(obj, null, 2) + '\n';
    }
  }
}

/** Fails before a run whose --output-dir could not be written: a path that exists and is not a directory. */
export function checkOutputDir(dir: string): void {
  if (statSync(dir, { throwIfNoEntry: false })?.isDirectory() === false) {
    throw new VixenError({ severity: 'error', message: `output directory ${dir} is not a directory` });
  }
}

/**
 * Writes `<relation>.csv` (tab-separated, no header) per relation. Every file is written under a temporary name
 * first and renamed into place only when all were written, so a failure leaves earlier results intact.
 */
export function writeOutputDir(
  dir: string,
  relations: ReadonlyMap<string, readonly Row[]>,
  decls: ReadonlyMap<string, RelationDecl>,
): string[] {
  const staged: Array<{ tmp: string; path: string }> = [];
  try {
    mkdirSync(dir, { recursive: true });
    for (const [name, rows] of relations) {
      const path = join(dir, `${name}.csv`);
      const tmp = `${path}.tmp-${process.pid}`;
      staged.push({ tmp, path });
      writeFileSync(tmp, rows.map((r) => rowTexts(decls.get(name)!, r).join('\t') + '\n').join(''));
    }
  } catch (e) {
    for (const { tmp } of staged) rmSync(tmp, { force: true });
    throw new VixenError({ severity: 'error', message: `cannot write output files in ${dir}: ${(e as Error).message}` });
  }
  for (const { tmp, path } of staged) renameSync(tmp, path);
  return staged.map((s) => s.path);
}

/** Violated constraints after a run: the CLI prints them on stderr and exits with status 3. */
export class ConstraintViolations extends Error {
  constructor(violations: readonly Violation[], decls: ReadonlyMap<string, RelationDecl>) {
    super(violations.map((v) => `error: ${formatViolation(v, decls.get(v.constraint.relation)!.columns)}`).join('\n') + '\n');
    this.name = 'ConstraintViolations';
  }
}
