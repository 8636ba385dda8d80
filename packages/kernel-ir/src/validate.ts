/**
 * Structural checks on a kernel IR program: ids and labels resolve, and every kernel's expressions and
 * column types agree with its variables. An error on compiler output is a compiler bug; on a loaded
 * program file it is a bad file.
 */
import { aggregateType, arithDefined, type Aggregate, BUILTINS, constantArgs, errorAt, keysProblem, prunedProblem, valueHasType as qpValueHasType, type Diagnostic, type Expr, type Predicate, type ScalarType, type Value } from '@vixen/queryplan';
import type { KirKernel, KirProgram, KirTerminator, VarId } from './ir.js';
import { kernelInputs, rowProbes } from './ir.js';
import { hashableAggregate } from './analysis/hashable-aggregate.js';

/** Whether a JS value is a valid value of the scalar type (see `Value` in @vixen/queryplan). */
export function valueHasType(v: Value, type: ScalarType): boolean {
  return qpValueHasType(type, v);
}

const sameColumns = (a: readonly ScalarType[], b: readonly ScalarType[]): boolean =>
  a.length === b.length && a.every((t, i) => t === b[i]);

const showColumns = (cols: readonly ScalarType[]): string => `(${cols.join(', ')})`;

class Validator {
  readonly diagnostics: Diagnostic[] = [];

  constructor(private readonly p: KirProgram) {}

  error(message: string): void {
    this.diagnostics.push(errorAt(message));
  }

  hasVar(v: VarId, where: string): boolean {
    if (Number.isInteger(v) && v >= 0 && v < this.p.variables.length) return true;
    this.error(`${where}: variable ${v} does not exist`);
    return false;
  }

  columnsOf(v: VarId): ScalarType[] {
    return this.p.variables[v]!.columns;
  }

  expr(e: Expr, input: readonly ScalarType[], where: string): void {
    switch (e.kind) {
      case 'col': {
        const t = input[e.index];
        if (t === undefined) this.error(`${where}: column #${e.index} out of range for ${input.length} input columns`);
        else if (t !== e.type) this.error(`${where}: column #${e.index} has type ${t}, expression says ${e.type}`);
        return;
      }
      case 'const':
        if (!valueHasType(e.value, e.type)) this.error(`${where}: constant ${String(e.value)} is not a valid ${e.type}`);
        return;
      case 'call': {
        for (const a of e.args) this.expr(a, input, where);
        const sig = BUILTINS[e.fn];
        if (!sig || e.args.length !== sig.args.length || e.args.some((a, k) => a.type !== sig.args[k]) || e.type !== sig.result) {
          this.error(`${where}: ${e.fn} applied to (${e.args.map((a) => a.type).join(', ')}) does not give ${e.type}`);
        } else if (constantArgs(e.fn).some((k) => e.args[k]!.kind !== 'const')) {
          this.error(`${where}: ${e.fn} needs constants after its first argument`);
        }
        return;
      }
      case 'binary':
        this.expr(e.left, input, where);
        this.expr(e.right, input, where);
        if (e.left.type !== e.type || e.right.type !== e.type || !arithDefined(e.op, e.type)) {
          this.error(`${where}: arithmetic ${e.left.type} ${e.op} ${e.right.type} does not give ${e.type}`);
        }
        return;
    }
  }

  predicate(pr: Predicate, input: readonly ScalarType[], where: string): void {
    if (pr.kind === 'any') {
      if (pr.alternatives.length < 2 || pr.alternatives.some((alt) => alt.length === 0)) this.error(`${where}: an any-predicate needs two alternatives or more, none empty`);
      for (const alt of pr.alternatives) for (const q of alt) this.predicate(q, input, where);
      return;
    }
    this.expr(pr.left, input, where);
    this.expr(pr.right, input, where);
    if (pr.left.type !== pr.right.type) this.error(`${where}: compares ${pr.left.type} with ${pr.right.type}`);
  }

