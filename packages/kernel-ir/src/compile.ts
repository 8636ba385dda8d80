/** The kernel-IR stage as one call: lower the plan, then run the KIR passes in order. */
import type { QpProgram } from '@vixen/queryplan';
import type { KirProgram } from './ir.js';
import { lowerPlan, type LowerOptions } from './lower/from-plan.js';
import { insertFrees } from './passes/insert-frees.js';
import { pipeline } from './passes/pipeline.js';
import { scheduleBlocks } from './passes/schedule-blocks.js';

const kirPasses = pipeline<KirProgram>(scheduleBlocks, insertFrees);

export function planToKernels(plan: QpProgram, options: LowerOptions = {}): KirProgram {
  return kirPasses(lowerPlan(plan, options));
}
