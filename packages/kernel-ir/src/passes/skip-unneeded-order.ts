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
import type { KirKernel, KirProgram } from '../ir.js';
import { kernelInputs, withInputs } from '../ir.js';
import { BlockReaders, aggregateIgnores } from '../analysis/block-readers.js';
import { liveOutSets } from '../analysis/liveness.js';
import type { KirPass } from '../compile.js';

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

export const skipUnneededOrder = { name: 'skip-unneeded-order', required: false, run } satisfies KirPass;

function run(p: KirProgram): KirProgram {
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
