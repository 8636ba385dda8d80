/**
 * Parquet facts decoded with hyparquet (hyparquet-compressors adds GZIP, ZSTD, Brotli and LZ4 to its Snappy) from
 * any AsyncBuffer: which column types fit the declaration and row groups into row words (column-words.ts). No Node
 * API, so the playground reads a dropped file with the same rules and messages as `--facts` (parquet.ts adds the
 * files and the worker pool). Strings are interned as hyparquet decodes them, so a dictionary-encoded column
 * interns each dictionary entry once per row group and its rows get the entries' ids.
 */
import { parquetMetadataAsync, parquetSchema, parquetScan, type AsyncBuffer, type FileMetaData, type SchemaElement, type SchemaTree } from 'hyparquet';
import { compressors } from 'hyparquet-compressors';
import { VixenError, errorAt, type Column, type RelationDecl, type Row } from '@vixen/queryplan';
import { decodeRow, type StringIds } from '../encoding.js';
import { ColumnWriter, fromReader, type ColumnKind, type FileColumn } from './column-words.js';
import { columnTypes, factsColumns, StringInterner } from './encoded.js';

/** The Vixen side of a Parquet column's physical and logical types. */
function kindOf(e: SchemaElement): ColumnKind {
  const logical = e.logical_type?.type;
  const converted = e.converted_type;
  if (logical === 'DECIMAL' || converted === 'DECIMAL') {
    // hyparquet decodes BYTE_ARRAY decimals only to floats; the other layouts stay exact (see `exact`).
    return e.type === 'BYTE_ARRAY' ? { kind: 'unsupported' } : { kind: 'integer', scale: e.scale ?? 0 };
  }
  switch (e.type) {
    case 'INT32':
    case 'INT64':
      if (logical === 'DATE' || converted === 'DATE') return e.type === 'INT32' ? { kind: 'date' } : { kind: 'unsupported' };
      return (logical === undefined || logical === 'INTEGER') && (converted === undefined || /^U?INT_/.test(converted)) ? { kind: 'integer', scale: 0 } : { kind: 'unsupported' };
    case 'FLOAT':
    case 'DOUBLE':
      return logical === undefined ? { kind: 'float' } : { kind: 'unsupported' };
    case 'BOOLEAN':
      return { kind: 'boolean' };
    case 'BYTE_ARRAY':
      // Text, annotated or not (many writers leave the annotation out).
      return (logical === undefined || logical === 'STRING' || logical === 'ENUM') && (converted === undefined || converted === 'UTF8' || converted === 'ENUM') ? { kind: 'string' } : { kind: 'unsupported' };
    default:
      return { kind: 'unsupported' };
  }
}

/** `INT64 (DECIMAL(15,2))`, `BYTE_ARRAY (STRING)`, `a group of 2 columns`: a column's type for messages. */
function typeName(t: SchemaTree): string {
  const e = t.element;
  if (t.children.length > 0) return `a group of ${t.children.length} columns`;
  const logical = e.logical_type;
  const note =
    logical?.type === 'DECIMAL' || e.converted_type === 'DECIMAL'
      ? `DECIMAL(${e.precision},${e.scale ?? 0})`
      : logical?.type === 'INTEGER'
        ? `${logical.isSigned ? 'INT' : 'UINT'}(${logical.bitWidth})`
        : (logical?.type ?? e.converted_type);
  return `${e.repetition_type === 'REPEATED' ? 'a list of ' : ''}${e.type ?? 'GROUP'}${note ? ` (${note})` : ''}`;
}

function fileColumn(t: SchemaTree): FileColumn {
  const flat = t.children.length === 0 && t.element.repetition_type !== 'REPEATED';
  return { name: t.element.name, type: typeName(t), kind: flat ? kindOf(t.element) : { kind: 'unsupported' } };
}

/** A FIXED_LEN_BYTE_ARRAY decimal's big-endian two's complement bytes as an integer. */
function bigEndian(bytes: Uint8Array): bigint {
  let v = 0n;
  for (const b of bytes) v = (v << 8n) | BigInt(b);
  return BigInt.asIntN(bytes.length * 8, v);
}

/** The file's metadata, its columns' writer (checked against the declaration), and the file as hyparquet reads it. */
export async function openParquet(path: string, file: AsyncBuffer, columns: readonly Column[], relation: string, kept: readonly number[], strings: StringIds) {
  const metadata = await fromReader(path, 'Parquet', () => parquetMetadataAsync(file));
  const top = parquetSchema(metadata).children;
  const writer = new ColumnWriter(path, 'Parquet', relation, columns, kept, top.map(fileColumn), strings);
  return { file, metadata, top, writer };
}

/** Rows of row groups [first, end) of a Parquet file, each group's words with the bytes of its kept columns. */
export interface GroupWords {
  words: Uint32Array;
  bytes: number;
}

