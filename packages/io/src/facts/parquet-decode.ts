/**
 * Parquet facts decoded with hyparquet's page readers (hyparquet-compressors adds GZIP, ZSTD, Brotli and LZ4 to its
 * Snappy) from any AsyncBuffer: which column types fit the declaration, and row groups into row words
 * (column-words.ts) a column chunk at a time. No Node API, so the playground reads a dropped file with the same rules
 * and messages as `--facts` (parquet.ts adds the files and the worker pool). Strings are interned by their bytes
 * (byte-strings.ts), a dictionary page's entries once each, a plain page's copied without a lookup (the run's sort
 * finds repeats); the caller gives them the run's ids (parquet.ts sorts
 * ASCII ones as bytes; `addStrings` decodes the others) and the rows those ids (encoded.ts `remapWords`).
 */
import { parquetMetadataAsync, parquetSchema, type AsyncBuffer, type CompressionCodec, type DataPageHeader, type DecodedArray, type FileMetaData, type SchemaElement, type SchemaTree } from 'hyparquet';
import { parquetHeader } from 'hyparquet/src/column.js';
import { DEFAULT_PARSERS } from 'hyparquet/src/convert.js';
import { decompressPage, readDataPage, readDataPageV2 } from 'hyparquet/src/datapage.js';
import { readRleBitPackedHybrid } from 'hyparquet/src/encoding.js';
import { readPlain } from 'hyparquet/src/plain.js';
import { getMaxDefinitionLevel, getSchemaPath } from 'hyparquet/src/schema.js';
import { compressors } from 'hyparquet-compressors';
import { VixenError, errorAt, rowWords, type Column, type RelationDecl, type Row } from '@vixen/queryplan';
import { decodeRow, type StringIds } from '../encoding.js';
import { ByteInterner, type InternedStrings } from './byte-strings.js';
import { ColumnWriter, fromReader, type ColumnKind, type FileColumn } from './column-words.js';
import { columnTypes, factsColumns, remapWords, StringInterner, stringWordOffsets } from './encoded.js';

