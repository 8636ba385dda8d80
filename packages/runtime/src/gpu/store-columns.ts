/**
 * A columnar store's relation straight into device memory (io's StoreDeviceLoader): every column file the program
 * reads is opened at once (its size checked) and read in pieces, several positional reads in flight across the
 * files, each straight into a mapped upload buffer (MappedReads, as the device text parser reads: on libuv's
 * threads, no byte through the main thread), then copied to the device, where a pass writes the piece's values into
 * the relation's rows (codegen-wgsl storeColumn), widening a narrow file's values (io store/column-encoding.ts): the
 * bytes read and copied are the file's, often a third of the rows' words. Meanwhile a worker per file reads it again
 * from the same open file and takes its CRC-32 (StoreFileReader.verify): the load ends only once every file is
 * verified, and a bad one fails it with nothing kept. No value is touched on the host. A string column's dictionary
 * goes to the load's interner as it is, undecoded (a sorted list the run's dictionary merges); the rows' string words
 * become indices of the interner's ids (ParsedRows), which the executor maps to the run's dictionary ids on the
 * device as it does for device-parsed text.
 */
import { rowWords } from '@vixen/queryplan';
import { storeColumnShaders } from '@vixen/codegen-wgsl';
import { bytesPerValue, StoreDictionary, StoreFileReader, storeError, type DeviceRows, type StoreRelationRead, type StringInterner } from '@vixen/io';
import { chunkedOf, chunkRows } from './chunks.js';
import { internals, type Gpu } from './device.js';
import { holdReads } from './mapped-reads.js';
import { loadScoped, ParsedRows } from './parsed-rows.js';
import { memoShaders, Recorder } from './recorder.js';
import { acquireBound, allocRelation, bound, releaseRelation, syncCounts, type DeviceRelation } from './relations.js';

/** How a relation's column files are read: bytes per read (a mapped buffer each) and reads in flight. */
export interface StoreReadPlan {
  pieceBytes: number;
  inFlight: number;
}

/**
 * 32 MiB reads, 8 in flight: libuv's 4 threads each have a read queued behind the one they are doing; the mapped
 * buffers (12, 384 MiB of host memory: reads in flight and a few being mapped again after their copies) stay with
 * the device for later loads (holdReads).
 */
export const STORE_READ_PLAN: StoreReadPlan = { pieceBytes: 32 * 2 ** 20, inFlight: 8 };

/**
 * Host time of store loads so far, in ms (`vixen bench load` prints it per load): handing the dictionaries (read
 * meanwhile) to the interner, and of that the wait for their reads; opening the files, reading and sending the pieces
 * (and of that, summed over the lanes in flight, so more than the time they took: the reads, handing pieces to the
 * device, and waiting for a mapped buffer), then waiting for the last checksums and for the device. `bytes`: of
 * column files, in `pieces`; `dictionaryBytes`: of their dictionaries' files.
 */
export const storeLoadTimes = {
  relations: 0,
  bytes: 0,
  pieces: 0,
  dictionaryBytes: 0,
  dictionariesMs: 0,
  dictionaryWaitMs: 0,
  openMs: 0,
  readsMs: 0,
  sendMs: 0,
  bufferWaitMs: 0,
  piecesMs: 0,
  verifyWaitMs: 0,
  deviceWaitMs: 0,
};

/** A piece of a column file: `rows` values from row `row` of relation chunk `part`, at byte `at` of the file. */
interface Piece {
  part: DeviceRelation;
  column: number;
  row: number;
  rows: number;
  at: number;
}

/**
 * The kept columns of `read` as rows on the device, strings as ids of `strings`; undefined for rows of no word
 * (the host counts those). `plan`: how the files are read (tests use small pieces).
 */
export function loadStoreOnDevice(
  gpu: Gpu,
  read: StoreRelationRead,
  strings: StringInterner,
  step: (bytes: number) => void,
  plan: StoreReadPlan = STORE_READ_PLAN,
): Promise<DeviceRows | undefined> {
  return loadScoped(gpu, `loading the facts of ${read.name} (read from its store onto the device)`, () => loadStore(gpu, read, strings, step, plan));
}

