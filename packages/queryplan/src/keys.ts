/**
 * Declared keys of base relations (RelationDecl.keys) are checked when their facts load, before evaluation: the
 * kernel IR relies on them to leave out duplicate elimination, so a run on facts that break one must not go on.
 */
import type { Constraint, DeclaredKey, RelationDecl } from './ir.js';
import { VIOLATION_ROWS, type Violation } from './output.js';
import { compareRows, type Row } from './types.js';

/** Facts that break declared keys: nothing is evaluated. The CLI prints the violations and exits with status 3. */
export class KeyViolationError extends Error {
  constructor(readonly violations: Violation[]) {
    super(violations.map((v) => `key violated: ${v.constraint.relation} (${v.constraint.text})`).join('; '));
    this.name = 'KeyViolationError';
  }
}

/** The constraint a violated key reports. */
export function keyConstraint(relation: string, key: DeclaredKey): Constraint {
  return { kind: 'key', relation, text: key.text, columns: key.columns, ...(key.span ? { span: key.span } : {}) };
}

/** A violation of `key` by the distinct `rows` of `decl`: the key values held by more than one row, or undefined. */
export function keyViolation(decl: RelationDecl, key: DeclaredKey, rows: readonly Row[]): Violation | undefined {
  const seen = new Map<string, { key: Row; n: number }>();
  for (const row of rows) {
    const values = key.columns.map((c) => row[c]!);
    const id = JSON.stringify(values, (_, v: unknown) => (typeof v === 'bigint' ? `${v}n` : v));
    const entry = seen.get(id);
    if (entry) entry.n++;
    else seen.set(id, { key: values, n: 1 });
  }
  const offending = [...seen.values()].filter((e) => e.n > 1).map((e) => e.key).sort(compareRows);
  if (offending.length === 0) return undefined;
  return { constraint: keyConstraint(decl.name, key), rows: offending.slice(0, VIOLATION_ROWS), count: offending.length };
}