/** The Vixen side of a Parquet column's physical and logical types. */
function kindOf(e: SchemaElement): ColumnKind {
  const logical = e.logical_type?.type;
  const converted = e.converted_type;
  if (logical === 'DECIMAL' || converted === 'DECIMAL') {
    // hyparquet decodes BYTE_ARRAY decimals only to floats; the other layouts are read as the exact integers.
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

/**
 * A Parquet file as hyparquet reads it, and as decodeGroups reads column chunks where it can: into a given array (a
 * worker's file, read on its thread), which each column's decoder keeps, rather than a new one per chunk.
 */
export type ParquetFile = AsyncBuffer & { readInto?: (bytes: Uint8Array, start: number) => Uint8Array };

/** The file's metadata, its columns' writer (checked against the declaration), and the file as hyparquet reads it. */
export async function openParquet(
  path: string,
  file: ParquetFile,
  columns: readonly Column[],
  relation: string,
  kept: readonly number[],
  /** The file's metadata, where the caller has it (a worker's task gets its row groups'), rather than its footer. */
  known?: FileMetaData,
) {
  const metadata = known ?? (await fromReader(path, 'Parquet', () => parquetMetadataAsync(file)));
  const top = parquetSchema(metadata).children;
  // The writer's strings are ids already (see ChunkDecoder): it never interns.
  const writer = new ColumnWriter(path, 'Parquet', relation, columns, kept, top.map(fileColumn), NO_STRINGS);
  return { file, metadata, top, writer };
}

export type OpenedParquet = Awaited<ReturnType<typeof openParquet>>;

const NO_STRINGS: StringIds = {
  id: () => {
    throw new Error('internal: a Parquet string reached encodeValue');
  },
  text: () => '',
};

type ColumnDecoder = Parameters<typeof readDataPage>[2];

/** Whether an INT32 or INT64 column holds unsigned integers (hyparquet hands over their bits as signed). */
function unsigned(e: SchemaElement): boolean {
  const logical = e.logical_type;
  return e.converted_type === 'UINT_32' || e.converted_type === 'UINT_64' || (logical?.type === 'INTEGER' && !logical.isSigned && logical.bitWidth >= 32);
}

/**
 * Signed or unsigned 64-bit integers as numbers where every one is a safe integer (decimals and keys nearly always
 * are): the writer's number arithmetic is much cheaper than a BigInt per value. Else the BigInts.
 */
function int64Values(raw: BigInt64Array, isUnsigned: boolean, out: Float64Array): Float64Array | BigInt64Array | BigUint64Array {
  // Low and high halves, little-endian: no BigInt is made for a value that fits.
  const halves = new Int32Array(raw.buffer, raw.byteOffset, raw.length * 2);
  for (let i = 0; i < raw.length; i++) {
    const hi = halves[2 * i + 1]!;
    // |value| < 2^53 exactly when -2^21 < hi < 2^21 (unsigned: hi < 2^21).
    if (hi <= -0x200000 || hi >= 0x200000 || (isUnsigned && hi < 0)) return isUnsigned ? new BigUint64Array(raw.buffer, raw.byteOffset, raw.length) : raw;
    out[i] = hi * 4294967296 + (halves[2 * i]! >>> 0);
  }
  return out;
}

/**
 * A page's rows [row, row + n) of a column chunk, decoded but not yet written: dictionary indices (in the decoder's
 * `column`, at those rows) with the dictionary they index, or values as ColumnWriter.write takes them.
 */
type Segment = { row: number; n: number } & ({ dictionary: Uint32Array | undefined; entries: ArrayLike<unknown> } | { values: ArrayLike<unknown> });

/** Rows written into a row group's words at a time: every kept column's, while they are in the cache (~300 KB). */
const BLOCK_ROWS = 4096;

/**
 * One kept column of a row group, decoded page by page with hyparquet's page readers (`decode`), then written into
 * the group's row words a block of rows at a time with the other columns (`write`), so each block's rows are written
 * while in the cache rather than each column striding through all of them: a dictionary page's entries are converted
 * (and their strings interned) once, then each row of a dictionary-encoded page is one lookup; plain pages' typed
 * arrays are written as they are. No value per row goes through a JS array of values or hyparquet's list assembly.
 */
class ChunkDecoder {
  /** The dictionary's entries as column words, or undefined where one of them does not fit (`dictionaryValues`). */
  private dictionaryWords: Uint32Array | undefined;
  private dictionaryValues: ArrayLike<unknown> = [];
  private readonly columnWords: number;
  private readonly maxDefinition: number;
  private readonly isUnsigned: boolean;
  /** `decoder` as if the column were REQUIRED: readDataPage then reads no definition levels (pageV1 has). */
  private readonly required: ColumnDecoder;
  /** Per row of the chunk, its dictionary index, or its string's id in a plain page (reused). */
  private column = new Uint32Array(0);
  /** The chunk's pages, decoded, and the first not yet written whole. */
  private segments: Segment[] = [];
  private next = 0;
  /** The chunk's bytes where the file reads into a given array (`chunk`), kept for the next chunk. */
  private bytes = new Uint8Array(0);
  /**
   * Memory for the chunk's plain values (`room`), from byte `used` on, kept for the next chunk: a page per column
   * chunk of a row group, each a few new arrays, made the workers collect garbage for some 15% of their time.
   */
  private arena = new ArrayBuffer(0);
  private used = 0;

  constructor(
    private readonly writer: ColumnWriter,
    private readonly k: number,
    private readonly decoder: ColumnDecoder,
    private readonly strings: ByteInterner,
  ) {
    this.columnWords = rowWords([writer.columns[writer.kept[k]!]!.type]);
    this.maxDefinition = getMaxDefinitionLevel(decoder.schemaPath);
    this.isUnsigned = unsigned(decoder.element);
    const [root, leaf] = decoder.schemaPath;
    this.required = { ...decoder, schemaPath: [root!, { ...leaf!, element: { ...leaf!.element, repetition_type: 'REQUIRED' } }] };
  }

  /** `n` bytes to read the next column chunk into (valid until the chunk after it). */
  chunk(n: number): Uint8Array {
    if (this.bytes.length < n) this.bytes = new Uint8Array(Math.max(n, 2 * this.bytes.length));
    return this.bytes.subarray(0, n);
  }

  /** `bytes` bytes of 8-byte-aligned memory, valid until the next chunk is decoded: [offset, offset + bytes) of `buffer`. */
  private room(bytes: number): { buffer: ArrayBuffer; offset: number } {
    if (this.used + bytes > this.arena.byteLength) {
      // Earlier pages' values stay in the old one until the chunk is written.
      this.arena = new ArrayBuffer(Math.max(bytes, 2 * this.arena.byteLength));
      this.used = 0;
    }
    const offset = this.used;
    this.used += (bytes + 7) & ~7;
    return { buffer: this.arena, offset };
  }

  /** Raw values as ColumnWriter.write takes them for the column's kind (strings as ids of `strings`). */
  private values(raw: DecodedArray): ArrayLike<unknown> {
    switch (this.decoder.type) {
      case 'BYTE_ARRAY': {
        const ids = new Int32Array(raw.length);
        for (let i = 0; i < raw.length; i++) {
          const b = raw[i] as Uint8Array;
          ids[i] = this.strings.id(b, 0, b.length, 1);
        }
        return ids;
      }
      case 'FIXED_LEN_BYTE_ARRAY':
        return Array.from(raw as Uint8Array[], bigEndian);
      case 'INT64':
        if (!(raw instanceof BigInt64Array)) return raw;
        const { buffer, offset } = this.room(8 * raw.length);
        return int64Values(raw, this.isUnsigned, new Float64Array(buffer, offset, raw.length));
      case 'INT32':
        return this.isUnsigned && raw instanceof Int32Array ? new Uint32Array(raw.buffer, raw.byteOffset, raw.length) : raw;
      default:
        return raw;
    }
  }

  /** Decodes the column chunk `chunk` (its pages back to back) of a row group of `rows` rows, for `write`. */
  decode(chunk: Uint8Array, rows: number, firstRow: number, codec: CompressionCodec): void {
    this.decoder.codec = codec;
    this.dictionaryWords = undefined;
    this.dictionaryValues = [];
    this.column = fit(this.column, rows);
    this.segments = [];
    this.next = 0;
    this.used = 0;
    const { type, element } = this.decoder;
    const reader = { view: new DataView(chunk.buffer, chunk.byteOffset, chunk.byteLength), offset: 0 };
    let row = 0;
    while (row < rows) {
      if (reader.offset >= chunk.length) throw new Error(`column "${element.name}" ends after ${row} of its row group's ${rows} rows`);
      const header = parquetHeader(reader);
      const compressed = chunk.subarray(reader.offset, reader.offset + header.compressed_page_size);
      reader.offset += header.compressed_page_size;
      const v1 = header.type === 'DATA_PAGE' ? header.data_page_header : undefined;
      const v2 = header.type === 'DATA_PAGE_V2' ? header.data_page_header_v2 : undefined;
      if (header.type === 'DICTIONARY_PAGE' && header.dictionary_page_header) {
        const bytes = decompressPage(compressed, header.uncompressed_page_size, codec, compressors);
        const raw = readPlain({ view: new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength), offset: 0 }, type, header.dictionary_page_header.num_values, element.type_length);
        this.dictionaryValues = this.values(raw);
        this.dictionaryWords = this.writer.encodeDictionary(this.k, this.dictionaryValues);
        continue;
      }
      if (!v1 && !v2) continue;
      const n = v1 ? v1.num_values : v2!.num_rows;
      if (row + n > rows) throw new Error(`column "${element.name}" has a page of ${n} values where ${rows - row} rows were left`);
      if (v1) {
        this.pageV1(decompressPage(compressed, header.uncompressed_page_size, codec, compressors), v1, row, firstRow);
      } else {
        const { definitionLevels, dataPage } = readDataPageV2(compressed, header, this.decoder);
        if (v2!.num_nulls > 0 && definitionLevels) this.failAtNull(definitionLevels, firstRow + row);
        this.page(v2!.encoding, dataPage, n, row);
      }
      row += n;
    }
  }

  /**
   * A version 1 data page: hyparquet's readDataPage, but with the definition levels read first into a reused typed
   * array, where finding a null is one indexOf (readDataPage makes a JS array of them, then counts the nulls), and
   * dictionary indices and plain strings' ids into the chunk's `column` (rather than a JS array).
   */
  private pageV1(bytes: Uint8Array, header: DataPageHeader, row: number, firstRow: number): void {
    const n = header.num_values;
    const reader = { view: new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength), offset: 0 };
    if (this.maxDefinition > 0) {
      // A flat column's levels are 0 (null) or 1, after their length.
      const length = reader.view.getUint32(reader.offset, true);
      const nul = firstNull(bytes.subarray(reader.offset + 4, reader.offset + 4 + length), n, this.decoder.element.name);
      if (nul >= 0) this.writer.failNull(firstRow + row + nul, this.writer.kept[this.k]!);
      reader.offset += 4 + length;
    }
    // The values follow, as in a column without levels: no value is null.
    const into = this.column.subarray(row, row + n);
    if (header.encoding === 'PLAIN_DICTIONARY' || header.encoding === 'RLE_DICTIONARY') {
      const bitWidth = reader.view.getUint8(reader.offset++);
      if (bitWidth === 0) into.fill(0);
      else if (bitWidth <= 24) readIndices(bytes, reader.offset, bitWidth, into, this.decoder.element.name);
      else readRleBitPackedHybrid(reader, bitWidth, into, bytes.length - reader.offset);
      this.segments.push({ row, n, dictionary: this.dictionaryWords, entries: this.dictionaryValues });
    } else if (header.encoding === 'PLAIN' && this.decoder.type === 'BYTE_ARRAY') {
      // Each string copied from the page's bytes where it lies: no array of a view per value, no lookup.
      const whole = this.strings.appendPlain(bytes, reader.offset, n, 1, into);
      if (whole < n) throw new Error(`column "${this.decoder.element.name}" has a page that ends inside its value ${whole + 1} of ${n}`);
      this.segments.push({ row, n, values: into });
    } else if (header.encoding === 'PLAIN' && (this.decoder.type === 'INT32' || this.decoder.type === 'INT64')) {
      // As hyparquet's readPlain, but into the chunk's memory: it copies values that are not aligned (they follow
      // the levels) into a new array per page.
      const size = this.decoder.type === 'INT32' ? 4 : 8;
      if (reader.offset + n * size > bytes.length) throw new Error(`column "${this.decoder.element.name}" has a page that ends inside its ${n} values`);
      const { buffer, offset } = this.room(n * size);
      new Uint8Array(buffer, offset, n * size).set(bytes.subarray(reader.offset, reader.offset + n * size));
      this.segments.push({ row, n, values: this.values(size === 4 ? new Int32Array(buffer, offset, n) : new BigInt64Array(buffer, offset, n)) });
    } else {
      this.page(header.encoding, readDataPage(bytes.subarray(reader.offset), header, this.required).dataPage, n, row);
    }
  }

  /** Throws the message for the first null among a version 2 page's definition levels, the first at file row `first`. */
  private failAtNull(levels: ArrayLike<number>, first: number): never {
    let i = 0;
    while (i < levels.length && levels[i] === this.maxDefinition) i++;
    this.writer.failNull(first + i, this.writer.kept[this.k]!);
  }

  /** A data page's `n` values (`data`, as hyparquet decoded them with `encoding`) for rows [row, row + n). */
  private page(encoding: string, data: DecodedArray, n: number, row: number): void {
    if (data.length !== n) throw new Error(`column "${this.decoder.element.name}" has a page of ${data.length} values where its header says ${n}`);
    if (encoding.endsWith('_DICTIONARY')) {
      this.column.set(data as ArrayLike<number>, row);
      this.segments.push({ row, n, dictionary: this.dictionaryWords, entries: this.dictionaryValues });
    } else this.segments.push({ row, n, values: this.values(data) });
  }

  /** Writes the decoded rows [from, to) into `words` (see `decode`), whose first row is file row `firstRow`. */
  write(words: Uint32Array, from: number, to: number, firstRow: number): void {
    const segments = this.segments;
    while (this.next < segments.length && segments[this.next]!.row + segments[this.next]!.n <= from) this.next++;
    for (let s = this.next; s < segments.length && segments[s]!.row < to; s++) {
      const seg = segments[s]!;
      const a = Math.max(from, seg.row);
      const b = Math.min(to, seg.row + seg.n);
      if ('entries' in seg) this.lookUp(this.column.subarray(a, b), seg.dictionary, seg.entries, words, a, firstRow);
      else this.writer.write(words, firstRow + a, this.k, slice(seg.values, a - seg.row, b - seg.row), a);
    }
  }

  /** Rows [row, row + indices.length) of `words` from dictionary indices into `entries` (as words: `dict`). */
  private lookUp(indices: Uint32Array, dict: Uint32Array | undefined, entries: ArrayLike<unknown>, words: Uint32Array, row: number, firstRow: number): void {
    const size = entries.length;
    const width = this.writer.width;
    let at = this.writer.offsets[this.k]! + row * width;
    const bad = (i: number): never => {
      throw new Error(`column "${this.decoder.element.name}" refers to dictionary entry ${indices[i]} of ${size}`);
    };
    if (!dict) {
      for (let i = 0; i < indices.length; i++) if (!(indices[i]! < size)) bad(i);
      // An entry that does not fit: the rows that use it get the message.
      this.writer.write(words, firstRow + row, this.k, Array.from(indices, (i) => entries[i]), row);
    } else if (this.columnWords === 1) {
      for (let i = 0; i < indices.length; i++, at += width) {
        const e = indices[i]!;
        if (!(e < size)) bad(i);
        words[at] = dict[e]!;
      }
    } else {
      for (let i = 0; i < indices.length; i++, at += width) {
        const e = indices[i]!;
        if (!(e < size)) bad(i);
        words[at] = dict[2 * e]!;
        words[at + 1] = dict[2 * e + 1]!;
      }
    }
  }
}

