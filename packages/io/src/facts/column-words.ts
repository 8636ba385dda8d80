/**
 * Columns of binary facts files (Parquet, Arrow IPC) into device words: which column types of a file fit which
 * declared Vixen types, and the writer of one decoded column of a batch (a row group, a record batch) into the
 * batch's rows, a column at a time, with no row of JS values. Columns are matched to the declaration by position.
 * Every message names the file, the column (its position and declared name, and its name in the file) and what was
 * expected; a value that does not fit also names its row.
 */
import {
  VixenError,
  errorAt,
  formatDate,
  parseDate,
  rowWords,
  valueHasType,
  type Column,
  type Diagnostic,
  type ScalarType,
} from '@vixen/queryplan';
import { encodeValue, type StringIds } from '../encoding.js';
import { columnTypes, columnWordOffsets, type EncodedRelation, type StringInterner } from './encoded.js';

/**
 * Appends the rows of a binary facts file to `target`, the columns `kept` (indices into `columns`, the relation's
 * declared facts columns) of each; `strings` interns the text, `relation` names the relation in messages;
 * `onBytes` hears about how many bytes of the file each row group or record batch held.
 */
export type BinaryFactsLoader = (
  path: string,
  columns: readonly Column[],
  target: EncodedRelation,
  /** Parquet adds a row group's distinct strings without looking them up (StringInterner.add). */
  strings: StringInterner,
  relation: string,
  kept: readonly number[],
  onBytes?: (bytes: number) => void,
) => Promise<void>;

/** What a column of a file holds, as far as Vixen's types go. */
export type ColumnKind =
  /** Exact integers (number or bigint) whose value is the integer / 10^scale: scale > 0 for a decimal column. */
  | { kind: 'integer'; scale: number }
  | { kind: 'float' }
  /** Days since 1970-01-01. */
  | { kind: 'date' }
  /** true/false, or 1/0. */
  | { kind: 'boolean' }
  /** Handed over as ids of the run's string interner: the readers intern the text. */
  | { kind: 'string' }
  | { kind: 'unsupported' };

/** A column of a facts file as its reader describes it. */
export interface FileColumn {
  /** Its name in the file. */
  name: string;
  /** Its type as the format names it, for messages (`INT64 (DECIMAL(15,2))`, `Float64`). */
  type: string;
  kind: ColumnKind;
}

function fits(type: ScalarType, kind: ColumnKind): boolean {
  switch (kind.kind) {
    case 'integer':
      return type === 'decimal' || (kind.scale === 0 && (type === 'int32' || type === 'uint32' || type === 'int64'));
    case 'float':
      return type === 'float32';
    case 'date':
      return type === 'date';
    case 'boolean':
      return type === 'boolean';
    case 'string':
      return type === 'string';
    case 'unsupported':
      return false;
  }
}

/** Dates as the text loader takes them: years 0000 to 9999. */
const FIRST_DAY = parseDate('0000-01-01')!;
const LAST_DAY = parseDate('9999-12-31')!;
const DECIMAL_DIGITS = 4;
const MIN_SAFE = BigInt(Number.MIN_SAFE_INTEGER);
const MAX_SAFE = BigInt(Number.MAX_SAFE_INTEGER);

/** `2.12345` for 212345 at scale 5: the exact value of a scaled integer, for messages. */
function scaledText(v: number | bigint, scale: number): string {
  if (scale === 0) return String(v);
  const digits = String(v < 0 ? -v : v).padStart(scale + 1, '0');
  return `${v < 0 ? '-' : ''}${digits.slice(0, -scale)}.${digits.slice(-scale)}`;
}

/**
 * Integer `v` / 10^`scale` as a decimal (scaled by 10^4): a number when it is a safe integer, else a bigint;
 * a string says why there is none.
 */
function toDecimal(v: number | bigint, scale: number): number | bigint | string {
  // Most values are safe integers, whatever the file's width: number arithmetic is much cheaper than BigInt's.
  if (typeof v === 'bigint' && v >= MIN_SAFE && v <= MAX_SAFE) v = Number(v);
  if (typeof v === 'number') {
    const x = scale <= DECIMAL_DIGITS ? v * 10 ** (DECIMAL_DIGITS - scale) : v / 10 ** (scale - DECIMAL_DIGITS);
    // Exact where both the integer and the result are safe: a product or quotient of safe integers rounds only past 2^53.
    if (Number.isSafeInteger(v) && Number.isSafeInteger(x)) return x;
    if (!Number.isSafeInteger(v)) return ' (not an integer)';
    v = BigInt(v);
  }
  let x: bigint;
  if (scale <= DECIMAL_DIGITS) {
    x = v * 10n ** BigInt(DECIMAL_DIGITS - scale);
  } else {
    const d = 10n ** BigInt(scale - DECIMAL_DIGITS);
    if (v % d !== 0n) return ` (more than ${DECIMAL_DIGITS} fractional digits)`;
    x = v / d;
  }
  return valueHasType('decimal', x) ? x : ' (out of range)';
}

