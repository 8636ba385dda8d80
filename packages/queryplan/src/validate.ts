/**
 * Structural and type checks of a QP program. Plans come from the compiler, so a failure here is a compiler bug
 * (or a hand-written plan's mistake); every message names the block and command so the plan dump can be searched.
 */
import { errorAt, type Diagnostic } from './diagnostics.js';
import { commandInputs, type Expr, type Predicate, type QpCommand, type QpProgram, type RelationDecl } from './ir.js';
import { printCommand, printPredicate } from './print.js';
import { arithDefined } from './arith.js';
import { keysProblem } from './keys.js';
import { aggregateType } from './aggregate.js';
import { BUILTINS, constantArgs } from './builtins.js';
import type { ScalarType, Value } from './types.js';

const INT32_MIN = -(2 ** 31);
const INT32_MAX = 2 ** 31 - 1;
const INT64_MIN = -(2n ** 63n);
const INT64_MAX = 2n ** 63n - 1n;

/** Whether `v` is the JS representation of a value of `type` (see `Value`), in range. */
export function valueHasType(type: ScalarType, v: unknown): v is Value {
  switch (type) {
    case 'int32':
    case 'date':
      return typeof v === 'number' && Number.isInteger(v) && v >= INT32_MIN && v <= INT32_MAX;
    case 'uint32':
      return typeof v === 'number' && Number.isInteger(v) && v >= 0 && v <= 2 ** 32 - 1;
    case 'float32':
      return typeof v === 'number' && (Number.isNaN(v) || (Math.fround(v) === v && !Object.is(v, -0)));
    case 'int64':
    case 'decimal':
      return typeof v === 'bigint' && v >= INT64_MIN && v <= INT64_MAX;
    case 'string':
      return typeof v === 'string';
    case 'boolean':
      return typeof v === 'boolean';
  }
}

function describeValue(v: unknown): string {
  if (typeof v === 'bigint') return `${v}L`;
  if (typeof v === 'string') return JSON.stringify(v);
  return `${typeof v} ${String(v)}`;
}

function typeList(r: RelationDecl): string {
  return `(${r.columns.map((c) => c.type).join(', ')})`;
}

function sameTypes(a: RelationDecl, b: RelationDecl): boolean {
  return a.columns.length === b.columns.length && a.columns.every((c, i) => c.type === b.columns[i]!.type);
}