/** Values [from, to) of `values`: a view of a typed array, a copy of an array. */
function slice(values: ArrayLike<unknown>, from: number, to: number): ArrayLike<unknown> {
  if (from === 0 && to === values.length) return values;
  return ArrayBuffer.isView(values) ? (values as Uint32Array).subarray(from, to) : Array.prototype.slice.call(values, from, to);
}

/**
 * The RLE / bit-packed hybrid run at `bytes[at]`: its header (a ULEB128 varint, count * 2, plus 1 where the run is
 * bit-packed) and where its data start. `what` names the page's values for the error of a page that ends early.
 */
function runHeader(bytes: Uint8Array, at: number, column: string, what: string, seen: number, n: number): { count: number; packed: boolean; at: number } {
  if (at >= bytes.length) throw new Error(`column "${column}" has a page whose ${what} end after ${seen} of its ${n} values`);
  let header = 0;
  for (let shift = 0; ; shift += 7) {
    const b = bytes[at++]!;
    header += (b & 0x7f) * 2 ** shift;
    if (b < 0x80 || shift > 28) break;
  }
  return { count: Math.floor(header / 2), packed: header % 2 === 1, at };
}

/**
 * A dictionary-encoded page's indices of `width` bits (1 to 24), RLE / bit-packed hybrid from `bytes[at]` on, into
 * all of `out`. As hyparquet's readRleBitPackedHybrid, which takes a branch per bit step and a DataView call per
 * byte, where this reads each value from the four bytes it lies in (twice as fast; the indices are most of the
 * values of a TPC-H load).
 */
