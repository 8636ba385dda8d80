/**
 * Facts files parsed on the device (codegen-wgsl kernels/parse-text.ts): the file is read in large chunks of whole
 * lines (text-chunks.ts: several reads ahead, straight into mapped upload buffers, so no byte of the text passes
 * through the main thread; files loaded together share the device's chunk slots), several chunks copied and parsed
 * while the host waits for the oldest one's answer. The device checks the text (UTF-8 included), finds the records,
 * splits them and converts the kept columns into row words, one relation chunk per file chunk. It also finds each
 * chunk's distinct string fields (hashing their bytes), writes each field's distinct index into its row word and
 * gathers the distinct strings' bytes back to back; only those come back, with their starts, and the host interns them
 * by bytes across chunks or (most distinct: names, comments) keeps them as they came, so no row costs host work. At the
 * end of the file its distinct strings are sorted as bytes (byteSorter: on the device, string-sort.ts, which takes a
 * mostly-distinct chunk's strings where the parse left them on the device, none uploaded again; or on workers,
 * ByteStringSort, each mostly-distinct chunk's strings copied into shared memory as they come) into one list of the
 * run's interner (ASCII text; other text is decoded into JS strings), which the run's dictionary merges undecoded, as
 * it does a store's. One host round trip per chunk: its rows, spans and string table are sized by a room for the
 * records its bytes hold at the file's bytes per record so far (and a tenth more), and its record count, flags and
 * (where no more than the file's chunks so far had) distinct strings come back together; a chunk of more records than
 * its room (and each file's first chunks, parsed before any came back) has its count read first. Once the run's
 * dictionary is known a pass maps the indices to dictionary ids (`deviceRowsRelation`). CSV quoted fields are parsed on
 * the device too (quotes doubled inside, newlines inside). Anything the device does not take exactly as io's host
 * parser does (malformed quoting, a chunk cut inside a quoted field, a NUL byte, invalid UTF-8, a CR ending the file, a
 * field in a rarer form or malformed, float32 columns) makes `parseTextOnDevice` give the file up: the caller parses it
 * on the host, whose rows or messages are then the answer. Nothing of a file given up stays on the device.
 */
import { rowWords, type ScalarType } from '@vixen/queryplan';
import { PARSE_INTERN, PARSE_SEGMENT_BYTES, deviceParses, parseColumnTable, parseRowsUniform, parseTextShaders, type TextLayout } from '@vixen/codegen-wgsl';
import { isAscii } from 'node:buffer';
import { basename } from 'node:path';
import { asciiList, ByteInterner, stringWordOffsets, warmByteSortWorkers, type ByteStrings, type DeviceRows, type Format, type StringInterner } from '@vixen/io';
import { chunkedOf } from './chunks.js';
import { loadScoped, ParsedRows, stringGroups } from './parsed-rows.js';
import { internals, type Gpu, type GpuImpl } from './device.js';
import { encodeScan } from './kernels/scan.js';
import { memoShaders, precompile, Recorder, type Bound } from './recorder.js';
import { HostParses, TextChunkReader, TextChunkSlots, type TextChunk } from './text-chunks.js';
import { holdReads } from './mapped-reads.js';
import { byteSorter, DeviceByteStringSort, type DeviceStrings } from './string-sort.js';
import { acquireBound, allocRelation, bound, DeviceLimitError, readWords, releaseRelation, submitAndSync, type DeviceRelation, type ReadRange } from './relations.js';

/** Default bytes read and parsed at a time. */
export const PARSE_CHUNK_BYTES = 64 * 2 ** 20;

export interface TextFile {
  path: string;
  format: Format;
  /** Every column of the file. */
  types: readonly ScalarType[];
  /** The columns kept (ascending indices into `types`). */
  kept: readonly number[];
  /** The relation it holds the facts of, for errors (default: the file's name). */
  relation?: string;
  /** Bytes read at a time (tests force small ones; at least 4). */
  chunkBytes?: number;
  /** Hears of each chunk's bytes once the device parsed them (a load's progress). */
  onBytes?: (bytes: number) => void;
}