export function validatePlan(p: QpProgram): Diagnostic[] {
  const diags: Diagnostic[] = [];
  const report = (message: string, r?: RelationDecl) => diags.push(errorAt(message, r?.span));

  const rels = new Map<string, RelationDecl>();
  for (const r of p.relations) {
    if (rels.has(r.name)) report(`duplicate relation ${r.name}`, r);
    else rels.set(r.name, r);
    const pruned = prunedProblem(r);
    if (pruned) report(pruned, r);
    const keys = keysProblem(r);
    if (keys) report(keys, r);
  }

  for (const [name, rows] of Object.entries(p.facts)) {
    const r = rels.get(name);
    if (!r) {
      report(`facts for undeclared relation ${name}`);
      continue;
    }
    rows.forEach((row, i) => {
      const at = `facts for ${name}, row ${i + 1}`;
      if (row.length !== r.columns.length) {
        report(`${at}: expected ${r.columns.length} values, found ${row.length}`, r);
        return;
      }
      row.forEach((v, c) => {
        const col = r.columns[c]!;
        if (!valueHasType(col.type, v)) {
          report(`${at}: expected ${col.type} in column ${c + 1} (${col.name}), found ${describeValue(v)}`, r);
        }
      });
    });
  }

  const labels = new Set<string>();
  for (const b of p.blocks) {
    if (labels.has(b.label)) report(`duplicate block label ${b.label}`);
    labels.add(b.label);
  }
  if (!labels.has(p.entry)) report(`entry block ${p.entry} does not exist`);

  /** Type of `e` over an input tuple of `input` types, or undefined (after reporting) when it is malformed. */
  const exprType = (e: Expr, input: readonly ScalarType[], where: string): ScalarType | undefined => {
    switch (e.kind) {
      case 'col': {
        if (!Number.isInteger(e.index) || e.index < 0 || e.index >= input.length) {
          report(`${where}: column #${e.index} out of range (the input has ${input.length} columns)`);
          return undefined;
        }
        if (input[e.index] !== e.type) {
          report(`${where}: #${e.index} is annotated ${e.type} but the input column is ${input[e.index]}`);
          return undefined;
        }
        return e.type;
      }
      case 'const':
        if (!valueHasType(e.type, e.value)) {
          report(`${where}: constant ${describeValue(e.value)} is not a valid ${e.type}`);
          return undefined;
        }
        return e.type;
      case 'binary': {
        const l = exprType(e.left, input, where);
        const r = exprType(e.right, input, where);
        if (!l || !r) return undefined;
        if (l !== e.type || r !== e.type || !arithDefined(e.op, e.type)) {
          report(`${where}: arithmetic ${l} ${e.op} ${r} does not give ${e.type}`);
          return undefined;
        }
        return e.type;
      }
      case 'call': {
        const sig = BUILTINS[e.fn];
        const args = e.args.map((a) => exprType(a, input, where));
        if (!sig || args.length !== sig.args.length || args.some((t, k) => t !== undefined && t !== sig.args[k]) || e.type !== sig.result) {
          report(`${where}: ${e.fn}[${args.join(', ')}] does not give ${e.type}`);
          return undefined;
        }
        if (constantArgs(e.fn).some((k) => e.args[k]!.kind !== 'const')) {
          report(`${where}: ${e.fn} needs constants after its first argument`);
          return undefined;
        }
        return e.type;
      }
    }
  };

  const checkFilter = (filter: readonly Predicate[], input: readonly ScalarType[], where: string): void => {
    for (const pred of filter) {
      if (pred.kind === 'any') {
        if (pred.alternatives.length < 2 || pred.alternatives.some((alt) => alt.length === 0)) {
          report(`${where}: ${printPredicate(pred)} needs two alternatives or more, none empty`);
        }
        for (const alt of pred.alternatives) checkFilter(alt, input, where);
        continue;
      }
      const l = exprType(pred.left, input, where);
      const r = exprType(pred.right, input, where);
      if (l && r && l !== r) report(`${where}: comparison ${printPredicate(pred)} compares ${l} with ${r}`);
    }
  };

  const checkProject = (project: readonly Expr[], input: readonly ScalarType[], target: RelationDecl, where: string) => {
    if (project.length !== target.columns.length) {
      report(`${where}: projects ${project.length} columns but ${target.name} has ${target.columns.length}`);
    }
    project.forEach((e, i) => {
      const t = exprType(e, input, where);
      const col = target.columns[i];
      if (t && col && t !== col.type) {
        report(`${where}: projected column ${i + 1} is ${t} but ${target.name}.${col.name} is ${col.type}`);
      }
    });
  };

  const checkKeys = (keys: readonly number[], side: RelationDecl, sideName: string, where: string): boolean => {
    let ok = true;
    for (const k of keys) {
      if (!Number.isInteger(k) || k < 0 || k >= side.columns.length) {
        report(`${where}: ${sideName} key #${k} out of range (${side.name} has ${side.columns.length} columns)`);
        ok = false;
      }
    }
    return ok;
  };

  const checkCommand = (c: QpCommand, where: string) => {
    const missing = [c.target, ...commandInputs(c)].filter((n) => !rels.has(n));
    for (const n of new Set(missing)) report(`${where}: relation ${n} is not declared`);
    if (missing.length > 0) return;
    const target = rels.get(c.target)!;
    const sameAs = (...names: string[]) => {
      for (const n of names) {
        const r = rels.get(n)!;
        if (!sameTypes(target, r)) {
          report(`${where}: column types of ${target.name} ${typeList(target)} and ${r.name} ${typeList(r)} differ`);
        }
      }
    };
    switch (c.kind) {
      case 'mapFilter': {
        const input = rels.get(c.source)!.columns.map((col) => col.type);
        checkFilter(c.filter, input, where);
        checkProject(c.project, input, target, where);
        return;
      }
      case 'mapJoin': {
        const left = rels.get(c.left)!;
        const right = rels.get(c.right)!;
        if (c.leftKeys.length !== c.rightKeys.length) {
          report(`${where}: ${c.leftKeys.length} left keys but ${c.rightKeys.length} right keys`);
        } else if ([checkKeys(c.leftKeys, left, 'left', where), checkKeys(c.rightKeys, right, 'right', where)].every(Boolean)) {
          c.leftKeys.forEach((lk, i) => {
            const rk = c.rightKeys[i]!;
            const lt = left.columns[lk]!.type;
            const rt = right.columns[rk]!.type;
            if (lt !== rt) report(`${where}: join key ${i + 1} pairs ${left.name}#${lk} (${lt}) with ${right.name}#${rk} (${rt})`);
          });
        }
        const input = [...left.columns, ...right.columns].map((col) => col.type);
        checkFilter(c.filter, input, where);
        checkProject(c.project, input, target, where);
        return;
      }
      case 'union':
      case 'difference':
        sameAs(c.left, c.right);
        return;
      case 'copy':
        sameAs(c.source);
        return;
      case 'clear':
        return;
      case 'limit':
        sameAs(c.source);
        checkKeys(c.keys.map((k) => k.column), rels.get(c.source)!, 'order', where);
        if (!Number.isSafeInteger(c.count) || c.count < 0) report(`${where}: limit ${c.count} is not a row count`);
        return;
      case 'aggregate': {
        const source = rels.get(c.source)!;
        if (!checkKeys(c.groupBy, source, 'group', where)) return;
        const types: (ScalarType | undefined)[] = c.groupBy.map((k) => source.columns[k]!.type);
        for (const a of c.aggregates) {
          const arg = a.column === undefined ? undefined : source.columns[a.column]?.type;
          if (a.column !== undefined && arg === undefined) report(`${where}: aggregate column #${a.column} out of range`);
          if ((a.fn === 'count') !== (a.column === undefined)) report(`${where}: ${a.fn} ${a.fn === 'count' ? 'takes no' : 'needs a'} column`);
          if (aggregateType(a.fn, arg) !== a.type) report(`${where}: ${a.fn} of ${arg ?? 'nothing'} does not give ${a.type}`);
          types.push(a.type);
        }
        if (types.length !== target.columns.length || types.some((t, i) => t !== target.columns[i]!.type)) {
          report(`${where}: produces (${types.join(', ')}) but ${target.name} is ${typeList(target)}`);
        }
        return;
      }
    }
  };

  for (const b of p.blocks) {
    b.commands.forEach((c, i) => checkCommand(c, `block ${b.label}, command ${i + 1} (${printCommand(c)})`));
    const t = b.terminator;
    switch (t.kind) {
      case 'jump':
        if (!labels.has(t.target)) report(`block ${b.label}: jump to missing block ${t.target}`);
        break;
      case 'branch':
        for (const l of [t.ifTrue, t.ifFalse]) {
          if (!labels.has(l)) report(`block ${b.label}: branch to missing block ${l}`);
        }
        for (const n of t.condition.relations) {
          if (!rels.has(n)) report(`block ${b.label}: branch condition reads undeclared relation ${n}`);
        }
        break;
      case 'halt':
        break;
    }
  }
  return diags;
}