export function readIndices(bytes: Uint8Array, at: number, width: number, out: Uint32Array, column: string): void {
  const n = out.length;
  const mask = (1 << width) - 1;
  let seen = 0;
  while (seen < n) {
    const run = runHeader(bytes, at, column, 'dictionary indices', seen, n);
    const count = run.count;
    at = run.at;
    if (run.packed) {
      // `count` groups of 8 values, `width` bytes each, lowest bits first; bits past the end of `bytes` are 0.
      const last = Math.min(n, seen + 8 * count);
      for (let bit = at * 8; seen < last; bit += width) {
        const b = bit >>> 3;
        const word = b + 3 < bytes.length ? bytes[b]! | (bytes[b + 1]! << 8) | (bytes[b + 2]! << 16) | (bytes[b + 3]! << 24) : (bytes[b] ?? 0) | ((bytes[b + 1] ?? 0) << 8) | ((bytes[b + 2] ?? 0) << 16);
        out[seen++] = (word >>> (bit & 7)) & mask;
      }
      at += count * width;
    } else {
      let value = 0;
      for (let i = 0; i < width; i += 8) value |= (bytes[at++] ?? 0) << i;
      out.fill(value >>> 0, seen, Math.min(n, seen + count));
      seen += count;
    }
  }
}

/**
 * The first of `n` definition levels of a flat column (RLE / bit-packed hybrid, 1 bit each) that is 0 (a null), or
 * -1: without making the array of levels hyparquet's readRleBitPackedHybrid makes (a non-null column's pages are
 * one run of 1s each).
 */
