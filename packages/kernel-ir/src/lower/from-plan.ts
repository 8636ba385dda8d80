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
import type { KirBlock, KirCommand, KirKernel, KirKernelBody, KirProgram, KirTerminator, KirVariable, VarId } from '../ir.js';
import { chooseJoin, isPrefixIndices, loopBlocks, lowerHashJoin, type JoinStrategy } from './join-strategy.js';

export interface LowerOptions {
  /** How equi-joins run (see join-strategy.ts); default 'auto'. */
  joinStrategy?: JoinStrategy;
}

/** [0, 1, ..., n-1] */
function iota(n: number): number[] {
  return Array.from({ length: n }, (_, i) => i);
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

  /** Blocks inside fixpoint loops (join strategy input). */
  private readonly loops: Set<string>;

  constructor(
    plan: QpProgram,
    private readonly joinStrategy: JoinStrategy,
  ) {
    this.loops = loopBlocks(plan.blocks);
    for (const r of plan.relations) {
      const id = this.variables.length;
      this.variables.push({ id, name: r.name, columns: r.columns.map((c) => c.type), relation: r.name });
      this.relationVars[r.name] = id;
    }
  }

  lowerBlock(b: BasicBlock): KirBlock {
    this.block = b.label;
    this.commands = [];
    b.commands.forEach((c, i) => {
      this.command = i;
      this.lowerCommand(c);
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

  private launch(body: KirKernelBody): void {
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
        const choice = chooseJoin(this.joinStrategy, c, this.loops.has(this.block), this.arity(left), this.arity(right));
        if (choice.kind === 'hash') {
          const lw = { columns: (v: VarId) => this.variables[v]!.columns, temp: (t: ScalarType[]) => this.temp(t), launch: (b: KirKernelBody) => this.launch(b) };
          this.canonicalize(lowerHashJoin(lw, c, left, right, choice.build), target, false);
          return;
        }
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
        const both = this.temp(this.variables[left]!.columns);
        this.launch({ kind: 'concat', left, right, output: both });
        this.canonicalize(both, target, false);
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
      case 'limit':
        this.launch({ kind: 'limit', input: this.rel(c.source), output: this.rel(c.target), keys: c.keys, count: c.count });
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

export function lowerPlan(plan: QpProgram, options: LowerOptions = {}): KirProgram {
  const lowering = new Lowering(plan, options.joinStrategy ?? 'auto');
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