/**
 * Reads held at once across the files a device loads (TextChunkSlots) and per file, which is also the most chunks of
 * a file the device parses at once.
 */
const CHUNK_SLOTS = { total: 8, perFile: 4 };
/** A CPU adapter parses no faster for more: fewer, as before. */
const SOFTWARE_CHUNK_SLOTS = { total: 4, perFile: 2 };

const slotsOf = new WeakMap<GpuImpl, TextChunkSlots>();

/**
 * Host time of the device parser so far (all files): issuing reads (`fillMs`), waiting for them, handing chunks to the
 * device (the copy, `uploadMs`, and encoding the chunk's passes, `encodeMs`, with the buffers the pool had to create
 * for them, `buffersCreated`, `createdBytes`), waiting for the device's answers, interning each chunk's strings, and
 * sorting each file's distinct strings into its list (of which `sortMs` the sort's, byteSortTimes; `vixen bench load`
 * prints it); and of the chunks, those counted and parsed in one round trip (`oneTrip`), and of those, the ones with
 * more records than their room (`roomMissed`).
 */
export const textParseTimes = {
  chunks: 0,
  bytes: 0,
  oneTrip: 0,
  roomMissed: 0,
  fillMs: 0,
  readWaitMs: 0,
  uploadMs: 0,
  encodeMs: 0,
  buffersCreated: 0,
  createdBytes: 0,
  syncWaitMs: 0,
  stringsMs: 0,
  dictionaryMs: 0,
  sortMs: 0,
  kernelMs: 0,
};

let timeKernels = false;

/**
 * Whether each file's parse also sums the device time of its compute passes into `textParseTimes.kernelMs`
 * (timestamp queries, where the device has them; a file parsed while another is timed goes into that one's). For
 * `vixen bench load`: it tells the device's own work from the wait for it.
 */
export function timeTextParseKernels(on: boolean): void {
  timeKernels = on;
}

/**
 * The kept columns of `file` parsed on the device, strings as ids of `strings` (added without lookup: the dictionary
 * merges repeats), or undefined where the host must parse the file.
 */
export async function parseTextOnDevice(gpu: Gpu, file: TextFile, strings: StringInterner): Promise<DeviceRows | undefined> {
  const g = internals(gpu);
  const timing = timeKernels && g.timer === null && g.startTiming();
  try {
    return await loadScoped(gpu, `loading the facts of ${file.relation ?? basename(file.path)} (parsed on the device)`, () => parseFile(gpu, file, strings));
  } finally {
    if (timing && g.timer) {
      textParseTimes.kernelMs += (await g.timer.collect()).nanoseconds / 1e6;
      g.stopTiming();
    }
  }
}