export function firstNull(bytes: Uint8Array, n: number, column: string): number {
  let seen = 0;
  let at = 0;
  while (seen < n) {
    const run = runHeader(bytes, at, column, 'definition levels', seen, n);
    const count = run.count;
    at = run.at;
    if (run.packed) {
      // `count` bytes of 8 levels each, lowest bit first.
      for (let i = 0; i < count && seen < n; i++, seen += 8) {
        const b = bytes[at + i] ?? 0;
        if (b !== 0xff) {
          const nul = seen + 31 - Math.clz32(~b & (b + 1));
          if (nul < n) return nul;
        }
      }
      at += count;
    } else {
      if (count > 0 && (bytes[at] ?? 0) === 0) return seen;
      at += 1;
      seen += count;
    }
  }
  return -1;
}

/** `a`, or a larger array of its kind where it has fewer than `n` elements. */
function fit<T extends Uint8Array | Uint32Array>(a: T, n: number): T {
  return a.length >= n ? a : (new (a.constructor as new (n: number) => T)(Math.max(n, 2 * a.length)));
}

/** Decoded row groups: their rows, string words as ids of `strings`, and each group's bytes. */
export interface DecodedGroups {
  words: Uint32Array[];
  bytes: number[];
  strings: InternedStrings;
}

/**
 * Decodes row groups [first, end) of an opened Parquet file (`openParquet`) into row words; `firstRow` is the file
 * row of group `first`'s first row (by default counted from the metadata).
 */
