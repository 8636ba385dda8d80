/**
 * Replaces kernels whose work the property analysis (properties.ts) shows redundant by cheaper equivalents that
 * give the same value: a kernel with a known-empty result by `clear`; a merge, concat or difference with a
 * known-empty side by a copy; unique of a duplicate-free input, sort of an input already sorted by its keys and
 * an identity mapFilter by a copy; a join of a value with itself on a key by a mapFilter; a merge join's right
 * side sorted by more than its keys by the value sorted by them already; and drops `x := copy x` and clears of
 * values known empty.
 * Copies then vanish in propagate-copies.
 */
import { unionOrigins, type Expr } from '@vixen/queryplan';
import type { KirCommand, KirKernel, KirProgram } from '../ir.js';
import { substitute, substitutePredicate } from '../analysis/exprs.js';
import { blockEntryStates, distinct, kernelProps, propsOf, sortedBy, transfer, type PropState } from '../analysis/properties.js';
import type { KirPass } from '../compile.js';

type Copy = Extract<KirKernel, { kind: 'copy' }>;
type MapFilter = Extract<KirKernel, { kind: 'mapFilter' }>;

/**
 * A join of a value with itself on the same columns, when those cover a key of it, pairs each row with itself
 * alone: a mapFilter over the value, the right side's columns read from the same row.
 */
function selfJoinAsMap(p: KirProgram, s: PropState, k: KirKernel): MapFilter | undefined {
  const coversKey = (v: number, keys: readonly number[]): boolean => {
    const key = propsOf(s, v).key;
    return key !== undefined && key.every((c) => keys.includes(c));
  };
  const base = { kind: 'mapFilter' as const, id: k.id, ...(k.origin ? { origin: k.origin } : {}), ...unionOrigins(k.rules), output: k.output };
  switch (k.kind) {
    case 'mergeJoin': {
      if (k.left !== k.right || k.leftKeys.join() !== k.rightKeys.join() || !coversKey(k.left, k.leftKeys)) return undefined;
      const columns = p.variables[k.left]!.columns;
      // Column j of l ++ r is column j mod arity of the one row.
      const row: Expr[] = [...columns, ...columns].map((type, j) => ({ kind: 'col', index: j % columns.length, type }));
      return { ...base, input: k.left, filter: k.filter.map((f) => substitutePredicate(f, row)), project: k.project.map((e) => substitute(e, row)) };
    }
    case 'hashJoin': {
      if (k.build !== k.probe || k.buildKeys.join() !== k.probeKeys.join() || !coversKey(k.build, k.buildKeys)) return undefined;
      const columns = p.variables[k.build]!.columns;
      return { ...base, input: k.build, filter: [], project: k.project.map((c): Expr => ({ kind: 'col', index: c.column, type: columns[c.column]! })) };
    }
    default:
      return undefined;
  }
}

/** The copy equivalent to `k` in state `s`, if any. */
function asCopy(p: KirProgram, s: PropState, k: KirKernel): Copy | undefined {
  const copy = (input: number): Copy => ({ kind: 'copy', id: k.id, ...(k.origin ? { origin: k.origin } : {}), ...unionOrigins(k.rules), input, output: k.output });
  const empty = (v: number): boolean => propsOf(s, v).empty;
  switch (k.kind) {
    case 'merge':
    case 'concat':
      if (empty(k.left)) return copy(k.right);
      if (empty(k.right)) return copy(k.left);
      return undefined;
    case 'difference':
      return empty(k.right) ? copy(k.left) : undefined;
    case 'unique':
      return distinct(propsOf(s, k.input)) ? copy(k.input) : undefined;
    case 'sort':
      return sortedBy(s, k.input, k.keys) ? copy(k.input) : undefined;
    case 'mapFilter': {
      const identity =
        k.filter.length === 0 &&
        k.project.length === p.variables[k.input]!.columns.length &&
        k.project.every((e, i) => e.kind === 'col' && e.index === i);
      return identity ? copy(k.input) : undefined;
    }
    case 'copy':
    case 'mergeJoin':
    case 'hashJoin':
    case 'pipeline':
    case 'aggregate':
    case 'limit':
      return undefined;
  }
}

/**
 * A merge join binary-searches its right side by the join keys only: when that side is `sort x` and x is already
 * sorted by those keys, the join reads x (remove-dead-kernels drops a sort nothing else reads).
 */
function unsortedRight(s: PropState, k: KirKernel, sortInputs: ReadonlyMap<number, number>): KirKernel | undefined {
  if (k.kind !== 'mergeJoin') return undefined;
  const input = sortInputs.get(k.right);
  return input !== undefined && sortedBy(s, input, k.rightKeys) ? { ...k, right: input } : undefined;
}

export const simplifyKernels = { name: 'simplify-kernels', required: false, run } satisfies KirPass;

function run(p: KirProgram): KirProgram {
  const entry = blockEntryStates(p);
  const kernels = [...p.kernels];
  let changed = false;
  const blocks = p.blocks.map((b) => {
    let s = entry.get(b.label);
    // Unreachable blocks keep their commands.
    if (!s) return b;
    const commands: KirCommand[] = [];
    /** `s := sort x` launches of this block so far, by s, while neither s nor x is written again. */
    const sortInputs = new Map<number, number>();
    for (const c of b.commands) {
      let next: KirCommand | undefined = c;
      if (c.kind === 'clear' && propsOf(s, c.var).empty) {
        next = undefined;
        changed = true;
      } else if (c.kind === 'launch') {
        const k = kernels[c.kernel]!;
        if (k.kind === 'copy' && k.input === k.output) next = undefined;
        else if (kernelProps(p, s, k).empty) next = { kind: 'clear', var: k.output };
        else {
          const simpler = asCopy(p, s, k) ?? selfJoinAsMap(p, s, k) ?? unsortedRight(s, k, sortInputs);
          if (simpler) kernels[k.id] = simpler;
        }
        if (next !== c || kernels[k.id] !== k) changed = true;
      }
      if (next) {
        const written = next.kind === 'launch' ? kernels[next.kernel]!.output : next.kind === 'clear' ? next.var : undefined;
        for (const [sorted, input] of sortInputs) if (sorted === written || input === written) sortInputs.delete(sorted);
        const launched = next.kind === 'launch' ? kernels[next.kernel]! : undefined;
        if (launched?.kind === 'sort' && launched.input !== launched.output) sortInputs.set(launched.output, launched.input);
        s = transfer({ ...p, kernels }, s, next);
        commands.push(next);
      }
    }
    return commands.length === b.commands.length && commands.every((c, i) => c === b.commands[i]) ? b : { ...b, commands };
  });
  return changed ? { ...p, kernels, blocks } : p;
}
