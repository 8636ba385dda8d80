/**
 * The engine: compile a program, run it on the device, keep base relations resident, read results back. Node's
 * entry: the browser build's (browser.ts) and what needs files, worker threads or Dawn.
 */
export * from './browser.js';
export { compileFile } from './program.js';
export { Database, type DatabaseOptions, type DatabaseRunOptions, type DatabaseRunResult, type ResidentRelation } from './database.js';
export { factsLoader } from './facts-parse.js';
export { textParseTimes, timeTextParseKernels } from './gpu/parse-text.js';
export { STORE_READ_PLAN, storeLoadTimes, type StoreReadPlan } from './gpu/store-columns.js';
export { PARSE_MODES, type ParseMode } from './parse-mode.js';
export { openGpu } from './gpu/index.js';
export { dawnAddonPath } from './dawn-path.js';