export async function decodeGroups({ file, metadata, top, writer }: OpenedParquet, path: string, first: number, end: number, firstRow = rowsBefore(metadata, first)): Promise<DecodedGroups> {
  const kept = writer.kept;
  // The string columns' chunks hold at least their strings' bytes (a plain page's, or its dictionary's).
  let stringBytes = 0;
  for (let g = first; g < end; g++) for (const c of kept) if (top[c]!.element.type === 'BYTE_ARRAY') stringBytes += Number(metadata.row_groups[g]!.columns[c]?.meta_data?.total_uncompressed_size ?? 0);
  const strings = new ByteInterner(Math.min(stringBytes, 2 ** 31));
  const decoders = kept.map((c, k) => {
    const element = top[c]!.element;
    const decoder: ColumnDecoder = {
      pathInSchema: [element.name],
      type: element.type!,
      element,
      schemaPath: getSchemaPath(metadata.schema, [element.name]),
      codec: 'UNCOMPRESSED',
      parsers: DEFAULT_PARSERS,
      compressors,
    };
    return new ChunkDecoder(writer, k, decoder, strings);
  });
  const out: DecodedGroups = { words: [], bytes: [], strings: { bytes: new Uint8Array(0), ends: new Uint32Array(0), columns: new Uint32Array(0) } };
  for (let g = first; g < end; g++) {
    const group = metadata.row_groups[g]!;
    const rows = Number(group.num_rows);
    const words = new Uint32Array(rows * writer.width);
    for (let k = 0; k < kept.length; k++) {
      const meta = group.columns[kept[k]!]?.meta_data;
      await fromReader(path, 'Parquet', async () => {
        if (!meta) throw new Error(`row group ${g} has no metadata for column "${top[kept[k]!]!.element.name}"`);
        const start = Number(meta.dictionary_page_offset || meta.data_page_offset);
        const size = Number(meta.total_compressed_size);
        const chunk = file.readInto ? file.readInto(decoders[k]!.chunk(size), start) : new Uint8Array(await file.slice(start, start + size));
        decoders[k]!.decode(chunk, rows, firstRow, meta.codec);
      });
    }
    await fromReader(path, 'Parquet', () => {
      for (let from = 0; from < rows; from += BLOCK_ROWS) for (const d of decoders) d.write(words, from, Math.min(rows, from + BLOCK_ROWS), firstRow);
    });
    out.words.push(words);
    out.bytes.push(keptBytes(metadata, kept, g, g + 1));
    firstRow += rows;
  }
  out.strings = strings.table();
  return out;
}

