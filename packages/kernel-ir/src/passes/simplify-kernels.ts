/**
 * Replaces kernels whose work the property analysis (properties.ts) shows redundant by cheaper equivalents that
 * give the same value: a kernel with a known-empty result by `clear`; a merge, concat or difference with a
 * known-empty side by a copy; unique of a duplicate-free input, sort of an input already sorted by its keys and
 * an identity mapFilter by a copy; and drops `x := copy x`. Copies then vanish in propagate-copies.
 */
import type { KirCommand, KirKernel, KirProgram } from '../ir.js';
import { blockEntryStates, distinct, kernelProps, propsOf, sortedBy, transfer, type PropState } from './properties.js';

type Copy = Extract<KirKernel, { kind: 'copy' }>;

/** The copy equivalent to `k` in state `s`, if any. */
function asCopy(p: KirProgram, s: PropState, k: KirKernel): Copy | undefined {
  const copy = (input: number): Copy => ({ kind: 'copy', id: k.id, ...(k.origin ? { origin: k.origin } : {}), input, output: k.output });
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
    case 'aggregate':
    case 'limit':
      return undefined;
  }
}

export function simplifyKernels(p: KirProgram): KirProgram {
  const entry = blockEntryStates(p);
  const kernels = [...p.kernels];
  let changed = false;
  const blocks = p.blocks.map((b) => {
    let s = entry.get(b.label);
    // Unreachable blocks keep their commands.
    if (!s) return b;
    const commands: KirCommand[] = [];
    for (const c of b.commands) {
      let next: KirCommand | undefined = c;
      if (c.kind === 'launch') {
        const k = kernels[c.kernel]!;
        if (k.kind === 'copy' && k.input === k.output) next = undefined;
        else if (kernelProps(p, s, k).empty) next = { kind: 'clear', var: k.output };
        else {
          const copy = asCopy(p, s, k);
          if (copy) kernels[k.id] = copy;
        }
        if (next !== c || kernels[k.id] !== k) changed = true;
      }
      if (next) {
        s = transfer({ ...p, kernels }, s, next);
        commands.push(next);
      }
    }
    return commands.length === b.commands.length && commands.every((c, i) => c === b.commands[i]) ? b : { ...b, commands };
  });
  return changed ? { ...p, kernels, blocks } : p;
}