async function parseFile(gpu: Gpu, file: TextFile, strings: StringInterner): Promise<DeviceRows | undefined> {
  const { format, types, kept } = file;
  const keptTypes = kept.map((c) => types[c]!);
  const width = rowWords(keptTypes);
  const delimiter = format.delimiter.charCodeAt(0);
  if (format.delimiter.length !== 1 || delimiter > 127 || [10, 13, 34].includes(delimiter) || width === 0 || !keptTypes.every(deviceParses)) return undefined;
  const g = internals(gpu);
  const layout: TextLayout = { delimiter, quoting: format.quoting, trailingDelimiter: format.trailingDelimiter, types, kept };
  const shaders = memoShaders({ parseText: layout.quoting }, () => parseTextShaders(layout.quoting));
  const offsets = stringWordOffsets(keptTypes);
  const internShaders = offsets.length > 0 ? PARSE_INTERN : undefined;
  // Compiled while the first chunk is read (a first load compiles each file's row and string passes).
  precompile(g, shaders);
  if (internShaders) precompile(g, internShaders);
  const interner = new ByteInterner();
  const parts: DeviceRelation[] = [];
  /**
   * Per part, its distinct strings: ids of `interner`, or (a chunk of mostly distinct strings) their bytes back to
   * back with their starts.
   */
  const maps: Array<Uint32Array | Loose> = [];
  /**
   * The mostly-distinct chunks' strings, as they come (to the device or into shared memory, while later chunks parse),
   * and the interner's.
   */
  const sort = byteSorter(gpu);
  /** Every chunk's text is ASCII, and no CSV string needs its quotes undoubled: the strings stay bytes (see below). */
  let bytesOnly = true;
  // A CSV string's span is a quoted field's inside (an unquoted one has no quote): its quotes come doubled.
  const unquoted = (raw: string): string => (format.quoting && raw.includes('"') ? raw.replaceAll('""', '"') : raw);
  // A chunk's text, and for lines of 8 bytes and more its rows, spans and string table, fit one binding each (a
  // chunk with more rows than that is given up: DeviceLimitError).
  const chunkBytes = Math.max(4, Math.min(file.chunkBytes ?? PARSE_CHUNK_BYTES, Math.floor(g.limits.maxStorageBufferBindingSize / Math.max(8, 2 * width))));
  const limits = gpu.software ? SOFTWARE_CHUNK_SLOTS : CHUNK_SLOTS;
  let slots = slotsOf.get(g);
  if (!slots) slotsOf.set(g, (slots = new TextChunkSlots(limits.total)));
  const { memory, letGo } = holdReads(g, chunkBytes);
  let reader: TextChunkReader<GPUBuffer>;
  try {
    reader = await TextChunkReader.open(file.path, chunkBytes, slots, memory);
  } catch {
    letGo();
    // The host parser says what is wrong with a file it cannot read.
    return undefined;
  }
  // The file's layout, which parseRows reads as data (one pipeline for every file).
  const columnTable = acquireBound(g, Math.max(1, types.length), 'column table');
  g.writeBuffer(columnTable.buffer, 0, parseColumnTable(layout));
  const rowsLayout = { columns: columnTable, uniform: parseRowsUniform(layout) };
  // On a GPU the first file with strings starts the workers (the tables loaded first are small, the large ones come
  // soon after); on a CPU adapter (tests) only a file whose strings likely go to the workers does.
  if (offsets.length > 0 && (!gpu.software || reader.fileBytes >= PARSE_CHUNK_BYTES)) warmByteSortWorkers();
  /**
   * Chunks being parsed, oldest first: later chunks are read, copied and parsed while the host waits for this one's
   * results and cuts its strings, so neither the disk nor the device waits on a round trip per chunk.
   */
  const inFlight: { lead: number; parsed: Promise<ParsedChunk> }[] = [];
  /** Distinct strings read back with a chunk's answer (more cost a second readback): the most a chunk had so far. */
  const guess: DistinctGuess = { strings: 256, words: 4096 };
  /**
   * Bytes and records of the file's chunks parsed so far: a chunk's room is its bytes at their bytes per record (none
   * yet: its count is read first). Not the fewest bytes a record of one chunk took: a chunk of short lines would size
   * every later chunk's rows, kept with the relation, by them.
   */
  const seen = { bytes: 0, records: 0 };
  // A chunk's rows, ends, spans and string table (8 words a field at most) sized by a room fit one binding each.
  const maxRoom = Math.floor(g.limits.maxStorageBufferBindingSize / 4 / Math.max(width, 8 * offsets.length, 1));
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
      const f0 = performance.now();
      await reader.fill(limits.perFile);
      textParseTimes.fillMs += performance.now() - f0;
      if (inFlight.length < limits.perFile && (reader.queued > 0 || inFlight.length === 0)) {
        const chunk = await timed('readWaitMs', reader.next());
        if (chunk) {
          const room = seen.records === 0 ? undefined : Math.min(maxRoom, Math.ceil((ROOM_MARGIN * chunk.bytes.length * seen.records) / seen.bytes) + 16);
          // Its synchronous part: the copy and the passes encoded and submitted, up to the wait for its answer.
          const e0 = performance.now();
          const upload0 = textParseTimes.uploadMs;
          const { created, createdBytes } = g.pool;
          const parsed = parseChunk(g, shaders, internShaders, chunk, format.quoting, rowsLayout, width, offsets, { ...guess }, room);
          textParseTimes.encodeMs += performance.now() - e0 - (textParseTimes.uploadMs - upload0);
          textParseTimes.buffersCreated += g.pool.created - created;
          textParseTimes.createdBytes += g.pool.createdBytes - createdBytes;
          // Awaited in order below; until then a failure must not go unhandled.
          parsed.catch(() => undefined);
          // parseChunk copied the chunk to the device before its first await: its memory takes the next reads while
          // the device parses it.
          reader.done(chunk);
          inFlight.push({ lead: chunk.lead, parsed });
          continue;
        }
      }
      const oldest = inFlight.shift();
      if (!oldest) break;
      const part = await timed('syncWaitMs', oldest.parsed);
      const t0 = performance.now();
      // Its strings on the device, until the sort takes them (a chunk of mostly distinct ASCII strings).
      let onDevice = part.onDevice;
      const length = part.bytesParsed - oldest.lead;
      textParseTimes.chunks++;
      textParseTimes.bytes += length;
      file.onBytes?.(length);
      if (part.rows.count > 0) {
        seen.bytes += part.bytesParsed;
        seen.records += part.rows.count;
        parts.push(part.rows);
        const { starts, bytes } = part;
        bytesOnly &&= part.ascii && !(format.quoting && bytes.includes(34));
        const distinct = starts.length - 1;
        guess.strings = Math.max(guess.strings, distinct + (distinct >> 2));
        guess.words = Math.max(guess.words, (bytes.length + (bytes.length >> 2)) >> 2);
        if (distinct > DISTINCT_SHARE * part.rows.count) {
          // Names, comments: strings seldom seen in another chunk, so interning them across chunks (hashing and
          // copying each) would merge next to none; they are sorted with the others at the end (once the file is
          // known good), which merges the few repeats. The device's sort takes the copy on the device.
          if (!bytesOnly) maps.push({ bytes, starts });
          else if (onDevice && sort instanceof DeviceByteStringSort) {
            maps.push(sort.add(bytes, starts, onDevice));
            onDevice = undefined;
          } else maps.push(sort.add(bytes, starts));
        } else {
          const map = new Uint32Array(distinct);
          for (let d = 0; d < distinct; d++) map[d] = interner.id(bytes, starts[d]!, starts[d + 1]!, 0);
          maps.push(map);
        }
      }
      if (onDevice) releaseStrings(g, onDevice);
      textParseTimes.stringsMs += performance.now() - t0;
    }
  } catch (e) {
    // Chunks still being parsed finish first; their rows go back with the others.
    for (const { parsed } of inFlight.splice(0)) {
      const part = await parsed.catch(() => undefined);
      if (part) releaseRelation(gpu, part.rows);
      if (part?.onDevice) releaseStrings(g, part.onDevice);
    }
    for (const p of parts) releaseRelation(gpu, p);
    await sort.abandon();
    await reader.close();
    letGo();
    g.pool.release(columnTable.buffer);
    if (e instanceof HostParses || e instanceof DeviceLimitError) return undefined;
    // The host parser says what is wrong with a file it cannot read.
    if ((e as NodeJS.ErrnoException).code !== undefined) return undefined;
    throw e;
  }
  await reader.close();
  letGo();
  g.pool.release(columnTable.buffer);
  if (parts.length === 0) {
    await sort.abandon();
    return undefined;
  }
  const t0 = performance.now();
  const table = interner.table();
  const tableStarts = new Uint32Array(table.ends.length + 1);
  tableStarts.set(table.ends, 1);
  const loose = maps.filter((m): m is Loose => !(m instanceof Uint32Array));
  const byteCount = loose.reduce((n, m) => n + m.bytes.length, table.bytes.length);
  /** Per interned string, its id among the run's strings. */
  let tableIds: Uint32Array;
  /** Per mostly-distinct chunk per string, its id less `looseBase` (added as they are gathered into `all`). */
  let looseIds: Uint32Array[];
  let looseBase = 0;
  if (bytesOnly && byteCount < 2 ** 32) {
    // Every distinct string as bytes, sorted and deduplicated on workers into the list the run's dictionary merges
    // without decoding (as a store's dictionaries): millions of names and comments never become JS strings, unless
    // the run shows them.
    sort.add(table.bytes, tableStarts);
    const t1 = performance.now();
    const { sorted, ranks } = await sort.finish();
    textParseTimes.sortMs += performance.now() - t1;
    looseBase = strings.addSorted(asciiList(sorted));
    tableIds = ranks.pop()!;
    for (let i = 0; i < tableIds.length; i++) tableIds[i]! += looseBase;
    looseIds = ranks;
  } else {
    await sort.abandon();
    // Each distinct string decoded once, with a temporary id of the run's interner (added without lookup: the
    // dictionary merges repeats). ASCII bytes are decoded at once and each string sliced from them (a decode per
    // string cost 2-4 times more).
    const decoded = ({ bytes, starts }: Loose): Uint32Array => {
      const text = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
      const ascii = isAscii(text) ? text.toString('latin1') : undefined;
      return Uint32Array.from({ length: starts.length - 1 }, (_, d) =>
        strings.add(unquoted(ascii !== undefined ? ascii.slice(starts[d]!, starts[d + 1]!) : text.toString('utf8', starts[d]!, starts[d + 1]!))),
      );
    };
    tableIds = decoded({ bytes: table.bytes, starts: tableStarts });
    looseIds = loose.map(decoded);
  }
  const all = new Uint32Array(maps.reduce((n, m) => n + (m instanceof Uint32Array ? m.length : m.starts.length - 1), 0));
  const mapStarts: number[] = [];
  let at = 0;
  let next = 0;
  for (const m of maps) {
    mapStarts.push(at);
    if (m instanceof Uint32Array) {
      for (let i = 0; i < m.length; i++) all[at + i] = tableIds[m[i]!]!;
      at += m.length;
      continue;
    }
    const ids = looseIds[next++]!;
    for (let i = 0; i < ids.length; i++) all[at + i] = ids[i]! + looseBase;
    at += ids.length;
  }
  textParseTimes.dictionaryMs += performance.now() - t0;
  return new ParsedRows(gpu, chunkedOf(parts, width), all, mapStarts);
}

