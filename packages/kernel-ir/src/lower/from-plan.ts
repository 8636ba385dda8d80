/**
 * Lowers a query plan to kernel IR (Red Fox §3.4): each QP relation becomes a managed variable and each
 * relational command becomes a short sequence of kernels over temporaries. Every QP relation variable is
 * kept canonical (sorted by all columns, duplicate-free), which lets lowering skip sorts whose order
 * already holds.
 */
import {
  successors,
  VixenError,
  type BasicBlock,
  type Expr,
  type QpCommand,
  type QpProgram,
  type ScalarType,
  type RuleOrigin,
  type Terminator,
  unionOrigins,
} from '@vixen/queryplan';
import type { KirBlock, KirCommand, KirKernel, KirKernelBody, KirProgram, KirTerminator, KirVariable, VarId } from '../ir.js';
import { chooseJoin, isPrefixIndices, loopBlocks, lowerHashJoin, type JoinStrategy } from './join-strategy.js';

export interface LowerOptions {
  /** How equi-joins run (see join-strategy.ts); default 'auto'. */
  joinStrategy?: JoinStrategy;
}

/** [0, 1, ..., n-1] */
export function iota(n: number): number[] {
  return Array.from({ length: n }, (_, i) => i);
}

/**
 * Temp relations certainly empty when each block starts (must-analysis to the greatest fixpoint): empty at program
 * start, and on every edge into a block either cleared last or not written. Semi-naive loops clear `$new` at the
 * end of each iteration, so the first union into it in the next one is a copy.
 */
function emptyAtEntry(plan: QpProgram): Map<string, Set<string>> {
  const temps = plan.relations.filter((r) => r.kind === 'temp' && (plan.facts[r.name]?.length ?? 0) === 0).map((r) => r.name);
  const preds = new Map<string, string[]>(plan.blocks.map((b) => [b.label, []]));
  for (const b of plan.blocks) for (const t of successors(b.terminator)) preds.get(t)?.push(b.label);
  /** Per block: temps whose last write is a clear, and those whose last write is anything else. */
  const lastWrites = new Map(
    plan.blocks.map((b) => {
      const last = new Map<string, boolean>();
      for (const c of b.commands) last.set(c.target, c.kind === 'clear');
      return [b.label, last] as const;
    }),
  );
  const entry = new Map(plan.blocks.map((b) => [b.label, new Set(temps)]));
  const exit = (label: string): Set<string> => {
    const out = new Set(entry.get(label));
    for (const [name, cleared] of lastWrites.get(label)!) {
      if (cleared) out.add(name);
      else out.delete(name);
    }
    return out;
  };
  for (let changed = true; changed; ) {
    changed = false;
    for (const b of plan.blocks) {
      const ins = preds.get(b.label)!.map(exit);
      const next = new Set(temps.filter((t) => ins.every((s) => s.has(t))));
      if (next.size !== entry.get(b.label)!.size) {
        entry.set(b.label, next);
        changed = true;
      }
    }
  }
  return entry;
}

/**
 * A relation kept sorted by a join key other than a prefix of its columns, across writes: rows ordered by
 * `keys` then by all columns (what a stable sort of the canonical relation by `keys` gives), so a union into the
 * relation merges the sorted new rows into the index instead of re-sorting the whole relation for the join.
 */
interface JoinIndex {
  relation: VarId;
  keys: number[];
  /** keys, then the remaining columns in order: the total order the index is sorted by. */
  order: number[];
  variable: VarId;
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
  /** The rules of that command, copied onto its kernels for the debugging views. */
  private rules: RuleOrigin[] | undefined;
  /**
   * Pairs `a|b` of relation variables known to hold disjoint sets: set by `a := a' − b`, dropped when either is
   * written again. The union of the semi-naive loop (`full := full ∪ (new − full)`) then needs no unique pass.
   */
  private disjoint = new Set<string>();
  /** Join indexes by `relation variable|keys`. */
  private readonly indexes = new Map<string, JoinIndex>();
  private readonly emptyAtEntry: Map<string, Set<string>>;
  /** Relations certainly empty at the command being lowered. */
  private empty = new Set<string>();

  /** Blocks inside fixpoint loops (join strategy input). */
  private readonly loops: Set<string>;

