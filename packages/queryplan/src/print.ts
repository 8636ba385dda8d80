/**
 * Readable text form of a QP program, for debugging dumps (`--dump qp`) and for naming commands in messages.
 * Columns print as `#i` (in a join: the left tuple's columns followed by the right tuple's), constants as
 * literals as the source writes them (`5`, `5L`, `5u`, `2.5f`, `19.99d`, `"s"`, `true`, `date:parse["2024-01-31"]`),
 * arithmetic parenthesized (`(#0 * #1)`).
 */
import type { Aggregate, Condition, Expr, OutputOrder, Predicate, QpCommand, QpProgram, RelationDecl, Terminator } from './ir.js';
import { originComment } from './rule-origin.js';
import { formatValue, type ScalarType, type Value } from './types.js';

/** A constant as a source literal of its type. */
export function printConst(type: ScalarType, value: Value): string {
  switch (type) {
    case 'int32':
    case 'boolean':
      return String(value);
    case 'int64':
      return `${String(value)}L`;
    case 'uint32':
      return `${String(value)}u`;
    case 'float32':
      return `${formatValue(value, type)}f`;
    case 'decimal':
      return `${formatValue(value, type)}d`;
    case 'string':
      return JSON.stringify(value);
    case 'date':
      return `date:parse[${JSON.stringify(formatValue(value, type))}]`;
  }
}

export function printExpr(e: Expr): string {
  switch (e.kind) {
    case 'col':
      return `#${e.index}`;
    case 'const':
      return printConst(e.type, e.value);
    case 'binary':
      return `(${printExpr(e.left)} ${e.op} ${printExpr(e.right)})`;
    case 'call':
      return `${e.fn}[${e.args.map(printExpr).join(', ')}]`;
  }
}

export function printAggregate(a: Aggregate): string {
  return `${a.fn}(${a.column === undefined ? '' : `#${a.column}`}): ${a.type}`;
}

export function printPredicate(p: Predicate): string {
  switch (p.kind) {
    case 'compare':
      return `${printExpr(p.left)} ${p.op} ${printExpr(p.right)}`;
    case 'any':
      return `(${p.alternatives.map((alt) => alt.map(printPredicate).join(' and ')).join(' or ')})`;
  }
}

function whereClause(filter: readonly Predicate[]): string {
  return filter.length === 0 ? '' : ` where ${filter.map(printPredicate).join(' and ')}`;
}

function projectClause(project: readonly Expr[]): string {
  return ` project (${project.map(printExpr).join(', ')})`;
}

/** Join keys print per side (`l#i = r#j`): key indices are into each side's own tuple, not the concatenation. */
function onClause(leftKeys: readonly number[], rightKeys: readonly number[]): string {
  if (leftKeys.length === 0 && rightKeys.length === 0) return '';
  const n = Math.max(leftKeys.length, rightKeys.length);
  const pairs: string[] = [];
  for (let i = 0; i < n; i++) pairs.push(`l#${leftKeys[i] ?? '?'} = r#${rightKeys[i] ?? '?'}`);
  return ` on ${pairs.join(', ')}`;
}

export function printCommand(c: QpCommand): string {
  switch (c.kind) {
    case 'mapFilter':
      return `${c.target} := mapFilter ${c.source}${whereClause(c.filter)}${projectClause(c.project)}`;
    case 'mapJoin':
      return (
        `${c.target} := mapJoin ${c.left}, ${c.right}${onClause(c.leftKeys, c.rightKeys)}` +
        `${whereClause(c.filter)}${projectClause(c.project)}`
      );
    case 'union':
      return `${c.target} := union ${c.left}, ${c.right}`;
    case 'difference':
      return `${c.target} := difference ${c.left}, ${c.right}`;
    case 'copy':
      return `${c.target} := copy ${c.source}`;
    case 'clear':
      return `${c.target} := clear`;
    case 'aggregate':
      return `${c.target} := aggregate ${c.source} by (${c.groupBy.map((i) => `#${i}`).join(', ')}) compute (${c.aggregates.map(printAggregate).join(', ')})`;
    case 'limit':
      return `${c.target} := limit ${c.source} by (${printOrderKeys(c.keys)}) to ${c.count}`;
  }
}

/** `#1 desc, #0 asc`. */
export function printOrderKeys(keys: OutputOrder['keys']): string {
  return keys.map((k) => `#${k.column} ${k.descending ? 'desc' : 'asc'}`).join(', ');
}

export function printCondition(c: Condition): string {
  switch (c.kind) {
    case 'empty':
      return `empty(${c.relations.join(', ')})`;
  }
}

export function printTerminator(t: Terminator): string {
  switch (t.kind) {
    case 'jump':
      return `jump ${t.target}`;
    case 'branch':
      return `branch ${printCondition(t.condition)} ? ${t.ifTrue} : ${t.ifFalse}`;
    case 'halt':
      return 'halt';
  }
}

export function printRelation(r: RelationDecl): string {
  const cols = r.columns.map((c) => `${c.name}: ${c.type}`).join(', ');
  const loads = r.pruned ? ` loads columns ${r.pruned.loadColumns.join(', ')} of ${r.pruned.sourceColumns.length}` : '';
  return `relation ${r.name}(${cols}) ${r.kind}${r.output ? ' output' : ''}${loads}`;
}

export function printPlan(p: QpProgram): string {
  const lines: string[] = p.relations.map(printRelation);
  const factNames = Object.keys(p.facts);
  if (factNames.length > 0) lines.push('');
  for (const name of factNames) {
    const n = p.facts[name]!.length;
    lines.push(`facts ${name}: ${n} ${n === 1 ? 'row' : 'rows'}`);
  }
  lines.push('', `entry ${p.entry}`);
  for (const b of p.blocks) {
    lines.push('', `block ${b.label}:`);
    for (const c of b.commands) lines.push(`  ${printCommand(c)}${originComment(c.rules)}`);
    lines.push(`  ${printTerminator(b.terminator)}`);
  }
  return lines.join('\n') + '\n';
}