/** What is wrong with a relation's `pruned` record or `deviceColumns` (a program file may carry any), or undefined when they fit. */
export function prunedProblem(r: RelationDecl): string | undefined {
  if (r.deviceColumns) {
    const d = r.deviceColumns;
    if (r.kind !== 'edb') return `relation ${r.name} keeps device columns but is not a base relation`;
    const fits = d.length > 0 && d.every((c, i) => Number.isInteger(c) && c >= 0 && c < r.columns.length && (i === 0 || c > d[i - 1]!));
    if (!fits) return `relation ${r.name}: device columns must ascend within its ${r.columns.length}`;
  }
  if (!r.pruned) return undefined;
  const { sourceColumns, loadColumns } = r.pruned;
  if (r.kind !== 'edb') return `relation ${r.name} is narrowed but not a base relation`;
  if (loadColumns.length !== r.columns.length) return `relation ${r.name} keeps ${loadColumns.length} facts columns but has ${r.columns.length}`;
  for (let i = 0; i < loadColumns.length; i++) {
    const from = sourceColumns[loadColumns[i]!];
    if (!from || (i > 0 && loadColumns[i]! <= loadColumns[i - 1]!)) return `relation ${r.name}: kept facts columns must ascend within its ${sourceColumns.length}`;
    if (from.type !== r.columns[i]!.type) return `relation ${r.name}: column ${i + 1} is ${r.columns[i]!.type} but facts column ${loadColumns[i]! + 1} is ${from.type}`;
  }
  return undefined;
}
