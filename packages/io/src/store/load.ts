/**
 * Loading facts from a columnar store: only the columns a program reads (`pruned.loadColumns`), each column file
 * read whole with one read (and verified, files.ts), widened to words where it is narrower (column-encoding.ts), then
 * interleaved into the relation's row-major words in chunks that the relation adopts; no value is parsed. A string column holds ids of its own dictionary, which the
 * run's interner takes as it is (sorted, undecoded): ids are shifted, not looked up.
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

/**
 * Rewrites the ids of `dictionary` in `words` (of the file `path`) to ids of the run's interner, in place: the
 * dictionary's strings take consecutive ids there, undecoded (StringInterner.addSorted), all noted in `used`.
 */
function mapStrings(words: Uint32Array, path: string, dictionary: StoreDictionary, facts: EncodedFacts, used: number[]): void {
  const first = facts.strings.addSorted(dictionary);
  for (let i = 0; i < words.length; i++) {
    const id = words[i]!;
    if (id >= dictionary.size) throw storeError(`store file ${path}: string id ${id} outside its dictionary of ${dictionary.size} strings (corrupt store)`);
    words[i] = first + id;
  }
  for (let id = 0; id < dictionary.size; id++) used.push(first + id);
}

interface ColumnWords {
  words: Uint32Array;
  /** Words per value. */
  width: number;
  /** Word offset within an output row. */
  at: number;
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
  const columns: ColumnWords[] = [];
  let at = 0;
  for (const column of kept) {
    const path = join(dir, column.file);
    const width = rowWords([column.type]);
    const words = widenColumn(await readStoreFile(dir, column), column.encoding, stored.rows, width);
    if (column.dictionary) {
      mapStrings(words, path, await StoreDictionary.read(dir, column.dictionary), facts, used);
      step(column.dictionary.bytes.bytes + column.dictionary.offsets.bytes);
    }
    columns.push({ words, width, at });
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
  const chunkRows = Math.max(1, Math.floor(CHUNK_WORDS / width));
  for (let first = 0; first < stored.rows; first += chunkRows) {
    const rows = Math.min(chunkRows, stored.rows - first);
    const out = new Uint32Array(rows * width);
    for (const { words, width: w, at } of columns) {
      if (w === 1) {
        for (let r = 0, o = at, s = first; r < rows; r++, o += width, s++) out[o] = words[s]!;
      } else {
        for (let r = 0, o = at, s = 2 * first; r < rows; r++, o += width, s += 2) {
          out[o] = words[s]!;
          out[o + 1] = words[s + 1]!;
        }
      }
    }
    target.adopt(out, first === 0 ? used : []);
  }
}
