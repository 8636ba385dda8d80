/**
 * `t := mapFilter a -> (#i, #j, ...)` (no filter, columns only) whose value only `u := aggregate t by ... compute
 * ...` reads becomes `u := aggregate a` with the group and argument columns renamed through the projection: a
 * projection keeps rows and their order, so the groups of adjacent rows and the multiset each group sums are
 * the same in a. The aggregate reads a's rows twice (its tile and output passes), so only where a's rows are at
 * most twice t's, and not where that makes them too wide to read coalesced (AGGREGATE_STAGED_WORDS): TPC-H Q18
 * projected 18M lineitem rows of 4 words to 3 (0.21 ms of the H200 at SF 3) for the aggregate to read.
 */
import { rowWords, unionOrigins } from '@vixen/queryplan';
import { AGGREGATE_STAGED_WORDS, type KirKernel, type KirProgram } from '../ir.js';
import { fuseWithProducers } from '../analysis/liveness.js';
import type { KirPass } from '../compile.js';

export const fuseAggregateInputs = { name: 'fuse-aggregate-inputs', required: false, run } satisfies KirPass;

function run(p: KirProgram): KirProgram {
  return fuseWithProducers(p, (aggregate, producerOf) => {
    if (aggregate.kind !== 'aggregate') return undefined;
    const first = producerOf(aggregate.input);
    if (first?.kind !== 'mapFilter' || first.filter.length > 0) return undefined;
    const columns: number[] = [];
    for (const e of first.project) if (e.kind === 'col') columns.push(e.index);
    if (columns.length !== first.project.length) return undefined;
    const [wide, narrow] = [first.input, first.output].map((v) => rowWords(p.variables[v]!.columns)) as [number, number];
    if (wide > 2 * narrow || (wide > AGGREGATE_STAGED_WORDS && narrow <= AGGREGATE_STAGED_WORDS)) return undefined;
    return {
      ...aggregate,
      ...unionOrigins(first.rules, aggregate.rules),
      input: first.input,
      groupBy: aggregate.groupBy.map((c) => columns[c]!),
      aggregates: aggregate.aggregates.map((a) => (a.column === undefined ? a : { ...a, column: columns[a.column]! })),
    };
  });
}
