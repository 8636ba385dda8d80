/**
 * TPC-H at SF 0.01 from Parquet and Arrow IPC facts files: the `.tbl` data of our dbgen, written as Parquet by DuckDB
 * (its tables typed as examples/tpch/schema.logic declares them: INTEGER, DECIMAL(15,2), DATE, VARCHAR; small row
 * groups, ZSTD for lineitem and orders) and as Arrow IPC by apache-arrow (from the rows parsed from the `.tbl` files:
 * Int32, Decimal128(15,2), Date32, dictionary-encoded strings, several record batches). Every query run from
 * `factsDir` folders of those files gives the answer it gives from the `.tbl` files, row for row, and DuckDB's.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { beforeAll, describe, expect, test } from 'vitest';
import * as A from 'apache-arrow';
import { byteSortTimes } from '@vixen/io';
import { Database } from '@vixen/runtime';
import type { Row, ScalarType } from '@vixen/queryplan';
import { compareAnswers, compileTpchQuery, dbgen, TPCH_QUERIES, tpchQuerySql, tpchSchema } from '@vixen/bench';
import { useTblData } from './helpers/tbl-data.js';

const queriesDir = join(import.meta.dirname, '..', 'examples', 'tpch');
const data = useTblData('tpch-files', () => tpchSchema(queriesDir), (dir) => dbgen({ sf: 0.01, out: dir, seed: 10 }));

/** An Arrow vector of one column of `rows`, typed for `type` as a writer of such files would. */
function column(rows: readonly Row[], c: number, type: ScalarType): A.Vector {
  const values = rows.map((r) => r[c]!);
  switch (type) {
    case 'int32':
      return A.vectorFromArray(values as number[], new A.Int32());
    case 'date':
      return A.makeVector(A.makeData({ type: new A.DateDay(), length: values.length, data: Int32Array.from(values as number[]) }));
    case 'decimal': {
      // Decimal128(15,2): the .tbl values have 2 fractional digits, held by Vixen scaled by 10^4.
      const words = new BigInt64Array(values.length * 2);
      values.forEach((v, i) => {
        words[2 * i] = (v as bigint) / 100n;
        words[2 * i + 1] = (v as bigint) < 0n ? -1n : 0n;
      });
      return A.makeVector(A.makeData({ type: new A.Decimal(2, 15, 128), length: values.length, data: new Uint32Array(words.buffer) }));
    }
    case 'string':
      return A.vectorFromArray(values as string[], new A.Dictionary(new A.Utf8(), new A.Int32()));
    default:
      throw new Error(`no TPC-H column is ${type}`);
  }
}

const parquetDir = () => join(data.dir, 'parquet');
const arrowDir = () => join(data.dir, 'arrow');

beforeAll(async () => {
  mkdirSync(parquetDir());
  mkdirSync(arrowDir());
  for (const rel of tpchSchema(queriesDir)) {
    const big = rel.name === 'lineitem' || rel.name === 'orders';
    await data.duck.query(`COPY ${rel.name} TO '${join(parquetDir(), `${rel.name}.parquet`)}' (FORMAT PARQUET, ROW_GROUP_SIZE 4096${big ? ', COMPRESSION zstd' : ''})`);
    const rows = data.facts[rel.name]!;
    const whole = new A.Table(Object.fromEntries(rel.columns.map((col, c) => [col.name, column(rows, c, col.type)])));
    // Record batches of 5000 rows, sharing the dictionaries (the file format allows no replacement).
    const slices = [];
    for (let at = 0; at < whole.numRows; at += 5000) slices.push(...whole.slice(at, at + 5000).batches);
    // The stream format for lineitem, the file format for the rest.
    writeFileSync(join(arrowDir(), `${rel.name}.arrow`), A.tableToIPC(new A.Table(slices), rel.name === 'lineitem' ? 'stream' : 'file'));
  }
}, 120_000);

/** Each query's answer from the `.tbl` files, run once for both formats. */
const fromTbl = new Map<number, Promise<Row[]>>();
const tblAnswer = (q: number): Promise<Row[]> => {
  if (!fromTbl.has(q)) fromTbl.set(q, compileTpchQuery(queriesDir, q).run({ factsDir: data.dir, gpu: data.gpu, outputs: ['result'] }).then((r) => r.relations.get('result')!));
  return fromTbl.get(q)!;
};

describe.each([
  ['Parquet', parquetDir],
  ['Arrow', arrowDir],
])('TPC-H queries at SF 0.01 from %s files: the answers from .tbl, and DuckDB\'s', (_, dir) => {
  for (const q of TPCH_QUERIES) {
    test(`Q${q}`, async () => {
      const program = compileTpchQuery(queriesDir, q);
      const expected = await data.duck.query(tpchQuerySql(queriesDir, q));
      const run = await program.run({ factsDir: dir(), gpu: data.gpu, outputs: ['result'] });
      const rows = run.relations.get('result')!;
      expect(rows).toEqual(await tblAnswer(q));
      const types = program.relations.find((r) => r.name === 'result')!.columns.map((c) => c.type);
      expect(compareAnswers(rows, types, expected.rows), `Q${q}`).toEqual([]);
    }, 120_000);
  }
});

test('a Database on the Parquet folder answers Q1, Q6 and Q14 as the .tbl files do', async () => {
  const db = new Database(data.gpu, parquetDir());
  try {
    for (const q of [1, 6, 14]) {
      const run = await db.run(compileTpchQuery(queriesDir, q), { outputs: ['result'] });
      expect(run.relations.get('result'), `Q${q}`).toEqual(await tblAnswer(q));
    }
    // Each Parquet file is read per program that needs its columns (none is cached whole on the host).
    expect(db.fileReads).toBeGreaterThanOrEqual(2);
  } finally {
    db.clear();
  }
}, 120_000);

test('with the device sorting the strings (VIXEN_STRING_SORT=device), .tbl parsed on the device and Parquet answer as before', async () => {
  const before = process.env.VIXEN_STRING_SORT;
  const sorts = byteSortTimes.deviceSorts;
  process.env.VIXEN_STRING_SORT = 'device';
  try {
    // Names, addresses, phones and comments of customer, supplier, part and nation (Q2, Q10), a date and flags (Q12).
    for (const q of [2, 10, 12]) {
      for (const [factsDir, parse] of [[data.dir, 'device'], [parquetDir(), 'auto']] as const) {
        const run = await compileTpchQuery(queriesDir, q).run({ factsDir, gpu: data.gpu, outputs: ['result'], parse });
        expect(run.relations.get('result'), `Q${q} from ${factsDir}`).toEqual(await tblAnswer(q));
      }
    }
  } finally {
    if (before === undefined) delete process.env.VIXEN_STRING_SORT;
    else process.env.VIXEN_STRING_SORT = before;
  }
  // Both loads' strings went to the device: every file the .tbl loads parsed there, and every Parquet file with strings.
  expect(byteSortTimes.deviceSorts - sorts).toBeGreaterThanOrEqual(12);
}, 300_000);
