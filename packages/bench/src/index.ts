/**
 * Benchmarks and what they need beside the engine: the operator, TPC-H, SSB and graph benches, their data
 * generators, and DuckDB as the peer that runs the same work in the same process.
 */
export { BENCH_OPERATORS, benchOperators, defaultBenchSizes, formatBenchReport, type BenchOptions, type BenchReport, type BenchResult } from './operators.js';
export { compareAnswers } from './answers.js';
export { benchCompile, formatCompileReport, type CompileReport } from './compile.js';
export { examplesDir } from './examples-dir.js';
export { TblDuckDb, type DuckResult, type DuckValue } from './tbl-duckdb.js';
export { columnsRead, factsFor, formatDevicePeak, formatMemoryAfterQuery, formatSlowRunCauses, formatTimedRuns, loadTblFacts, tableLoadProgram, type DeviceMemoryHeld, type MemoryAfterQuery, type SlowRunCauses, type TableLoad, type TblBenchOptions } from './tbl-suite.js';
export { benchEndToEnd, END_TO_END_FORMATS, formatEndToEndReport, type EndToEndFormat, type EndToEndQuery, type EndToEndReport } from './end-to-end.js';
export * from './graphs/index.js';
export * from './tpch/index.js';
export * from './ssb/index.js';
