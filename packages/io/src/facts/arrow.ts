/**
 * Arrow IPC facts files (`.arrow`, `.feather` version 2; the file format or the stream format, which apache-arrow
 * tells apart by the first bytes), read with apache-arrow one record batch at a time and written column-wise into
 * row words (column-words.ts) straight from the batch's buffers. Dictionary-encoded strings intern each dictionary
 * entry once (while the file keeps the same dictionary) and map the codes.
 */
import { DataType, DateUnit, Precision, RecordBatchReader, type Data, type Decimal, type Field, type Vector } from 'apache-arrow';
import type { StringIds } from '../encoding.js';
import { ColumnWriter, fromReader, type BinaryFactsLoader, type ColumnKind } from './column-words.js';
import { openFactsFile } from './open-file.js';

/** The first and last bytes of the IPC file format. */
const MAGIC = Buffer.from('ARROW1');

/**
 * A column's values for the writer, out of one batch's data of it (no nulls there: checked before). As apache-arrow
 * slices data, a fixed-width values buffer and an offsets buffer start at the data's first row, a bitmap at bit
 * `data.offset` (batches read from a file start at offset 0 anyway).
 */
type Values = (data: Data) => ArrayLike<unknown>;

/** The fixed-width values of `data`'s rows (a view). */
const fixed: Values = (data) => (data.values as Int32Array).subarray(0, data.length);

const DAY_MS = 86_400_000;

/** Date64 milliseconds as days. */
const days: Values = (data) => Float64Array.from((data.values as BigInt64Array).subarray(0, data.length), (ms) => Math.floor(Number(ms) / DAY_MS));

/** Bit-packed booleans as 0/1. */
const bits: Values = (data) => {
  const packed = data.values as Uint8Array;
  const out = new Uint8Array(data.length);
  for (let i = 0, b = data.offset; i < out.length; i++, b++) out[i] = (packed[b >> 3]! >> (b & 7)) & 1;
  return out;
};

/**
 * Decimal128/256 (little-endian two's complement, 32-bit words) as unscaled integers: numbers where the value fits
 * two words' safe range, bigints past it.
 */
const decimals: Values = (data) => {
  const stride = (data.type as Decimal).bitWidth / 32;
  const words = data.values as Uint32Array;
  const out = new Array<number | bigint>(data.length);
  for (let i = 0, at = 0; i < out.length; i++, at += stride) {
    const hi = words[at + 1]! | 0;
    let extended = hi >= -0x200000 && hi < 0x200000;
    for (let w = 2; w < stride && extended; w++) extended = words[at + w] === (hi < 0 ? 0xffffffff : 0);
    if (extended) {
      out[i] = hi * 4294967296 + words[at]!;
      continue;
    }
    let v = 0n;
    for (let w = stride - 1; w >= 0; w--) v = (v << 32n) | BigInt(words[at + w]!);
    out[i] = BigInt.asIntN(stride * 32, v);
  }
  return out;
};

/** Ids of the strings of a Utf8/LargeUtf8 `data`; -1 for a null (possible in a dictionary). */
function internAll(data: Data, strings: StringIds, out: Int32Array | Uint32Array, from = 0): void {
  const offsets = data.valueOffsets as Int32Array | BigInt64Array;
  const bytes = Buffer.from(data.values.buffer, data.values.byteOffset, data.values.byteLength);
  const nulls = data.nullCount > 0;
  for (let i = 0; i < data.length; i++) {
    if (nulls && !data.getValid(i)) {
      out[from + i] = -1;
      continue;
    }
    out[from + i] = strings.id(bytes.toString('utf8', Number(offsets[i]), Number(offsets[i + 1])));
  }
}

