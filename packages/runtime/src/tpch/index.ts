export { dbgen, TPCH_TABLES, type DbgenOptions, type DbgenResult, type TpchTable } from './dbgen.js';
export { TpchDuckDb, type DuckResult, type DuckValue } from './duckdb.js';
export { compareTpchAnswers } from './compare.js';
export {
  benchTpch,
  compileTpchQuery,
  factsFor,
  formatTpchReport,
  loadTpchFacts,
  tpchQuerySql,
  tpchSchema,
  TPCH_QUERIES,
  type TpchBenchOptions,
  type TpchBenchReport,
  type TpchQueryResult,
} from './bench.js';
