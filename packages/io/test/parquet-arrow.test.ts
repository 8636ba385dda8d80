/**
 * Parquet and Arrow IPC facts files (facts/parquet.ts, facts/arrow.ts): Parquet written by DuckDB, Arrow by
 * apache-arrow's own writer, read back typed as declared and compared with the values the writer was given; every
 * column type, dictionary columns, several row groups and record batches, each codec DuckDB writes, extreme values,
 * and the messages for files that do not fit their declaration; and parquetRows, the same decoding from a file's
 * bytes as the playground reads a dropped file.
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DuckDBInstance, type DuckDBConnection } from '@duckdb/node-api';
import * as A from 'apache-arrow';
import { parquetMetadata } from 'hyparquet';
import { VixenError, type Column, type RelationDecl, type Row, type ScalarType } from '@vixen/queryplan';
import { EncodedRelation, StringInterner, columnTypes, loadFactsDir, loadFactsFile, loadFactsFileInto } from '../src/facts/index.js';
import { readRleBitPackedHybrid } from 'hyparquet/src/encoding.js';
import { addStrings, firstNull, parquetRowCount, parquetRows, readIndices } from '../src/facts/parquet-decode.js';
import { ByteInterner } from '../src/facts/byte-strings.js';
import { parquetLoadTimes } from '../src/facts/parquet.js';
import { workerCount } from '../src/parallel/pool.js';

const root = mkdtempSync(join(tmpdir(), 'vixen-binary-facts-'));
let instance: DuckDBInstance;
let duck: DuckDBConnection;
beforeAll(async () => {
  instance = await DuckDBInstance.create(':memory:', { threads: '1' });
  duck = await instance.connect();
});
afterAll(() => {
  duck?.closeSync();
  instance?.closeSync();
  rmSync(root, { recursive: true, force: true });
});

const cols = (spec: string): Column[] =>
  spec.split(' ').map((s) => {
    const [name, type] = s.split(':');
    return { name: name!, type: type as ScalarType };
  });

const decl = (name: string, columns: Column[]): RelationDecl => ({ name, columns, kind: 'edb', output: false });

/** The message of the VixenError that `p` rejects with. */
async function message(p: Promise<unknown>): Promise<string> {
  const e = await p.then(
    () => undefined,
    (err: unknown) => err,
  );
  expect(e).toBeInstanceOf(VixenError);
  return (e as VixenError).message;
}

/** Writes `select` to `root/name` as Parquet with DuckDB's `options`; returns the path. */
async function parquet(name: string, select: string, options = ''): Promise<string> {
  const path = join(root, name);
  await duck.run(`COPY (${select}) TO '${path}' (FORMAT PARQUET${options ? `, ${options}` : ''})`);
  return path;
}

/** Writes `table` to `root/name` as Arrow IPC (file format unless `stream`). */
function arrow(name: string, table: A.Table, format: 'file' | 'stream' = 'file'): string {
  const path = join(root, name);
  writeFileSync(path, A.tableToIPC(table, format));
  return path;
}

const day = (text: string): number => Date.parse(`${text}T00:00:00Z`) / 86_400_000;