  constructor(
    private readonly plan: QpProgram,
    private readonly joinStrategy: JoinStrategy,
  ) {
    this.loops = loopBlocks(plan.blocks);
    for (const r of plan.relations) {
      const id = this.variables.length;
      this.variables.push({ id, name: r.name, columns: r.columns.map((c) => c.type), relation: r.name });
      this.relationVars[r.name] = id;
    }
    // Joins inside fixpoint loops that read an edb/idb relation by a non-prefix key get an index kept across
    // iterations (temporaries such as deltas change wholesale every iteration and are sorted where used).
    this.emptyAtEntry = emptyAtEntry(plan);
    const loops = this.loops;
    const kinds = new Map(plan.relations.map((r) => [r.name, r.kind]));
    for (const b of plan.blocks) {
      if (!loops.has(b.label)) continue;
      for (const c of b.commands) {
        if (c.kind !== 'mapJoin') continue;
        for (const [name, keys] of [[c.left, c.leftKeys], [c.right, c.rightKeys]] as const) {
          if (kinds.get(name) === 'temp' || isPrefixIndices(keys)) continue;
          const relation = this.rel(name);
          const key = `${relation}|${keys.join()}`;
          if (this.indexes.has(key)) continue;
          const columns = this.variables[relation]!.columns;
          const variable = this.variables.length;
          this.variables.push({ id: variable, name: `${name}@(${keys.map((k) => `#${k}`).join(', ')})`, columns });
          const order = [...keys, ...iota(columns.length).filter((k) => !keys.includes(k))];
          this.indexes.set(key, { relation, keys: [...keys], order, variable });
        }
      }
    }
  }

  /** Builds every index from its relation (facts included) before the first block runs. */
  buildIndexes(): KirCommand[] {
    this.block = this.plan.entry;
    this.commands = [];
    for (const ix of this.indexes.values()) this.launch({ kind: 'sort', input: ix.relation, output: ix.variable, keys: ix.keys });
    return this.commands;
  }

  private indexFor(relation: VarId, keys: readonly number[]): JoinIndex | undefined {
    return this.indexes.get(`${relation}|${keys.join()}`);
  }

  /**
   * Brings the indexes of `target` up to date after a command wrote it. `added`: the command was
   * target := target ∪ added (both canonical), `disjoint` when they were known disjoint.
   */
  private updateIndexes(target: VarId, added?: { rows: VarId; disjoint: boolean }): void {
    for (const ix of this.indexes.values()) {
      if (ix.relation !== target) continue;
      if (!added) {
        this.launch({ kind: 'sort', input: target, output: ix.variable, keys: ix.keys });
        continue;
      }
      const rows = this.sorted(added.rows, ix.keys);
      if (added.disjoint) {
        this.launch({ kind: 'merge', left: ix.variable, right: rows, output: ix.variable, keys: ix.order });
        continue;
      }
      const both = this.temp(this.variables[target]!.columns);
      this.launch({ kind: 'merge', left: ix.variable, right: rows, output: both, keys: ix.order });
      this.launch({ kind: 'unique', input: both, output: ix.variable });
    }
  }

  lowerBlock(b: BasicBlock): KirBlock {
    this.block = b.label;
    this.commands = [];
    this.disjoint.clear();
    this.empty = new Set(this.emptyAtEntry.get(b.label));
    b.commands.forEach((c, i) => {
      this.command = i;
      this.rules = c.rules;
      this.lowerCommand(c);
      // A union updates its target's indexes itself; any other write rebuilds them (clear empties them).
      if (c.kind === 'clear') this.clearIndexes(this.rel(c.target));
      else if (c.kind !== 'union') this.updateIndexes(this.rel(c.target));
      this.forgetDisjoint(this.rel(c.target));
      if (c.kind === 'clear') this.empty.add(c.target);
      else this.empty.delete(c.target);
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

  private launch(body: KirKernelBody): void {
    const id = this.kernels.length;
    this.kernels.push({ ...body, id, origin: { block: this.block, command: this.command }, ...unionOrigins(this.rules) } as KirKernel);
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

  private clearIndexes(target: VarId): void {
    for (const ix of this.indexes.values()) if (ix.relation === target) this.commands.push({ kind: 'clear', var: ix.variable });
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
        const choice = chooseJoin(this.joinStrategy, c, this.loops.has(this.block), this.arity(left), this.arity(right));
        if (choice.kind === 'hash') {
          const lw = { columns: (v: VarId) => this.variables[v]!.columns, temp: (t: ScalarType[]) => this.temp(t), launch: (b: KirKernelBody) => this.launch(b) };
          this.canonicalize(lowerHashJoin(lw, c, left, right, choice.build), target, false);
          return;
        }
        // Canonical order already sorts by any leading prefix of the columns; a join index by any other key.
        const sortedBy = (v: VarId, keys: number[]): VarId =>
          isPrefixIndices(keys) ? v : (this.indexFor(v, keys)?.variable ?? this.sorted(v, keys));
        const sortedLeft = sortedBy(left, c.leftKeys);
        const sameSort = left === right && c.leftKeys.join() === c.rightKeys.join();
        const sortedRight = sameSort ? sortedLeft : sortedBy(right, c.rightKeys);
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
        if (this.empty.has(c.left) || this.empty.has(c.right)) {
          this.launch({ kind: 'copy', input: this.empty.has(c.left) ? right : left, output: target });
          this.updateIndexes(target);
          return;
        }
        // Both sides are canonical: a linear merge keeps the order (no re-sort of the accumulated relation),
        // and only sets that may overlap need their adjacent duplicates dropped.
        const keys = iota(this.arity(left));
        const disjoint = this.areDisjoint(left, right);
        if (disjoint) {
          this.launch({ kind: 'merge', left, right, output: target, keys });
        } else {
          const both = this.temp(this.variables[left]!.columns);
          this.launch({ kind: 'merge', left, right, output: both, keys });
          this.canonicalize(both, target, true);
        }
        const added = target === left ? right : target === right ? left : undefined;
        this.updateIndexes(target, added === undefined ? undefined : { rows: added, disjoint });
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
  const init = lowering.buildIndexes();
  const blocks = plan.blocks.map((b) => lowering.lowerBlock(b));
  const entry = blocks.find((b) => b.label === plan.entry);
  entry?.commands.unshift(...init);
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