/** Rows of row groups [0, group). */
export function rowsBefore(metadata: FileMetaData, group: number): number {
  let rows = 0;
  for (let g = 0; g < group; g++) rows += Number(metadata.row_groups[g]!.num_rows);
  return rows;
}

/**
 * Adds a decode's distinct strings to `strings`, without a lookup (a string two tasks hold gets two ids, which the
 * run's dictionary maps to one); returns their ids there, by their ids in `table`.
 */
export function addStrings(table: InternedStrings, strings: StringInterner): Uint32Array {
  const { bytes, ends } = table;
  const ids = new Uint32Array(ends.length);
  // One decode of all the bytes, then slices, is several times cheaper than a decode per string; the offsets of the
  // bytes are those of the text where each byte became one UTF-16 unit (ASCII, or lone bytes that are not UTF-8,
  // each U+FFFD either way: a multi-byte character would make the text shorter).
  const text = utf8.decode(bytes);
  const whole = text.length === bytes.length;
  for (let i = 0, from = 0; i < ends.length; from = ends[i]!, i++) ids[i] = strings.add(whole ? text.slice(from, ends[i]!) : utf8.decode(bytes.subarray(from, ends[i]!)));
  return ids;
}

const utf8 = new TextDecoder();

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
  const opened = await openParquet(path, bytes, columns, rel.name, kept);
  checkParquet(opened, path);
  const decoded = await decodeGroups(opened, path, 0, opened.metadata.row_groups.length);
  const strings = new StringInterner();
  const types = columnTypes(columns);
  const remap = { width: opened.writer.width, stringWords: stringWordOffsets(types), map: addStrings(decoded.strings, strings) };
  for (const words of decoded.words) remapWords({ words, ...remap });
  const rows: Row[] = [];
  for (const words of decoded.words) {
    for (let at = 0; at < words.length; at += opened.writer.width) rows.push(decodeRow(words, at, types, strings));
  }
  return rows;
}