describe('Parquet', () => {
  // One column per declared type (several Parquet types for some), 10,000 rows: negative and extreme values at
  // row 0 and 1, dictionary-encoded strings (few distinct) and plain ones (all distinct).
  const select = `
    SELECT i::INTEGER AS i32,
      CASE i WHEN 0 THEN -2147483648 WHEN 1 THEN 2147483647 ELSE i * 7 - 30000 END::INTEGER AS int,
      (i % 100 - 50)::TINYINT AS tiny, (i % 30000)::SMALLINT AS small, (i * 3)::BIGINT AS big_small,
      CASE i WHEN 0 THEN 4294967295 ELSE i END::UINTEGER AS uint,
      CASE i WHEN 0 THEN -9223372036854775808 WHEN 1 THEN 9223372036854775807 ELSE i * 1000003 - 5000000000 END::BIGINT AS big,
      CASE i WHEN 0 THEN -9999999999999.99 WHEN 1 THEN 9999999999999.99 ELSE i * 1.25 - 3000 END::DECIMAL(15,2) AS dec64,
      ((i % 1000 - 500) / 10)::DECIMAL(4,1) AS dec32,
      CASE i WHEN 0 THEN -99999999999999.9999 ELSE i * 0.0001 END::DECIMAL(18,4) AS dec18,
      CASE i WHEN 1 THEN -12345678901234.567800 ELSE i * 2.5 END::DECIMAL(38,6) AS dec38,
      CASE i WHEN 0 THEN DATE '0001-01-01' WHEN 1 THEN DATE '9999-12-31' ELSE DATE '1969-12-01' + (i % 500)::INTEGER END AS dt,
      CASE i WHEN 0 THEN -3.4e38 ELSE i / 8 END::FLOAT AS f32,
      (i / 3)::DOUBLE AS f64,
      i % 3 = 0 AS flag,
      ['AIR', 'RAIL', 'TRUCK', 'ünïcødé', ''][i % 5 + 1] AS dict,
      'comment ' || i || repeat('x', i % 7) AS plain
    FROM range(10000) t(i)`;
  const declared = cols(
    'i32:int32 int:int32 tiny:int32 small:int32 big_small:int32 uint:uint32 big:int64 dec64:decimal dec32:decimal dec18:decimal dec38:decimal dt:date f32:float32 f64:float32 flag:boolean dict:string plain:string',
  );
  let expected: Row[];
  beforeAll(async () => {
    // What DuckDB holds for the same query, as Vixen represents each type.
    const reader = await duck.runAndReadAll(select);
    expected = reader.getRows().map((r) =>
      r.map((v, c) => {
        const type = declared[c]!.type;
        if (type === 'decimal') {
          const d = v as { value: bigint; scale: number };
          return d.scale <= 4 ? d.value * 10n ** BigInt(4 - d.scale) : d.value / 10n ** BigInt(d.scale - 4);
        }
        if (type === 'date') return (v as { days: number }).days;
        if (type === 'float32') return Math.fround(v as number) + 0;
        if (type === 'int64') return BigInt(v as bigint);
        if (type === 'int32' || type === 'uint32') return Number(v);
        return v as string | boolean;
      }),
    );
  });

  it.each(['snappy', 'zstd', 'gzip', 'brotli', 'lz4', 'lz4_raw', 'uncompressed'])('reads every type, compression %s, several row groups', async (codec) => {
    const path = await parquet(`all-${codec}.parquet`, select, `COMPRESSION ${codec}, ROW_GROUP_SIZE 2048`);
    const rows = await loadFactsFile(path, declared);
    expect(rows.length).toBe(10_000);
    expect(rows).toEqual(expected);
    // The extremes, spelled out rather than taken from DuckDB.
    expect(rows[0]!.slice(1, 13)).toEqual([-2147483648, -50, 0, 0, 4294967295, -(2n ** 63n), -99999999999999900n, -500000n, -999999999999999999n, 0n, day('0001-01-01'), Math.fround(-3.4e38)]);
    expect(rows[1]!.slice(1, 12)).toEqual([2147483647, -49, 1, 3, 1, 2n ** 63n - 1n, 99999999999999900n, -499000n, 1n, -123456789012345678n, day('9999-12-31')]);
    expect(rows[3]![15]).toBe('ünïcødé');
    expect(rows[4]![15]).toBe('');
  });

  it('reads Parquet version 2 encodings (delta, byte stream split), but not DuckDB\'s delta-encoded UINT32', async () => {
    const v2 = await parquet('v2.parquet', select, 'PARQUET_VERSION V2, ROW_GROUP_SIZE 2048');
    // hyparquet reads 4294967295 there as 2147483647: refused, not misread.
    expect(await message(loadFactsFile(v2, declared))).toBe(
      `${v2}: column 6 (uint; Parquet "uint") of v2 is UINT32 in DELTA_BINARY_PACKED pages, which are not read reliably; write it with Parquet version 1 encodings (DuckDB: PARQUET_VERSION V1)`,
    );
    const withoutUint = await parquet('v2-signed.parquet', `SELECT * EXCLUDE (uint) FROM (${select})`, 'PARQUET_VERSION V2, ROW_GROUP_SIZE 2048');
    expect(await loadFactsFile(withoutUint, declared.filter((c) => c.name !== 'uint'))).toEqual(expected.map((r) => r.filter((_, c) => c !== 5)));
  });

  it('covers what it says: several row groups, a dictionary-encoded string column and a plain one', async () => {
    const path = await parquet('groups.parquet', select, 'ROW_GROUP_SIZE 2048');
    const groups = parquetMetadata(readFileSync(path).buffer).row_groups;
    expect(groups.length).toBeGreaterThan(3);
    const dictionary = (name: string) => groups[0]!.columns.find((c) => c.meta_data?.path_in_schema[0] === name)!.meta_data!.encodings.some((e) => e.endsWith('_DICTIONARY'));
    expect([dictionary('dict'), dictionary('plain')]).toEqual([true, false]);
  });

  it('decodes only the columns kept, and checks only their types', async () => {
    const path = await parquet('kept.parquet', `SELECT i::INTEGER a, 'x' || i b, i * 0.5 c, i::DOUBLE d FROM range(3000) t(i)`);
    // d is a DOUBLE but declared int64: never read, so never checked (as the text loader skips unread fields).
    const columns = cols('a:int32 b:string c:decimal d:int64');
    const target = new EncodedRelation(columnTypes([columns[1]!, columns[2]!]));
    const strings = new StringInterner();
    await loadFactsFileInto(path, columns, target, strings, 'k', undefined, [1, 2]);
    const rows = target.rows(strings);
    expect(rows.length).toBe(3000);
    expect(rows[7]).toEqual(['x7', 35000n]);
    expect(strings.size).toBe(3000);
  });

  it('reads an empty file as an empty relation', async () => {
    const path = await parquet('empty.parquet', 'SELECT 1::INTEGER a WHERE false');
    expect(await loadFactsFile(path, cols('a:int32'))).toEqual([]);
  });

  it('says which column does not fit its declared type', async () => {
    const path = await parquet('typed.parquet', `SELECT 1::INTEGER a, 2.5::DOUBLE b, 'x' c, TIMESTAMP '2020-01-01 10:00:00' ts`);
    expect(await message(loadFactsFile(path, cols('a:int32 b:int64 c:string ts:date')))).toBe(
      `${path}: expected int64 in column 2 (b; Parquet "b") of typed, found DOUBLE\n` + `${path}: expected date in column 4 (ts; Parquet "ts") of typed, found INT64 (TIMESTAMP)`,
    );
    expect(await message(loadFactsFile(path, cols('a:int32 b:float32 c:int32 ts:int64')))).toMatch(/column 3 \(c; Parquet "c"\) of typed, found BYTE_ARRAY \(UTF8\)\n.*column 4 \(ts; Parquet "ts"\) of typed, found INT64 \(TIMESTAMP\)$/);
    // A decimal is not an integer: its fraction would be lost.
    const dec = await parquet('dec.parquet', 'SELECT 1.5::DECIMAL(9,2) d');
    expect(await message(loadFactsFile(dec, cols('d:int32')))).toBe(`${dec}: expected int32 in column 1 (d; Parquet "d") of dec, found INT32 (DECIMAL(9,2))`);
  });

  it('says when the column count differs', async () => {
    const path = await parquet('count.parquet', 'SELECT 1::INTEGER a, 2::INTEGER b, 3::INTEGER c');
    expect(await message(loadFactsFile(path, cols('a:int32 b:int32')))).toBe(
      `${path}: expected 2 columns for count, found 3 (a, b, c); Parquet columns are matched to the declaration by position`,
    );
  });

  it('names the row and column of a value out of range, too precise, or null', async () => {
    const big = await parquet('big.parquet', `SELECT i::BIGINT a, (i - 2)::INTEGER b FROM range(5) t(i) UNION ALL SELECT 3000000000, 1`);
    expect(await message(loadFactsFile(big, cols('a:int32 b:int32')))).toBe(`${big}: row 6: expected int32 in column 1 (a; Parquet "a") of big, found 3000000000 (out of range)`);
    expect(await message(loadFactsFile(big, cols('a:int64 b:uint32')))).toBe(`${big}: row 1: expected uint32 in column 2 (b; Parquet "b") of big, found -2 (out of range)`);
    const precise = await parquet('precise.parquet', `SELECT * FROM (VALUES (1.1234::DECIMAL(10,6)), (-2.12345::DECIMAL(10,6))) t(d)`);
    expect(await message(loadFactsFile(precise, cols('d:decimal')))).toBe(`${precise}: row 2: expected decimal in column 1 (d; Parquet "d") of precise, found -2.123450 (more than 4 fractional digits)`);
    const nulls = await parquet('nulls.parquet', `SELECT i::INTEGER a, CASE WHEN i = 4000 THEN NULL ELSE 'v' END s FROM range(5000) t(i)`, 'ROW_GROUP_SIZE 2048');
    expect(await message(loadFactsFile(nulls, cols('a:int32 s:string')))).toBe(`${nulls}: row 4001: expected string in column 2 (s; Parquet "s") of nulls, found null (Vixen has no nulls)`);
    const far = await parquet('far.parquet', `SELECT DATE '0001-01-01' - 800 d`);
    expect(await message(loadFactsFile(far, cols('d:date')))).toMatch(/row 1: expected date in column 1 \(d; Parquet "d"\) of far, found -\d{4}-\d\d-\d\d \(out of range: years 0000 to 9999\)$/);
  });

  it('decodes a larger file\'s row groups on the worker pool: the same rows, located errors', async () => {
    // Uncompressed and with many distinct strings, so the kept columns pass the size decoded in parallel.
    const select = `SELECT i::BIGINT a, 'name ' || (i * 7919 % 100003) s, ['AIR', 'RAIL', 'TRUCK'][i % 3 + 1] m, (i * 0.25)::DECIMAL(15,2) d
      FROM range(120000) t(i)`;
    const path = await parquet('wide.parquet', select, 'COMPRESSION uncompressed, ROW_GROUP_SIZE 8192');
    expect(parquetMetadata(readFileSync(path).buffer).row_groups.length).toBeGreaterThan(8);
    const rows = await loadFactsFile(path, cols('a:int64 s:string m:string d:decimal'));
    const expected = (await duck.runAndReadAll(select)).getRows().map((r) => [r[0] as bigint, r[1] as string, r[2] as string, (r[3] as { value: bigint }).value * 100n]);
    expect(rows).toEqual(expected);
    // The tasks' strings sorted together: each distinct one takes one of the run's ids, however many tasks met it.
    const strings = new StringInterner();
    await loadFactsFileInto(path, cols('a:int64 s:string m:string d:decimal'), new EncodedRelation(['string', 'string']), strings, 'wide', undefined, [1, 2]);
    expect(strings.size).toBe(new Set(expected.flatMap((r) => [r[1], r[2]])).size);
    // Not all ASCII: each task's strings decoded and added as they are, with the same rows.
    const accented = select.replace("'TRUCK'", "'TRÜCK'");
    const utf8 = await parquet('wide-utf8.parquet', accented, 'COMPRESSION uncompressed, ROW_GROUP_SIZE 8192');
    expect(await loadFactsFile(utf8, cols('a:int64 s:string m:string d:decimal'))).toEqual(expected.map((r) => r.map((v) => (v === 'TRUCK' ? 'TRÜCK' : v))));
    const nulls = await parquet('wide-null.parquet', `SELECT * REPLACE (CASE WHEN a = 100000 THEN NULL ELSE s END AS s) FROM (${select})`, 'COMPRESSION uncompressed, ROW_GROUP_SIZE 8192');
    expect(await message(loadFactsFile(nulls, cols('a:int64 s:string m:string d:decimal')))).toBe(
      `${nulls}: row 100001: expected string in column 2 (s; Parquet "s") of wide-null, found null (Vixen has no nulls)`,
    );
  });

  it('splits the columns of a file of few row groups among tasks: the same rows, strings and messages', async () => {
    // One or two row groups: each group's columns are decoded by several tasks and joined, string ids moved past
    // the strings of the tasks before.
    const select = `SELECT 'name ' || (i * 7919 % 100003) s, i::BIGINT a, ['AIR', 'RAIL', 'TRUCK'][i % 3 + 1] m, (i * 0.25)::DECIMAL(15,2) d, 'c' || (i % 1000) c
      FROM range(120000) t(i)`;
    const columns = cols('s:string a:int64 m:string d:decimal c:string');
    const expected = (await duck.runAndReadAll(select)).getRows().map((r) => [r[0] as string, r[1] as bigint, r[2] as string, (r[3] as { value: bigint }).value * 100n, r[4] as string]);
    for (const groups of [1, 2]) {
      const path = await parquet(`split-${groups}.parquet`, select, `COMPRESSION uncompressed, ROW_GROUP_SIZE ${120000 / groups}`);
      expect(parquetMetadata(readFileSync(path).buffer).row_groups.length).toBe(groups);
      const tasks = parquetLoadTimes.tasks;
      expect(await loadFactsFile(path, columns)).toEqual(expected);
      // Covers what it says: more tasks than groups, where the pool has two workers or more.
      if (workerCount() >= 2) expect(parquetLoadTimes.tasks - tasks).toBeGreaterThan(groups);
      const strings = new StringInterner();
      const target = new EncodedRelation(['string', 'decimal', 'string']);
      await loadFactsFileInto(path, columns, target, strings, 'split', undefined, [0, 3, 4]);
      expect(target.rows(strings)).toEqual(expected.map((r) => [r[0], r[3], r[4]]));
    }
    const nulls = await parquet('split-null.parquet', `SELECT * REPLACE (CASE WHEN a = 100000 THEN NULL ELSE c END AS c) FROM (${select})`, 'COMPRESSION uncompressed, ROW_GROUP_SIZE 120000');
    expect(await message(loadFactsFile(nulls, columns))).toBe(`${nulls}: row 100001: expected string in column 5 (c; Parquet "c") of split-null, found null (Vixen has no nulls)`);
  });

  it('parquetRows reads a file\'s bytes into API rows as loadFactsFile reads it, with the same messages', async () => {
    const bytes = (path: string): ArrayBuffer => new Uint8Array(readFileSync(path)).buffer;
    const path = await parquet('bytes.parquet', select, 'COMPRESSION zstd, ROW_GROUP_SIZE 2048');
    expect(await parquetRowCount('all.parquet', bytes(path))).toBe(10_000);
    expect(await parquetRows('all.parquet', bytes(path), decl('all', declared))).toEqual(expected);
    const typed = await parquet('typed.parquet', `SELECT 1::INTEGER a, 2.5::DOUBLE b, 'x' c, TIMESTAMP '2020-01-01 10:00:00' ts`);
    const columns = cols('a:int32 b:int64 c:string ts:date');
    expect(await message(parquetRows(typed, bytes(typed), decl('typed', columns)))).toBe(await message(loadFactsFile(typed, columns)));
    const big = await parquet('big.parquet', `SELECT i::BIGINT a FROM range(5) t(i) UNION ALL SELECT 3000000000`);
    expect(await message(parquetRows('big.parquet', bytes(big), decl('big', cols('a:int32'))))).toBe(
      'big.parquet: row 6: expected int32 in column 1 (a; Parquet "a") of big, found 3000000000 (out of range)',
    );
    expect(await message(parquetRowCount('no.parquet', new TextEncoder().encode('a,b\n1,2\n').buffer))).toMatch(/^no\.parquet: not a valid Parquet file: /);
  });

  it('addStrings decodes a decode\'s strings as TextDecoder decodes each: ASCII, other UTF-8, bytes that are not UTF-8', () => {
    const decode = (parts: number[][]): string[] => {
      const interner = new ByteInterner();
      for (const p of parts) interner.id(Uint8Array.from(p), 0, p.length, 1);
      const strings = new StringInterner();
      return Array.from(addStrings(interner.table(), strings), (id) => strings.text(id));
    };
    const utf8 = (s: string): number[] => [...new TextEncoder().encode(s)];
    const each = (parts: number[][]): string[] => parts.map((p) => new TextDecoder().decode(Uint8Array.from(p)));
    // All ASCII: one decode, cut at the byte offsets.
    const ascii = [utf8('AIR'), utf8(''), utf8('a longer string of text')];
    expect(decode(ascii)).toEqual(['AIR', '', 'a longer string of text']);
    // Lone bytes that are not UTF-8 become one U+FFFD each, cut or not; a sequence cut between two strings does not
    // join up again, nor does a character of several bytes go unnoticed.
    for (const parts of [[[0x61, 0xff], [0x80, 0x62], utf8('x')], [[0xe2, 0x82], [0xac], utf8('y')], [utf8('é'), utf8('ab')], [[0xf0, 0x9f, 0x98, 0x80], [0x7a]]]) {
      expect(decode(parts)).toEqual(each(parts));
    }
  });

  it('ByteInterner.appendPlain keeps a plain page\'s strings in order beside looked-up ones, and nothing of a cut page', () => {
    let seed = 3;
    const next = (n: number): number => (seed = (Math.imul(seed, 1103515245) + 12345) >>> 0) % n;
    const utf8 = new TextEncoder();
    const plain = (strings: string[]): Uint8Array => {
      const parts = strings.map((s) => utf8.encode(s));
      const page = new Uint8Array(parts.reduce((n, p) => n + 4 + p.length, 0));
      let at = 0;
      for (const p of parts) {
        new DataView(page.buffer).setUint32(at, p.length, true);
        page.set(p, at + 4);
        at += 4 + p.length;
      }
      return page;
    };
    const interner = new ByteInterner();
    const expected: string[] = [];
    const ids: number[] = [];
    // Pages of short and long strings (a byte loop and a copy), some repeated, between lookups (which rehash).
    for (let round = 0; round < 60; round++) {
      const strings = Array.from({ length: next(200) }, () => `s${next(50)}`.padEnd(next(3) === 0 ? 70 + next(40) : next(20), 'é'));
      const into = new Uint32Array(strings.length);
      expect(interner.appendPlain(plain(strings), 0, strings.length, 1, into)).toBe(strings.length);
      ids.push(...into);
      expected.push(...strings);
      for (let k = next(100); k > 0; k--) {
        const s = `looked ${next(300)}`;
        const b = utf8.encode(s);
        ids.push(interner.id(b, 0, b.length, 2));
        expected.push(s);
      }
    }
    const table = interner.table();
    const text = (id: number): string => new TextDecoder().decode(table.bytes.subarray(id === 0 ? 0 : table.ends[id - 1], table.ends[id]));
    expect(ids.map(text)).toEqual(expected);
    // Looked-up strings once each, appended ones as often as they came.
    const looked = new Set(expected.filter((s) => s.startsWith('looked')));
    expect(new Set(ids.filter((_, i) => expected[i]!.startsWith('looked'))).size).toBe(looked.size);
    expect(table.ends.length).toBe(looked.size + expected.filter((s) => !s.startsWith('looked')).length);
    expect(ids.every((id, i) => table.columns[id] === (expected[i]!.startsWith('looked') ? 2 : 1))).toBe(true);
    // A page that ends inside its third value, or whose length has the top bit set: none of its strings are kept.
    const page = plain(['a', 'bc', 'def']);
    const size = table.ends.length;
    expect(interner.appendPlain(page.subarray(0, page.length - 1), 0, 3, 1, new Uint32Array(3))).toBe(2);
    const huge = plain(['a', 'b']);
    huge[8] = 0xff;
    expect(interner.appendPlain(huge, 0, 2, 1, new Uint32Array(2))).toBe(1);
    expect(interner.table().ends.length).toBe(size);
  });

  /** A random RLE / bit-packed hybrid stream of `width`-bit values (`value` draws one) and how many values it holds. */
  const hybrid = (width: number, next: (n: number) => number, value: () => number): { page: Uint8Array; n: number } => {
    const varint = (v: number, out: number[]): void => {
      for (; v >= 0x80; v = Math.floor(v / 128)) out.push((v % 128) | 0x80);
      out.push(v);
    };
    // Runs of either kind; the last bit-packed group may hold more values than the page.
    const bytes: number[] = [];
    let n = 0;
    for (let runs = 1 + next(6); runs > 0; runs--) {
      if (next(2) === 0) {
        const count = 1 + next(300);
        varint(count * 2, bytes);
        const v = value();
        for (let i = 0; i < width; i += 8) bytes.push(Math.floor(v / 2 ** i) % 256);
        n += count;
      } else {
        const groups = 1 + next(40);
        varint(groups * 2 + 1, bytes);
        let acc = 0n;
        for (let i = 0; i < groups * 8; i++) acc |= BigInt(value()) << BigInt(i * width);
        for (let i = 0; i < groups * width; i++) bytes.push(Number((acc >> BigInt(8 * i)) & 255n));
        n += groups * 8 - (runs === 1 ? next(8) : 0);
      }
    }
    return { page: Uint8Array.from(bytes), n };
  };
  const hyparquet = (page: Uint8Array, width: number, n: number): Uint32Array => {
    const out = new Uint32Array(n);
    readRleBitPackedHybrid({ view: new DataView(page.buffer), offset: 0 }, width, out, page.length);
    return out;
  };

  it('readIndices decodes RLE / bit-packed hybrid runs as hyparquet does, every width up to 24', () => {
    let seed = 11;
    const next = (n: number): number => (seed = (Math.imul(seed, 1103515245) + 12345) >>> 0) % n;
    for (let width = 1; width <= 24; width++) {
      for (let trial = 0; trial < 20; trial++) {
        const value = () => next(2 ** Math.min(width, 20)) * 2 ** Math.max(0, width - 20) + next(2 ** Math.max(0, width - 20));
        const { page, n } = hybrid(width, next, value);
        const got = new Uint32Array(n);
        readIndices(page, 0, width, got, 'c');
        expect(got).toEqual(hyparquet(page, width, n));
      }
    }
    expect(() => readIndices(Uint8Array.of(2 * 5, 1), 0, 3, new Uint32Array(8), 'c')).toThrow('column "c" has a page whose dictionary indices end after 5 of its 8 values');
  });

  it('firstNull finds the first 0 among definition levels as hyparquet\'s levels do', () => {
    let seed = 5;
    const next = (n: number): number => (seed = (Math.imul(seed, 1103515245) + 12345) >>> 0) % n;
    for (let trial = 0; trial < 2000; trial++) {
      // Mostly 1s (no null), so that nulls come late, early and not at all.
      const rare = 1 + next(3000);
      const { page, n } = hybrid(1, next, () => (next(rare) === 0 ? 0 : 1));
      expect(firstNull(page, n, 'c')).toBe(hyparquet(page, 1, n).indexOf(0));
    }
    expect(() => firstNull(Uint8Array.of(2 * 5, 1), 8, 'c')).toThrow('column "c" has a page whose definition levels end after 5 of its 8 values');
  });

  it('says a corrupt or truncated file is not valid Parquet', async () => {
    const good = readFileSync(await parquet('good.parquet', `SELECT i::INTEGER a, 'row ' || i s FROM range(5000) t(i)`, 'COMPRESSION zstd'));
    const truncated = join(root, 'truncated.parquet');
    writeFileSync(truncated, good.subarray(0, good.length - 100));
    expect(await message(loadFactsFile(truncated, cols('a:int32 s:string')))).toMatch(new RegExp(`^${truncated}: not a valid Parquet file: `));
    // The footer intact, the data pages overwritten.
    const corrupt = join(root, 'corrupt.parquet');
    const bytes = Buffer.from(good);
    bytes.fill(0x5a, 4, Math.floor(bytes.length / 2));
    writeFileSync(corrupt, bytes);
    expect(await message(loadFactsFile(corrupt, cols('a:int32 s:string')))).toMatch(new RegExp(`^${corrupt}: not a valid Parquet file: `));
  });
});

