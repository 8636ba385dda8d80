/**
 * Loading facts from a columnar store: only the columns a program reads (`pruned.loadColumns`), each column file
 * read whole with one read (and verified, files.ts), then widened (column-encoding.ts) straight into the relation's
 * row-major words, in chunks that the relation adopts; no value is parsed. A string column holds ids of its own
 * dictionary, which the run's interner takes as it is (sorted, undecoded): ids are shifted, not looked up.
 */
import { join } from 'node:path';
import { VixenError, errorAt, rowWords, type Diagnostic, type RelationDecl } from '@vixen/queryplan';
import { CHUNK_WORDS, columnTypes, factsColumns, type DeviceRows, type EncodedFacts, type StringInterner } from '../facts/encoded.js';
import { progressCounter, type LoadProgressListener } from '../load-progress.js';
import { StoreDictionary } from './dictionary.js';
import { readStoreFile } from './files.js';
import { bytesPerValue, widenColumn } from './column-encoding.js';
import { isOmitted, readStoreManifest, storeError, type StoreColumn, type StoreManifest } from './manifest.js';

type StoredRelation = StoreManifest['relations'][string];

/** A store relation as a device loader gets it: the stored columns the program reads, their sizes checked against `rows`. */
export interface StoreRelationRead {
  dir: string;
  name: string;
  rows: number;
  columns: readonly StoreColumn[];
}

/**
 * Loads a store relation elsewhere than in host memory (the runtime: straight into device buffers), string ids as
 * ids of `strings`, `step` hearing the bytes read: the rows, or undefined to leave the relation to the host.
 */
export type StoreDeviceLoader = (read: StoreRelationRead, strings: StringInterner, step: (bytes: number) => void) => Promise<DeviceRows | undefined>;

interface RelationLoad {
  decl: RelationDecl;
  stored: StoredRelation;
  /** The stored columns it reads, in order. */
  kept: StoreColumn[];
}

/** Why the store's relation cannot be read as `decl` declares it (column count, then each column's type), or undefined. */
function schemaProblem(dir: string, decl: RelationDecl, stored: StoredRelation): string | undefined {
  const columns = factsColumns(decl);
  if (columns.length !== stored.columns.length) {
    return `relation ${decl.name} has ${stored.columns.length} columns in store ${dir}, the program declares ${columns.length}`;
  }
  const c = columns.findIndex((col, i) => col.type !== stored.columns[i]!.type);
  if (c < 0) return undefined;
  return `relation ${decl.name}, column ${c + 1} (${columns[c]!.name}): the program declares ${columns[c]!.type}, store ${dir} holds ${stored.columns[c]!.type} (column ${stored.columns[c]!.name})`;
}

/**
 * Loads the relations in `wanted` (each must be in the store) and those in `optional` that are, as
 * loadFactsDirInto does for a facts directory. Every missing relation and schema mismatch is reported in one
 * VixenError before any file is read; a bad file stops the load with an error naming it.
 */
export async function loadStoreInto(
  dir: string,
  relations: readonly RelationDecl[],
  wanted: readonly string[],
  optional: readonly string[],
  facts: EncodedFacts,
  onProgress?: LoadProgressListener,
  onDevice?: StoreDeviceLoader,
): Promise<void> {
  const manifest = await readStoreManifest(dir);
  const decls = new Map(relations.map((r) => [r.name, r]));
  const required = new Set(wanted);
  const diags: Diagnostic[] = [];
  const loads: RelationLoad[] = [];
  for (const name of new Set([...wanted, ...optional])) {
    const decl = decls.get(name);
    const stored = Object.hasOwn(manifest.relations, name) ? manifest.relations[name] : undefined;
    if (!decl) diags.push(errorAt(`cannot load facts for ${name}: no such relation`));
    else if (!stored) {
      if (required.has(name)) diags.push(errorAt(`no relation ${name} in store ${dir} (import it with vixen import)`));
    } else {
      const problem = schemaProblem(dir, decl, stored);
      const read = (decl.pruned?.loadColumns ?? stored.columns.map((_, i) => i)).map((c) => [c, stored.columns[c]!] as const);
      const omitted = read.filter(([, column]) => isOmitted(column));
      if (problem) diags.push(errorAt(problem));
      else if (omitted.length > 0) {
        const names = omitted.map(([c, column]) => `${c + 1} (${column.name})`).join(', ');
        diags.push(errorAt(`relation ${decl.name}: store ${dir} omits column${omitted.length > 1 ? 's' : ''} ${names}, which the program reads (imported with --columns read for another program: import the facts again)`));
      } else loads.push({ decl, stored, kept: read.map(([, column]) => column as StoreColumn) });
    }
  }
  if (diags.length > 0) throw new VixenError(diags);

  const fileBytes = (c: StoreColumn): number => c.bytes + (c.dictionary ? c.dictionary.bytes.bytes + c.dictionary.offsets.bytes : 0);
  const step = progressCounter(loads.reduce((n, l) => n + l.kept.reduce((m, c) => m + fileBytes(c), 0), 0), onProgress);
  for (const load of loads) await loadRelation(dir, load, facts, (bytes) => step(load.decl.name, bytes), onDevice);
}

