/**
 * Lowers a query plan to kernel IR (Red Fox §3.4): each QP relation becomes a managed variable and each
 * relational command becomes a short sequence of kernels over temporaries. Every QP relation variable is
 * kept canonical (sorted by all columns, duplicate-free), which lets lowering skip sorts whose order
 * already holds.
 */
import {
  VixenError,
  type BasicBlock,
  type Expr,
  type QpCommand,
  type QpProgram,
  type ScalarType,
  type Terminator,
} from '@vixen/queryplan';
import type { KirBlock, KirCommand, KirKernel, KirProgram, KirTerminator, KirVariable, VarId } from '../ir.js';

/** Distributes `Omit` over the kernel union, so each variant keeps its own fields. */
type KernelBody = KirKernel extends infer K ? (K extends KirKernel ? Omit<K, 'id'> : never) : never;

/** [0, 1, ..., n-1] */
function iota(n: number): number[] {
  return Array.from({ length: n }, (_, i) => i);
}

/** True when `indices` is exactly [0, 1, ..., indices.length-1]. */
function isPrefixIndices(indices: readonly number[]): boolean {
  return indices.every((c, i) => c === i);
}

/** True when `project` is [#0, #1, ..., #k-1]: a column prefix of its input, in order. */
function prefixProjection(project: readonly Expr[]): boolean {
  return project.every((e, i) => e.kind === 'col' && e.index === i);
}

class Lowering {
  readonly variables: KirVariable[] = [];
  readonly kernels: KirKernel[] = [];
  readonly relationVars: Record<string, VarId> = {};
  private commands: KirCommand[] = [];
  private block = '';
  /** Index of the QP command being lowered, recorded on its kernels so profiles can name the operator. */
  private command = 0;
  /**
   * Pairs `a|b` of relation variables known to hold disjoint sets: set by `a := a' − b`, dropped when either is
   * written again. The union of the semi-naive loop (`full := full ∪ (new − full)`) then needs no unique pass.
   */
  private disjoint = new Set<string>();

  constructor(private readonly plan: QpProgram) {
    for (const r of plan.relations) {
      const id = this.variables.length;
      this.variables.push({ id, name: r.name, columns: r.columns.map((c) => c.type), relation: r.name });
      this.relationVars[r.name] = id;
    }
  }

  lowerBlock(b: BasicBlock): KirBlock {
    this.block = b.label;
    this.commands = [];
    this.disjoint.clear();
    b.commands.forEach((c, i) => {
      this.command = i;
      this.lowerCommand(c);
      this.forgetDisjoint(this.rel(c.target));
      if (c.kind === 'difference') this.disjoint.add(`${this.rel(c.target)}|${this.rel(c.right)}`);
    });
    return { label: b.label, commands: this.commands, terminator: this.lowerTerminator(b.terminator) };
  }

  private rel(name: string): VarId {
    const id = this.relationVars[name];
    if (id === undefined) {
      throw new VixenError({ severity: 'error', message: `internal: block '${this.block}' names unknown relation '${name}'` });
    }
    return id;
  }

  private arity(v: VarId): number {
    return this.variables[v]!.columns.length;
  }

  private temp(columns: ScalarType[]): VarId {
    const id = this.variables.length;
    this.variables.push({ id, name: `%k${id}`, columns });
    return id;
  }

  private launch(body: KernelBody): void {
    const id = this.kernels.length;
    this.kernels.push({ ...body, id, origin: { block: this.block, command: this.command } } as KirKernel);
    this.commands.push({ kind: 'launch', kernel: id });
  }

  /** Writes `input` sorted by `keys` into a new temporary, or returns `input` when no sort is needed. */
  private sorted(input: VarId, keys: number[]): VarId {
    if (keys.length === 0) return input;
    const output = this.temp(this.variables[input]!.columns);
    this.launch({ kind: 'sort', input, output, keys });
    return output;
  }

  /** target := canonical form of `input` (sort by all columns, then drop duplicates). */
  private canonicalize(input: VarId, target: VarId, alreadySorted: boolean): void {
    const sorted = alreadySorted ? input : this.sorted(input, iota(this.arity(input)));
    this.launch({ kind: 'unique', input: sorted, output: target });
  }

  private forgetDisjoint(v: VarId): void {
    for (const pair of [...this.disjoint]) if (pair.split('|').includes(String(v))) this.disjoint.delete(pair);
  }