/** A vector of `type` from raw buffers (apache-arrow's builders take decimals only as words). */
const raw = (type: A.DataType, length: number, data: Uint32Array): A.Vector => A.makeVector(A.makeData({ type, length, data } as never));

/** Decimal128 words of unscaled integers. */
const decimalWords = (values: bigint[]): Uint32Array => {
  const words = new BigUint64Array(values.length * 2);
  values.forEach((v, i) => {
    words[2 * i] = BigInt.asUintN(64, v);
    words[2 * i + 1] = BigInt.asUintN(64, v >> 64n);
  });
  return new Uint32Array(words.buffer);
};

describe('Arrow IPC', () => {
  const batch = (from: number, n: number): A.Table => {
    const is = Array.from({ length: n }, (_, k) => from + k);
    return new A.Table({
      i8: A.vectorFromArray(is.map((i) => (i % 256) - 128), new A.Int8()),
      i16: A.vectorFromArray(is.map((i) => 0 - i), new A.Int16()),
      i32: A.vectorFromArray(is.map((i) => (i === 0 ? -(2 ** 31) : i === 1 ? 2 ** 31 - 1 : i * 3)), new A.Int32()),
      i64: A.vectorFromArray(is.map((i) => (i === 0 ? -(2n ** 63n) : i === 1 ? 2n ** 63n - 1n : BigInt(i) * 1000003n)), new A.Int64()),
      u8: A.vectorFromArray(is.map((i) => i % 256), new A.Uint8()),
      u32: A.vectorFromArray(is.map((i) => (i === 0 ? 2 ** 32 - 1 : i)), new A.Uint32()),
      u64: A.vectorFromArray(is.map((i) => BigInt(i) * 7n), new A.Uint64()),
      dec: raw(new A.Decimal(2, 15, 128), n, decimalWords(is.map((i) => (i === 0 ? -999999999999999n : BigInt(i) * 125n - 3000n)))),
      // Row 1 needs more than 64 bits in the file, not once scaled to 4 digits.
      big: raw(new A.Decimal(6, 38, 128), n, decimalWords(is.map((i) => (i === 1 ? -(10n ** 20n) : BigInt(i) * 100n)))),
      d32: A.vectorFromArray(is.map((i) => new Date((i - 500) * 86_400_000)), new A.DateDay()),
      d64: A.vectorFromArray(is.map((i) => new Date(i * 86_400_000)), new A.DateMillisecond()),
      f32: A.vectorFromArray(is.map((i) => i / 4), new A.Float32()),
      f64: A.vectorFromArray(is.map((i) => i / 3), new A.Float64()),
      b: A.vectorFromArray(is.map((i) => i % 3 === 0), new A.Bool()),
      s: A.vectorFromArray(is.map((i) => `s${i}é`), new A.Utf8()),
      ls: A.vectorFromArray(is.map((i) => `large ${i}`), new A.LargeUtf8()),
      dict: A.vectorFromArray(is.map((i) => ['AIR', 'RAIL', ''][i % 3]!), new A.Dictionary(new A.Utf8(), new A.Int32())),
    });
  };
  const declared = cols('i8:int32 i16:int32 i32:int32 i64:int64 u8:uint32 u32:uint32 u64:int64 dec:decimal big:decimal d32:date d64:date f32:float32 f64:float32 b:boolean s:string ls:string dict:string');
  const expectedRow = (i: number): Row => [
    (i % 256) - 128,
    0 - i,
    i === 0 ? -(2 ** 31) : i === 1 ? 2 ** 31 - 1 : i * 3,
    i === 0 ? -(2n ** 63n) : i === 1 ? 2n ** 63n - 1n : BigInt(i) * 1000003n,
    i % 256,
    i === 0 ? 2 ** 32 - 1 : i,
    BigInt(i) * 7n,
    (i === 0 ? -999999999999999n : BigInt(i) * 125n - 3000n) * 100n,
    i === 1 ? -(10n ** 18n) : BigInt(i),
    i - 500,
    i,
    Math.fround(i / 4),
    Math.fround(i / 3),
    i % 3 === 0,
    `s${i}é`,
    `large ${i}`,
    ['AIR', 'RAIL', ''][i % 3]!,
  ];
  // Three record batches, 0..999, 1000..2999 and 3000..3499: slices of one table, so they share its string
  // dictionary (the file format has no replacement dictionaries) and their data starts at an offset.
  const table = (): A.Table => {
    const t = batch(0, 3500);
    return new A.Table([t.slice(0, 1000), t.slice(1000, 3000), t.slice(3000)].flatMap((s) => s.batches));
  };
  const all = Array.from({ length: 3500 }, (_, i) => expectedRow(i));

  it.each([
    ['file format, .arrow', 'all.arrow', 'file'],
    ['file format, .feather', 'all.feather', 'file'],
    ['stream format', 'stream.arrow', 'stream'],
  ] as const)('reads every type, several record batches: %s', async (_, name, format) => {
    const t = table();
    expect(t.batches.length).toBe(3);
    const rows = await loadFactsFile(arrow(name, t, format), declared);
    expect(rows).toEqual(all);
  });

  it('decodes only the columns kept', async () => {
    const path = arrow('kept.arrow', table());
    const target = new EncodedRelation(columnTypes([declared[7]!, declared[16]!]));
    const strings = new StringInterner();
    await loadFactsFileInto(path, declared, target, strings, 'k', undefined, [7, 16]);
    expect(target.rows(strings)).toEqual(all.map((r) => [r[7], r[16]]));
    // The dictionary's three entries, interned once per dictionary, not once per row.
    expect(strings.strings.length).toBeLessThanOrEqual(9);
  });

  it('says which column does not fit its declared type, or that the column count differs', async () => {
    const path = arrow('types.arrow', new A.Table({ a: A.vectorFromArray([1.5], new A.Float64()), s: A.vectorFromArray(['x'], new A.Utf8()) }));
    expect(await message(loadFactsFile(path, cols('a:int64 s:string')))).toBe(`${path}: expected int64 in column 1 (a; Arrow "a") of types, found Float64`);
    expect(await message(loadFactsFile(path, cols('a:float32 s:int32')))).toBe(`${path}: expected int32 in column 2 (s; Arrow "s") of types, found Utf8`);
    expect(await message(loadFactsFile(path, cols('a:float32')))).toBe(`${path}: expected 1 columns for types, found 2 (a, s); Arrow columns are matched to the declaration by position`);
  });

  it('names the row and column of a null or a value out of range', async () => {
    const nulls = arrow('nulls.arrow', new A.Table({ a: A.vectorFromArray([1, 2, null], new A.Int32()) }));
    expect(await message(loadFactsFile(nulls, cols('a:int32')))).toBe(`${nulls}: row 3: expected int32 in column 1 (a; Arrow "a") of nulls, found null (Vixen has no nulls)`);
    const dictNull = arrow('dict-null.arrow', new A.Table({ s: A.vectorFromArray(['a', null, 'b'], new A.Dictionary(new A.Utf8(), new A.Int32())) }));
    expect(await message(loadFactsFile(dictNull, cols('s:string')))).toMatch(/row 2: expected string in column 1 \(s; Arrow "s"\) of dict-null, found null/);
    const range = arrow('range.arrow', new A.Table({ a: A.vectorFromArray([1n, 2n ** 40n], new A.Int64()) }));
    expect(await message(loadFactsFile(range, cols('a:int32')))).toBe(`${range}: row 2: expected int32 in column 1 (a; Arrow "a") of range, found 1099511627776 (out of range)`);
    const u64 = arrow('u64.arrow', new A.Table({ a: A.vectorFromArray([2n ** 63n], new A.Uint64()) }));
    expect(await message(loadFactsFile(u64, cols('a:int64')))).toMatch(/row 1: .*found 9223372036854775808 \(out of range\)$/);
  });

  it('says a corrupt, truncated or empty file is not valid Arrow', async () => {
    const good = A.tableToIPC(table(), 'file');
    const cases: Record<string, Uint8Array> = {
      'corrupt.arrow': Buffer.from('this is not an Arrow file, nor anything else'),
      'truncated.arrow': good.subarray(0, good.length >> 1),
      'empty.arrow': new Uint8Array(0),
    };
    for (const [name, bytes] of Object.entries(cases)) {
      const path = join(root, name);
      writeFileSync(path, bytes);
      expect(await message(loadFactsFile(path, declared))).toMatch(new RegExp(`^${path}: not a valid Arrow file: `));
    }
    expect(await message(loadFactsFile(join(root, 'truncated.arrow'), declared))).toMatch(/: it starts as the IPC file format but does not end with its footer \(cut short\?\)$/);
    expect(await message(loadFactsFile(join(root, 'empty.arrow'), declared))).toMatch(/: it ends before its schema$/);
  });
});

