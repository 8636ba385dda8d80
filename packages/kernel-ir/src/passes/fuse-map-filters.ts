/**
 * Fusion (Red Fox §4 kernel fusion, first step): `t := mapFilter a where F1 -> P1` followed by
 * `u := mapFilter t where F2 -> P2`, where that is the only read of t's value, becomes
 * `u := mapFilter a where F1 and F2[P1] -> P2[P1]` (column n of t replaced by P1[n]): one launch and no
 * intermediate buffer. Arithmetic and built-ins are total (arith.ts), so evaluating P1 inside the fused filter
 * on rows F1 rejects changes nothing. The fused kernel lists the lowered kernels it stands for in `fused`.
 */
import { unionOrigins } from '@vixen/queryplan';
import type { KirKernel, KirProgram } from '../ir.js';
import { substitute, substitutePredicate } from '../analysis/exprs.js';
import { fuseWithProducers } from '../analysis/liveness.js';
import type { KirPass } from '../compile.js';

type MapFilter = Extract<KirKernel, { kind: 'mapFilter' }>;

function fuse(first: MapFilter, second: MapFilter): MapFilter {
  return {
    ...second,
    ...unionOrigins(first.rules, second.rules),
    input: first.input,
    filter: [...first.filter.map((f) => substitutePredicate(f)), ...second.filter.map((f) => substitutePredicate(f, first.project))],
    project: second.project.map((e) => substitute(e, first.project)),
    fused: [...(first.fused ?? [first.id]), ...(second.fused ?? [second.id])],
  };
}

export const fuseMapFilters = { name: 'fuse-map-filters', required: false, run } satisfies KirPass;

function run(p: KirProgram): KirProgram {
  return fuseWithProducers(p, (second, producerOf) => {
    if (second.kind !== 'mapFilter') return undefined;
    const first = producerOf(second.input);
    return first?.kind === 'mapFilter' ? fuse(first, second) : undefined;
  });
}
