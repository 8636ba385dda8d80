/**
 * Streaming, typed loading of one facts file. The format follows the extension:
 * `.csv` (comma, RFC 4180 quoting), `.tsv`/`.facts` (tab, Soufflé style, no quoting), `.tbl` (TPC-H: `|`, trailing
 * `|` allowed). No header rows; empty lines are skipped. Bad lines become diagnostics with file/line/column spans.
 * `.parquet` (parquet.ts) and `.arrow`/`.feather` (Arrow IPC, arrow.ts) are binary: columns by position.
 * Records are split by records.ts (csv-parse only reads files with malformed quoting, for its messages) and
 * encoded into device words as they are read (encoded.ts), so a file never becomes an array of rows.
 */
import { createReadStream } from 'node:fs';
import { StringDecoder } from 'node:string_decoder';
import { basename, extname } from 'node:path';
import { CsvError, parse, type Options } from 'csv-parse';
import { watchUtf8 } from '../utf8.js';
import { encodeValue, type StringIds } from '../encoding.js';
import { EncodedRelation, StringInterner, columnTypes } from './encoded.js';
import { NeedsCsvParse, splitRecords } from './records.js';
import { convert, quoted } from './convert.js';
import { RecordFieldError } from './souffle-records.js';
import { readProblem } from './open-file.js';
import type { BinaryFactsLoader } from './column-words.js';
import { loadParquetInto } from './parquet.js';
import { loadArrowInto } from './arrow.js';
import {
  VixenError,
  errorAt,
  type Column,
  type Diagnostic,
  type Row,
  type SourceSpan,
} from '@vixen/queryplan';

export interface Format {
  delimiter: string;
  quoting: boolean;
  /** TPC-H dbgen ends every line with the delimiter. */
  trailingDelimiter: boolean;
}

const FORMATS: Record<string, Format> = {
  '.csv': { delimiter: ',', quoting: true, trailingDelimiter: false },
  '.tsv': { delimiter: '\t', quoting: false, trailingDelimiter: false },
  '.facts': { delimiter: '\t', quoting: false, trailingDelimiter: false },
  '.tbl': { delimiter: '|', quoting: false, trailingDelimiter: true },
};

/** Readers of the binary formats, with `loadFactsFileInto`'s arguments (`kept` given). */
const BINARY_FORMATS: Record<string, BinaryFactsLoader> = {
  '.parquet': loadParquetInto,
  '.arrow': loadArrowInto,
  '.feather': loadArrowInto,
};

/** The format of a text facts file by its extension, or undefined for another extension. */
export const factsFormat = (path: string): Format | undefined => FORMATS[extname(path).toLowerCase()];

/** Whether `path` is a Parquet or Arrow facts file, whose columns are read apart (no row is parsed whole). */
export const isBinaryFactsFile = (path: string): boolean => extname(path).toLowerCase() in BINARY_FORMATS;

/** Facts file extensions, in the order they are named in messages. */
export const FACTS_EXTENSIONS: readonly string[] = [...Object.keys(FORMATS), ...Object.keys(BINARY_FORMATS)];

/** Where a record starts: its 1-based line and character offset. */
export interface RowStart {
  line: number;
  offset: number;
}

/** Enough to show a user what is wrong without flooding the terminal. */
const MAX_DIAGNOSTICS = 20;

interface FieldStart {
  /** Index into the record's raw text. */
  index: number;
  /** Lines after the record's first line (quoted CSV fields may span lines). */
  lineDelta: number;
  /** 1-based column on that line. */
  column: number;
}

/**
 * Where each field of a record starts in its raw text. The raw text was accepted by the parser, so quotes
 * toggle quoting and `""` inside quotes is an escaped quote.
 */
