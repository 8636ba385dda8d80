/**
 * DuckDB as the oracle and baseline of the `.tbl` benchmarks (TPC-H, SSB): an in-memory database loaded from the
 * same `.tbl` files, with the column types of the Vixen schema. `@duckdb/node-api` is imported dynamically so that Vixen works without it.
 */
import { join } from 'node:path';
import type { RelationDecl, ScalarType } from '@vixen/queryplan';
import { openDuckDb, type DuckDb } from './duckdb.js';

/** A DuckDB value as the comparison reads it. */
export type DuckValue =
  | { kind: 'null' }
  | { kind: 'int'; value: bigint }
  | { kind: 'double'; value: number }
  | { kind: 'decimal'; value: bigint; scale: number }
  | { kind: 'date'; days: number }
  | { kind: 'string'; value: string };

export interface DuckResult {
  rows: DuckValue[][];
  milliseconds: number;
}

const SQL_TYPES: Record<ScalarType, string> = {
  int32: 'INTEGER',
  int64: 'BIGINT',
  uint32: 'UINTEGER',
  float32: 'FLOAT',
  decimal: 'DECIMAL(15,2)',
  string: 'VARCHAR',
  boolean: 'BOOLEAN',
  date: 'DATE',
};

function toDuckValue(v: unknown): DuckValue {
  if (v === null || v === undefined) return { kind: 'null' };
  if (typeof v === 'bigint') return { kind: 'int', value: v };
  if (typeof v === 'number') return Number.isInteger(v) ? { kind: 'int', value: BigInt(v) } : { kind: 'double', value: v };
  if (typeof v === 'string') return { kind: 'string', value: v };
  if (typeof v === 'object') {
    if ('scale' in v && 'value' in v && 'width' in v) return { kind: 'decimal', value: v.value as bigint, scale: v.scale as number };
    if ('days' in v) return { kind: 'date', days: v.days as number };
  }
  throw new Error(`unexpected DuckDB value ${String(v)}`);
}

export class TblDuckDb {
  private constructor(private readonly duck: DuckDb) {}

  /**
   * Opens DuckDB and loads each table of `schema` from `dir/<table>.tbl` (or `.parquet`), typed as `schema`
   * declares them; `keep`, when given, names the columns (by position) loaded of each table it lists.
   */
  static async open(
    dir: string,
    schema: readonly RelationDecl[],
    threads?: number,
    format: 'tbl' | 'parquet' = 'tbl',
    keep?: ReadonlyMap<string, readonly number[]>,
  ): Promise<TblDuckDb> {
    const db = new TblDuckDb(await openDuckDb('add it to compare with it', threads));
    for (const rel of schema) await db.load(dir, rel, format, keep?.get(rel.name));
    return db;
  }

  /** Loads table `rel` from `dir/<table>.tbl` (or `.parquet`): the `kept` columns (by position), or all. */
  async load(dir: string, rel: RelationDecl, format: 'tbl' | 'parquet' = 'tbl', kept?: readonly number[]): Promise<void> {
    const table = rel.name;
    const path = join(dir, `${table}.${format}`).replaceAll("'", "''");
    const select = kept ? kept.map((c) => rel.columns[c]!.name).join(', ') : '*';
    if (format === 'parquet') {
      await this.duck.connection.run(`create table ${table} as select ${select} from read_parquet('${path}')`);
      return;
    }
    const columns = rel.columns.map((c) => `'${c.name}': '${SQL_TYPES[c.type]}'`).join(', ');
    await this.duck.connection.run(
      `create table ${table} as select ${select} from read_csv('${path}', delim = '|', header = false, quote = '', ` +
        `escape = '', auto_detect = false, columns = {${columns}})`,
    );
  }

  /** Writes every table to `dir/<table>.parquet` (DuckDB's defaults: Snappy, row groups of 122,880 rows). */
  async writeParquet(dir: string, tables: readonly string[]): Promise<void> {
    for (const table of tables) {
      await this.duck.connection.run(`copy ${table} to '${join(dir, `${table}.parquet`).replaceAll("'", "''")}' (format parquet)`);
    }
  }

  async query(sql: string): Promise<DuckResult> {
    const t0 = performance.now();
    const reader = await this.duck.connection.runAndReadAll(sql);
    const milliseconds = performance.now() - t0;
    return { rows: reader.getRows().map((r) => r.map(toDuckValue)), milliseconds };
  }

  close(): void {
    this.duck.close();
  }
}
