/**
 * A columnar store's relation straight into device memory (io's StoreDeviceLoader): each column file the program
 * reads is read in pieces (its CRC-32 checked as it goes, io's StoreFileReader), handed to the staging ring and
 * copied to the device, where a pass writes its values into the relation's rows (codegen-wgsl storeColumn). No value
 * is touched on the host, which used to interleave every column into rows and map every string id. A string
 * column's dictionary goes to the load's interner as it is, undecoded (a sorted list the run's dictionary merges);
 * the rows' string words become indices of the interner's ids (ParsedRows), which the executor maps to the run's
 * dictionary ids on the device as it does for device-parsed text.
 */
import { rowWords } from '@vixen/queryplan';
import { storeColumnShaders } from '@vixen/codegen-wgsl';
import { StoreDictionary, StoreFileReader, storeError, type DeviceRows, type StoreRelationRead, type StringInterner } from '@vixen/io';
import { chunkedOf, chunkRows } from './chunks.js';
import { internals, type Gpu } from './device.js';
import { ParsedRows } from './parsed-rows.js';
import { memoShaders, Recorder } from './recorder.js';
import { acquireBound, allocRelation, bound, releaseRelation, syncCounts, type DeviceRelation } from './relations.js';
import { defaultUploadPlan, uploadBytes, type UploadFill, type UploadPlan } from './upload.js';

/**
 * Two host buffers in shared memory that pieces are read into, each reused once the checksum of the piece it held
 * (on a worker, StoreFileReader.checkShared) is done: the columns of a relation take turns with them.
 */
class HostPieces {
  readonly buffers: [Uint8Array, Uint8Array];
  /** Per buffer, the check of the piece it holds. */
  readonly checked: [Promise<void>, Promise<void>] = [Promise.resolve(), Promise.resolve()];
  /** The buffer the next piece goes to. */
  next = 0;

  constructor(bytes: number) {
    this.buffers = [new Uint8Array(new SharedArrayBuffer(bytes)), new Uint8Array(new SharedArrayBuffer(bytes))];
  }
}

/**
 * An UploadFill of the next `total` bytes of `reader`, in pieces of at most the buffers' size (uploadBytes asks for
 * full pieces but the last): the next piece is read while this one is copied into the staging buffer and its
 * checksum taken on a worker.
 */
function readAhead(reader: StoreFileReader, total: number, host: HostPieces): UploadFill {
  let fetched = 0;
  let next: Promise<{ bytes: Uint8Array; k: number }> | undefined;
  const fetch = (bytes: number): Promise<{ bytes: Uint8Array; k: number }> => {
    const k = host.next;
    host.next ^= 1;
    const into = host.buffers[k].subarray(0, bytes);
    fetched += bytes;
    const read = host.checked[k].then(() => reader.fetch(into)).then(() => ({ bytes: into, k }));
    // Awaited by the next fill; an upload that failed before then must not leave it unhandled.
    read.catch(() => undefined);
    return read;
  };
  return async (into) => {
    const { bytes, k } = await (next ?? fetch(into.length));
    if (bytes.length !== into.length) throw new Error(`internal: read ahead ${bytes.length} bytes for a piece of ${into.length}`);
    next = fetched < total ? fetch(Math.min(host.buffers[0].length, total - fetched)) : undefined;
    const checked = reader.checkShared(bytes);
    // A failed check fails the file's finish; until then the buffer waits on it.
    host.checked[k] = checked.catch(() => undefined);
    into.set(bytes);
  };
}

/**
 * The kept columns of `read` as rows on the device, strings as ids of `strings`; undefined for rows of no word
 * (the host counts those). `plan`: how pieces are uploaded (tests use small pieces).
 */
