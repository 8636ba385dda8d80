/**
 * Parquet facts files, read with hyparquet (hyparquet-compressors adds GZIP, ZSTD, Brotli and LZ4 to its Snappy):
 * one row group at a time, only the columns the program reads decoded, written column-wise into row words
 * (column-words.ts). Strings are interned as hyparquet decodes them, so a dictionary-encoded column interns each
 * dictionary entry once per row group and its rows get the entries' ids.
 */
import type { FileHandle } from 'node:fs/promises';
import { parquetMetadataAsync, parquetSchema, parquetScan, type AsyncBuffer, type SchemaElement, type SchemaTree } from 'hyparquet';
import { compressors } from 'hyparquet-compressors';
import { VixenError, errorAt } from '@vixen/queryplan';
import { ColumnWriter, fromReader, type BinaryFactsLoader, type ColumnKind, type FileColumn } from './column-words.js';
import { openFactsFile } from './open-file.js';

/** Bytes `start..end` of an open file, as hyparquet asks for them. */
async function readRange(handle: FileHandle, start: number, end: number): Promise<ArrayBuffer> {
  const bytes = new Uint8Array(end - start);
  for (let done = 0; done < bytes.length; ) {
    const { bytesRead } = await handle.read(bytes, done, bytes.length - done, start + done);
    if (bytesRead === 0) throw new Error(`the file ended at byte ${start + done}, before byte ${end}`);
    done += bytesRead;
  }
  return bytes.buffer;
}

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

/** Appends the rows of the Parquet file `path` to `target` (see `loadFactsFileInto`). */
export const loadParquetInto: BinaryFactsLoader = async (path, columns, target, strings, relation, kept, onBytes) => {
  const { handle, size } = await openFactsFile(path);
  try {
    const file: AsyncBuffer = { byteLength: size, slice: (start, end = size) => readRange(handle, start, end) };
    const metadata = await fromReader(path, 'Parquet', () => parquetMetadataAsync(file));
    const top = parquetSchema(metadata).children;
    const writer = new ColumnWriter(path, 'Parquet', relation, columns, kept, top.map(fileColumn), strings);
    writer.check();
    for (const c of kept) {
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
    for (const [g, { rowStart, rowEnd }] of scan.ranges.entries()) {
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
      target.adopt(words);
      onBytes?.(kept.reduce((n, c) => n + Number(metadata.row_groups[g]?.columns[c]?.meta_data?.total_compressed_size ?? 0), 0));
    }
  } finally {
    await handle.close();
  }
};