  /** Filter and projection over `input`; the projection's types must be the output's columns. */
  map(filter: readonly Predicate[], project: readonly Expr[], input: readonly ScalarType[], output: VarId, where: string): void {
    for (const pr of filter) this.predicate(pr, input, where);
    for (const e of project) this.expr(e, input, where);
    const projected = project.map((e) => e.type);
    if (!sameColumns(projected, this.columnsOf(output))) {
      this.error(`${where}: projects ${showColumns(projected)} into a variable of ${showColumns(this.columnsOf(output))}`);
    }
  }

  keys(keys: readonly number[], input: readonly ScalarType[], where: string): boolean {
    const bad = keys.filter((k) => !Number.isInteger(k) || k < 0 || k >= input.length);
    for (const k of bad) this.error(`${where}: key #${k} out of range for ${input.length} columns`);
    return bad.length === 0;
  }

  sameShape(vars: readonly VarId[], where: string): void {
    const [first, ...rest] = vars.map((v) => this.columnsOf(v));
    if (rest.some((cols) => !sameColumns(cols, first!))) {
      this.error(`${where}: column types differ: ${vars.map((v) => showColumns(this.columnsOf(v))).join(' vs ')}`);
    }
  }

  kernel(k: KirKernel, index: number): void {
    const where = `kernel ${index} (${k.kind})`;
    if (k.id !== index) this.error(`${where}: id is ${k.id}, expected its index ${index}`);
    const vars = [...kernelInputs(k), k.output];
    if (!vars.every((v) => this.hasVar(v, where))) return;
    switch (k.kind) {
      case 'mapFilter':
        this.map(k.filter, k.project, this.columnsOf(k.input), k.output, where);
        return;
      case 'sort':
        this.keys(k.keys, this.columnsOf(k.input), where);
        this.sameShape([k.input, k.output], where);
        return;
      case 'unique':
      case 'copy':
        this.sameShape([k.input, k.output], where);
        return;
      case 'limit':
        this.keys(k.keys.map((o) => o.column), this.columnsOf(k.input), where);
        this.sameShape([k.input, k.output], where);
        if (!Number.isSafeInteger(k.count) || k.count < 0) this.error(`${where}: limit ${k.count} is not a row count`);
        return;
      case 'mergeJoin': {
        const left = this.columnsOf(k.left);
        const right = this.columnsOf(k.right);
        if (k.leftKeys.length !== k.rightKeys.length) {
          this.error(`${where}: ${k.leftKeys.length} left keys but ${k.rightKeys.length} right keys`);
        } else if (this.keys(k.leftKeys, left, where) && this.keys(k.rightKeys, right, where)) {
          k.leftKeys.forEach((lk, i) => {
            const rk = k.rightKeys[i]!;
            if (left[lk] !== right[rk]) {
              this.error(`${where}: key pair ${i} joins left #${lk} (${left[lk]}) with right #${rk} (${right[rk]})`);
            }
          });
        }
        this.map(k.filter, k.project, [...left, ...right], k.output, where);
        return;
      }
      case 'hashJoin': {
        const build = this.columnsOf(k.build);
        const probe = this.columnsOf(k.probe);
        if (k.buildKeys.length === 0) this.error(`${where}: a hash join needs at least one key`);
        if (k.buildKeys.length !== k.probeKeys.length) {
          this.error(`${where}: ${k.buildKeys.length} build keys but ${k.probeKeys.length} probe keys`);
        } else if (this.keys(k.buildKeys, build, where) && this.keys(k.probeKeys, probe, where)) {
          k.buildKeys.forEach((bk, i) => {
            const pk = k.probeKeys[i]!;
            if (build[bk] !== probe[pk]) this.error(`${where}: key pair ${i} joins build #${bk} (${build[bk]}) with probe #${pk} (${probe[pk]})`);
          });
        }
        const projected = k.project.map((c) => (c.side === 'build' ? build : probe)[c.column]);
        k.project.forEach((c, i) => {
          if (projected[i] === undefined) this.error(`${where}: output column ${i} reads ${c.side} #${c.column}, out of range`);
        });
        if (projected.every((t) => t !== undefined) && !sameColumns(projected, this.columnsOf(k.output))) {
          this.error(`${where}: projects ${showColumns(projected)} into a variable of ${showColumns(this.columnsOf(k.output))}`);
        }
        return;
      }
      case 'pipeline': {
        const input = this.columnsOf(k.input);
        const row = [...input, ...rowProbes(k.probes).flatMap((pr) => this.columnsOf(pr.build))];
        k.probes.forEach((pr, j) => {
          const build = this.columnsOf(pr.build);
          const at = `${where} probe ${j}`;
          // A negated probe may have no key (a negation with anonymous variables only): it drops every row where its
          // build side keeps any.
          if (pr.buildKeys.length === 0 && !pr.negated) this.error(`${at}: a hash probe needs at least one key`);
          if (pr.buildKeys.length !== pr.probeKeys.length) {
            this.error(`${at}: ${pr.buildKeys.length} build keys but ${pr.probeKeys.length} probe keys`);
          } else if (this.keys(pr.buildKeys, build, at)) {
            pr.probeKeys.forEach((e, i) => {
              // Keys are computed from the input row alone, before any lookup.
              this.expr(e, input, at);
              const bk = pr.buildKeys[i]!;
              if (build[bk] !== e.type) this.error(`${at}: key pair ${i} joins build #${bk} (${build[bk]}) with ${e.type}`);
            });
          }
          for (const f of pr.buildFilter ?? []) this.predicate(f, build, at);
        });
        for (const pr of k.filter) this.predicate(pr, input, where);
        if (k.aggregate) {
          for (const pr of k.check) this.predicate(pr, row, where);
          for (const e of k.project) this.expr(e, row, where);
          const projected = k.project.map((e) => e.type);
          this.aggregate(k.aggregate.groupBy, k.aggregate.aggregates, projected, k.output, where);
          for (const a of k.aggregate.aggregates) {
            const arg = a.column === undefined ? undefined : projected[a.column];
            if (!hashableAggregate(a.fn, arg)) this.error(`${where}: ${a.fn} of ${arg} cannot be aggregated in a hash table`);
          }
        } else this.map(k.check, k.project, row, k.output, where);
        // A hashed aggregate stands for one kernel; any other pipeline for a chain.
        if (k.fused.length < (k.aggregate ? 1 : 2)) this.error(`${where}: fuses ${k.fused.length} kernel(s); a pipeline stands for at least two`);
        return;
      }
      case 'difference':
      case 'concat':
        this.sameShape([k.left, k.right, k.output], where);
        return;
      case 'merge':
        this.keys(k.keys, this.columnsOf(k.left), where);
        this.sameShape([k.left, k.right, k.output], where);
        return;
      case 'aggregate':
        this.aggregate(k.groupBy, k.aggregates, this.columnsOf(k.input), k.output, where);
        return;
    }
  }