export async function loadStoreOnDevice(
  gpu: Gpu,
  read: StoreRelationRead,
  strings: StringInterner,
  step: (bytes: number) => void,
  plan: UploadPlan = defaultUploadPlan(gpu),
): Promise<DeviceRows | undefined> {
  const g = internals(gpu);
  const widths = read.columns.map((c) => rowWords([c.type]));
  const width = widths.reduce((n, w) => n + w, 0);
  if (width === 0 || read.rows === 0) return undefined;
  // Each string column's dictionary, as ids of `strings`, one after another in `map`.
  const bases: number[] = [];
  const sizes: number[] = [];
  const maps: Uint32Array[] = [];
  let mapped = 0;
  // Read together: each one's checksum while the others are read.
  const dictionaries = await Promise.all(read.columns.map((c) => c.dictionary && StoreDictionary.read(read.dir, c.dictionary)));
  for (const [k, c] of read.columns.entries()) {
    bases.push(c.dictionary ? mapped : 0);
    sizes.push(0);
    const dictionary = dictionaries[k];
    if (!c.dictionary || !dictionary) continue;
    // Sorted and distinct already: the run's dictionary merges it with the others, undecoded (StringInterner.addSorted).
    const first = strings.addSorted(dictionary);
    const ids = new Uint32Array(dictionary.size);
    for (let id = 0; id < ids.length; id++) ids[id] = first + id;
    maps.push(ids);
    sizes[sizes.length - 1] = ids.length;
    mapped += ids.length;
    step(c.dictionary.bytes.bytes + c.dictionary.offsets.bytes);
  }
  const shaders = memoShaders({ storeColumn: true }, () => storeColumnShaders());
  // Pieces are read into host memory first (the CRC reads them, and mapped staging memory is slow to read), each
  // while the one before is copied on: two buffers.
  const piece = Math.min(plan.chunkBytes, Math.max(...read.columns.map((c) => c.bytes)));
  const host = new HostPieces(piece);
  const readers: StoreFileReader[] = [];
  const parts: DeviceRelation[] = [];
  const state = acquireBound(g, 1, 'store load state');
  try {
    for (const c of read.columns) readers.push(await StoreFileReader.open(read.dir, c));
    const clear = new Recorder(g, shaders);
    clear.clear(state.buffer, 4);
    await clear.submit();
    const per = chunkRows(g, width);
    for (let first = 0; first < read.rows; first += per) {
      const rows = Math.min(per, read.rows - first);
      const rel = allocRelation(g, rows, width);
      parts.push(rel);
      let at = 0;
      for (const [k, reader] of readers.entries()) {
        const w = widths[k]!;
        const column = acquireBound(g, rows * w, `column ${read.columns[k]!.name} of ${read.name}`);
        try {
          await uploadBytes(gpu, column.buffer, 0, rows * w * 4, readAhead(reader, rows * w * 4, host), plan);
          const rec = new Recorder(g, shaders);
          rec.dispatch('storeColumn', [column, bound(rel), state], [rows, width, at, w], rows, Uint32Array.of(bases[k]!, sizes[k]!, read.columns[k]!.dictionary ? 1 : 0));
          await rec.submit();
        } finally {
          // Later uploads into it queue after the pass that reads it.
          g.pool.release(column.buffer);
        }
        step(rows * w * 4);
        at += w;
      }
    }
    const finished = await Promise.allSettled(readers.splice(0).map((r) => r.finish()));
    for (const f of finished) if (f.status === 'rejected') throw f.reason;
    const [flag] = await syncCounts(g, [{ buffer: state.buffer, offset: 0, words: 1 }]);
    if (flag![0] !== 0) throw storeError(`store ${read.dir}: relation ${read.name} holds a string id outside its column's dictionary (corrupt store: import the facts again)`);
  } catch (e) {
    for (const p of parts) releaseRelation(g, p);
    await Promise.all(readers.map((r) => r.close()));
    throw e;
  } finally {
    g.pool.release(state.buffer);
  }
  // Each chunk's string words index the same map: one copy of it per chunk (ParsedRows maps chunk by chunk).
  const map = new Uint32Array(mapped);
  maps.reduce((at, m) => (map.set(m, at), at + m.length), 0);
  const stringIds = new Uint32Array(mapped * parts.length);
  for (let j = 0; j < parts.length; j++) stringIds.set(map, j * mapped);
  return new ParsedRows(gpu, chunkedOf(parts, width), stringIds, parts.map((_, j) => j * mapped));
}
