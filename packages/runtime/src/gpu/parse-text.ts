/**
 * Facts files parsed on the device (codegen-wgsl kernels/parse-text.ts): the file is read in large chunks of whole
 * lines (the next one read while the device parses this one), each chunk's bytes uploaded as they are, and the
 * device finds the records, splits them and converts the kept columns into row words, one relation chunk per file
 * chunk. The device also finds each chunk's distinct string fields (hashing their bytes) and writes each field's
 * distinct index into its row word; only the distinct strings' spans come back, and the host cuts their text from
 * the chunk it read, interned by bytes across chunks (unless most are distinct: names, comments), so no row costs
 * host work. Once the run's dictionary is known
 * a pass maps the indices to dictionary ids (`deviceRowsRelation`). CSV quoted fields are parsed on the device too
 * (quotes doubled inside, newlines inside). Anything the device does not take exactly as io's host parser does
 * (malformed quoting, a chunk cut inside a quoted field, a NUL byte, invalid UTF-8, a CR ending the file, a field in
 * a rarer form or malformed, float32 columns) makes `parseTextOnDevice` give the file up: the caller parses it on
 * the host, whose rows or messages are then the answer. Nothing of a file given up stays on the device.
 */
import { isUtf8 } from 'node:buffer';
import { open } from 'node:fs/promises';
import { rowWords, type ScalarType } from '@vixen/queryplan';
import { PARSE_SEGMENT_BYTES, deviceParses, parseInternShaders, parseTextShaders, type TextLayout } from '@vixen/codegen-wgsl';
import { ByteInterner, stringWordOffsets, type DeviceRows, type Format, type StringInterner } from '@vixen/io';
import { chunkedOf } from './chunks.js';
import { ParsedRows } from './parsed-rows.js';
import { internals, type Gpu, type GpuImpl } from './device.js';
import { encodeScan } from './kernels/scan.js';
import { memoShaders, Recorder, type Bound } from './recorder.js';
import { uploadWords } from './upload.js';
import { acquireBound, allocRelation, bound, DeviceLimitError, readWords, releaseRelation, submitAndSync, type DeviceRelation } from './relations.js';

/** Default bytes read and parsed at a time. */
export const PARSE_CHUNK_BYTES = 64 * 2 ** 20;

/** The device leaves the file to the host parser. */
class HostParses extends Error {}

export interface TextFile {
  path: string;
  format: Format;
  /** Every column of the file. */
  types: readonly ScalarType[];
  /** The columns kept (ascending indices into `types`). */
  kept: readonly number[];
  /** Bytes read at a time (tests force small ones; at least 4). */
  chunkBytes?: number;
  /** Hears of each chunk's bytes once the device parsed them (a load's progress). */
  onBytes?: (bytes: number) => void;
}

/**
 * The kept columns of `file` parsed on the device, strings as ids of `strings` (added without lookup: the dictionary
 * merges repeats), or undefined where the host must parse the file.
 */
