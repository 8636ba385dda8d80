/**
 * What a run hands back besides relation contents: rows in their output order (`order P by ... limit N`) and
 * the violated constraints. Shared by the device runtime and the reference interpreter so both agree.
 */
import type { Constraint, OutputOrder } from './ir.js';
import { compareRows, compareValues, formatValue, type Row, type ScalarType } from './types.js';

/** `rows` (sorted by all columns, ascending) in the order `order` asks for, cut at its limit. */
export function applyOutputOrder(rows: readonly Row[], order: OutputOrder | undefined): Row[] {
  if (!order) return [...rows];
  // Ties on the order keys keep the ascending order of all columns, so output stays deterministic.
  const sorted = [...rows].sort((a, b) => {
    for (const k of order.keys) {
      const c = compareValues(a[k.column]!, b[k.column]!);
      if (c !== 0) return k.descending ? -c : c;
    }
    return compareRows(a, b);
  });
  return order.limit === undefined ? sorted : sorted.slice(0, order.limit);
}

/** Offending tuples reported per violated constraint (the count says how many there were in all). */
export const VIOLATION_ROWS = 10;

export interface Violation {
  constraint: Constraint;
  /** Up to VIOLATION_ROWS offending tuples, sorted. */
  rows: Row[];
  count: number;
}

/** The violated constraints, given the contents of their relations. */
export function collectViolations(constraints: readonly Constraint[] | undefined, relations: ReadonlyMap<string, readonly Row[]>): Violation[] {
  return (constraints ?? []).flatMap((constraint) => {
    const rows = [...(relations.get(constraint.relation) ?? [])].sort(compareRows);
    return rows.length === 0 ? [] : [{ constraint, rows: rows.slice(0, VIOLATION_ROWS), count: rows.length }];
  });
}

/**
 * Text of a violation: what was violated and where, then one offending tuple per line (a functional predicate's
 * tuples as `p[k] = v`, a constraint's left-side variables as `x = 1, y = 2`).
 */
export function formatViolation(v: Violation, columns: ReadonlyArray<{ name: string; type: ScalarType }>): string {
  const { constraint: c } = v;
  const where = c.span ? `${c.span.file}:${c.span.start.line}:${c.span.start.column}: ` : '';
  const head =
    c.kind === 'functional'
      ? `${where}functional dependency violated: ${c.text} has more than one value for a key`
      : c.kind === 'key'
        ? `${where}key violated: ${c.relation} has several rows with one key (${c.text})`
        : `${where}integrity constraint violated: ${c.text}`;
  const show = (row: Row, i: number) => formatValue(row[i]!, columns[i]!.type);
  const lines = v.rows.map((row) => {
    if (c.kind === 'key') {
      const key = c.columns ?? [];
      return `  ${key.map((col, i) => `${columns[col]!.name} = ${formatValue(row[i]!, columns[col]!.type)}`).join(', ')}`;
    }
    if (c.kind === 'functional') {
      const keys = c.keys ?? 0;
      const values = row.slice(keys).map((_, j) => show(row, keys + j));
      return `  ${c.text}[${row.slice(0, keys).map((_, i) => show(row, i)).join(', ')}] = ${values.join(', ')}`;
    }
    return `  ${row.map((_, i) => `${columns[i]!.name} = ${show(row, i)}`).join(', ')}`;
  });
  const more = v.count > v.rows.length ? [`  ... and ${v.count - v.rows.length} more`] : [];
  return [`${head} (${v.count} offending tuple${v.count === 1 ? '' : 's'})`, ...lines, ...more].join('\n');
}
