/**
 * Reference interpreter for QP programs: the test oracle. Deliberately plain — relations are sets of rows keyed by
 * a canonical string, every command builds its target's new value from the old values and then replaces it.
 */
import type { Aggregate, DeclaredKey, Expr, Predicate, QpCommand, QpProgram, RelationDecl, Terminator } from './ir.js';
import { evalArith } from './arith.js';
import { evalAggregate } from './aggregate.js';
import { evalBuiltin } from './builtins.js';
import { applyOutputOrder, VIOLATION_ROWS, type Violation } from './output.js';
import { keyConstraint, KeyViolationError } from './keys.js';
import { compareRows, compareValues, type Row, type Value } from './types.js';
import { validatePlan, valueHasType } from './validate.js';

/** A relation's value: canonical row key -> row. */
type RowSet = Map<string, Row>;

/**
 * Canonical set key of a row. Values are tagged by JS type so that e.g. int32 1, int64 1n and string "1"
 * never collide; strings are JSON-quoted so separators inside them cannot fake a column boundary.
 */
export function rowKey(row: readonly Value[]): string {
  return row
    .map((v) => (typeof v === 'string' ? JSON.stringify(v) : typeof v === 'bigint' ? `${v}L` : `${v === 0 ? 0 : String(v)}`))
    .join(',');
}

export interface InterpretOptions {
  /** Most block executions before giving up on a plan that never halts. */
  maxSteps?: number;
}

const DEFAULT_MAX_STEPS = 1_000_000;

/** Value of `e` over one input tuple. */
export function evalExpr(e: Expr, tuple: readonly Value[]): Value {
  switch (e.kind) {
    case 'col':
      return tuple[e.index]!;
    case 'const':
      return e.value;
    case 'binary':
      return evalArith(e.op, e.type, evalExpr(e.left, tuple), evalExpr(e.right, tuple));
    case 'call':
      return evalBuiltin(e.fn, e.args.map((a) => evalExpr(a, tuple)));
  }
}

/** Whether a filter predicate holds for a tuple, with typed comparison. */
export function predicateHolds(p: Predicate, tuple: readonly Value[]): boolean {
  if (p.kind === 'any') return p.alternatives.some((alt) => alt.every((q) => predicateHolds(q, tuple)));
  const c = compareValues(evalExpr(p.left, tuple), evalExpr(p.right, tuple));
  switch (p.op) {
    case '=':
      return c === 0;
    case '!=':
      return c !== 0;
    case '<':
      return c < 0;
    case '<=':
      return c <= 0;
    case '>':
      return c > 0;
    case '>=':
      return c >= 0;
  }
}

function insert(set: RowSet, row: Row): void {
  set.set(rowKey(row), row);
}

/** Filter then project one input tuple into `out`. */
function emit(out: RowSet, tuple: readonly Value[], filter: readonly Predicate[], project: readonly Expr[]): void {
  if (filter.every((p) => predicateHolds(p, tuple))) insert(out, project.map((e) => evalExpr(e, tuple)));
}

function run(c: QpCommand, get: (name: string) => RowSet, decls: ReadonlyMap<string, RelationDecl>): RowSet {
  const out: RowSet = new Map();
  switch (c.kind) {
    case 'mapFilter':
      for (const t of get(c.source).values()) emit(out, t, c.filter, c.project);
      return out;
    case 'mapJoin': {
      // Group the right side by key; with no keys every right row shares the empty key (a product).
      const byKey = new Map<string, Row[]>();
      for (const r of get(c.right).values()) {
        const k = rowKey(c.rightKeys.map((i) => r[i]!));
        const group = byKey.get(k);
        if (group) group.push(r);
        else byKey.set(k, [r]);
      }
      for (const l of get(c.left).values()) {
        for (const r of byKey.get(rowKey(c.leftKeys.map((i) => l[i]!))) ?? []) emit(out, [...l, ...r], c.filter, c.project);
      }
      return out;
    }
    case 'union':
      for (const [k, row] of get(c.left)) out.set(k, row);
      for (const [k, row] of get(c.right)) out.set(k, row);
      return out;
    case 'difference': {
      const right = get(c.right);
      for (const [k, row] of get(c.left)) if (!right.has(k)) out.set(k, row);
      return out;
    }
    case 'copy':
      for (const [k, row] of get(c.source)) out.set(k, row);
      return out;
    case 'clear':
      return out;
    case 'limit':
      for (const row of applyOutputOrder([...get(c.source).values()].sort(compareRows), { keys: c.keys, limit: c.count })) insert(out, row);
      return out;
    case 'aggregate': {
      const groups = new Map<string, Row[]>();
      for (const row of get(c.source).values()) {
        const k = rowKey(c.groupBy.map((i) => row[i]!));
        const group = groups.get(k);
        if (group) group.push(row);
        else groups.set(k, [row]);
      }
      const argType = (a: Aggregate) => (a.column === undefined ? undefined : decls.get(c.source)!.columns[a.column]!.type);
      for (const rows of groups.values()) {
        const values = c.aggregates.map((a) =>
          evalAggregate(a.fn, argType(a), a.column === undefined ? [] : rows.map((r) => r[a.column!]!), rows.length, `${a.fn} into ${c.target}`),
        );
        insert(out, [...c.groupBy.map((i) => rows[0]![i]!), ...values]);
      }
      return out;
    }
  }
}

