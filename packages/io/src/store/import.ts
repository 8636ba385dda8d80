/**
 * `vixen import`: the base relations of a program, read from a facts directory through the usual loaders (any
 * format they take, a store included), written as a columnar store. Each relation's columns (and each string
 * column's dictionary) are written as soon as its file is read, into a temporary folder beside the target that
 * replaces it at the end, so no half-written store is ever seen.
 */
import { existsSync } from 'node:fs';
import { chmod, mkdir, mkdtemp, rename, rm, stat, writeFile } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';
import { rowWords, type RelationDecl, type Row } from '@vixen/queryplan';
import { runInWorker } from '../parallel/pool.js';
import { sortedOrder, sortedOrderTask } from '../sorted-order.js';
import { EncodedFacts, StringInterner, columnWordOffsets, factsColumns, type EncodedRelation } from '../facts/encoded.js';
import { loadFactsDirInto, loadKeptColumns } from '../facts/dir.js';
import type { LoadProgressListener } from '../load-progress.js';
import { writeDictionary } from './dictionary.js';
import { writeStoreFile } from './files.js';
import { narrowColumn } from './column-encoding.js';
import { STORE_FORMAT, STORE_MANIFEST, STORE_VERSION, storeError, type OmittedColumn, type StoreColumn, type StoreManifest } from './manifest.js';

export interface ImportStoreOptions {
  /** The program's relations: its base (EDB) relations are imported. */
  relations: readonly RelationDecl[];
  /**
   * `all` (default): every column of each relation; `read`: only the columns the program reads (`pruned`), the
   * others omitted from the store (a store of TPC-H SF 10's query columns leaves out 60M distinct comments).
   */
  columns?: 'all' | 'read';
  /** The program's inline facts: a relation that has some may have no facts file (as for a run). */
  inline?: Readonly<Record<string, readonly Row[]>>;
  /** Where the facts are read from: a facts directory or a store. */
  factsDir: string;
  /** The store folder to write; an existing store there is replaced, anything else is an error. */
  out: string;
  onProgress?: LoadProgressListener;
}

export interface ImportedStore {
  relations: { name: string; rows: number }[];
  /** Strings in the dictionaries (each string column's distinct strings, summed). */
  strings: number;
  /** Bytes of every file written. */
  bytes: number;
}

