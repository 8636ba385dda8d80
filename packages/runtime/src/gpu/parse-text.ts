/**
 * Facts files parsed on the device (codegen-wgsl kernels/parse-text.ts): the file is read in large chunks of whole
 * lines (text-chunks.ts: several reads ahead, several chunks uploaded and parsed while the host waits for the oldest
 * one's answer; files loaded together share the device's chunk slots), each chunk's bytes uploaded as they are, and the
 * device finds the records, splits them and converts the kept columns into row words, one relation chunk per file
 * chunk. The device also finds each chunk's distinct string fields (hashing their bytes) and writes each field's
 * distinct index into its row word; only the distinct strings' spans come back, and the host cuts their text from
 * the chunk it read, interned by bytes across chunks (unless most are distinct: names, comments), so no row costs
 * host work. Two host round trips per chunk: its record count (to size its rows), then its flags and (where no
 * more than the file's chunks so far had) its distinct strings' spans. Once the run's dictionary is known a pass
 * maps the indices to dictionary ids (`deviceRowsRelation`). CSV quoted fields are parsed on the device too
 * (quotes doubled inside, newlines inside). Anything the device does not take exactly as io's host parser does
 * (malformed quoting, a chunk cut inside a quoted field, a NUL byte, invalid UTF-8, a CR ending the file, a field in
 * a rarer form or malformed, float32 columns) makes `parseTextOnDevice` give the file up: the caller parses it on
 * the host, whose rows or messages are then the answer. Nothing of a file given up stays on the device.
 */
import { rowWords, type ScalarType } from '@vixen/queryplan';
import { PARSE_SEGMENT_BYTES, deviceParses, parseInternShaders, parseTextShaders, type TextLayout } from '@vixen/codegen-wgsl';
import { ByteInterner, stringWordOffsets, type DeviceRows, type Format, type StringInterner } from '@vixen/io';
import { chunkedOf } from './chunks.js';
import { ParsedRows } from './parsed-rows.js';
import { internals, type Gpu, type GpuImpl } from './device.js';
import { encodeScan } from './kernels/scan.js';
import { memoShaders, Recorder, type Bound } from './recorder.js';
import { uploadBytes, uploadWords } from './upload.js';
import { HostParses, TextChunkReader, TextChunkSlots, type TextChunk } from './text-chunks.js';
import { acquireBound, allocRelation, bound, DeviceLimitError, readWords, releaseRelation, submitAndSync, type DeviceRelation } from './relations.js';

/** Default bytes read and parsed at a time. */
export const PARSE_CHUNK_BYTES = 64 * 2 ** 20;

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

/** Chunk buffers held at once across the files a device loads (TextChunkSlots), and per file. */
const CHUNK_SLOTS = { total: 8, perFile: 4 };
/** A CPU adapter parses no faster for more: fewer, as before. */
const SOFTWARE_CHUNK_SLOTS = { total: 4, perFile: 2 };

const slotsOf = new WeakMap<GpuImpl, TextChunkSlots>();

/**
 * Host time of the device parser so far (all files): waiting for reads, copying chunks into upload buffers, waiting
 * for the device's answers, cutting and decoding strings (`vixen bench load` prints it).
 */
