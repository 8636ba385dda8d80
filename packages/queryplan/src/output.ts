/**
 * What a run hands back besides relation contents: rows in their output order (`order P by ... limit N`) and
 * the violated constraints. Shared by the device runtime and the reference interpreter so both agree.
 */
import { formatSpan, type SourceSpan } from './diagnostics.js';
import { rowKey } from './interpret.js';
import type { Constraint, OutputOrder, QpProgram } from './ir.js';
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
  /** Where each of `rows` was written, when it is an inline fact (see locateFacts). */
  rowSpans?: Array<SourceSpan | undefined>;
}

/** The violated constraints, given the contents of their relations. */
export function collectViolations(constraints: readonly Constraint[] | undefined, relations: ReadonlyMap<string, readonly Row[]>): Violation[] {
  return (constraints ?? []).flatMap((constraint) => {
    const rows = [...(relations.get(constraint.relation) ?? [])].sort(compareRows);
    return rows.length === 0 ? [] : [{ constraint, rows: rows.slice(0, VIOLATION_ROWS), count: rows.length }];
  });
}

/**
 * `violations` with the source location of each offending row of a functional dependency that is an inline fact
 * of `plan` (a base relation's facts break it before any rule runs): the facts to fix, not the declaration.
 */
export function locateFacts(violations: Violation[], plan: QpProgram | undefined): Violation[] {
  return violations.map((v) => {
    const { constraint: c } = v;
    const rows = plan?.facts[c.text];
    const spans = plan?.factSpans?.[c.text];
    if (c.kind !== 'functional' || !rows || !spans) return v;
    const at = new Map(rows.map((row, i) => [rowKey(row), spans[i]]));
    const rowSpans = v.rows.map((row) => at.get(rowKey(row)));
    return rowSpans.some((s) => s !== undefined) ? { ...v, rowSpans } : v;
  });
}

/**
 * Text of a violation: what was violated and where, then one offending tuple per line (a functional predicate's
 * tuples as `p[k] = v`, a constraint's left-side variables as `x = 1, y = 2`).
 */
export function formatViolation(v: Violation, columns: ReadonlyArray<{ name: string; type: ScalarType }>): string {
  const { constraint: c } = v;
  // The first offending fact, where the rows are facts; else the declaration.
  const first = v.rowSpans?.find((s) => s !== undefined) ?? c.span;
  const where = first ? `${formatSpan(first)}: ` : '';
  const head =
    c.kind === 'functional'
      ? `${where}functional dependency violated: ${c.text} has more than one value for a key`
      : c.kind === 'key'
        ? `${where}key violated: ${c.relation} has several rows with one key (${c.text})`
        : `${where}integrity constraint violated: ${c.text}`;
  const show = (row: Row, i: number) => formatValue(row[i]!, columns[i]!.type);
  const lines = v.rows.map((row, r) => {
    const at = v.rowSpans?.[r];
    return at ? `${tuple(row)}  (${formatSpan(at)})` : tuple(row);
  });
  function tuple(row: Row): string {
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
  }
  const more = v.count > v.rows.length ? [`  ... and ${v.count - v.rows.length} more`] : [];
  return [`${head} (${v.count} offending tuple${v.count === 1 ? '' : 's'})`, ...lines, ...more].join('\n');
}