export async function parseTextOnDevice(gpu: Gpu, file: TextFile, strings: StringInterner): Promise<DeviceRows | undefined> {
  const { format, types, kept } = file;
  const keptTypes = kept.map((c) => types[c]!);
  const width = rowWords(keptTypes);
  const delimiter = format.delimiter.charCodeAt(0);
  if (format.delimiter.length !== 1 || delimiter > 127 || [10, 13, 34].includes(delimiter) || width === 0 || !keptTypes.every(deviceParses)) return undefined;
  const g = internals(gpu);
  const layout: TextLayout = { delimiter, quoting: format.quoting, trailingDelimiter: format.trailingDelimiter, types, kept };
  const shaders = memoShaders({ parseText: layout }, () => parseTextShaders(layout));
  const offsets = stringWordOffsets(keptTypes);
  const internShaders = offsets.length > 0 ? memoShaders({ parseIntern: [width, offsets] }, () => parseInternShaders(width, offsets)) : undefined;
  const interner = new ByteInterner();
  const parts: DeviceRelation[] = [];
  /** Per part, its distinct strings: ids of `interner`, or their text (a chunk of mostly distinct strings). */
  const maps: Array<Uint32Array | string[]> = [];
  // A CSV string's span is a quoted field's inside (an unquoted one has no quote): its quotes come doubled.
  const unquoted = (raw: string): string => (format.quoting && raw.includes('"') ? raw.replaceAll('""', '"') : raw);
  // A chunk's text, and for lines of 8 bytes and more its rows, spans and string table, fit one binding each (a
  // chunk with more rows than that is given up: DeviceLimitError).
  const chunkBytes = Math.max(4, Math.min(file.chunkBytes ?? PARSE_CHUNK_BYTES, Math.floor(g.limits.maxStorageBufferBindingSize / Math.max(8, 2 * width))));
  // Buffers of chunks whose strings were cut, read into again: a fresh 64 MiB buffer per chunk made the garbage
  // collector run full collections over the load's strings again and again.
  const spare: ArrayBuffer[] = [];
  const chunks = lineChunks(file.path, chunkBytes, spare);
  // The next chunk is read while the device parses this one. A read that fails while a chunk is parsed is handled
  // (it would end the process as an unhandled rejection) and reported when awaited.
  const readAhead = (): Promise<IteratorResult<Buffer>> => {
    const read = chunks.next();
    read.catch(() => undefined);
    return read;
  };
  let next = readAhead();
  /**
   * Chunks being parsed, oldest first: the next chunk is parsed while the host waits for this one's results and
   * interns its strings, so the device is not idle for a round trip per chunk.
   */
  const inFlight: { chunk: Buffer; parsed: Promise<ParsedChunk> }[] = [];
  try {
    for (let done = false; !done || inFlight.length > 0; ) {
      if (!done && inFlight.length < CHUNKS_IN_FLIGHT) {
        const read = await next;
        done = read.done === true;
        if (!done) {
          next = readAhead();
          const parsed = parseChunk(g, shaders, internShaders, read.value, format.quoting, width, offsets.length);
          // Awaited in order below; until then a failure must not go unhandled.
          parsed.catch(() => undefined);
          inFlight.push({ chunk: read.value, parsed });
          continue;
        }
        if (inFlight.length === 0) break;
      }
      const { chunk, parsed } = inFlight.shift()!;
      const part = await parsed;
      file.onBytes?.(chunk.length);
      if (part.rows.count > 0) {
        parts.push(part.rows);
        const distinct = part.distinct.length / 2;
        if (distinct > DISTINCT_SHARE * part.rows.count * offsets.length) {
          // Names, comments: strings seldom seen in another chunk, so interning them across chunks (hashing and
          // copying each) would merge next to none; each is decoded here, the dictionary merges the few repeats.
          const texts = new Array<string>(distinct);
          for (let d = 0; d < distinct; d++) texts[d] = unquoted(chunk.toString('utf8', part.distinct[2 * d]!, part.distinct[2 * d + 1]!));
          maps.push(texts);
        } else {
          const map = new Uint32Array(distinct);
          for (let d = 0; d < distinct; d++) map[d] = interner.id(chunk, part.distinct[2 * d]!, part.distinct[2 * d + 1]!, 0);
          maps.push(map);
        }
      }
      spare.push(chunk.buffer as ArrayBuffer);
    }
  } catch (e) {
    // Chunks still being parsed finish first; their rows go back with the others.
    for (const { parsed } of inFlight.splice(0)) {
      const part = await parsed.catch(() => undefined);
      if (part) releaseRelation(gpu, part.rows);
    }
    for (const p of parts) releaseRelation(gpu, p);
    // The reader closes the file once the read ahead has settled.
    await chunks.return(undefined);
    if (e instanceof HostParses || e instanceof DeviceLimitError) return undefined;
    // The host parser says what is wrong with a file it cannot read.
    if ((e as NodeJS.ErrnoException).code !== undefined) return undefined;
    throw e;
  }
  if (parts.length === 0) return undefined;
  // Each distinct string decoded once, with a temporary id of the run's interner.
  const table = interner.table();
  const text = Buffer.from(table.bytes.buffer, table.bytes.byteOffset, table.bytes.byteLength);
  const runIds = new Uint32Array(table.ends.length);
  for (let s = 0; s < runIds.length; s++) runIds[s] = strings.add(unquoted(text.toString('utf8', s === 0 ? 0 : table.ends[s - 1]!, table.ends[s]!)));
  const all = new Uint32Array(maps.reduce((n, m) => n + m.length, 0));
  const mapStarts: number[] = [];
  let at = 0;
  for (const m of maps) {
    mapStarts.push(at);
    if (Array.isArray(m)) for (let i = 0; i < m.length; i++) all[at + i] = strings.add(m[i]!);
    else for (let i = 0; i < m.length; i++) all[at + i] = runIds[m[i]!]!;
    at += m.length;
  }
  return new ParsedRows(gpu, chunkedOf(parts, width), all, mapStarts);
}

