export * from './ir.js';
export { lowerPlan } from './lower/from-plan.js';
export { insertFrees } from './passes/insert-frees.js';
export { pipeline } from './passes/pipeline.js';
export { planToKernels } from './compile.js';
export { printKir } from './print.js';
export { validateKir } from './validate.js';
export { kirProgramSchema, parseKir, serializeKir } from './serialize.js';
