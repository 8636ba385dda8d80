/**
 * Parses a whole facts file with parse-range.ts: small files on the calling thread, larger ones as byte ranges on
 * the worker pool (parallel/pool.ts), one part per range. Undefined when the file is not in the simple forms the
 * byte parser takes (or cannot be read): file.ts then parses it, with located messages for whatever is wrong.
 */
import { stat } from 'node:fs/promises';
import type { ScalarType } from '@vixen/queryplan';
import { runInWorker, workerCount } from '../parallel/pool.js';
import { factsFormat } from './file.js';
import type { InternedStrings } from './byte-strings.js';
import { parseRange, parseRangeTask, type RangeResult, type RangeTask } from './parse-range.js';

/** Rows of one range of a file, with string words as ids of its own string table. */
export interface ParsedPart {
  /** Rows back to back. */
  pieces: Uint32Array[];
  strings: { text(id: number): string };
  /** Ids of `strings` are below this. */
  stringCount: number;
  /** Per string id, the string columns holding it (InternedStrings.columns). */
  columns: Uint32Array;
}

/** Below this size a file parses on the calling thread: starting workers would cost more than they save. */
const SMALL_FILE = 1 << 22;
/** Bytes per range of a large file: many more ranges than workers, so they finish together. */
const RANGE_BYTES = 1 << 25;

/** A range's strings, decoded one at a time as a projection meets them. */
class ByteStringTable {
  private readonly bytes: Buffer;
  constructor(private readonly table: InternedStrings) {
    this.bytes = Buffer.from(table.bytes.buffer, table.bytes.byteOffset, table.bytes.byteLength);
  }

  text(id: number): string {
    const end = this.table.ends[id];
    if (end === undefined) throw new Error(`internal: range string id ${id} out of range`);
    return this.bytes.toString('utf8', id === 0 ? 0 : this.table.ends[id - 1]!, end);
  }
}

/**
 * The `kept` columns (default all) of `path`, whose columns `types` gives, in parts; undefined where file.ts must
 * parse it.
 */
export async function parseFileInParts(
  path: string,
  types: readonly ScalarType[],
  kept?: readonly number[],
  /** Hears the bytes of each range once it is parsed (a load's progress). */
  onBytes?: (bytes: number) => void,
): Promise<ParsedPart[] | undefined> {
  const format = factsFormat(path);
  if (!format || format.delimiter.length !== 1 || /[\r\n"]/.test(format.delimiter)) return undefined;
  const size = await stat(path).then(
    (s) => (s.isFile() ? s.size : undefined),
    () => undefined,
  );
  if (size === undefined) return undefined;
  const base = { path, delimiter: format.delimiter.charCodeAt(0), quoting: format.quoting, trailingDelimiter: format.trailingDelimiter, types, ...(kept ? { kept } : {}) };
  let results: RangeResult[];
  if (size < SMALL_FILE) {
    results = [parseRange({ ...base, start: 0, end: size })];
  } else {
    const n = Math.max(workerCount(), Math.ceil(size / RANGE_BYTES));
    const tasks: RangeTask[] = [];
    for (let i = 0; i < n; i++) tasks.push({ ...base, start: Math.floor((size * i) / n), end: Math.floor((size * (i + 1)) / n) });
    results = await Promise.all(tasks.map((t) => runInWorker(parseRangeTask, t).then((r) => (onBytes?.(t.end - t.start), r))));
  }
  const parts: ParsedPart[] = [];
  for (const r of results) {
    if (!r.ok) return undefined;
    parts.push({ pieces: [r.words], strings: new ByteStringTable(r.strings), stringCount: r.strings.ends.length, columns: r.strings.columns });
  }
  return parts;
}