export const textParseTimes = { chunks: 0, bytes: 0, readWaitMs: 0, uploadMs: 0, syncWaitMs: 0, stringsMs: 0 };

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
  const limits = gpu.software ? SOFTWARE_CHUNK_SLOTS : CHUNK_SLOTS;
  let slots = slotsOf.get(g);
  if (!slots) slotsOf.set(g, (slots = new TextChunkSlots(limits.total)));
  let reader: TextChunkReader;
  try {
    reader = await TextChunkReader.open(file.path, chunkBytes, slots);
  } catch {
    // The host parser says what is wrong with a file it cannot read.
    return undefined;
  }
  /**
   * Chunks being parsed, oldest first: later chunks are read, uploaded and parsed while the host waits for this
   * one's results and cuts its strings, so neither the disk nor the device waits on a round trip per chunk.
   */
  const inFlight: { chunk: TextChunk; parsed: Promise<ParsedChunk> }[] = [];
  /** Distinct strings read back with a chunk's answer (more cost a second readback): the most a chunk had so far. */
  let distinctGuess = 256;
  const timed = async <T>(what: 'readWaitMs' | 'syncWaitMs', p: Promise<T>): Promise<T> => {
    const t0 = performance.now();
    try {
      return await p;
    } finally {
      textParseTimes[what] += performance.now() - t0;
    }
  };
  try {
    for (;;) {
      await reader.fill(limits.perFile);
      if (inFlight.length < limits.perFile && (reader.queued > 0 || inFlight.length === 0)) {
        const chunk = await timed('readWaitMs', reader.next());
        if (chunk) {
          const parsed = parseChunk(g, shaders, internShaders, chunk.bytes, format.quoting, width, offsets.length, distinctGuess);
          // Awaited in order below; until then a failure must not go unhandled.
          parsed.catch(() => undefined);
          inFlight.push({ chunk, parsed });
          continue;
        }
      }
      const oldest = inFlight.shift();
      if (!oldest) break;
      const { chunk, parsed } = oldest;
      let part: ParsedChunk;
      try {
        part = await timed('syncWaitMs', parsed);
      } catch (e) {
        reader.done(chunk.bytes);
        throw e;
      }
      const t0 = performance.now();
      const text = chunk.bytes;
      textParseTimes.chunks++;
      textParseTimes.bytes += text.length;
      file.onBytes?.(text.length);
      if (part.rows.count > 0) {
        parts.push(part.rows);
        const distinct = part.distinct.length / 2;
        distinctGuess = Math.max(distinctGuess, distinct + (distinct >> 2));
        if (distinct > DISTINCT_SHARE * part.rows.count * offsets.length) {
          // Names, comments: strings seldom seen in another chunk, so interning them across chunks (hashing and
          // copying each) would merge next to none; each is decoded here, the dictionary merges the few repeats.
          const texts = new Array<string>(distinct);
          const encoding = chunk.ascii ? 'latin1' : 'utf8';
          for (let d = 0; d < distinct; d++) texts[d] = unquoted(text.toString(encoding, part.distinct[2 * d]!, part.distinct[2 * d + 1]!));
          maps.push(texts);
        } else {
          const map = new Uint32Array(distinct);
          for (let d = 0; d < distinct; d++) map[d] = interner.id(text, part.distinct[2 * d]!, part.distinct[2 * d + 1]!, 0);
          maps.push(map);
        }
      }
      reader.done(text);
      textParseTimes.stringsMs += performance.now() - t0;
    }
  } catch (e) {
    // Chunks still being parsed finish first; their rows go back with the others.
    for (const { chunk, parsed } of inFlight.splice(0)) {
      const part = await parsed.catch(() => undefined);
      if (part) releaseRelation(gpu, part.rows);
      reader.done(chunk.bytes);
    }
    for (const p of parts) releaseRelation(gpu, p);
    await reader.close();
    if (e instanceof HostParses || e instanceof DeviceLimitError) return undefined;
    // The host parser says what is wrong with a file it cannot read.
    if ((e as NodeJS.ErrnoException).code !== undefined) return undefined;
    throw e;
  }
  await reader.close();
  if (parts.length === 0) return undefined;
  const t0 = performance.now();
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
  textParseTimes.stringsMs += performance.now() - t0;
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

/** A chunk's ParsedChunk. */
async function parseChunk(
  g: GpuImpl,
  shaders: Record<string, string>,
  internShaders: Record<string, string> | undefined,
  chunk: Buffer,
  quoting: boolean,
  width: number,
  stringCount: number,
  distinctGuess: number,
): Promise<ParsedChunk> {
  const n = chunk.length;
  const segments = Math.ceil(n / PARSE_SEGMENT_BYTES);
  const held: Bound[] = [];
  const acquire = (count: number, what: string): Bound => {
    const b = acquireBound(g, count, what);
    held.push(b);
    return b;
  };
  let rows: DeviceRelation | undefined;
  try {
    const text = acquire(Math.ceil(n / 4), `a chunk of ${n} bytes`);
    const t0 = performance.now();
    await uploadChunk(g, text.buffer, chunk);
    textParseTimes.uploadMs += performance.now() - t0;
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
    // The distinct strings' spans come back with the state where a chunk has no more than the file's chunks had
    // so far (a second readback otherwise).
    const guess = distinct ? Math.min(fields, distinctGuess) : 0;
    const [read, spans0] = await submitAndSync(g, parsing, [
      { buffer: state.buffer, offset: 0, words: 2 },
      ...(distinct && guess > 0 ? [{ buffer: distinct.buffer, offset: 0, words: 2 * guess }] : []),
    ]);
    if (read![0] !== 0) throw new HostParses();
    const found = read![1]!;
    if (!distinct || found === 0) return { rows, distinct: new Uint32Array(0) };
    if (found <= guess) return { rows, distinct: spans0!.slice(0, 2 * found) };
    const all = new Uint32Array(2 * found);
    all.set(spans0!);
    all.set(await readWords(g, distinct.buffer, 8 * guess, 2 * (found - guess)), 2 * guess);
    return { rows, distinct: all };
  } catch (e) {
    if (rows) releaseRelation(g, rows);
    throw e;
  } finally {
    for (const b of held) g.pool.release(b.buffer);
  }
}

/**
 * Uploads `chunk` (its buffer has room for the last word's padding, bytes the kernels never read): as words where it
 * lies 4-byte aligned, else copied into the upload's buffers (chunks after the first start after a part line).
 */
function uploadChunk(gpu: Gpu, dst: GPUBuffer, chunk: Buffer): Promise<void> {
  const padded = Math.ceil(chunk.length / 4) * 4;
  if (chunk.byteOffset % 4 === 0) return uploadWords(gpu, dst, 0, [new Uint32Array(chunk.buffer, chunk.byteOffset, padded / 4)]);
  const bytes = new Uint8Array(chunk.buffer, chunk.byteOffset, padded);
  return uploadBytes(gpu, dst, 0, padded, (into, at) => into.set(bytes.subarray(at, at + into.length)));
}