  aggregate(groupBy: readonly number[], aggregates: readonly Aggregate[], input: readonly ScalarType[], output: VarId, where: string): void {
    if (!this.keys([...groupBy, ...aggregates.flatMap((a) => (a.column === undefined ? [] : [a.column]))], input, where)) return;
    const types = [...groupBy.map((c) => input[c]!), ...aggregates.map((a) => a.type)];
    for (const a of aggregates) {
      const arg = a.column === undefined ? undefined : input[a.column];
      if ((a.fn === 'count') !== (a.column === undefined) || aggregateType(a.fn, arg) !== a.type) {
        this.error(`${where}: ${a.fn} of ${arg ?? 'no column'} does not give ${a.type}`);
      }
    }
    if (!sameColumns(types, this.columnsOf(output))) {
      this.error(`${where}: produces ${showColumns(types)} into a variable of ${showColumns(this.columnsOf(output))}`);
    }
  }

  terminator(t: KirTerminator, where: string, labels: ReadonlySet<string>): void {
    const target = (l: string): void => {
      if (!labels.has(l)) this.error(`${where}: jumps to unknown block '${l}'`);
    };
    switch (t.kind) {
      case 'jump':
        target(t.target);
        return;
      case 'branch':
        for (const v of t.condition.vars) this.hasVar(v, where);
        target(t.ifTrue);
        target(t.ifFalse);
        return;
      case 'halt':
        return;
    }
  }

