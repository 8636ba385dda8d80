/**
 * Drops sorts and uniques whose work nothing downstream needs. A value is
 * - order-free when the program's results depend only on the multiset of its rows: every reader is a mapFilter,
 *   hash join or copy whose (temporary) result is order-free, a sort by all columns (ties are equal rows), a hashed
 *   unique whose result is order-free, or an aggregate without group-by (one group: any order; not float32 sums,
 *   whose rounding depends on it);
 * - set-free when they depend only on its set of rows: every reader is a mapFilter, hash join or copy whose
 *   (temporary) result is set-free, a sort by all columns whose rows only uniques read, a hashed unique, or an
 *   aggregate without group-by of min/max only.
 * Only values read within their block (not live after it) qualify. Then the readers of `s := sort x` read x when s
 * is order-free, and the readers of `t := unique s` read s when t is set-free; remove-dead-kernels drops the sort or
 * unique. A sort only aggregates by a prefix G of its keys read sorts by G alone. Intermediate results must be temporaries: QP relation variables stay canonical (ir.ts), which the property
 * analysis relies on.
 */
import type { KirBlock, KirKernel, KirProgram, VarId } from '../ir.js';
import { kernelInputs, withInputs } from '../ir.js';
import { commandUseDef, freeableVariable, liveOutSets, terminatorUses, type UseDef } from './liveness.js';

type Need = 'order' | 'set';

/** Whether an aggregate without group-by gives the same result whatever the order (and, for 'set', multiplicity) of its rows. */
export function aggregateIgnores(p: KirProgram, k: Extract<KirKernel, { kind: 'aggregate' }>, need: Need): boolean {
  if (k.groupBy.length > 0) return false;
  return k.aggregates.every((a) =>
    need === 'set'
      ? a.fn === 'min' || a.fn === 'max'
      : (a.fn !== 'sum' && a.fn !== 'avg') || a.column === undefined || p.variables[k.input]!.columns[a.column] !== 'float32',
  );
}

export const allColumns = (p: KirProgram, k: Extract<KirKernel, { kind: 'sort' }>): boolean =>
  k.keys.length === p.variables[k.input]!.columns.length && k.keys.every((c, i) => c === i);

/** Who reads the values a block's commands write, and whether results depend on their order or multiplicity (shared with hash-unique and narrow-columns). */
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
    const readers = this.readers(n);
    return (
      readers !== undefined &&
      readers.length > 0 &&
      readers.every((r) => {
        const a = this.kernelAt(r);
        return a?.kind === 'aggregate' && [...a.groupBy].sort((x, y) => x - y).join() === [...keys].sort((x, y) => x - y).join() && aggregateIgnores(this.p, { ...a, groupBy: [] }, 'order');
      })
    );
  }

  private readerIgnores(n: number, need: Need): boolean {
    const k = this.kernelAt(n);
    if (!k) return false;
    const temporary = this.p.variables[k.output]!.relation === undefined;
    switch (k.kind) {
      case 'pipeline':
        // A hashed aggregate takes its rows in any order (hash-aggregate.ts admits no order-dependent aggregate).
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

/**
 * Keys a sort can be cut down to: an aggregate by G only needs each group's rows adjacent, so a sort whose rows
 * only such aggregates read (all by G, G a proper prefix of its keys) can sort by G alone (fewer words to sort).
 * Not for float32 sums and averages, whose rounding depends on the order within a group.
 */
function groupKeys(p: KirProgram, rd: BlockReaders, i: number, k: Extract<KirKernel, { kind: 'sort' }>): number[] | undefined {
  const readers = rd.readers(i);
  if (!readers || readers.length === 0 || p.variables[k.output]!.relation !== undefined) return undefined;
  const aggs = readers.map((n) => rd.kernelAt(n));
  const first = aggs[0];
  if (first?.kind !== 'aggregate') return undefined;
  const g = first.groupBy;
  const fits = aggs.every((a) => a?.kind === 'aggregate' && a.groupBy.join() === g.join() && aggregateIgnores(p, { ...a, groupBy: [] }, 'order'));
  const prefix = g.length > 0 && g.length < k.keys.length && g.every((c, n) => k.keys[n] === c);
  return fits && prefix ? [...g] : undefined;
}

export function skipUnneededOrder(p: KirProgram): KirProgram {
  const liveOut = liveOutSets(p);
  const kernels = [...p.kernels];
  let changed = false;
  for (const b of p.blocks) {
    const rd = new BlockReaders(p, b, liveOut.get(b.label)!);
    // One rewrite per block and round (fixpoint repeats the pass): each changes what the block's readers see.
    for (let i = 0; i < b.commands.length; i++) {
      const k = rd.kernelAt(i);
      if (!k || (k.kind !== 'sort' && k.kind !== 'unique')) continue;
      const narrower = k.kind === 'sort' ? groupKeys(p, rd, i, k) : undefined;
      if (k.kind === 'sort' && narrower) {
        kernels[k.id] = { ...k, keys: narrower };
        changed = true;
        break;
      }
      const source = kernelInputs(k)[0]!;
      if (source === k.output || !rd.free(i, k.kind === 'sort' ? 'order' : 'set')) continue;
      const readers = rd.readers(i)!;
      // The readers must still find the source's value: nothing may write it before the last of them.
      const last = Math.max(i, ...readers);
      if (rd.clobbers(i, last, source) || readers.length === 0) continue;
      for (const n of readers) {
        const c = b.commands[n]!;
        if (c.kind === 'launch') kernels[c.kernel] = withInputs(kernels[c.kernel]!, (v) => (v === k.output ? source : v));
      }
      changed = true;
      break;
    }
  }
  return changed ? { ...p, kernels } : p;
}
