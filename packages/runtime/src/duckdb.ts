/** DuckDB, the benchmarks' and tests' peer: imported only when asked for, so Vixen runs without it installed. */
import type { DuckDBConnection, DuckDBInstance } from '@duckdb/node-api';
import { VixenError } from '@vixen/queryplan';

/** An in-memory DuckDB; `hint` says in the error what to do when @duckdb/node-api is not installed. */
export async function openDuckDb(hint: string, threads?: number): Promise<{ instance: DuckDBInstance; connection: DuckDBConnection }> {
  let api: typeof import('@duckdb/node-api');
  try {
    api = await import('@duckdb/node-api');
  } catch {
    throw new VixenError({ severity: 'error', message: `DuckDB (@duckdb/node-api) is not installed: ${hint}` });
  }
  const instance = await api.DuckDBInstance.create(':memory:', threads !== undefined ? { threads: String(threads) } : {});
  return { instance, connection: await instance.connect() };
}
