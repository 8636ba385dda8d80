/** The QP passes the front end runs on its plan, in order (`vixen plan --passes` lists them). */
import type { QpProgram } from './ir.js';
import { sequence, type Pass, type Pipeline } from './pass-manager.js';
import { eliminateCommonSubexpressions } from './passes/eliminate-common-subexpressions.js';
import { mergeUnionedSelects } from './passes/merge-unioned-selects.js';
import { pruneColumns } from './passes/prune-columns.js';
import { restrictOutputs } from './passes/restrict-outputs.js';
import { validatePlan } from './validate.js';

/** The compile options QP passes read. */
export interface QpPassContext {
  /** The only relations a run will read back (default: every derived relation); the others become temporaries. */
  outputs?: readonly string[];
  /** Derived relations that get rows from outside the program (Soufflé `.input` files): never made temporaries. */
  seeded?: readonly string[];
}

export type QpPass = Pass<QpProgram, QpPassContext>;

export const qpPipeline: Pipeline<QpProgram, QpPassContext> = {
  stage: 'QP',
  validate: validatePlan,
  // Pruning last: it needs the final output flags (Soufflé's `.output`, restricted outputs).
  steps: sequence<QpProgram, QpPassContext>(restrictOutputs, eliminateCommonSubexpressions, mergeUnionedSelects, pruneColumns),
};