/** A kept column file's bytes and where its words go in a row. */
interface ColumnBytes {
  bytes: Uint8Array;
  column: StoreColumn;
  /** Words per value. */
  width: number;
  /** Word offset within an output row. */
  at: number;
  /** A string column's dictionary: its first id of the run's interner, its size and the file's path (for errors). */
  strings?: { first: number; size: number; path: string };
}

async function loadRelation(dir: string, { decl, stored, kept }: RelationLoad, facts: EncodedFacts, step: (bytes: number) => void, onDevice?: StoreDeviceLoader): Promise<void> {
  const target = facts.relation(decl.name, columnTypes(decl.columns));
  for (const column of kept) {
    const per = bytesPerValue(column.encoding, rowWords([column.type]));
    if (column.bytes !== stored.rows * per) {
      throw storeError(`store file ${join(dir, column.file)}: the manifest gives it ${column.bytes} bytes for ${stored.rows} rows of ${column.type} at ${per} bytes each (corrupt manifest)`);
    }
  }
  const onTheDevice = onDevice && target.width > 0 ? await onDevice({ dir, name: decl.name, rows: stored.rows, columns: kept }, facts.strings, step) : undefined;
  if (onTheDevice) {
    target.addDevice(onTheDevice);
    return;
  }
  /** The run's ids of the strings the relation holds (a string in two columns twice). */
  const used: number[] = [];
  const columns: ColumnBytes[] = [];
  let at = 0;
  for (const column of kept) {
    const width = rowWords([column.type]);
    const bytes = await readStoreFile(dir, column);
    let strings: ColumnBytes['strings'];
    if (column.dictionary) {
      // The dictionary's strings take consecutive ids of the run's interner, undecoded (StringInterner.addSorted).
      const dictionary = await StoreDictionary.read(dir, column.dictionary);
      const first = facts.strings.addSorted(dictionary);
      for (let id = 0; id < dictionary.size; id++) used.push(first + id);
      strings = { first, size: dictionary.size, path: join(dir, column.file) };
      step(column.dictionary.bytes.bytes + column.dictionary.offsets.bytes);
    }
    columns.push({ bytes, column, width, at, ...(strings ? { strings } : {}) });
    at += width;
    step(column.bytes);
  }
  const width = target.width;
  if (width === 0) {
    // Nothing is read but the row count (a relation the program only tests for rows).
    for (let r = 0; r < stored.rows; r++) {
      target.next();
      target.commit();
    }
    return;
  }
  // Each column widened straight into its place in the rows; adopted once every id is checked (nothing half-loaded).
  const chunks: Uint32Array[] = [];
  const chunkRows = Math.max(1, Math.floor(CHUNK_WORDS / width));
  for (let first = 0; first < stored.rows; first += chunkRows) {
    const rows = Math.min(chunkRows, stored.rows - first);
    const out = new Uint32Array(rows * width);
    for (const { bytes, column, width: w, at, strings } of columns) {
      widenColumn(bytes, column.encoding, w, first, rows, { out, at, stride: width });
      if (strings) mapStrings(out, at, width, strings);
    }
    chunks.push(out);
  }
  chunks.forEach((out, k) => target.adopt(out, k === 0 ? used : []));
}

/** Rewrites a string column's ids (at word `at` of rows of `stride` words) to the run's interner's. */
function mapStrings(out: Uint32Array, at: number, stride: number, { first, size, path }: NonNullable<ColumnBytes['strings']>): void {
  for (let o = at; o < out.length; o += stride) {
    const id = out[o]!;
    if (id >= size) throw storeError(`store file ${path}: string id ${id} outside its dictionary of ${size} strings (corrupt store)`);
    out[o] = first + id;
  }
}