  private areDisjoint(a: VarId, b: VarId): boolean {
    return this.disjoint.has(`${a}|${b}`) || this.disjoint.has(`${b}|${a}`);
  }

  private lowerCommand(c: QpCommand): void {
    switch (c.kind) {
      case 'mapFilter': {
        const source = this.rel(c.source);
        const target = this.rel(c.target);
        const prefix = prefixProjection(c.project);
        // A filtered canonical relation stays canonical; a projection onto a column prefix stays sorted.
        if (prefix && c.project.length === this.arity(source)) {
          this.launch({ kind: 'mapFilter', input: source, output: target, filter: c.filter, project: c.project });
          return;
        }
        const mapped = this.temp(c.project.map((e) => e.type));
        this.launch({ kind: 'mapFilter', input: source, output: mapped, filter: c.filter, project: c.project });
        this.canonicalize(mapped, target, prefix);
        return;
      }
      case 'mapJoin': {
        const left = this.rel(c.left);
        const right = this.rel(c.right);
        const target = this.rel(c.target);
        // Canonical order already sorts by any leading prefix of the columns.
        const sortedLeft = isPrefixIndices(c.leftKeys) ? left : this.sorted(left, c.leftKeys);
        const sameSort = left === right && c.leftKeys.join() === c.rightKeys.join();
        const sortedRight = sameSort ? sortedLeft : isPrefixIndices(c.rightKeys) ? right : this.sorted(right, c.rightKeys);
        const joined = this.temp(c.project.map((e) => e.type));
        this.launch({
          kind: 'mergeJoin',
          left: sortedLeft,
          right: sortedRight,
          output: joined,
          leftKeys: c.leftKeys,
          rightKeys: c.rightKeys,
          filter: c.filter,
          project: c.project,
        });
        this.canonicalize(joined, target, false);
        return;
      }
      case 'union': {
        const left = this.rel(c.left);
        const right = this.rel(c.right);
        const target = this.rel(c.target);
        // Both sides are canonical: a linear merge keeps the order (no re-sort of the accumulated relation),
        // and only sets that may overlap need their adjacent duplicates dropped.
        const keys = iota(this.arity(left));
        if (this.areDisjoint(left, right)) {
          this.launch({ kind: 'merge', left, right, output: target, keys });
          return;
        }
        const both = this.temp(this.variables[left]!.columns);
        this.launch({ kind: 'merge', left, right, output: both, keys });
        this.canonicalize(both, target, true);
        return;
      }
      case 'difference':
        this.launch({ kind: 'difference', left: this.rel(c.left), right: this.rel(c.right), output: this.rel(c.target) });
        return;
      case 'copy':
        this.launch({ kind: 'copy', input: this.rel(c.source), output: this.rel(c.target) });
        return;
      case 'clear':
        this.commands.push({ kind: 'clear', var: this.rel(c.target) });
        return;
      case 'aggregate': {
        // Groups must be adjacent: a canonical relation already has them so when they lead its columns.
        const source = this.rel(c.source);
        const input = isPrefixIndices(c.groupBy) ? source : this.sorted(source, c.groupBy);
        this.launch({ kind: 'aggregate', input, output: this.rel(c.target), groupBy: c.groupBy, aggregates: c.aggregates });
        return;
      }
    }
  }

  private lowerTerminator(t: Terminator): KirTerminator {
    switch (t.kind) {
      case 'jump':
        return { kind: 'jump', target: t.target };
      case 'branch':
        return {
          kind: 'branch',
          condition: { kind: 'empty', vars: t.condition.relations.map((r) => this.rel(r)) },
          ifTrue: t.ifTrue,
          ifFalse: t.ifFalse,
        };
      case 'halt':
        return { kind: 'halt' };
    }
  }
}

export function lowerPlan(plan: QpProgram): KirProgram {
  const lowering = new Lowering(plan);
  const blocks = plan.blocks.map((b) => lowering.lowerBlock(b));
  return {
    relations: plan.relations,
    relationVars: lowering.relationVars,
    facts: plan.facts,
    variables: lowering.variables,
    kernels: lowering.kernels,
    blocks,
    entry: plan.entry,
    ...(plan.orders ? { orders: plan.orders } : {}),
    ...(plan.constraints ? { constraints: plan.constraints } : {}),
  };
}