function fieldStarts(raw: string, format: Format): FieldStart[] {
  const out: FieldStart[] = [{ index: 0, lineDelta: 0, column: 1 }];
  let lineDelta = 0;
  let lineStart = 0;
  let quoted = false;
  for (let i = 0; i < raw.length; i++) {
    const ch = raw[i];
    if (ch === '\n') {
      if (!quoted) break;
      lineDelta++;
      lineStart = i + 1;
    } else if (format.quoting && ch === '"') {
      if (quoted && raw[i + 1] === '"') i++;
      else quoted = !quoted;
    } else if (!quoted && raw.startsWith(format.delimiter, i)) {
      const index = i + format.delimiter.length;
      out.push({ index, lineDelta, column: index - lineStart + 1 });
    }
  }
  return out;
}

const FIRST_FIELD: FieldStart = { index: 0, lineDelta: 0, column: 1 };

function span(file: string, line: number, column: number, offset: number, width: number): SourceSpan {
  return {
    file,
    start: { line, column, offset },
    end: { line, column: column + Math.max(1, width), offset: offset + Math.max(1, width) },
  };
}

function csvProblem(e: CsvError): string {
  switch (e.code) {
    case 'CSV_QUOTE_NOT_CLOSED':
      return 'unterminated quoted field';
    case 'CSV_INVALID_CLOSING_QUOTE':
      return 'unexpected text after a closing quote';
    case 'INVALID_OPENING_QUOTE':
      return 'quote inside an unquoted field (quote the whole field and double the quotes inside it)';
    default:
      return `malformed CSV: ${e.message}`;
  }
}

/** Thrown from the record hook to stop parsing once enough problems are known. */
class TooManyProblems extends Error {}

/** What csv-parse hands the record hook with `raw: true`. */
interface RawRecord {
  record: string[];
  raw: string;
}

/**
 * Loads the rows of one facts file typed by `columns` (as `Value` represents each type).
 * `relation` names the relation in messages (default: the file name without its extension); `delimiter`, when
 * given, sets the format instead of the extension.
 * Throws a VixenError listing the bad lines (up to 20).
 */
export async function loadFactsFile(
  path: string,
  columns: readonly Column[],
  relation: string = basename(path, extname(path)),
  /** Splits at this delimiter without quoting (Soufflé's `.input` option), whatever the extension. */
  delimiter?: string,
): Promise<Row[]> {
  const target = new EncodedRelation(columnTypes(columns));
  const strings = new StringInterner();
  await loadFactsFileInto(path, columns, target, strings, relation, delimiter);
  return target.rows(strings);
}

/**
 * `loadFactsFile`, appending each record's words to `target` as it is parsed (strings as `strings` ids), so no
 * row of JS values outlives its record.
 */
