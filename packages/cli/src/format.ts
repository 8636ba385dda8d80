/** Renders result relations as text tables, CSV or JSON, and writes per-relation files. */
import { mkdirSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { formatValue, type RelationDecl, type Row } from '@vixen/queryplan';

export type OutputFormat = 'table' | 'csv' | 'json';

function columnNames(decl: RelationDecl): string[] {
  return decl.columns.map((c) => c.name);
}

function table(decl: RelationDecl, rows: readonly Row[]): string {
  const header = columnNames(decl);
  const cells = rows.map((r) => r.map(formatValue));
  const widths = header.map((h, i) => Math.max(h.length, ...cells.map((r) => r[i]!.length)));
  const numeric = decl.columns.map((c) => c.type !== 'string');
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
          [`# ${name}`, columnNames(decls.get(name)!).join(','), ...rows.map((r) => r.map((v) => csvField(formatValue(v))).join(','))].join('\n'),
        )
        .join('\n\n') + '\n';
    case 'json': {
      // int64 values become strings: JSON numbers lose precision past 2^53.
      const obj = Object.fromEntries(
        [...relations].map(([name, rows]) => [
          name,
          { columns: columnNames(decls.get(name)!), rows: rows.map((r) => r.map((v) => (typeof v === 'bigint' ? v.toString() : v))) },
        ]),
      );
      return JSON.stringify(obj, null, 2) + '\n';
    }
  }
}

/**
 * Writes `<relation>.csv` (tab-separated, no header) per relation. Every file is written under a temporary name
 * first and renamed into place only when all were written, so a failure leaves earlier results intact.
 */
export function writeOutputDir(dir: string, relations: ReadonlyMap<string, readonly Row[]>): string[] {
  mkdirSync(dir, { recursive: true });
  const staged: Array<{ tmp: string; path: string }> = [];
  try {
    for (const [name, rows] of relations) {
      const path = join(dir, `${name}.csv`);
      const tmp = `${path}.tmp-${process.pid}`;
      staged.push({ tmp, path });
      writeFileSync(tmp, rows.map((r) => r.map(formatValue).join('\t') + '\n').join(''));
    }
  } catch (e) {
    for (const { tmp } of staged) rmSync(tmp, { force: true });
    throw e;
  }
  for (const { tmp, path } of staged) renameSync(tmp, path);
  return staged.map((s) => s.path);
}