/** Typed arrays of numbers: no nulls in them, and no value to look at but its number. */
type NumberArray = Int8Array | Uint8Array | Int16Array | Uint16Array | Int32Array | Uint32Array | Float32Array | Float64Array;

const isNumberArray = (values: ArrayLike<unknown>): values is NumberArray => ArrayBuffer.isView(values) && !(values instanceof BigInt64Array || values instanceof BigUint64Array || values instanceof DataView);

/**
 * The integer, decimal and date `values` of a column (integers, as a file's integer columns hold them; a decimal's
 * scaled by 10^-`scale`) into its words, as ColumnWriter.write does but with one check per value and no call: false
 * where a value needs more (it is out of range, or a decimal loses digits), and write's general loop then says which.
 */
function writeNumbers(words: Uint32Array, at: number, width: number, type: ScalarType, scale: number, values: NumberArray): boolean {
  const n = values.length;
  switch (type) {
    case 'int32':
    case 'uint32':
    case 'date': {
      const [min, max] = type === 'int32' ? [-(2 ** 31), 2 ** 31 - 1] : type === 'uint32' ? [0, 2 ** 32 - 1] : [FIRST_DAY, LAST_DAY];
      for (let r = 0; r < n; r++, at += width) {
        const v = values[r]!;
        if (!(v >= min && v <= max && Number.isInteger(v))) return false;
        words[at] = v;
      }
      return true;
    }
    case 'int64':
    case 'decimal': {
      // Products of integers below 2^53 are exact; a quotient must leave no remainder.
      const up = type === 'decimal' && scale <= DECIMAL_DIGITS ? 10 ** (DECIMAL_DIGITS - scale) : 1;
      const down = type === 'decimal' && scale > DECIMAL_DIGITS ? 10 ** (scale - DECIMAL_DIGITS) : 1;
      for (let r = 0; r < n; r++, at += width) {
        const v = values[r]!;
        const x = down === 1 ? v * up : v / down;
        if (!(Number.isSafeInteger(x) && Number.isSafeInteger(v))) return false;
        const hi = Math.floor(x / 4294967296);
        words[at] = x - hi * 4294967296;
        words[at + 1] = hi;
      }
      return true;
    }
    default:
      return false;
  }
}

/**
 * One binary facts file being loaded into rows of the columns the program keeps: checks its columns against the
 * declaration, and writes batches of decoded columns into row words.
 */
export class ColumnWriter {
  /** Words of a row of the kept columns. */
  readonly width: number;
  /** Word offset of each kept column within a row. */
  readonly offsets: readonly number[];

  constructor(
    private readonly path: string,
    private readonly format: 'Parquet' | 'Arrow',
    private readonly relation: string,
    /** Every column of the relation's facts, as declared. */
    readonly columns: readonly Column[],
    /** The columns read (indices into `columns`, ascending). */
    readonly kept: readonly number[],
    /** The file's columns. */
    readonly fileColumns: readonly FileColumn[],
    private readonly strings: StringIds,
  ) {
    const types = columnTypes(kept.map((c) => columns[c]!));
    this.offsets = columnWordOffsets(types);
    this.width = rowWords(types);
  }

  /**
   * Throws a VixenError when the file has another number of columns than the declaration, or a kept column of a type
   * that does not fit. Columns the program never reads are not checked, as the text loader skips their fields.
   */
  check(): void {
    if (this.fileColumns.length !== this.columns.length) {
      const names = this.fileColumns.map((c) => c.name).join(', ');
      throw new VixenError(
        errorAt(`${this.path}: expected ${this.columns.length} columns for ${this.relation}, found ${this.fileColumns.length} (${names}); ${this.format} columns are matched to the declaration by position`),
      );
    }
    const diags: Diagnostic[] = [];
    for (const c of this.kept) {
      const col = this.columns[c]!;
      const file = this.fileColumns[c]!;
      if (!fits(col.type, file.kind)) diags.push(errorAt(`${this.path}: expected ${col.type} in ${this.where(c)}, found ${file.type}`));
    }
    if (diags.length > 0) throw new VixenError(diags);
  }

  /** `column 2 (y; Parquet "y") of edge`. */
  where(c: number): string {
    return `column ${c + 1} (${this.columns[c]!.name}; ${this.format} "${this.fileColumns[c]!.name}") of ${this.relation}`;
  }

  /** Throws the message for the value of file row `row` (0-based) in column `c`, shown as `found`. */
  fail(row: number, c: number, found: string, problem = ''): never {
    throw new VixenError(errorAt(`${this.path}: row ${row + 1}: expected ${this.columns[c]!.type} in ${this.where(c)}, found ${found}${problem}`));
  }