/** Decodes row groups [first, end) of an opened Parquet file (`openParquet`), one group's words at a time. */
export async function* readGroups({ file, metadata, top, writer }: Awaited<ReturnType<typeof openParquet>>, path: string, strings: StringIds, first: number, end: number): AsyncGenerator<GroupWords> {
  const kept = writer.kept;
  const names = kept.map((c) => top[c]!.element.name);
  for (const c of kept) {
    // hyparquet turns decimals into floats; without the annotation it hands over the exact unscaled integers.
    if (top[c]!.element.converted_type === 'DECIMAL') delete top[c]!.element.converted_type;
  }
  const decoder = new TextDecoder();
  const scan = await fromReader(path, 'Parquet', () =>
    parquetScan({
      file,
      metadata,
      columns: names,
      compressors,
      parsers: {
        dateFromDays: (days: number) => days,
        // Interned as decoded: a dictionary page's entries once each, its rows then take their ids.
        stringFromBytes: (bytes: Uint8Array | undefined) => bytes && strings.id(decoder.decode(bytes)),
      },
    }),
  );
  // Without a filter, the scan has one range per row group, in order.
  for (let g = first; g < end; g++) {
    const { rowStart, rowEnd } = scan.ranges[g]!;
    const words = new Uint32Array((rowEnd - rowStart) * writer.width);
    for (let k = 0; k < kept.length; k++) {
      let values = await fromReader(path, 'Parquet', async () => {
        const v = await scan.readColumn({ column: names[k]!, rowStart, rowEnd });
        if (v.length !== rowEnd - rowStart) throw new Error(`column "${names[k]}" has ${v.length} values in a row group of ${rowEnd - rowStart} rows`);
        return v;
      });
      if (top[kept[k]!]!.element.type === 'FIXED_LEN_BYTE_ARRAY') values = Array.from(values as ArrayLike<Uint8Array | undefined>, (b) => b && bigEndian(b));
      writer.write(words, rowStart, k, values);
    }
    yield { words, bytes: keptBytes(metadata, kept, g, g + 1) };
  }
}

/** Compressed bytes of the `kept` columns in row groups [first, end). */
export function keptBytes(metadata: FileMetaData, kept: readonly number[], first: number, end: number): number {
  let n = 0;
  for (let g = first; g < end; g++) for (const c of kept) n += Number(metadata.row_groups[g]?.columns[c]?.meta_data?.total_compressed_size ?? 0);
  return n;
}

/**
 * Throws a VixenError where an opened file's columns do not fit the declaration (see ColumnWriter.check), or a kept
 * column is one hyparquet does not read reliably.
 */
export function checkParquet({ metadata, top, writer }: Awaited<ReturnType<typeof openParquet>>, path: string): void {
  writer.check();
  for (const c of writer.kept) {
    const e = top[c]!.element;
    const unsigned32 = e.type === 'INT32' && (e.converted_type === 'UINT_32' || (e.logical_type?.type === 'INTEGER' && !e.logical_type.isSigned && e.logical_type.bitWidth === 32));
    // hyparquet keeps 32 bits of a delta page's first value, which DuckDB writes unsigned: from 2^31 up it comes
    // out wrong. An error, never a wrong answer.
    if (unsigned32 && metadata.row_groups.some((g) => g.columns[c]?.meta_data?.encodings.includes('DELTA_BINARY_PACKED'))) {
      throw new VixenError(
        errorAt(`${path}: ${writer.where(c)} is UINT32 in DELTA_BINARY_PACKED pages, which are not read reliably; write it with Parquet version 1 encodings (DuckDB: PARQUET_VERSION V1)`),
      );
    }
  }
}

/** How many rows the Parquet file `bytes` holds, by its metadata; a VixenError naming `path` if it is not one. */
export async function parquetRowCount(path: string, bytes: ArrayBuffer): Promise<number> {
  const metadata = await fromReader(path, 'Parquet', () => parquetMetadataAsync(bytes));
  return Number(metadata.num_rows);
}

/**
 * API rows of relation `rel` from the Parquet file `bytes` (named `path` in messages): every facts column of the
 * declaration, decoded into row words as `--facts` loads them, then read back as values.
 */
export async function parquetRows(path: string, bytes: ArrayBuffer, rel: RelationDecl): Promise<Row[]> {
  const columns = factsColumns(rel);
  const kept = columns.map((_, c) => c);
  const strings = new StringInterner();
  const opened = await openParquet(path, bytes, columns, rel.name, kept, strings);
  checkParquet(opened, path);
  const types = columnTypes(columns);
  const rows: Row[] = [];
  for await (const { words } of readGroups(opened, path, strings, 0, opened.metadata.row_groups.length)) {
    for (let at = 0; at < words.length; at += opened.writer.width) rows.push(decodeRow(words, at, types, strings));
  }
  return rows;
}