export async function loadFactsFileInto(
  path: string,
  columns: readonly Column[],
  target: EncodedRelation,
  strings: StringInterner,
  relation: string = basename(path, extname(path)),
  delimiter?: string,
  /**
   * The columns (ascending indices into `columns`) whose fields are parsed and encoded; by default all. The other
   * fields are skipped unchecked: the program never reads them (see pruneColumns), and not converting them is the
   * point (a comment column costs more to intern than the rest of the row). The field count is still checked.
   */
  keep?: readonly number[],
  /** Hears the bytes of each chunk read (a file with malformed quoting is read twice). */
  onBytes?: (bytes: number) => void,
  /** Receives where each row appended to `target` starts in the file, in order (violations name the facts' lines). */
  rowStarts?: RowStart[],
  /** Turns a line's fields into the columns' (Soufflé records: souffleRecordFields); throws RecordFieldError. */
  expand?: (fields: string[]) => string[],
): Promise<void> {
  const kept = keep ?? columns.map((_, i) => i);
  const binary = delimiter === undefined ? BINARY_FORMATS[extname(path).toLowerCase()] : undefined;
  if (binary) return binary(path, columns, target, strings, relation, kept, onBytes);
  const format = delimiter !== undefined ? { delimiter, quoting: false, trailingDelimiter: false } : factsFormat(path);
  if (!format) {
    throw new VixenError(
      errorAt(`unsupported facts file ${path}: the extension must be one of ${FACTS_EXTENSIONS.join(', ')}`),
    );
  }
  const diags: Diagnostic[] = [];
  /** Set by the byte stream before the parser sees the first chunk that is not UTF-8. */
  let invalidUtf8 = false;
  // Line and character offset where the next record starts. Counted here rather than taken from csv-parse's
  // `info.lines`, which counts a quoted `\r\n` as two lines. Every line reaches the hook as a record (empty ones
  // included) and quoted newlines are inside the fields, so the count is exact.
  let line = 1;
  let offset = 0;
  const spanOf = (start: FieldStart, width: number) =>
    span(path, line + start.lineDelta, start.column, offset + start.index, width);

  /** Where field `field` of the record `raw` is (made once, not a closure per record: records are many). */
  const fieldSpan = (raw: string, field: number, width: number) => spanOf(fieldStarts(raw, format)[field] ?? FIRST_FIELD, width);

  /** Appends the words of one record to `target`; a bad line adds diagnostics instead, an empty one nothing. */
  const encodeRecord = ({ record, raw }: RawRecord): void => {
    if (record.length === 1 && record[0] === '' && /^[\r\n]*$/.test(raw)) return;
    // Text problems first: the first one stops the load, as the rest of such a file is most likely the same.
    const badText = invalidUtf8 && raw.includes('\uFFFD') ? record.findIndex((f) => f.includes('\uFFFD')) : -1;
    if (badText >= 0) {
      diags.push(errorAt(`invalid UTF-8 in field ${badText + 1}: facts files must be UTF-8 (convert it, e.g. with iconv)`, fieldSpan(raw, badText, 1)));
      throw new TooManyProblems();
    }
    const nul = raw.includes('\0') ? record.findIndex((f) => f.includes('\0')) : -1;
    if (nul >= 0) {
      diags.push(errorAt(`NUL byte in field ${nul + 1}: facts files are text (is this file UTF-16 or binary?)`, fieldSpan(raw, nul, 1)));
      throw new TooManyProblems();
    }
    let fields =
      format.trailingDelimiter && record.length > columns.length && record[record.length - 1] === ''
        ? record.slice(0, -1)
        : record;
    if (expand) {
      try {
        fields = expand(fields);
      } catch (e) {
        if (!(e instanceof RecordFieldError)) throw e;
        diags.push(errorAt(`${e.message} in field ${e.field + 1} of ${relation}`, fieldSpan(raw, e.field, Math.max(1, fields[e.field]?.length ?? 1))));
        return;
      }
    }
    if (fields.length !== columns.length) {
      // Point at the first extra field, or at the whole (first) line when fields are missing.
      const extra = fields.length > columns.length ? columns.length : -1;
      const where = extra >= 0 ? fieldSpan(raw, extra, fields[extra]!.length) : fieldSpan(raw, 0, raw.split('\n')[0]!.replace(/\r$/, '').length);
      diags.push(errorAt(`expected ${columns.length} fields, found ${fields.length}`, where));
      return;
    }
    const next = target.next();
    let word = next.at;
    let ok = true;
    for (const i of kept) {
      const text = fields[i]!;
      const col = columns[i]!;
      const v = convert(text, col);
      if (typeof v !== 'object') {
        if (ok) word = encodeValue(col.type, v, strings, next.words, word);
        continue;
      }
      ok = false;
      const message = `expected ${col.type} in column ${i + 1} (${col.name}) of ${relation}, found ${quoted(text)}${v.problem}`;
      diags.push(errorAt(message, fieldSpan(raw, i, text.length)));
    }
    if (ok) {
      target.commit();
      rowStarts?.push({ line, offset });
    }
  };

  /** Encodes one record and moves `line`/`offset` past its `lines` lines and `chars` characters. */
  const onRecord = (rec: RawRecord, chars: number, lines: number): void => {
    encodeRecord(rec);
    if (diags.length >= MAX_DIAGNOSTICS) throw new TooManyProblems();
    line += lines;
    offset += chars;
  };

  const firstRow = target.count;
  /** Reads the file through the fast splitter (records.ts). */
  const split = async (): Promise<void> => {
    const input = createReadStream(path, { highWaterMark: 1 << 20 });
    const utf8 = watchUtf8(() => (invalidUtf8 = true));
    input.on('error', (e) => utf8.destroy(e));
    input.pipe(utf8);
    const decoder = new StringDecoder('utf8');
    const emit = (r: { fields: string[]; raw: string; chars: number; lines: number }): void =>
      onRecord({ record: r.fields, raw: r.raw }, r.chars, r.lines);
    // Text not yet split: pieces without a newline wait here, so one long line is joined once, not per chunk.
    let pending: string[] = [];
    let first = true;
    try {
      for await (const chunk of utf8 as AsyncIterable<Buffer>) {
        onBytes?.(chunk.length);
        let text = decoder.write(chunk);
        if (first && text.length > 0) {
          if (text.charCodeAt(0) === 0xfeff) text = text.slice(1);
          first = false;
        }
        if (!text.includes('\n')) {
          pending.push(text);
          continue;
        }
        const all = pending.length > 0 ? pending.join('') + text : text;
        const rest = splitRecords(all, 0, false, format.delimiter, format.quoting, emit);
        pending = rest < all.length ? [all.slice(rest)] : [];
      }
      const all = pending.join('') + decoder.end();
      splitRecords(first && all.charCodeAt(0) === 0xfeff ? all.slice(1) : all, 0, true, format.delimiter, format.quoting, emit);
    } finally {
      input.destroy();
      utf8.destroy();
    }
  };

  /** Reads the file with csv-parse, whose errors locate malformed CSV quoting. */
  const csvParse = async (): Promise<void> => {
    // The hook runs synchronously as csv-parse parses, so `line`/`offset` are exact even when a later record in
    // the same chunk fails to parse (records already parsed but not yet iterated would be dropped).
    const hook = (rec: RawRecord): undefined => {
      // Only a quoted field can hold a newline; counting them costs, so only records with quotes pay.
      const inner = format.quoting && rec.raw.includes('"') ? rec.record.reduce((n, f) => n + f.split('\n').length - 1, 0) : 0;
      // csv-parse's raw text leaves out the `\n` of a `\r\n` record delimiter.
      onRecord(rec, rec.raw.length + (rec.raw.endsWith('\r') ? 1 : 0), 1 + inner);
      return undefined;
    };
    const options: Options<never, RawRecord> = {
      delimiter: format.delimiter,
      quote: format.quoting ? '"' : false,
      record_delimiter: ['\r\n', '\n'],
      relax_column_count: true,
      skip_empty_lines: false,
      bom: true,
      raw: true,
      on_record: hook,
    };
    // csv-parse's non-generic signature types records as string[]; the hook above passes none on.
    const parser = parse(options as unknown as Options);
    const input = createReadStream(path);
    const utf8 = watchUtf8(() => (invalidUtf8 = true));
    input.on('error', (e) => parser.destroy(e));
    input.pipe(utf8).pipe(parser);
    try {
      // The hook has encoded every record; iterating only drives the parser and surfaces its errors.
      for await (const _ of parser as AsyncIterable<never>);
    } catch (e) {
      if (!(e instanceof CsvError)) throw e;
      const raw = typeof e.raw === 'string' ? e.raw : '';
      const start = fieldStarts(raw, format)[typeof e.column === 'number' ? e.column : 0] ?? FIRST_FIELD;
      diags.push(errorAt(csvProblem(e), spanOf(start, 1)));
    } finally {
      input.destroy();
      utf8.destroy();
    }
  };

  // The splitter handles delimiters that cannot be mistaken for record ends or quotes.
  const splittable = format.delimiter !== '' && !/[\r\n"]/.test(format.delimiter);
  try {
    try {
      if (!splittable) throw new NeedsCsvParse();
      await split();
    } catch (e) {
      if (!(e instanceof NeedsCsvParse)) throw e;
      // Malformed quoting: start over with csv-parse, which says what is wrong where.
      target.truncate(firstRow);
      diags.length = 0;
      line = 1;
      offset = 0;
      invalidUtf8 = false;
      await csvParse();
    }
  } catch (e) {
    if (!(e instanceof TooManyProblems)) diags.push(readProblem(path, e));
  }
  if (diags.length > 0) throw new VixenError(diags);
}
