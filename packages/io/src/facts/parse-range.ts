/**
 * A byte-level parser of well-formed facts text, run by worker threads on byte ranges of one file (parallel.ts)
 * so a large file parses on every core. It never makes a JS string per field: numbers and dates are read from the
 * bytes, and strings are deduplicated by their bytes into a table of their own (InternedStrings), which the caller
 * decodes only for the columns a program keeps (host-cache.ts). It takes only the simple forms: any quote (CSV),
 * carriage return, NUL byte, invalid UTF-8, wrong field count or value that does not convert makes it give up on
 * the range, and the caller parses the file with file.ts, whose messages locate the problem.
 */
import { isUtf8 } from 'node:buffer';
import { closeSync, openSync, readSync } from 'node:fs';
import { rowWords, type ScalarType } from '@vixen/queryplan';
import { encodeValue, type StringIds } from '../encoding.js';
import { defineTask } from '../parallel/tasks.js';
import { convert } from './convert.js';
import { ByteInterner, grow, type InternedStrings } from './byte-strings.js';

export interface RangeTask {
  path: string;
  /** The range parses the lines that start at a byte offset in [start, end). */
  start: number;
  end: number;
  /** One ASCII byte (not a quote, CR or LF). */
  delimiter: number;
  /** CSV: a quote anywhere gives the range up. */
  quoting: boolean;
  /** TPC-H `.tbl`: one empty field after the last column is dropped. */
  trailingDelimiter: boolean;
  /** Every column of the file. */
  types: readonly ScalarType[];
  /**
   * The columns whose words the rows hold, ascending (default all). The others' fields are skipped unchecked, as
   * file.ts skips them (the field count is still checked): a comment column costs more to intern than the rest of
   * the row.
   */
  kept?: readonly number[];
}

/**
 * Per column of `types`, its bit in `InternedStrings.columns` (0 for a column that is not a string): bit k % 32 for the
 * k-th string column (columns past 32 share bits, which only over-counts).
 */
export function stringColumnBits(types: readonly ScalarType[]): number[] {
  let k = 0;
  return types.map((t) => (t === 'string' ? (1 << k++ % 32) >>> 0 : 0));
}

export type RangeResult = { ok: true; rows: number; words: Uint32Array; strings: InternedStrings } | { ok: false };

/** Bytes read at a time (a line longer than this grows the buffer). */
const BLOCK = 1 << 22;

/** No string ever goes through encodeValue here (strings are ids of the range's own table). */
const NO_STRINGS: StringIds = {
  id: () => {
    throw new Error('internal: a string reached encodeValue in parseRange');
  },
  text: () => '',
};

/** The value of 1..maxDigits ASCII digits buf[s, e), or -1. */
function digits(buf: Uint8Array, s: number, e: number, maxDigits: number): number {
  if (e <= s || e - s > maxDigits) return -1;
  let v = 0;
  for (let i = s; i < e; i++) {
    const d = buf[i]! - 48;
    if (d < 0 || d > 9) return -1;
    v = v * 10 + d;
  }
  return v;
}

/**
 * shortDecimal (convert.ts) on bytes: at most 11 integer and 4 fractional digits, scaled by 10^4; NaN for any other
 * text, which then goes through convert.
 */
function shortDecimalBytes(buf: Uint8Array, s: number, e: number): number {
  const sign = buf[s];
  let i = sign === 45 || sign === 43 ? s + 1 : s;
  const intStart = i;
  let v = 0;
  for (; i < e; i++) {
    const d = buf[i]! - 48;
    if (d < 0 || d > 9) break;
    v = v * 10 + d;
  }
  if (i - intStart < 1 || i - intStart > 11) return NaN;
  let scale = 10_000;
  if (i < e) {
    if (buf[i] !== 46 || e - i - 1 < 1 || e - i - 1 > 4) return NaN;
    for (i++; i < e; i++) {
      const d = buf[i]! - 48;
      if (d < 0 || d > 9) return NaN;
      v = v * 10 + d;
      scale /= 10;
    }
  }
  v *= scale;
  return (sign === 45 ? -v : v) + 0;
}