/** One chunk's rows on the device, string words as indices of the chunk's distinct strings, whose byte spans (start, end) `distinct` holds. */
interface ParsedChunk {
  rows: DeviceRelation;
  distinct: Uint32Array;
}

/**
 * A chunk whose distinct strings pass this share of its string fields has its strings decoded as they are, not
 * interned across chunks (see parseTextOnDevice).
 */
const DISTINCT_SHARE = 0.25;

/** Chunks parsed at once (each holds its text, rows and string tables on the device). */
const CHUNKS_IN_FLIGHT = 2;

/** A chunk's ParsedChunk. */
async function parseChunk(
  g: GpuImpl,
  shaders: Record<string, string>,
  internShaders: Record<string, string> | undefined,
  chunk: Buffer,
  quoting: boolean,
  width: number,
  stringCount: number,
): Promise<ParsedChunk> {
  const n = chunk.length;
  const segments = Math.ceil(n / PARSE_SEGMENT_BYTES);
  const words = chunkWords(chunk);
  const held: Bound[] = [];
  const acquire = (count: number, what: string): Bound => {
    const b = acquireBound(g, count, what);
    held.push(b);
    return b;
  };
  let rows: DeviceRelation | undefined;
  try {
    const text = acquire(words.length, `a chunk of ${n} bytes`);
    await uploadWords(g, text.buffer, 0, [words]);
    const counts = acquire(segments + 1, 'record counts');
    // The flag of something left to the host, and the count of distinct strings.
    const state = acquire(2, 'parse state');
    // CSV: the quotes before each segment (and in all: an odd count is a chunk cut inside a quoted field, or an
    // unclosed quote); other formats bind a word they never read.
    const quotes = acquire(quoting ? segments + 1 : 1, 'quote counts');
    const counting = new Recorder(g, shaders);
    counting.clear(state.buffer, 8);
    if (quoting) {
      counting.dispatch('parseQuotes', [text, quotes], [n, segments], segments + 1);
      encodeScan(counting, quotes, segments + 1);
    }
    counting.dispatch('parseCount', [text, quotes, counts, state], [n, segments], segments + 1);
    encodeScan(counting, counts, segments + 1);
    const [total, flag, quoted] = await submitAndSync(g, counting, [
      { buffer: counts.buffer, offset: segments * 4, words: 1 },
      { buffer: state.buffer, offset: 0, words: 1 },
      ...(quoting ? [{ buffer: quotes.buffer, offset: segments * 4, words: 1 }] : []),
    ]);
    if (flag![0] !== 0 || (quoted && quoted[0]! % 2 !== 0)) throw new HostParses();
    const records = total![0]!;
    rows = allocRelation(g, records, width);
    if (records === 0) return { rows, distinct: new Uint32Array(0) };
    const ends = acquire(records, 'record ends');
    const fields = records * stringCount;
    const spans = acquire(Math.max(1, 2 * fields), 'string spans');
    const parsing = new Recorder(g, shaders);
    parsing.dispatch('parseEnds', [text, quotes, counts, ends], [n, segments], segments);
    parsing.dispatch('parseRows', [text, ends, bound(rows), spans, state], [n, segments, records], records);
    let distinct: Bound | undefined;
    if (internShaders && fields > 0) {
      // Twice as many slots as fields at least, so probes stay short.
      const slots = 2 ** Math.ceil(Math.log2(2 * fields));
      const table = acquire(2 * slots, 'string table');
      const fieldSlots = acquire(fields, 'string slots');
      distinct = acquire(2 * fields, 'distinct strings');
      const interning = parsing.using(internShaders);
      interning.clear(table.buffer, 8 * slots);
      interning.dispatch('parseIntern', [text, spans, table, distinct, fieldSlots, state], [fields, slots - 1], fields);
      interning.dispatch('parseStringIds', [table, fieldSlots, bound(rows), state], [fields], fields);
    }
    const [read] = await submitAndSync(g, parsing, [{ buffer: state.buffer, offset: 0, words: 2 }]);
    if (read![0] !== 0) throw new HostParses();
    const found = read![1]!;
    return { rows, distinct: distinct && found > 0 ? await readWords(g, distinct.buffer, 0, 2 * found) : new Uint32Array(0) };
  } catch (e) {
    if (rows) releaseRelation(g, rows);
    throw e;
  } finally {
    for (const b of held) g.pool.release(b.buffer);
  }
}