/** A mostly-distinct chunk's distinct strings: string d is bytes [starts[d], starts[d + 1]). */
type Loose = ByteStrings;

/**
 * A chunk's `count` distinct strings (`byteCount` bytes in `bytes`, their starts in `starts`) copied on the device into
 * buffers of their size: kept until the file's sort, the parse's buffers (sized by the chunk) would hold twice that.
 */
function compacted(g: GpuImpl, bytes: Bound, starts: Bound, byteCount: number, count: number): DeviceStrings {
  const words = Math.ceil(byteCount / 4);
  const b = acquireBound(g, Math.max(1, words), `${byteCount} bytes of distinct strings`);
  let s: Bound;
  try {
    s = acquireBound(g, count + 1, `the starts of ${count} distinct strings`);
  } catch (e) {
    g.pool.release(b.buffer);
    throw e;
  }
  const commands = g.batch.commands();
  if (words > 0) commands.copyBufferToBuffer(bytes.buffer, 0, b.buffer, 0, 4 * words);
  commands.copyBufferToBuffer(starts.buffer, 0, s.buffer, 0, 4 * (count + 1));
  // Submitted now: the parse's buffers go back to the pool right after.
  g.batch.flush();
  return { bytes: b, starts: s };
}

function releaseStrings(g: GpuImpl, strings: DeviceStrings): void {
  g.pool.release(strings.bytes.buffer);
  g.pool.release(strings.starts.buffer);
}

