/** The engine: compile a program, run it on the device, keep base relations resident, read results back. */
export { compile, compileFile, compilerPasses, Program, type CompileOptions, type CompilePassOptions, type RunOptions, type RunOutput, type RunResult } from './program.js';
export type { JoinStrategy } from '@vixen/kernel-ir';
export type { FactSources } from '@vixen/io';
export { ResultTable } from './result-table.js';
export { Database, type DatabaseOptions, type DatabaseRunOptions, type DatabaseRunResult, type ResidentRelation } from './database.js';
export {
  executeKir,
  type ExecuteOptions,
  type ExecuteStats,
  type FixpointProgress,
  type KernelProfile,
  type LoopStats,
  type OperatorProfile,
  type ResidentRelations,
} from './executor.js';
export { formatBytes, parseByteSize, RunLimitError } from './limits.js';
export { DeviceFault, type DeviceFaultKind } from './gpu/device-fault.js';
export { factsLoader } from './facts-parse.js';
export { PARSE_MODES, type ParseMode } from './parse-mode.js';
export { openGpu, type Gpu, type GpuOptions } from './gpu/index.js';
// A page's navigator.gpu (the browser build's device; browser.ts).
export { openDefaultGpu as openBrowserGpu } from './host-browser.js';
export { PROGRAM_FORMAT, PROGRAM_VERSION, type ProgramFile } from './program-file.js';
export { dawnAddonPath } from './dawn-path.js';
