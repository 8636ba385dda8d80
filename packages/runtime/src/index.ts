export { compile, compileFile, Program, type CompileOptions, type RunOptions, type RunResult } from './program.js';
export { type FactSources } from './facts-input.js';
export { executeKir, type ExecuteOptions, type ExecuteStats, type KernelProfile } from './executor.js';
export { openGpu, type Gpu, type GpuOptions } from './gpu/index.js';
export { loadFactsDir, loadFactsFile } from './facts/index.js';
export { PROGRAM_FORMAT, PROGRAM_VERSION, type ProgramFile } from './program-file.js';
export { dawnAddonPath } from './dawn-path.js';
export * from './graphs/index.js';