/** How a column of Arrow type `t` fits Vixen's types, and how to read its values out of a batch. */
function reading(t: DataType, strings: StringIds): { kind: ColumnKind; values: Values } {
  if (DataType.isInt(t)) return { kind: { kind: 'integer', scale: 0 }, values: fixed };
  if (DataType.isDecimal(t)) return { kind: { kind: 'integer', scale: t.scale }, values: decimals };
  if (DataType.isFloat(t) && t.precision !== Precision.HALF) return { kind: { kind: 'float' }, values: fixed };
  if (DataType.isDate(t)) return { kind: { kind: 'date' }, values: t.unit === DateUnit.DAY ? fixed : days };
  if (DataType.isBool(t)) return { kind: { kind: 'boolean' }, values: bits };
  if (DataType.isUtf8(t) || DataType.isLargeUtf8(t)) {
    return {
      kind: { kind: 'string' },
      values: (data) => {
        const ids = new Uint32Array(data.length);
        internAll(data, strings, ids);
        return ids;
      },
    };
  }
  if (DataType.isDictionary(t) && (DataType.isUtf8(t.dictionary) || DataType.isLargeUtf8(t.dictionary))) {
    // The dictionary's ids, made again only when a batch brings another dictionary (a replacement or a delta).
    let dictionary: Vector | undefined;
    let ids = new Int32Array(0);
    return {
      kind: { kind: 'string' },
      values: (data) => {
        if (data.dictionary !== dictionary) {
          dictionary = data.dictionary!;
          ids = new Int32Array(dictionary.length);
          let from = 0;
          for (const chunk of dictionary.data) {
            internAll(chunk, strings, ids, from);
            from += chunk.length;
          }
        }
        const codes = fixed(data) as Int32Array;
        // A code of a null entry stays -1, read as a null by the writer's check below.
        const out = new Array<number | undefined>(codes.length);
        for (let i = 0; i < codes.length; i++) {
          const id = ids[Number(codes[i])]!;
          out[i] = id < 0 ? undefined : id;
        }
        return out;
      },
    };
  }
  return { kind: { kind: 'unsupported' }, values: fixed };
}

/** Appends the rows of the Arrow IPC file `path` to `target` (see `loadFactsFileInto`). */
export const loadArrowInto: BinaryFactsLoader = async (path, columns, target, strings, relation, kept, onBytes) => {
  const { handle, size } = await openFactsFile(path);
  try {
    const reader = await fromReader(path, 'Arrow', async () => {
      // apache-arrow reads a file-format file without its footer as a stream, and fails on its own internals.
      const head = Buffer.alloc(MAGIC.length);
      const tail = Buffer.alloc(MAGIC.length);
      await handle.read(head, 0, head.length, 0);
      await handle.read(tail, 0, tail.length, Math.max(0, size - tail.length));
      if (head.equals(MAGIC) && (size < 2 * MAGIC.length || !tail.equals(MAGIC))) throw new Error('it starts as the IPC file format but does not end with its footer (cut short?)');
      const r = await (await RecordBatchReader.from(handle)).open();
      // An empty file, or one that ends before its schema, reads as no schema at all.
      if (!r.schema) throw new Error('it ends before its schema');
      return r;
    });
    const fields: Field[] = reader.schema.fields;
    const readings = fields.map((f) => reading(f.type, strings));
    const writer = new ColumnWriter(path, 'Arrow', relation, columns, kept, fields.map((f, c) => ({ name: f.name, type: String(f.type), kind: readings[c]!.kind })), strings);
    writer.check();
    for (let firstRow = 0; ; ) {
      const next = await fromReader(path, 'Arrow', () => reader.next());
      if (next.done) break;
      const batch = next.value;
      const words = new Uint32Array(batch.numRows * writer.width);
      kept.forEach((c, k) => {
        const data = batch.data.children[c]!;
        if (data.nullCount > 0) {
          for (let i = 0; i < data.length; i++) if (!data.getValid(i)) writer.failNull(firstRow + i, c);
        }
        writer.write(words, firstRow, k, readings[c]!.values(data));
      });
      target.adopt(words);
      firstRow += batch.numRows;
      // The batch's buffers: its size in the file, less padding and the metadata.
      onBytes?.(batch.data.byteLength);
    }
  } finally {
    await handle.close();
  }
};