export async function importStore(options: ImportStoreOptions): Promise<ImportedStore> {
  const { relations, inline = {}, factsDir, out, onProgress, columns: which = 'all' } = options;
  const replaces = await existingStore(out);
  const building = await mkdtemp(join(dirname(out), `.${basename(out)}.importing-`)).catch((e: Error) => {
    throw storeError(`cannot create store ${out}: ${e.message}`);
  });
  try {
    const facts = new EncodedFacts();
    const written: StoreManifest['relations'] = {};
    let bytes = 0;
    let strings = 0;
    const writeRelation = async (decl: RelationDecl, rel: EncodedRelation, interner: StringInterner): Promise<void> => {
      const folder = encodeURIComponent(decl.name);
      await mkdir(join(building, folder));
      const columns = factsColumns(decl);
      // The rows hold the loaded columns: their word offsets by column.
      const loaded = decl.pruned?.loadColumns ?? columns.map((_, c) => c);
      const offsets = new Map(columnWordOffsets(rel.types).map((o, k) => [loaded[k]!, o]));
      const stored: (StoreColumn | OmittedColumn)[] = [];
      // The string columns' dictionaries are sorted first, all at once (large ones on workers).
      const sorted = new Map<number, Promise<{ words: Uint32Array; dictionary: string[] }>>();
      columns.forEach(({ type }, c) => {
        const offset = offsets.get(c);
        if (type === 'string' && offset !== undefined) sorted.set(c, ownDictionary(columnOf(rel, offset, 1), interner));
      });
      // Awaited below in column order; a failed write must not leave the others unhandled.
      for (const p of sorted.values()) p.catch(() => undefined);
      const kept: { c: number; words: Uint32Array; width: number; dictionary?: string[] }[] = [];
      for (let c = 0; c < columns.length; c++) {
        const offset = offsets.get(c);
        if (offset === undefined) continue;
        const width = rowWords([columns[c]!.type]);
        kept.push({ c, width, ...((await sorted.get(c)) ?? { words: columnOf(rel, offset, width) }) });
      }
      // Rows written in the device's canonical order where they are near it: a load of these columns finds them so.
      const order = canonicalOrder(kept, rel.count);
      if (order) for (const k of kept) k.words = permuted(k.words, k.width, order);
      for (let c = 0; c < columns.length; c++) {
        const { name, type } = columns[c]!;
        const values = kept.find((k) => k.c === c);
        if (!values) {
          stored.push({ name, type, omitted: true });
          continue;
        }
        const { words, dictionary, width } = values;
        const base = `${folder}/${c}`;
        // The narrowest encoding that holds the column (fewer bytes for a load to read and upload).
        const { encoding, bytes: narrow } = narrowColumn(words, width);
        // Named by the unsigned integers it holds: u32 for words, u8 to u32 for a frame's (u24: three bytes).
        const file = `${base}.u${encoding.kind === 'words' ? 32 : 8 * encoding.width}`;
        const column: StoreColumn = { name, type, encoding, ...(await writeStoreFile(building, file, narrow)) };
        if (dictionary) {
          column.dictionary = await writeDictionary(building, base, dictionary);
          bytes += column.dictionary.bytes.bytes + column.dictionary.offsets.bytes;
          strings += dictionary.length;
        }
        stored.push(column);
        bytes += column.bytes;
      }
      written[decl.name] = { rows: rel.count, columns: stored };
    };
    // Every column of each relation, whatever the program reads, or only those it reads (loaded as a run loads them).
    const full = relations.filter((r) => r.kind === 'edb').map(({ pruned, ...r }) => (which === 'read' && pruned ? { ...r, pruned } : { ...r, columns: pruned?.sourceColumns ?? r.columns }));
    const hasInline = (r: RelationDecl): boolean => (inline[r.name]?.length ?? 0) > 0;
    await loadFactsDirInto(
      factsDir,
      full,
      full.filter((r) => !hasInline(r)).map((r) => r.name),
      full.filter(hasInline).map((r) => r.name),
      facts,
      async (decl, path, into, onBytes) => {
        await loadKeptColumns(decl, path, into, onBytes);
        await writeRelation(decl, into.relations.get(decl.name)!, into.strings);
        // Written, and nothing else is held: the next relation starts from an empty interner.
        into.relations.delete(decl.name);
        into.strings = new StringInterner();
      },
      onProgress,
      // The hook replaces the interner between files.
      true,
    );
    // A store as the source is loaded whole, without the file hook.
    for (const [name, rel] of facts.relations) await writeRelation(full.find((r) => r.name === name)!, rel, facts.strings);

    const manifest: StoreManifest = { format: STORE_FORMAT, version: STORE_VERSION, relations: written };
    await writeFile(join(building, STORE_MANIFEST), JSON.stringify(manifest, null, 1) + '\n');
    // mkdtemp's folder is private; a store is as readable as the folders beside it.
    await chmod(building, 0o777 & ~process.umask());
    await replace(out, building, replaces);
    return { relations: Object.entries(written).map(([name, r]) => ({ name, rows: r.rows })), strings, bytes };
  } catch (e) {
    await rm(building, { recursive: true, force: true });
    throw e;
  }
}

/** Distinct strings of a column from which its dictionary is sorted on a worker (they are copied there). */
const SORTED_ON_WORKER = 1 << 16;

/**
 * The sorted distinct strings of a string column whose `words` are `interner` ids, and those words rewritten in place
 * to ids of that list.
 */
async function ownDictionary(words: Uint32Array, interner: StringInterner): Promise<{ words: Uint32Array; dictionary: string[] }> {
  /** Per interner id, its id in the dictionary. */
  const ids = new Int32Array(interner.size).fill(-1);
  const distinct: number[] = [];
  for (let i = 0; i < words.length; i++) {
    const w = words[i]!;
    if (ids[w] === -1) {
      ids[w] = 0;
      distinct.push(w);
    }
  }
  // The interner may hold a string under several ids (StringInterner.add): the sort gives them one rank.
  const texts = distinct.map((w) => interner.text(w));
  const { order, rank } = texts.length >= SORTED_ON_WORKER ? await runInWorker(sortedOrderTask, texts) : sortedOrder(texts);
  distinct.forEach((w, k) => (ids[w] = rank[k]!));
  for (let i = 0; i < words.length; i++) words[i] = ids[words[i]!]!;
  return { words, dictionary: Array.from(order, (k) => texts[k]!) };
}

