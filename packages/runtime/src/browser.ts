/**
 * The engine as a browser build sees it (package.json's `browser` condition; Node resolves index.ts): compile,
 * run on the page's WebGPU with facts given as rows, read results back. What needs files, worker threads or Dawn
 * (compileFile with includes, facts directories, stores, Database, device parsing) stays in Node.
 */
export { compile, compilerPasses, Program, type CompileOptions, type CompilePassOptions, type RunOptions, type RunOutput, type RunResult } from './program.js';
export type { JoinStrategy } from '@vixen/kernel-ir';
export type { FactSources } from '@vixen/io';
export { ResultTable } from './result-table.js';
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
export { formatBytes, formatWork, parseByteSize, RunLimitError } from './limits.js';
export { openDevice, type Gpu, type GpuOptions, type RunWork } from './gpu/device.js';
export { openDefaultGpu as openBrowserGpu } from './host-browser.js';
export { PROGRAM_FORMAT, PROGRAM_VERSION, type ProgramFile } from './program-file.js';
export { DeviceFault, type DeviceFaultKind } from './gpu/device-fault.js';
