/**
 * Readers of the values a block writes, for the passes that rewrite a value's producer or readers within a block
 * (skip-unneeded-order, hash-unique, hash-aggregates, hash-joins, narrow-columns, unordered-selects): which
 * commands read a value, whether something writes it in between, and whether results depend on its rows' order
 * ('order') or multiplicity ('set').
 */
import type { KirBlock, KirKernel, KirProgram, VarId } from '../ir.js';
import { commandUseDef, freeableVariable, terminatorUses, type UseDef } from './liveness.js';

export type Need = 'order' | 'set';

/** Whether an aggregate without group-by gives the same result whatever the order (and, for 'set', multiplicity) of its rows. */
export function aggregateIgnores(p: KirProgram, k: Extract<KirKernel, { kind: 'aggregate' }>, need: Need): boolean {
  if (k.groupBy.length > 0) return false;
  return k.aggregates.every((a) =>
    need === 'set'
      ? a.fn === 'min' || a.fn === 'max'
      : (a.fn !== 'sum' && a.fn !== 'avg') || a.column === undefined || p.variables[k.input]!.columns[a.column] !== 'float32',
  );
}

/** Whether sort `k` orders by all its input's columns, first to last (its ties are then equal rows). */
export const allColumns = (p: KirProgram, k: Extract<KirKernel, { kind: 'sort' }>): boolean =>
  k.keys.length === p.variables[k.input]!.columns.length && k.keys.every((c, i) => c === i);

/** Who reads the values a block's commands write, and whether results depend on their order or multiplicity. */
export class BlockReaders {
  private readonly useDef: UseDef[];
  private readonly liveAtEnd: ReadonlySet<VarId>;
  private readonly freeable: (v: VarId) => boolean;

  constructor(
    private readonly p: KirProgram,
    private readonly b: KirBlock,
    liveOut: ReadonlySet<VarId>,
  ) {
    this.useDef = b.commands.map((c) => commandUseDef(p, c));
    this.liveAtEnd = new Set([...liveOut, ...terminatorUses(b.terminator)]);
    this.freeable = freeableVariable(p);
  }

  /** Indices of the commands reading the value command `i` writes, or undefined when it may be read after the block. */
  readers(i: number): number[] | undefined {
    const c = this.b.commands[i]!;
    if (c.kind !== 'launch') return undefined;
    const v = this.p.kernels[c.kernel]!.output;
    if (!this.freeable(v)) return undefined;
    const out: number[] = [];
    for (let n = i + 1; n < this.b.commands.length; n++) {
      const cn = this.b.commands[n]!;
      if (this.useDef[n]!.uses.includes(v)) out.push(n);
      if (this.useDef[n]!.defs.includes(v) || (cn.kind === 'free' && cn.vars.includes(v))) return out;
    }
    return this.liveAtEnd.has(v) ? undefined : out;
  }

  kernelAt(n: number): KirKernel | undefined {
    const c = this.b.commands[n]!;
    return c.kind === 'launch' ? this.p.kernels[c.kernel] : undefined;
  }

  /** Whether the value command `i` writes has readers and each is a kernel `test` accepts. */
  readOnlyBy(i: number, test: (k: KirKernel | undefined) => boolean): boolean {
    const readers = this.readers(i);
    return readers !== undefined && readers.length > 0 && readers.every((n) => test(this.kernelAt(n)));
  }

  /** Whether a command strictly between `from` and `to` writes or frees `v`. */
  clobbers(from: number, to: number, v: VarId): boolean {
    for (let n = from + 1; n < to; n++) {
      const c = this.b.commands[n]!;
      if (this.useDef[n]!.defs.includes(v) || (c.kind === 'free' && c.vars.includes(v))) return true;
    }
    return false;
  }

  /**
   * The sort that command `i` alone reads `v` from (its command index and kernel): the last write of `v` before
   * `i`, when it is a sort and `i` its only reader. A pass reading the sort's input in its place must also find
   * that nothing clobbers the input in between.
   */
  soleSort(i: number, v: VarId): { at: number; sort: Extract<KirKernel, { kind: 'sort' }> } | undefined {
    const at = this.b.commands.findLastIndex((_, n) => n < i && this.useDef[n]!.defs.includes(v));
    const sort = at >= 0 ? this.kernelAt(at) : undefined;
    return sort?.kind === 'sort' && this.readers(at)?.join() === String(i) ? { at, sort } : undefined;
  }

  /** Whether results depend on the value command `i` writes only up to `need`. */
  free(i: number, need: Need): boolean {
    const readers = this.readers(i);
    return readers !== undefined && readers.every((n) => this.readerIgnores(n, need));
  }

  /** Whether only aggregates by `keys` (in any order of rows within a group) read the value command `n` writes. */
  private onlyGroupedBy(n: number, keys: readonly number[]): boolean {
    return this.readOnlyBy(
      n,
      (a) => a?.kind === 'aggregate' && [...a.groupBy].sort((x, y) => x - y).join() === [...keys].sort((x, y) => x - y).join() && aggregateIgnores(this.p, { ...a, groupBy: [] }, 'order'),
    );
  }

  private readerIgnores(n: number, need: Need): boolean {
    const k = this.kernelAt(n);
    if (!k) return false;
    const temporary = this.p.variables[k.output]!.relation === undefined;
    switch (k.kind) {
      case 'pipeline':
        // A hashed aggregate takes its rows in any order (hash-aggregates.ts admits no order-dependent aggregate).
        if (k.aggregate) return need === 'order' || k.aggregate.aggregates.every((a) => a.fn === 'min' || a.fn === 'max');
        return temporary && this.free(n, need);
      case 'mapFilter':
      case 'hashJoin':
      case 'copy':
        return temporary && this.free(n, need);
      case 'sort':
        // A sort by fewer columns keeps the order of ties: that matters unless only aggregates by its keys, which
        // ignore the order within a group, read it.
        if (!allColumns(this.p, k)) return need === 'order' && temporary && this.onlyGroupedBy(n, k.keys);
        if (need === 'order') return true;
        return temporary && (this.readers(n)?.every((r) => this.kernelAt(r)?.kind === 'unique') ?? false);
      case 'aggregate':
        return aggregateIgnores(this.p, k, need);
      case 'unique':
        // A hashed unique takes its input in any order, and any multiplicity: its rows are the input's set.
        if (k.hashed) return need === 'set' || this.free(n, need);
        return false;
      case 'mergeJoin':
      case 'difference':
      case 'concat':
      case 'merge':
      case 'limit':
        return false;
    }
  }
}