/** Parses the lines of `task`'s range; `{ ok: false }` when any of them is not in the simple forms. */
export function parseRange(task: RangeTask): RangeResult {
  const { types, delimiter } = task;
  if (types.length === 0) return { ok: false };
  const kept = task.kept ?? types.map((_, c) => c);
  const width = rowWords(kept.map((c) => types[c]!));
  // Per column, its word offset in a row, or -1 where it is skipped.
  const offsets: number[] = types.map(() => -1);
  for (let k = 0, at = 0; k < kept.length; k++) {
    offsets[kept[k]!] = at;
    at += rowWords([types[kept[k]!]!]);
  }
  // Numbered among the kept columns, as the rows' columns are (project.ts reads them so).
  const keptBits = stringColumnBits(kept.map((c) => types[c]!));
  const bits = types.map(() => 0);
  kept.forEach((c, k) => (bits[c] = keptBits[k]!));
  const strings = new ByteInterner();
  /** Day numbers by the date's digits as one number (yyyymmdd): few distinct dates, each converted once. */
  const dates = new Map<number, number>();
  let words = new Uint32Array(Math.max(width, 1) * 1024);
  let rows = 0;

  /** Encodes field buf[s, e) of column c at word `w`; false when it does not convert. */
  const field = (buf: Buffer, s: number, e: number, c: number, w: number): boolean => {
    const type = types[c]!;
    let v = NaN;
    switch (type) {
      case 'string':
        words[w] = strings.id(buf, s, e, bits[c]!);
        return true;
      case 'int32': {
        const neg = buf[s] === 45;
        const d = digits(buf, neg || buf[s] === 43 ? s + 1 : s, e, 9);
        if (d >= 0) v = neg ? -d + 0 : d;
        break;
      }
      case 'uint32':
        v = digits(buf, buf[s] === 43 ? s + 1 : s, e, 9);
        break;
      case 'decimal':
        v = shortDecimalBytes(buf, s, e);
        break;
      case 'date':
        if (e - s === 10 && buf[s + 4] === 45 && buf[s + 7] === 45) {
          const y = digits(buf, s, s + 4, 4);
          const m = digits(buf, s + 5, s + 7, 2);
          const d = digits(buf, s + 8, e, 2);
          if (y >= 0 && m >= 0 && d >= 0) v = dates.get(y * 10_000 + m * 100 + d) ?? NaN;
          if (Number.isNaN(v) && y >= 0 && m >= 0 && d >= 0) {
            const day = convert(buf.toString('latin1', s, e), { name: '', type });
            if (typeof day !== 'number') return false;
            dates.set(y * 10_000 + m * 100 + d, (v = day));
          }
        }
        break;
    }
    if (Number.isNaN(v) || (v < 0 && type === 'uint32')) {
      // Any other form (blanks, long numbers, int64, float32, boolean): as file.ts converts it.
      const value = convert(buf.toString('utf8', s, e), { name: '', type });
      if (typeof value === 'object') return false;
      encodeValue(type, value, NO_STRINGS, words, w);
      return true;
    }
    if (type === 'decimal' || type === 'int64') encodeValue(type, v, NO_STRINGS, words, w);
    else words[w] = v >>> 0;
    return true;
  };

  let fd: number;
  try {
    fd = openSync(task.path, 'r');
  } catch {
    // Unreadable: file.ts says why.
    return { ok: false };
  }
  try {
    let buf = Buffer.allocUnsafe(BLOCK);
    /** File offset of buf[0]; buf[0, len) holds file bytes. */
    let base = Math.max(0, task.start - 1);
    let len = 0;
    let eof = false;
    /** Next byte to parse (a line start once `synced`). */
    let p = 0;
    let synced = task.start === 0;
    const fill = (): void => {
      // Keep the unparsed tail; grow when it fills the buffer (a very long line).
      if (p > 0) {
        buf.copy(buf, 0, p, len);
        base += p;
        len -= p;
        p = 0;
      }
      if (len === buf.length) {
        const bigger = Buffer.allocUnsafe(buf.length * 2);
        buf.copy(bigger, 0, 0, len);
        buf = bigger;
      }
      const n = readSync(fd, buf, len, buf.length - len, base + len);
      if (n === 0) eof = true;
      len += n;
    };
    fill();
    const bomEnd = task.start === 0 && len >= 3 && buf[0] === 0xef && buf[1] === 0xbb && buf[2] === 0xbf ? 3 : -1;
    if (bomEnd > 0) p = bomEnd;
    // A BOM belongs to the first line, which starts at 0 (so any range from 0 parses it).
    const lineStart = (i: number): number => (base + i === bomEnd ? 0 : base + i);
    for (;;) {
      if (!synced) {
        // The line holding byte start - 1 belongs to the range before (or ends there): start after its newline.
        const nl = buf.indexOf(10, p);
        if (nl < 0 || nl >= len) {
          if (eof) break;
          p = len;
          fill();
          continue;
        }
        p = nl + 1;
        synced = true;
      }
      if (lineStart(p) >= task.end) break;
      // Complete lines in buf[p, r): up to the last newline, or to the end of the file.
      const last = buf.lastIndexOf(10, len - 1);
      const r = eof ? len : last >= p ? last + 1 : -1;
      if (r < 0) {
        fill();
        continue;
      }
      const region = buf.subarray(p, r);
      if (region.indexOf(0) >= 0 || region.indexOf(13) >= 0 || (task.quoting && region.indexOf(34) >= 0) || !isUtf8(region)) return { ok: false };
      let i = p;
      while (i < r && lineStart(i) < task.end) {
        if (buf[i] === 10) {
          i++;
          continue;
        }
        if (words.length < (rows + 1) * width) words = grow(words, (rows + 1) * width);
        const w = rows * width;
        for (let c = 0; c < types.length; c++) {
          const s = i;
          let b = 0;
          while (i < r && (b = buf[i]!) !== delimiter && b !== 10) i++;
          if (offsets[c]! >= 0 && !field(buf, s, i, c, w + offsets[c]!)) return { ok: false };
          if (c < types.length - 1) {
            if (i >= r || buf[i] !== delimiter) return { ok: false };
            i++;
          }
        }
        if (i < r && buf[i] === delimiter) {
          if (!task.trailingDelimiter) return { ok: false };
          i++;
        }
        if (i < r && buf[i] !== 10) return { ok: false };
        i++;
        rows++;
      }
      p = Math.min(i, r);
      if (lineStart(p) >= task.end || (eof && p >= len)) break;
      fill();
    }
  } finally {
    closeSync(fd);
  }
  // Shared, so projection tasks on other workers read the words where they lie (host-cache.ts).
  const shared = new Uint32Array(new SharedArrayBuffer(rows * width * 4));
  shared.set(words.subarray(0, rows * width));
  return { ok: true, rows, words: shared, strings: strings.table() };
}

/** parseRange on the worker pool. */
export const parseRangeTask = defineTask('io/parse-range', import.meta.url, parseRange);
