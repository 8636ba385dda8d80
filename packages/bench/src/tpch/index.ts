export { dbgenText, TPCH_TABLES, type DbgenOptions, type DbgenResult, type TpchTable } from './dbgen.js';
export { dbgen, dbgenParallel } from './dbgen-files.js';
export {
  benchTpch,
  compileTpchQuery,
  formatTpchReport,
  tpchQuerySql,
  tpchSchema,
  TPCH_QUERIES,
  type TpchBenchOptions,
  type TpchBenchReport,
  type TpchQueryResult,
} from './bench.js';
export { benchLoad, formatLoadReport, type LoadBenchOptions, type LoadBenchReport, type LoadTiming } from './load.js';