/**
 * A chunk's distinct strings: string d is bytes [starts[d], starts[d + 1]) of `bytes`; `onDevice`, where the chunk's
 * strings are mostly distinct (DISTINCT_SHARE), the same on the device (the holder gives them back).
 */
interface ChunkStrings {
  starts: Uint32Array;
  bytes: Buffer;
  onDevice?: DeviceStrings;
}

const NO_STRINGS: ChunkStrings = { starts: new Uint32Array(1), bytes: Buffer.alloc(0) };

/** One chunk's rows on the device, string words as indices of the chunk's distinct strings (ChunkStrings). */
interface ParsedChunk extends ChunkStrings {
  rows: DeviceRelation;
  /** The chunk's bytes, its aligning lead included. */
  bytesParsed: number;
  /** No byte of the chunk is past ASCII: its strings decode as latin1. */
  ascii: boolean;
}

/** Words of the chunk's distinct strings read back with its answer (DistinctGuess). */
interface DistinctGuess {
  strings: number;
  words: number;
}

/** Words of a chunk's string bytes a readback keeps, given its state and the starts kept (all, past those). */
function keptBytes(state: Uint32Array, starts: Uint32Array): number {
  const found = state[1]!;
  return found < starts.length ? Math.ceil(starts[found]! / 4) : Infinity;
}

