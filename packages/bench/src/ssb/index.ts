export { ssbCity, ssbgen, ssbgenParallel, SSB_TABLES, type SsbgenOptions, type SsbgenResult, type SsbTable } from './dbgen.js';
export {
  benchSsb,
  compileSsbQuery,
  formatSsbReport,
  ssbQuerySql,
  ssbSchema,
  SSB_QUERIES,
  type SsbBenchOptions,
  type SsbBenchReport,
  type SsbCompileOptions,
  type SsbQuery,
  type SsbQueryResult,
} from './bench.js';