/** The label of the block to run next, or undefined at halt. */
function next(t: Terminator, get: (name: string) => RowSet): string | undefined {
  switch (t.kind) {
    case 'jump':
      return t.target;
    case 'branch':
      return t.condition.relations.every((n) => get(n).size === 0) ? t.ifTrue : t.ifFalse;
    case 'halt':
      return undefined;
  }
}

function addRows(decl: RelationDecl, set: RowSet, rows: readonly Row[], origin: string): void {
  rows.forEach((row, i) => {
    const ok = row.length === decl.columns.length && decl.columns.every((col, c) => valueHasType(col.type, row[c]));
    if (!ok) throw new Error(`interpret: ${origin} row ${i + 1} of ${decl.name} does not match its columns`);
    insert(set, [...row]);
  });
}

/** A violation of `key` by the rows of base relation `decl`: the key values held by more than one row, or undefined. */
function keyViolation(decl: RelationDecl, key: DeclaredKey, rows: RowSet): Violation | undefined {
  const seen = new Map<string, { key: Row; n: number }>();
  for (const row of rows.values()) {
    const values = key.columns.map((c) => row[c]!);
    const id = rowKey(values);
    const entry = seen.get(id);
    if (entry) entry.n++;
    else seen.set(id, { key: values, n: 1 });
  }
  const offending = [...seen.values()].filter((e) => e.n > 1).map((e) => e.key).sort(compareRows);
  if (offending.length === 0) return undefined;
  return { constraint: keyConstraint(decl.name, key), rows: offending.slice(0, VIOLATION_ROWS), count: offending.length };
}

/**
 * Runs `p` from its entry block to `halt`. Initial contents: the plan's facts plus `inputs` (for any declared
 * relation). Returns every non-temp relation's rows, sorted by `compareRows`.
 * Throws an Error for an invalid plan, bad inputs, or more than `maxSteps` block executions; a KeyViolationError
 * when the initial rows break a declared key.
 */
export function interpret(
  p: QpProgram,
  inputs: Readonly<Record<string, readonly Row[]>> = {},
  options: InterpretOptions = {},
): Map<string, Row[]> {
  const problems = validatePlan(p);
  if (problems.length > 0) throw new Error(`interpret: invalid plan:\n${problems.map((d) => d.message).join('\n')}`);

  const decls = new Map(p.relations.map((r) => [r.name, r]));
  const state = new Map<string, RowSet>(p.relations.map((r) => [r.name, new Map()]));
  const get = (name: string) => state.get(name)!;
  for (const [name, rows] of Object.entries(p.facts)) addRows(decls.get(name)!, get(name), rows, 'fact');
  for (const [name, rows] of Object.entries(inputs)) {
    const decl = decls.get(name);
    if (!decl) throw new Error(`interpret: input for undeclared relation ${name}`);
    addRows(decl, get(name), rows, 'input');
  }
  const broken = p.relations.flatMap((r) => (r.keys ?? []).flatMap((key) => keyViolation(r, key, get(r.name)) ?? []));
  if (broken.length > 0) throw new KeyViolationError(broken);

  const blocks = new Map(p.blocks.map((b) => [b.label, b]));
  const maxSteps = options.maxSteps ?? DEFAULT_MAX_STEPS;
  let label: string | undefined = p.entry;
  for (let steps = 1; label !== undefined; steps++) {
    if (steps > maxSteps) {
      throw new Error(
        `interpret: no halt after ${maxSteps} block executions (next block ${label}); raise maxSteps if the plan is meant to run longer`,
      );
    }
    const block = blocks.get(label)!;
    for (const c of block.commands) state.set(c.target, run(c, get, decls));
    label = next(block.terminator, get);
  }

  const result = new Map<string, Row[]>();
  for (const r of p.relations) {
    if (r.kind !== 'temp') result.set(r.name, [...get(r.name).values()].sort(compareRows));
  }
  return result;
}
