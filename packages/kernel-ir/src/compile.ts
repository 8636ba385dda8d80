/** The kernel-IR stage as one call: lower the plan, then run the KIR passes in order. */
import type { QpProgram } from '@vixen/queryplan';
import type { KirProgram } from './ir.js';
import { lowerPlan, type LowerOptions } from './lower/from-plan.js';
import { compactKernels } from './passes/compact-kernels.js';
import { fuseMapFilters } from './passes/fuse-map-filters.js';
import { hashAggregates } from './passes/hash-aggregate.js';
import { hashSortedJoins } from './passes/hash-joins.js';
import { hashUnique } from './passes/hash-unique.js';
import { fusePipelines } from './passes/fuse-pipelines.js';
import { insertFrees } from './passes/insert-frees.js';
import { narrowBaseRelations } from './passes/narrow-base-relations.js';
import { narrowColumns } from './passes/narrow-columns.js';
import { fixpoint, pipeline, when } from './passes/pipeline.js';
import { propagateCopies } from './passes/propagate-copies.js';
import { emptyOnEntry } from './analysis/properties.js';
import { removeDeadKernels } from './passes/remove-dead-kernels.js';
import { scheduleBlocks } from './passes/schedule-blocks.js';
import { simplifyKernels } from './passes/simplify-kernels.js';
import { skipUnneededOrder } from './passes/skip-unneeded-order.js';
import { unorderedSelects } from './passes/unordered-selects.js';

export interface KirOptions extends LowerOptions {
  /**
   * Fuse chains of kernels into one (fuse-map-filters; fuse-pipelines: scan -> filter -> hash probes -> project);
   * default true. Off, the other KIR optimizations still run.
   */
  fusion?: boolean;
  /** Derived relations that get rows from outside the program (e.g. Soufflé `.input` files): never assumed empty on entry. */
  seeded?: readonly string[];
}

/**
 * The optimizations run on the lowered program (which launches each kernel once: the passes rewrite kernels in
 * place), before scheduling and frees, which they would otherwise invalidate.
 */
export function optimizeKernels(options: Pick<KirOptions, 'fusion' | 'seeded' | 'joinStrategy'> = {}): (p: KirProgram) => KirProgram {
  const assumeEmpty = (p: KirProgram): KirProgram => ({ ...p, emptyOnEntry: emptyOnEntry(p, options.seeded) });
  const round = pipeline<KirProgram>(
    simplifyKernels,
    propagateCopies,
    skipUnneededOrder,
    when(options.joinStrategy !== 'sort-merge', hashSortedJoins),
    hashUnique,
    hashAggregates,
    when(options.fusion ?? true, fuseMapFilters),
    removeDeadKernels,
  );
  // Pipelines form once the property-driven rewrites are done: the property analysis sees through hash joins, not pipelines.
  const pipelines = when(options.fusion ?? true, fixpoint(pipeline<KirProgram>(fusePipelines, removeDeadKernels)));
  // Narrowing last: the rewrites above may drop readers (a unique needs every column) and fuse producers. Base
  // relations after temporaries (narrowing a temporary narrows what its producer reads) and after dead kernels go.
  // Selects learn last whether their readers need input order.
  return pipeline(assumeEmpty, fixpoint(round), pipelines, fixpoint(narrowColumns), compactKernels, narrowBaseRelations, unorderedSelects);
}

export function planToKernels(plan: QpProgram, options: KirOptions = {}): KirProgram {
  return pipeline(optimizeKernels(options), scheduleBlocks, insertFrees)(lowerPlan(plan, options));
}