/** The first `count` words of `buffer`, of which `first` came back already (a second readback for the others). */
async function rest(g: GpuImpl, first: Uint32Array, buffer: GPUBuffer, count: number): Promise<Uint32Array> {
  if (count <= first.length) return first.subarray(0, count);
  const all = new Uint32Array(count);
  all.set(first);
  all.set(await readWords(g, buffer, 4 * first.length, count - first.length), first.length);
  return all;
}

/** A chunk's room for records over the count its bytes suggest at the file's bytes per record so far (parseChunk). */
const ROOM_MARGIN = 1.1;

/**
 * A chunk whose distinct strings pass this share of its records (a column of mostly distinct strings: names,
 * comments) keeps its strings as they came, not interned across chunks (see parseTextOnDevice). Of its string fields
 * instead, TPC-H part's names (one of its five string columns) were interned, hashed and copied on the main thread.
 */
const DISTINCT_SHARE = 0.25;

/**
 * A chunk's ParsedChunk. With `room` (records the file's chunks so far suggest this one holds at most), its records
 * are counted and parsed in one submission and one round trip, rows and spans sized by `room`; a chunk with more
 * records is parsed again at its count (a second round trip). Without, its count is read back first.
 */
async function parseChunk(
  g: GpuImpl,
  shaders: Record<string, string>,
  internShaders: Record<string, string> | undefined,
  chunk: TextChunk<GPUBuffer>,
  quoting: boolean,
  /** parseRows' column table and u1 for the file. */
  rowsLayout: { columns: Bound; uniform: readonly number[] },
  width: number,
  /** The row word offsets of the string columns. */
  offsets: readonly number[],
  guess: DistinctGuess,
  room: number | undefined,
): Promise<ParsedChunk> {
  const n = chunk.bytes.length;
  const segments = Math.ceil(n / PARSE_SEGMENT_BYTES);
  const held: Bound[] = [];
  const acquire = (count: number, what: string): Bound => {
    const b = acquireBound(g, count, what);
    held.push(b);
    return b;
  };
  /** Buffers of a parse at a room that proved too small, given back before the parse at the count. */
  let tooSmall: { rows: DeviceRelation; bounds: Bound[] } | undefined;
  const dropTooSmall = (): void => {
    if (!tooSmall) return;
    releaseRelation(g, tooSmall.rows);
    for (const b of tooSmall.bounds) g.pool.release(b.buffer);
    tooSmall = undefined;
  };
  let rows: DeviceRelation | undefined;
  try {
    const text = acquire(Math.ceil(n / 4), `a chunk of ${n} bytes`);
    const t0 = performance.now();
    // The chunk was read into a mapped upload buffer: the device copies it (whole words: the buffer has room).
    const from = chunk.bytes.byteOffset;
    chunk.buffer.unmap();
    g.batch.commands().copyBufferToBuffer(chunk.buffer, from, text.buffer, 0, 4 * Math.ceil(n / 4));
    g.batch.flush();
    textParseTimes.uploadMs += performance.now() - t0;
    const counts = acquire(segments + 1, 'record counts');
    // The flag of something left to the host, the count of distinct strings, and whether a byte is past ASCII.
    const state = acquire(3, 'parse state');
    // CSV: the quotes before each segment (and in all: an odd count is a chunk cut inside a quoted field, or an
    // unclosed quote); other formats bind a word they never read.
    const quotes = acquire(quoting ? segments + 1 : 1, 'quote counts');
    const rec = new Recorder(g, shaders);
    rec.clear(state.buffer, 12);
    if (quoting) {
      rec.dispatch('parseQuotes', [text, quotes], [n, segments], segments + 1);
      encodeScan(rec, quotes, segments + 1);
    }
    rec.dispatch('parseCount', [text, quotes, counts, state], [n, segments], segments + 1);
    encodeScan(rec, counts, segments + 1);
    const countReads = [
      { buffer: counts.buffer, offset: segments * 4, words: 1 },
      { buffer: state.buffer, offset: 0, words: 3 },
      ...(quoting ? [{ buffer: quotes.buffer, offset: segments * 4, words: 1 }] : []),
    ];
    /** The count's words read back: whether the chunk is the device's, its records, whether it is ASCII. */
    const counted = ([total, flag, quoted]: Uint32Array[]): { records: number; ascii: boolean } => {
      if (flag![0] !== 0 || (quoted && quoted[0]! % 2 !== 0)) throw new HostParses();
      return { records: total![0]!, ascii: flag![2] === 0 };
    };
    /** Records `records` parse at most, and the words read back with them (the distinct strings' starts and bytes). */
    const parse = (records: number): { rows: DeviceRelation; reads: ReadRange[]; finish: (read: Uint32Array[]) => Promise<ChunkStrings> } => {
      const out = allocRelation(g, records, width);
      const ends = acquire(records, 'record ends');
      const fields = records * offsets.length;
      const spans = acquire(Math.max(1, 2 * fields), 'string spans');
      rec.dispatch('parseEnds', [text, quotes, counts, ends], [n, segments, records], segments);
      rec.dispatch('parseRows', [text, ends, rowsLayout.columns, bound(out), spans, state, counts], [n, segments, records], records, rowsLayout.uniform);
      if (!internShaders || fields === 0) return { rows: out, reads: [{ buffer: state.buffer, offset: 0, words: 1 }], finish: () => Promise.resolve(NO_STRINGS) };
      // Twice as many slots as fields at least, so probes stay short.
      const slots = 2 ** Math.ceil(Math.log2(2 * fields));
      const table = acquire(2 * slots, 'string table');
      const fieldSlots = acquire(fields, 'string slots');
      const distinct = acquire(2 * fields, 'distinct strings');
      const starts = acquire(fields + 1, 'string starts');
      // The distinct strings are fields of the chunk, so their bytes fit in as many as the chunk's.
      const words = Math.ceil(n / 4);
      const gathered = acquire(words, 'distinct string bytes');
      const interning = rec.using(internShaders);
      interning.clear(table.buffer, 8 * slots);
      interning.dispatch('parseIntern', [text, spans, table, distinct, fieldSlots, state, counts], [fields, slots - 1, segments, offsets.length], fields);
      for (const { first, count, words } of stringGroups(offsets)) {
        const groupFields = records * count;
        interning.dispatch('parseStringIds', [table, fieldSlots, bound(out), state, counts], [groupFields, segments], groupFields, [offsets.length, count, first, width, ...words]);
      }
      interning.dispatch('parseSpanLengths', [distinct, state, starts], [fields], fields + 1);
      encodeScan(rec, starts, fields + 1);
      interning.dispatch('parseGather', [text, distinct, starts, state, gathered], [words, fields], words);
      // The distinct strings' starts and bytes come back with the state where a chunk has no more than the file's
      // chunks had so far (a second readback otherwise).
      const startGuess = Math.min(fields, guess.strings) + 1;
      const wordGuess = Math.min(words, guess.words);
      return {
        rows: out,
        // Of the guess, only the words the chunk's strings take are copied out (the state's count, then the starts'
        // last, say how many): a copy of room left unused is host memory the next major GC is sooner for.
        reads: [
          { buffer: state.buffer, offset: 0, words: 2 },
          { buffer: starts.buffer, offset: 0, words: startGuess, keep: (before) => before[before.length - 1]![1]! + 1 },
          { buffer: gathered.buffer, offset: 0, words: wordGuess, keep: (before) => keptBytes(before[before.length - 2]!, before[before.length - 1]!) },
        ],
        finish: async ([read, starts0, words0]) => {
          const found = read![1]!;
          const startWords = await rest(g, starts0!, starts.buffer, found + 1);
          const byteCount = startWords[found]!;
          const byteWords = await rest(g, words0!, gathered.buffer, Math.ceil(byteCount / 4));
          // A mostly-distinct chunk's strings stay on the device too, for the file's sort (string-sort.ts): not
          // uploaded again from the copy read back.
          const onDevice = found > DISTINCT_SHARE * records ? compacted(g, gathered, starts, byteCount, found) : undefined;
          return { starts: startWords, bytes: Buffer.from(byteWords.buffer, byteWords.byteOffset, byteCount), ...(onDevice ? { onDevice } : {}) };
        },
      };
    };
    let records: number;
    let ascii: boolean;
    let parsed: ReturnType<typeof parse> | undefined;
    let read: Uint32Array[];
    if (room !== undefined) {
      // Counted and parsed at once: its count comes back with its strings.
      const heldBefore = held.length;
      parsed = parse(room);
      rows = parsed.rows;
      const all = await submitAndSync(g, rec, [...countReads, ...parsed.reads]);
      ({ records, ascii } = counted(all.slice(0, countReads.length)));
      read = all.slice(countReads.length);
      textParseTimes.oneTrip++;
      if (records > room) {
        // More records than the room: parsed again at the count.
        textParseTimes.roomMissed++;
        tooSmall = { rows, bounds: held.splice(heldBefore) };
        rows = undefined;
        parsed = undefined;
      }
    } else {
      ({ records, ascii } = counted(await submitAndSync(g, rec, countReads)));
      read = [];
    }
    if (!parsed) {
      dropTooSmall();
      if (records === 0) return { rows: allocRelation(g, 0, width), ...NO_STRINGS, bytesParsed: n, ascii };
      // A parse at too small a room counted its distinct strings already.
      rec.clear(state.buffer, 4, 4);
      parsed = parse(records);
      rows = parsed.rows;
      read = await submitAndSync(g, rec, parsed.reads);
    }
    if (read[0]![0] !== 0) throw new HostParses();
    const strings = await parsed.finish(read);
    // Rows past the count are room left unused.
    rows!.count = records;
    if (records === 0) {
      releaseRelation(g, rows!);
      rows = allocRelation(g, 0, width);
    }
    return { rows: rows!, ...strings, bytesParsed: n, ascii };
  } catch (e) {
    if (rows) releaseRelation(g, rows);
    dropTooSmall();
    throw e;
  } finally {
    for (const b of held) g.pool.release(b.buffer);
  }
}
