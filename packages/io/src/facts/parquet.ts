/**
 * Parquet facts files, read with hyparquet (hyparquet-compressors adds GZIP, ZSTD, Brotli and LZ4 to its Snappy):
 * row groups decoded on the worker pool (hyparquet decodes value by value on one thread), only the columns the
 * program reads, written column-wise into row words (column-words.ts). Strings are interned as hyparquet decodes them, so a dictionary-encoded column interns each
 * dictionary entry once per row group and its rows get the entries' ids.
 */
import type { FileHandle } from 'node:fs/promises';
import { parquetMetadataAsync, parquetSchema, parquetScan, type AsyncBuffer, type FileMetaData, type SchemaElement, type SchemaTree } from 'hyparquet';
import { compressors } from 'hyparquet-compressors';
import { VixenError, errorAt, type Column, type Diagnostic } from '@vixen/queryplan';
import type { StringIds } from '../encoding.js';
import { runInWorker, workerCount } from '../parallel/pool.js';
import { defineTask } from '../parallel/tasks.js';
import { ColumnWriter, fromReader, type BinaryFactsLoader, type ColumnKind, type FileColumn } from './column-words.js';
import { columnTypes, stringWordOffsets, StringInterner } from './encoded.js';
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

/** The file's metadata, its columns' writer (checked against the declaration), and the file as hyparquet reads it. */
async function openParquet(path: string, handle: FileHandle, size: number, columns: readonly Column[], relation: string, kept: readonly number[], strings: StringIds) {
  const file: AsyncBuffer = { byteLength: size, slice: (start, end = size) => readRange(handle, start, end) };
  const metadata = await fromReader(path, 'Parquet', () => parquetMetadataAsync(file));
  const top = parquetSchema(metadata).children;
  const writer = new ColumnWriter(path, 'Parquet', relation, columns, kept, top.map(fileColumn), strings);
  return { file, metadata, top, writer };
}

/** Rows of row groups [first, end) of a Parquet file, each group's words with the bytes of its kept columns. */
interface GroupWords {
  words: Uint32Array;
  bytes: number;
}

/** Decodes row groups [first, end) of an opened Parquet file (`openParquet`), one group's words at a time. */
async function* readGroups({ file, metadata, top, writer }: Awaited<ReturnType<typeof openParquet>>, path: string, strings: StringIds, first: number, end: number): AsyncGenerator<GroupWords> {
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
function keptBytes(metadata: FileMetaData, kept: readonly number[], first: number, end: number): number {
  let n = 0;
  for (let g = first; g < end; g++) for (const c of kept) n += Number(metadata.row_groups[g]?.columns[c]?.meta_data?.total_compressed_size ?? 0);
  return n;
}

/** Row groups [first, end) of a Parquet file, decoded by a worker. */
interface GroupsTask {
  path: string;
  columns: readonly Column[];
  relation: string;
  kept: readonly number[];
  first: number;
  end: number;
}

/**
 * A worker's rows: per group its words, string words as ids of `strings` (the task's own, distinct); or the
 * diagnostics of the VixenError it met (a plain object crosses threads, an error's class does not).
 */
type GroupsResult = { ok: true; words: Uint32Array[]; bytes: number[]; strings: string[] } | { ok: false; diagnostics: Diagnostic[] };

async function decodeGroups(task: GroupsTask): Promise<GroupsResult> {
  const strings = new StringInterner();
  const { handle, size } = await openFactsFile(task.path);
  try {
    const opened = await openParquet(task.path, handle, size, task.columns, task.relation, task.kept, strings);
    const words: Uint32Array[] = [];
    const bytes: number[] = [];
    for await (const g of readGroups(opened, task.path, strings, task.first, task.end)) {
      words.push(g.words);
      bytes.push(g.bytes);
    }
    return { ok: true, words, bytes, strings: strings.strings };
  } catch (e) {
    if (e instanceof VixenError) return { ok: false, diagnostics: e.diagnostics };
    throw e;
  } finally {
    await handle.close();
  }
}

/** decodeGroups on the worker pool. */
const decodeGroupsTask = defineTask<GroupsTask, GroupsResult>('io/parquet-groups', import.meta.url, decodeGroups);

/** Files whose kept columns take fewer compressed bytes than this are decoded on the calling thread. */
const PARALLEL_BYTES = 1 << 20;

/**
 * Appends the rows of the Parquet file `path` to `target` (see `loadFactsFileInto`): row groups on the worker
 * pool, a few tasks per worker so they finish together, where the file has several and enough bytes to read.
 */
export const loadParquetInto: BinaryFactsLoader = async (path, columns, target, strings, relation, kept, onBytes) => {
  const { handle, size } = await openFactsFile(path);
  try {
    const opened = await openParquet(path, handle, size, columns, relation, kept, strings);
    const { metadata, top, writer } = opened;
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
    const groups = metadata.row_groups.length;
    if (groups < 2 || workerCount() < 2 || keptBytes(metadata, kept, 0, groups) < PARALLEL_BYTES) {
      for await (const g of readGroups(opened, path, strings, 0, groups)) {
        target.adopt(g.words);
        onBytes?.(g.bytes);
      }
      return;
    }
    const n = Math.min(groups, 4 * workerCount());
    const results: Promise<GroupsResult>[] = [];
    for (let i = 0; i < n; i++) {
      const task: GroupsTask = { path, columns, relation, kept, first: Math.floor((groups * i) / n), end: Math.floor((groups * (i + 1)) / n) };
      const result = runInWorker(decodeGroupsTask, task);
      // Awaited in order below; a later one's failure must not go unhandled meanwhile.
      result.catch(() => undefined);
      results.push(result);
    }
    const stringWords = stringWordOffsets(columnTypes(kept.map((c) => columns[c]!)));
    for (const pending of results) {
      const r = await pending;
      if (!r.ok) throw new VixenError(r.diagnostics);
      // The task's string ids to the run's.
      const ids = Uint32Array.from(r.strings, (s) => strings.id(s));
      r.words.forEach((words, i) => {
        if (stringWords.length > 0) for (let at = 0; at < words.length; at += writer.width) for (const o of stringWords) words[at + o] = ids[words[at + o]!]!;
        target.adopt(words);
        onBytes?.(r.bytes[i]!);
      });
    }
  } finally {
    await handle.close();
  }
};