async function loadStore(gpu: Gpu, read: StoreRelationRead, strings: StringInterner, step: (bytes: number) => void, plan: StoreReadPlan): Promise<DeviceRows | undefined> {
  const g = internals(gpu);
  const widths = read.columns.map((c) => rowWords([c.type]));
  /** Bytes per value in each column's file. */
  const valueBytes = read.columns.map((c, k) => bytesPerValue(c.encoding, widths[k]!));
  const width = widths.reduce((n, w) => n + w, 0);
  if (width === 0 || read.rows === 0) return undefined;
  const times = storeLoadTimes;
  // Each string column's dictionary takes the manifest's count of ids, one after another in `map`.
  const bases: number[] = [];
  const sizes: number[] = [];
  let mapped = 0;
  for (const c of read.columns) {
    // The pass adds a column's base to its words: 0 for other columns.
    bases.push(c.dictionary ? mapped : 0);
    sizes.push(c.dictionary?.strings ?? 0);
    mapped += c.dictionary?.strings ?? 0;
  }
  // Read (each with its checksum) while the columns are; taken by the interner once they are.
  const dictionaries = Promise.all(read.columns.map((c) => c.dictionary && StoreDictionary.read(read.dir, c.dictionary)));
  dictionaries.catch(() => undefined);
  let t0 = performance.now();
  const shaders = memoShaders({ storeColumn: true }, () => storeColumnShaders());
  const { memory, letGo } = holdReads(g, plan.pieceBytes, plan.inFlight + 4);
  const readers: StoreFileReader[] = [];
  const verified: Promise<void>[] = [];
  const parts: DeviceRelation[] = [];
  const state = acquireBound(g, 1, 'store load state');
  /** Per string column, its dictionary's ids of `strings` from bases[k] on. */
  const map = new Uint32Array(mapped);
  /** A read or check failed: no more pieces are read. */
  let failed = false;
  try {
    const opened = await Promise.allSettled(read.columns.map((c) => StoreFileReader.open(read.dir, c)));
    for (const o of opened) if (o.status === 'fulfilled') readers.push(o.value);
    for (const o of opened) if (o.status === 'rejected') throw o.reason;
    // A failed check stops the reads; awaited once every piece is sent, it must not go unhandled until then.
    for (const r of readers) {
      const check = r.verify().catch((e: unknown) => {
        failed = true;
        throw e;
      });
      check.catch(() => undefined);
      verified.push(check);
    }
    times.openMs += performance.now() - t0;
    t0 = performance.now();
    const clear = new Recorder(g, shaders);
    clear.clear(state.buffer, 4);
    await clear.submit();
    const pieces: Piece[] = [];
    const per = chunkRows(g, width);
    for (let first = 0; first < read.rows; first += per) {
      const rows = Math.min(per, read.rows - first);
      const part = allocRelation(g, rows, width);
      parts.push(part);
      for (const [column, size] of valueBytes.entries()) {
        const most = Math.max(1, Math.floor(plan.pieceBytes / size));
        for (let row = 0; row < rows; row += most) pieces.push({ part, column, row, rows: Math.min(most, rows - row), at: size * (first + row) });
      }
    }
    const at = widths.map((_, k) => widths.slice(0, k).reduce((n, w) => n + w, 0));
    let next = 0;
    /** Reads the next piece into a mapped buffer and hands it to the device; false once none is left. */
    const send = async (): Promise<boolean> => {
      if (failed || next >= pieces.length) return false;
      const p = pieces[next++]!;
      const w = widths[p.column]!;
      const bytes = valueBytes[p.column]! * p.rows;
      // A narrow piece is copied in whole words, its last one partly past the piece (lanes the pass does not read).
      const words = Math.ceil(bytes / 4);
      // Every read takes a buffer of the plan's size, so buffers are reused whatever piece they held.
      const w0 = performance.now();
      const { buffer, bytes: mem } = await g.orLost(memory.take(plan.pieceBytes));
      try {
        const r0 = performance.now();
        times.bufferWaitMs += r0 - w0;
        await readers[p.column]!.readAt(mem.subarray(0, bytes), p.at);
        const s0 = performance.now();
        times.readsMs += s0 - r0;
        buffer.unmap();
        const rec = new Recorder(g, shaders);
        const column = rec.scratch(words);
        rec.copy(buffer, 0, column.buffer, 0, 4 * words);
        const { dictionary, encoding } = read.columns[p.column]!;
        const frame = encoding.kind === 'frame' ? [encoding.width, encoding.base[0]!, encoding.base[1] ?? 0, encoding.step] : [0, 0, 0, 0];
        rec.dispatch('storeColumn', [column, bound(p.part), state], [p.rows, width, at[p.column]!, w], p.rows, Uint32Array.of(bases[p.column]!, sizes[p.column]!, dictionary ? 1 : 0, p.row, ...frame));
        await rec.submit();
        g.batch.flush();
        times.sendMs += performance.now() - s0;
      } finally {
        // Mapped again once its copy is done, for a later piece.
        memory.give(buffer);
      }
      step(bytes);
      return true;
    };
    // Lanes of reads in flight; a failed one stops the others taking more.
    const lane = async (): Promise<void> => {
      try {
        while (await send());
      } catch (e) {
        failed = true;
        throw e;
      }
    };
    const lanes = await Promise.allSettled(Array.from({ length: Math.max(1, plan.inFlight) }, lane));
    for (const l of lanes) if (l.status === 'rejected') throw l.reason;
    times.piecesMs += performance.now() - t0;
    t0 = performance.now();
    const checks = await Promise.allSettled(verified);
    for (const c of checks) if (c.status === 'rejected') throw c.reason;
    times.verifyWaitMs += performance.now() - t0;
    t0 = performance.now();
    // Only a string column's pass can set the flag: a relation without one leaves its copies to the device, and the
    // run goes on meanwhile.
    const [flag] = read.columns.some((c) => c.dictionary) ? await syncCounts(g, [{ buffer: state.buffer, offset: 0, words: 1 }]) : [Uint32Array.of(0)];
    times.deviceWaitMs += performance.now() - t0;
    if (flag![0] !== 0) throw storeError(`store ${read.dir}: relation ${read.name} holds a string id outside its column's dictionary (corrupt store: import the facts again)`);
    t0 = performance.now();
    const dictionaryList = await dictionaries;
    times.dictionaryWaitMs += performance.now() - t0;
    for (const [k, dictionary] of dictionaryList.entries()) {
      const c = read.columns[k]!;
      if (!c.dictionary || !dictionary) continue;
      // Sorted and distinct already: the run's dictionary merges it with the others, undecoded (StringInterner.addSorted).
      const first = strings.addSorted(dictionary);
      for (let id = 0; id < dictionary.size; id++) map[bases[k]! + id] = first + id;
      step(c.dictionary.bytes.bytes + c.dictionary.offsets.bytes);
    }
    times.dictionariesMs += performance.now() - t0;
    times.relations++;
    times.bytes += read.columns.reduce((n, c) => n + c.bytes, 0);
    times.pieces += pieces.length;
    times.dictionaryBytes += read.columns.reduce((n, c) => n + (c.dictionary ? c.dictionary.bytes.bytes + c.dictionary.offsets.bytes : 0), 0);
  } catch (e) {
    for (const p of parts) releaseRelation(g, p);
    throw e;
  } finally {
    // Every lane is done with its buffers.
    letGo();
    // The workers read the files by descriptor: they are closed once every check is done.
    await Promise.allSettled([...verified, dictionaries]);
    await Promise.all(readers.map((r) => r.close()));
    g.pool.release(state.buffer);
  }
  // Each chunk's string words index the same map: one copy of it per chunk (ParsedRows maps chunk by chunk).
  const stringIds = new Uint32Array(mapped * parts.length);
  for (let j = 0; j < parts.length; j++) stringIds.set(map, j * mapped);
  return new ParsedRows(gpu, chunkedOf(parts, width), stringIds, parts.map((_, j) => j * mapped));
}