/** Whether `out` is a store (to replace) rather than absent; anything else there is a user error. */
async function existingStore(out: string): Promise<boolean> {
  const info = await stat(out).catch(() => undefined);
  if (!info) return false;
  if (info.isDirectory() && existsSync(join(out, STORE_MANIFEST))) return true;
  throw storeError(`${out} exists and is not a Vixen store (no ${STORE_MANIFEST}): give -o a new folder or an existing store to replace`);
}

/** Moves the finished store `building` to `out`, the old store there (if `replaces`) out of the way first. */
async function replace(out: string, building: string, replaces: boolean): Promise<void> {
  if (!replaces) return rename(building, out);
  const old = `${building}-old`;
  await rename(out, old);
  await rename(building, out);
  await rm(old, { recursive: true, force: true });
}

/** The words of one column (`width` words at `offset` of each row) of `rel`, back to back. */
function columnOf(rel: EncodedRelation, offset: number, width: number): Uint32Array {
  const out = new Uint32Array(rel.count * width);
  let o = 0;
  const stride = rel.width;
  for (const words of rel.pieces()) {
    if (width === 1) for (let at = offset; at < words.length; at += stride) out[o++] = words[at]!;
    else {
      for (let at = offset; at < words.length; at += stride) {
        out[o++] = words[at]!;
        out[o++] = words[at + 1]!;
      }
    }
  }
  return out;
}

/** The longest run of rows sharing their first word that an import sorts (by insertion). */
const SORTED_RUN = 64;

/**
 * The row order of a sort by all words (unsigned, column after column, each column's words in order: the order the
 * device's sort gives, so a load finds the rows canonical and sorts nothing: runtime kernels/rows-order.ts), where
 * the rows are sorted by their first word already in runs of at most SORTED_RUN rows (most tables by their key,
 * lineitem by its order key): each run sorted by insertion. Undefined where the rows are in that order already, or
 * further from it (sorting them on the host would cost the import more than the device's sort costs a load).
 */
function canonicalOrder(columns: readonly { words: Uint32Array; width: number }[], rows: number): Uint32Array | undefined {
  // Each word of a row: its column's words, that column's width and the word's place in a value.
  const arrays = columns.flatMap((c) => Array.from({ length: c.width }, () => c.words));
  const widths = columns.flatMap((c) => Array.from({ length: c.width }, () => c.width));
  const places = columns.flatMap((c) => Array.from({ length: c.width }, (_, k) => k));
  const compare = (r: number, s: number): number => {
    for (let k = 0; k < arrays.length; k++) {
      const w = widths[k]!;
      const a = arrays[k]![r * w + places[k]!]!;
      const b = arrays[k]![s * w + places[k]!]!;
      if (a !== b) return a < b ? -1 : 1;
    }
    return 0;
  };
  let r = 1;
  while (r < rows && compare(r - 1, r) <= 0) r++;
  if (r >= rows) return undefined;
  const first = arrays[0]!;
  const step = widths[0]!;
  for (let start = 0, i = 1; i <= rows; i++) {
    if (i < rows && first[i * step] === first[start * step]) continue;
    if (i - start > SORTED_RUN || (i < rows && first[i * step]! < first[start * step]!)) return undefined;
    start = i;
  }
  const order = new Uint32Array(rows);
  for (let i = 0; i < rows; i++) order[i] = i;
  for (let start = 0; start < rows; ) {
    let end = start + 1;
    while (end < rows && first[end * step] === first[start * step]) end++;
    for (let i = start + 1; i < end; i++) {
      const row = order[i]!;
      let j = i;
      for (; j > start && compare(order[j - 1]!, row) > 0; j--) order[j] = order[j - 1]!;
      order[j] = row;
    }
    start = end;
  }
  return order;
}

/** `words` (values of `width` words) in the row order `order`. */
function permuted(words: Uint32Array, width: number, order: Uint32Array): Uint32Array {
  const out = new Uint32Array(words.length);
  if (width === 1) for (let i = 0; i < order.length; i++) out[i] = words[order[i]!]!;
  else {
    for (let i = 0; i < order.length; i++) {
      const from = 2 * order[i]!;
      out[2 * i] = words[from]!;
      out[2 * i + 1] = words[from + 1]!;
    }
  }
  return out;
}
