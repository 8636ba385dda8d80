/** The kernel-IR stage as one call: lower the plan, then run the KIR pipeline of passes (`vixen plan --passes` lists them). */
import { fixpoint, runPipeline, sequence, when, type Pass, type PassOptions, type Pipeline, type QpProgram } from '@vixen/queryplan';
import type { KirProgram } from './ir.js';
import { lowerPlan, type LowerOptions } from './lower/from-plan.js';
import { antiJoins } from './passes/anti-joins.js';
import { assumeEmptyOnEntry } from './passes/assume-empty-on-entry.js';
import { compactKernels } from './passes/compact-kernels.js';
import { fuseAggregateInputs } from './passes/fuse-aggregate-inputs.js';
import { fuseMapFilters } from './passes/fuse-map-filters.js';
import { fusePipelines } from './passes/fuse-pipelines.js';
import { hashAggregates } from './passes/hash-aggregates.js';
import { hashJoins } from './passes/hash-joins.js';
import { hashUnique } from './passes/hash-unique.js';
import { insertFrees } from './passes/insert-frees.js';
import { limitOutputs } from './passes/limit-outputs.js';
import { narrowBaseRelations } from './passes/narrow-base-relations.js';
import { narrowColumns } from './passes/narrow-columns.js';
import { propagateCopies } from './passes/propagate-copies.js';
import { removeDeadKernels } from './passes/remove-dead-kernels.js';
import { scheduleBlocks } from './passes/schedule-blocks.js';
import { simplifyKernels } from './passes/simplify-kernels.js';
import { skipUnneededOrder } from './passes/skip-unneeded-order.js';
import { unorderedSelects } from './passes/unordered-selects.js';
import { validateKir } from './validate.js';

export interface KirOptions extends LowerOptions {
  /**
   * Fuse chains of kernels into one (fuse-map-filters; fuse-pipelines: scan -> filter -> hash probes -> project);
   * default true. Off, the other KIR optimizations still run.
   */
  fusion?: boolean;
  /** Derived relations that get rows from outside the program (e.g. Soufflé `.input` files): never assumed empty on entry. */
  seeded?: readonly string[];
  /** Debugging switches for the KIR passes (names of other stages' passes are theirs to check). */
  passes?: PassOptions<KirProgram>;
}

/** The compile options KIR passes read. */
export type KirPassContext = Pick<KirOptions, 'fusion' | 'seeded' | 'joinStrategy'>;

export type KirPass = Pass<KirProgram, KirPassContext>;

const fusion = (ctx: KirPassContext): boolean => ctx.fusion ?? true;

/** The property-driven rewrites, repeated together: each may expose work for another. */
const round = sequence<KirProgram, KirPassContext>(
  simplifyKernels,
  propagateCopies,
  skipUnneededOrder,
  when('join strategy is not sort-merge', (ctx) => ctx.joinStrategy !== 'sort-merge', sequence(antiJoins, hashJoins)),
  hashUnique,
  hashAggregates,
  when('fusion', fusion, fuseMapFilters),
  removeDeadKernels,
);

/**
 * The optimizations run on the lowered program (which launches each kernel once: the passes rewrite kernels in
 * place), then scheduling and frees, which the optimizations would otherwise invalidate.
 */
export const kirPipeline: Pipeline<KirProgram, KirPassContext> = {
  stage: 'KIR',
  validate: validateKir,
  steps: sequence<KirProgram, KirPassContext>(
    assumeEmptyOnEntry,
    fixpoint(round),
    // Pipelines form once the property-driven rewrites are done: the property analysis sees through hash joins, not pipelines.
    when('fusion', fusion, fixpoint(sequence(fusePipelines, removeDeadKernels))),
    // Limited outputs keep only their first rows (a top-k instead of the sort of all of them).
    limitOutputs,
    // Narrowing last: the rewrites above may drop readers (a unique needs every column) and fuse producers. Base
    // relations after temporaries (narrowing a temporary narrows what its producer reads) and after dead kernels go.
    // Selects learn last whether their readers need input order.
    fixpoint(narrowColumns),
    // An aggregate reads what a projection alone would have written for it.
    when('fusion', fusion, fixpoint(sequence(fuseAggregateInputs, removeDeadKernels))),
    compactKernels,
    narrowBaseRelations,
    unorderedSelects,
    // Required: every program run is scheduled and frees its temporaries after their last use (else they hold
    // device memory to halt).
    scheduleBlocks,
    insertFrees,
  ),
};

export function planToKernels(plan: QpProgram, options: KirOptions = {}): KirProgram {
  return runPipeline(kirPipeline, lowerPlan(plan, options), options, options.passes);
}