  /** Throws the message for a null in column `c` at file row `row` (0-based). */
  failNull(row: number, c: number): never {
    this.fail(row, c, 'null', ' (Vixen has no nulls)');
  }

  /**
   * Writes the `k`th kept column of a batch's rows into `words` (rows of `width` words), from row `into` on: `values`
   * holds the batch's values of that column as its kind says (see ColumnKind; null or undefined where the file has a
   * null), and the batch starts at file row `firstRow` (for messages).
   */
  write(words: Uint32Array, firstRow: number, k: number, values: ArrayLike<unknown>, into = 0): void {
    this.writeStrided(words, this.offsets[k]! + into * this.width, this.width, firstRow, k, values);
  }

  /**
   * The words of the `k`th kept column's `values` back to back (a Parquet dictionary's entries, converted once), or
   * undefined where one of them does not fit: only a row that uses it may say so, with its row number.
   */
  encodeDictionary(k: number, values: ArrayLike<unknown>): Uint32Array | undefined {
    const words = rowWords([this.columns[this.kept[k]!]!.type]);
    const out = new Uint32Array(values.length * words);
    try {
      this.writeStrided(out, 0, words, 0, k, values);
    } catch (e) {
      if (e instanceof VixenError) return undefined;
      throw e;
    }
    return out;
  }

  /** `write`, the column's first word at `words[at]` and the next row's `width` words further. */
  private writeStrided(words: Uint32Array, at: number, width: number, firstRow: number, k: number, values: ArrayLike<unknown>): void {
    const c = this.kept[k]!;
    const type = this.columns[c]!.type;
    const kind = this.fileColumns[c]!.kind;
    const n = values.length;
    if (isNumberArray(values) && writeNumbers(words, at, width, type, kind.kind === 'integer' ? kind.scale : 0, values)) return;
    const value = (r: number): unknown => {
      const v = values[r];
      if (v === undefined || v === null) this.failNull(firstRow + r, c);
      return v;
    };
    switch (type) {
      case 'int32':
      case 'uint32':
        for (let r = 0; r < n; r++, at += width) {
          const v = value(r) as number | bigint;
          const x = typeof v === 'bigint' ? Number(v) : v;
          if (!valueHasType(type, x)) this.fail(firstRow + r, c, String(v), ' (out of range)');
          words[at] = x >>> 0;
        }
        return;
      case 'int64':
        for (let r = 0; r < n; r++, at += width) {
          const v = value(r) as number | bigint;
          if (typeof v === 'bigint' ? !valueHasType('int64', v) : !Number.isSafeInteger(v)) this.fail(firstRow + r, c, String(v), ' (out of range)');
          encodeValue('int64', v, this.strings, words, at);
        }
        return;
      case 'decimal': {
        const scale = kind.kind === 'integer' ? kind.scale : 0;
        for (let r = 0; r < n; r++, at += width) {
          const v = value(r) as number | bigint;
          const x = toDecimal(v, scale);
          if (typeof x === 'string') this.fail(firstRow + r, c, scaledText(v, scale), x);
          encodeValue('decimal', x, this.strings, words, at);
        }
        return;
      }
      case 'float32':
        for (let r = 0; r < n; r++, at += width) {
          const v = value(r) as number;
          // As the text loader reads floats: rounded to f32, -0 as 0, finite only.
          const x = Math.fround(v) + 0;
          if (!Number.isFinite(x)) this.fail(firstRow + r, c, String(v), Number.isFinite(v) ? ' (out of range)' : ' (not a finite number)');
          encodeValue('float32', x, this.strings, words, at);
        }
        return;
      case 'date':
        for (let r = 0; r < n; r++, at += width) {
          const v = value(r) as number;
          if (!(v >= FIRST_DAY && v <= LAST_DAY)) this.fail(firstRow + r, c, Math.abs(v) < 1e8 ? formatDate(v) : `day ${v}`, ' (out of range: years 0000 to 9999)');
          words[at] = v >>> 0;
        }
        return;
      case 'boolean':
        for (let r = 0; r < n; r++, at += width) words[at] = value(r) ? 1 : 0;
        return;
      case 'string':
        for (let r = 0; r < n; r++, at += width) words[at] = value(r) as number;
        return;
    }
  }
}

/**
 * Runs a call into a file reader (hyparquet, apache-arrow); what it throws, other than a VixenError, becomes a
 * VixenError saying the file is not a valid one of its format.
 */
export async function fromReader<T>(path: string, format: 'Parquet' | 'Arrow', call: () => T | Promise<T>): Promise<T> {
  try {
    return await call();
  } catch (e) {
    if (e instanceof VixenError) throw e;
    throw new VixenError(errorAt(`${path}: not a valid ${format} file: ${e instanceof Error ? e.message : String(e)}`));
  }
}