it('reports the bytes read, a row group or record batch at a time', async () => {
  const columns = cols('a:int32 s:string');
  const heard = async (path: string): Promise<number[]> => {
    const bytes: number[] = [];
    await loadFactsFileInto(path, columns, new EncodedRelation(columnTypes(columns)), new StringInterner(), 'p', undefined, undefined, (n) => bytes.push(n));
    return bytes;
  };
  const pq = await parquet('progress.parquet', `SELECT i::INTEGER a, 'row ' || i s FROM range(10000) t(i)`, 'ROW_GROUP_SIZE 2048');
  const groups = await heard(pq);
  expect(groups.length).toBe(parquetMetadata(readFileSync(pq).buffer).row_groups.length);
  expect(groups.every((n) => n > 0)).toBe(true);
  const t = new A.Table({ a: A.vectorFromArray(Array.from({ length: 3000 }, (_, i) => i), new A.Int32()), s: A.vectorFromArray(Array.from({ length: 3000 }, (_, i) => `r${i}`), new A.Utf8()) });
  const batches = await heard(arrow('progress.arrow', new A.Table([t.slice(0, 1000), t.slice(1000)].flatMap((x) => x.batches))));
  expect(batches.length).toBe(2);
  expect(batches.every((n) => n > 4000)).toBe(true);
});