  relations(): void {
    const p = this.p;
    const decls = new Map(p.relations.map((r) => [r.name, r]));
    p.variables.forEach((v, i) => {
      if (v.id !== i) this.error(`variable ${i} (${v.name}): id is ${v.id}, expected its index ${i}`);
      if (v.relation === undefined) return;
      const decl = decls.get(v.relation);
      if (!decl) this.error(`variable ${i} (${v.name}) holds unknown relation '${v.relation}'`);
      else {
        // A relation keeping fewer device columns than it loads (deviceColumns): its variable holds those.
        const held = (decl.deviceColumns ?? decl.columns.map((_, c) => c)).flatMap((c) => (decl.columns[c] ? [decl.columns[c].type] : []));
        if (!sameColumns(v.columns, held)) this.error(`variable ${i} (${v.name}) has columns ${showColumns(v.columns)}, relation '${decl.name}' has ${showColumns(held)}`);
      }
    });
    const names = new Set<string>();
    for (const v of p.variables) {
      if (names.has(v.name)) this.error(`two variables are named '${v.name}'`);
      names.add(v.name);
    }
    for (const r of p.relations) {
      for (const problem of [prunedProblem(r), keysProblem(r)]) if (problem) this.error(problem);
      const id = p.relationVars[r.name];
      if (id === undefined) this.error(`relation '${r.name}' has no variable`);
      else if (this.hasVar(id, `relation '${r.name}'`) && p.variables[id]!.relation !== r.name) {
        this.error(`relation '${r.name}' maps to variable ${id}, which does not hold it`);
      }
    }
    for (const name of Object.keys(p.relationVars)) {
      if (!decls.has(name)) this.error(`relationVars names unknown relation '${name}'`);
    }
    for (const [name, rows] of Object.entries(p.facts)) {
      const decl = decls.get(name);
      if (!decl) {
        this.error(`facts for unknown relation '${name}'`);
        continue;
      }
      rows.forEach((row, i) => {
        const where = `fact ${i} of '${name}'`;
        if (row.length !== decl.columns.length) {
          this.error(`${where}: ${row.length} values, relation has ${decl.columns.length} columns`);
          return;
        }
        row.forEach((v, j) => {
          const t = decl.columns[j]!.type;
          if (!valueHasType(v, t)) this.error(`${where}: value ${String(v)} in column ${j} is not a valid ${t}`);
        });
      });
    }
  }

  program(): void {
    const p = this.p;
    this.relations();
    p.kernels.forEach((k, i) => this.kernel(k, i));
    const labels = new Set<string>();
    for (const b of p.blocks) {
      if (labels.has(b.label)) this.error(`two blocks are labelled '${b.label}'`);
      labels.add(b.label);
    }
    if (!labels.has(p.entry)) this.error(`entry block '${p.entry}' does not exist`);
    for (const b of p.blocks) {
      const where = `block '${b.label}'`;
      b.commands.forEach((c, i) => {
        const at = `${where}, command ${i}`;
        switch (c.kind) {
          case 'launch':
            if (!Number.isInteger(c.kernel) || c.kernel < 0 || c.kernel >= p.kernels.length) {
              this.error(`${at}: launches kernel ${c.kernel}, which does not exist`);
            }
            return;
          case 'free':
            for (const v of c.vars) this.hasVar(v, at);
            return;
          case 'clear':
            this.hasVar(c.var, at);
            return;
        }
      });
      this.terminator(b.terminator, `${where} terminator`, labels);
    }
  }
}

export function validateKir(p: KirProgram): Diagnostic[] {
  const v = new Validator(p);
  v.program();
  return v.diagnostics;
}
