/**
 * Declared keys of base relations (RelationDecl.keys) are checked when their facts load, before evaluation: the
 * kernel IR relies on them to leave out duplicate elimination, so a run on facts that break one must not go on.
 */
import type { Constraint, DeclaredKey, RelationDecl } from './ir.js';
import type { Violation } from './output.js';

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

/** What is wrong with a relation's declared keys (a program file may carry any), or undefined when they fit. */
export function keysProblem(r: RelationDecl): string | undefined {
  if (!r.keys) return undefined;
  if (r.kind !== 'edb') return `relation ${r.name} declares a key but is not a base relation`;
  const fits = (columns: readonly number[]): boolean =>
    columns.length > 0 && columns.every((c, i) => Number.isInteger(c) && c >= 0 && c < r.columns.length && columns.indexOf(c) === i);
  return r.keys.every((key) => fits(key.columns)) ? undefined : `relation ${r.name}: a key must name distinct columns of its ${r.columns.length}`;
}
