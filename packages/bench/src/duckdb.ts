/** DuckDB, the benchmarks' and tests' peer: imported only when asked for, so Vixen runs without it installed. */
import type { DuckDBConnection } from '@duckdb/node-api';
import { VixenError } from '@vixen/queryplan';

/** A connection to DuckDB running in memory, and how to close both. */
export interface DuckDb {
  connection: DuckDBConnection;
  /** The module, for its classes and types (data chunks) without importing it where DuckDB may be missing. */
  api: typeof import('@duckdb/node-api');
  close(): void;
}

/** An in-memory DuckDB; `hint` says in the error what to do when @duckdb/node-api is not installed. */
export async function openDuckDb(hint: string, threads?: number): Promise<DuckDb> {
  let api: typeof import('@duckdb/node-api');
  try {
    const mod = await import('@duckdb/node-api');
    // Bundled with code splitting (`vixen bundle`), the CommonJS package comes as the module's default export.
    api = 'DuckDBInstance' in mod && mod.DuckDBInstance ? mod : (mod as unknown as { default: typeof mod }).default;
  } catch {
    throw new VixenError({ severity: 'error', message: `DuckDB (@duckdb/node-api) is not installed: ${hint}` });
  }
  const instance = await api.DuckDBInstance.create(':memory:', threads !== undefined ? { threads: String(threads) } : {});
  const connection = await instance.connect();
  return {
    connection,
    api,
    close: () => {
      connection.closeSync();
      instance.closeSync();
    },
  };
}
