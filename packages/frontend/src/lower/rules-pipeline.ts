/** The passes over the checked rules, before lowering to the QP plan (`vixen plan --passes` lists them). */
import { sequence, type Pipeline } from '@vixen/queryplan';
import type { CheckedProgram } from '../check/program.js';
import { pushSemiJoinsPass, type SemiJoinScope } from './push-semi-joins.js';

export const rulesPipeline: Pipeline<CheckedProgram, SemiJoinScope> = {
  stage: 'rules',
  // The rules were checked before; the passes keep them well-formed by construction (tests/semi-joins.test.ts).
  validate: () => [],
  steps: sequence<CheckedProgram, SemiJoinScope>(pushSemiJoinsPass),
};
