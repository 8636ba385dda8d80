export { compile, compileFile, compilerPasses, Program, type CompileOptions, type CompilePassOptions, type RunOptions, type RunOutput, type RunResult } from './program.js';
export type { JoinStrategy } from '@vixen/kernel-ir';
export { ResultTable } from './result-table.js';
export { Database, type DatabaseOptions, type DatabaseRunOptions, type DatabaseRunResult, type ResidentRelation } from './database.js';
export { writeFilesAtomically, writeLines, type OutputFile } from './output-files.js';
export { type FactSources } from './facts-input.js';
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
export { openGpu, type Gpu, type GpuOptions } from './gpu/index.js';
export { BENCH_OPERATORS, benchOperators, defaultBenchSizes, formatBenchReport, type BenchOptions, type BenchReport, type BenchResult } from './bench/operators.js';
export { EncodedFacts, loadFactsDir, loadFactsFile } from './facts/index.js';
export { formatSouffleFloat, souffleLines, writeSouffleOutputs } from './souffle-output.js';
export { PROGRAM_FORMAT, PROGRAM_VERSION, type ProgramFile } from './program-file.js';
export { dawnAddonPath } from './dawn-path.js';
export { readTextFile } from './utf8.js';
export * from './graphs/index.js';
export { compareAnswers } from './bench/answers.js';
export { examplesDir } from './bench/examples-dir.js';
export { TblDuckDb, type DuckResult, type DuckValue } from './bench/tbl-duckdb.js';
export { factsFor, loadTblFacts, type TblBenchOptions } from './bench/tbl-suite.js';
export * from './tpch/index.js';
export * from './ssb/index.js';
export {
  benchGraphs,
  formatGraphBenchReport,
  makeGraph,
  GRAPH_KINDS,
  GRAPH_WORKLOADS,
  type GraphBenchOptions,
  type GraphBenchReport,
  type GraphBenchResult,
  type GraphSpec,
  type GraphWorkload,
} from './bench/graphs.js';