/**
 * `chunk` as u32 words (the bytes past its end in the last word are never read): a view where it lies 4-byte aligned
 * with room for the last word (lineChunks reads into such buffers), else a copy.
 */
function chunkWords(chunk: Buffer): Uint32Array {
  const words = Math.ceil(chunk.length / 4);
  if (chunk.byteOffset % 4 === 0 && chunk.byteOffset + 4 * words <= chunk.buffer.byteLength) return new Uint32Array(chunk.buffer, chunk.byteOffset, words);
  const out = new Uint32Array(words);
  new Uint8Array(out.buffer).set(chunk);
  return out;
}

/**
 * The file's bytes in chunks of whole lines, each at least `chunkBytes` long where the file has that many left (a
 * longer line makes a longer chunk), a UTF-8 BOM at the start dropped; the last ends with a newline added when the
 * file does not end with one. Each chunk is a view of a buffer of its own, read from `spare` where one fits.
 */
async function* lineChunks(path: string, chunkBytes: number, spare: ArrayBuffer[]): AsyncGenerator<Buffer> {
  const fh = await open(path, 'r');
  try {
    let carry = Buffer.alloc(0);
    let first = true;
    for (;;) {
      // Room for a final newline and the last word's padding; large buffers start 4-byte aligned (chunkWords). A
      // spare one large enough is read into again (the caller hands back those it is done with).
      const need = carry.length + chunkBytes + 4;
      const reused = spare.findIndex((b) => b.byteLength >= need);
      // Never from Node's shared pool: a pooled buffer handed back would be written over under other Buffers.
      const buf = reused >= 0 ? Buffer.from(spare.splice(reused, 1)[0]!) : Buffer.allocUnsafeSlow(need);
      carry.copy(buf, 0);
      const { bytesRead } = await fh.read(buf, carry.length, chunkBytes, null);
      const len = carry.length + bytesRead;
      const start = first && len >= 3 && buf[0] === 0xef && buf[1] === 0xbb && buf[2] === 0xbf ? 3 : 0;
      first = false;
      if (bytesRead === 0) {
        if (len === start) return;
        // The host keeps a CR that ends the file (it strips one only before a newline).
        if (buf[len - 1] === 13) throw new HostParses();
        let end = len;
        if (buf[len - 1] !== 10) buf[end++] = 10;
        yield checked(buf.subarray(start, end));
        return;
      }
      const nl = buf.lastIndexOf(10, len - 1);
      if (nl < start) {
        carry = buf.subarray(start, len);
        continue;
      }
      carry = Buffer.from(buf.subarray(nl + 1, len));
      yield checked(buf.subarray(start, nl + 1));
    }
  } finally {
    await fh.close();
  }
}

/** `chunk` when it is UTF-8 (it holds whole lines, so no character is cut); the host reports invalid text. */
function checked(chunk: Buffer): Buffer {
  if (!isUtf8(chunk)) throw new HostParses();
  return chunk;
}