describe('facts directories', () => {

  it('find <relation>.parquet and .arrow, and list them in messages', async () => {
    const dir = mkdtempSync(join(root, 'dir-'));
    await duck.run(`COPY (SELECT 1::INTEGER x, 2::INTEGER y) TO '${join(dir, 'edge.parquet')}' (FORMAT PARQUET)`);
    writeFileSync(join(dir, 'node.arrow'), A.tableToIPC(new A.Table({ n: A.vectorFromArray([7], new A.Int32()) })));
    const relations = [decl('edge', cols('x:int32 y:int32')), decl('node', cols('n:int32')), decl('other', cols('n:int32'))];
    expect(await loadFactsDir(dir, relations, ['edge', 'node'])).toEqual({ edge: [[1, 2]], node: [[7]] });
    expect(await message(loadFactsDir(dir, relations, ['other']))).toBe(
      `no facts file for relation other in ${dir}: expected one of other.csv, other.tsv, other.facts, other.tbl, other.parquet, other.arrow, other.feather`,
    );
    writeFileSync(join(dir, 'edge.csv'), '1,2\n');
    expect(await message(loadFactsDir(dir, relations, ['edge']))).toBe(`ambiguous facts for relation edge in ${dir}: found edge.csv and edge.parquet; keep exactly one`);
  });
});
