/**
 * The API of the `vixen` npm package (`import { compile } from 'vixen'`): what a program needs to compile Datalog,
 * run it on the GPU or the reference interpreter, and read results, re-exported from the workspace packages.
 * `pnpm release-pack` bundles this file, with its declarations, as the package's main entry.
 */
export {
  compile,
  compileFile,
  Database,
  openGpu,
  parseByteSize,
  Program,
  PROGRAM_FORMAT,
  PROGRAM_VERSION,
  ResultTable,
  RunLimitError,
  DeviceFault,
  type DeviceFaultKind,
  type CompileOptions,
  type DatabaseOptions,
  type DatabaseRunOptions,
  type DatabaseRunResult,
  type ExecuteStats,
  type FactSources,
  type FixpointProgress,
  type Gpu,
  type GpuOptions,
  type JoinStrategy,
  type ProgramFile,
  type ResidentRelation,
  type RunOptions,
  type RunOutput,
  type RunResult,
} from '@vixen/runtime';
export { FACTS_EXTENSIONS, loadFactsDir, loadFactsFile } from '@vixen/io';
export {
  formatViolation,
  KeyViolationError,
  renderDiagnostics,
  VixenError,
  type Diagnostic,
  type Row,
  type ScalarType,
  type Severity,
  type SourcePosition,
  type SourceSpan,
  type Value,
  type Violation,
} from '@vixen/queryplan';
