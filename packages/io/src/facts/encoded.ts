/**
 * Facts held as they will be uploaded: each relation one growable buffer of u32 words in the device row layout
 * (encoding.ts), never an array of JS values per row, so a large file costs about its encoded size in memory.
 * Strings get temporary ids from one interner shared by the whole load; once every string of the run is known
 * the executor builds the sorted dictionary and `remapStrings` rewrites those ids in place.
 */
import { rowWords, type Column, type RelationDecl, type Row, type ScalarType } from '@vixen/queryplan';
import { decodeRow, encodeValue, type SortedStrings, type StringIds } from '../encoding.js';
import { StringMap } from '../string-map.js';
import { defineTask, type Task } from '../parallel/tasks.js';
import type { ByteSorter } from '../sort-byte-strings.js';

/** A sorted list the interner holds (StringInterner.addSorted): its ids, and how many added strings come before it. */
export interface InternedList {
  /** The id of its first string; its others follow. */
  start: number;
  /** Strings of `StringInterner.strings` added before it. */
  before: number;
  list: SortedStrings;
}

/**
 * Temporary string ids in first-seen order: strings added one at a time (`strings`), and sorted lists (a store's
 * column dictionaries), whose strings take consecutive ids but are decoded only when asked for.
 */
export class StringInterner implements StringIds {
  private readonly ids: StringMap;
  /** The strings added one at a time, in id order (their ids are their indices while there are no `lists`). */
  readonly strings: string[] = [];
  /** The sorted lists added, in id order: the run's dictionary merges them rather than sorting them. */
  readonly lists: InternedList[] = [];
  /** Ids the lists take. */
  private listed = 0;
  /**
   * The sort of strings given as bytes that loaders into it use (Parquet's), where not ByteStringSort on the worker
   * pool: a run on a GPU sorts them on the device (runtime gpu/string-sort.ts).
   */
  sortBytes?: () => ByteSorter;

  /** `shardLimit`: see StringMap. */
  constructor(shardLimit?: number) {
    this.ids = new StringMap('loading facts', shardLimit);
  }

  /** Ids given so far. */
  get size(): number {
    return this.strings.length + this.listed;
  }

  /**
   * A new id for `s` without looking it up: for the strings of one parsed part's table (distinct within it), where
   * a lookup per string cost more than the rest of loading millions of them. A string added twice has two ids;
   * the dictionary maps both to its one id.
   */
  add(s: string): number {
    this.strings.push(s);
    return this.size - 1;
  }

  /** Ids for the strings of `list` (sorted, distinct), none decoded; returns the first one's id. */
  addSorted(list: SortedStrings): number {
    const start = this.size;
    this.lists.push({ start, before: this.strings.length, list });
    this.listed += list.size;
    return start;
  }

  id(s: string): number {
    let id = this.ids.get(s);
    if (id === undefined) {
      id = this.size;
      this.ids.add(s, id);
      this.strings.push(s);
    }
    return id;
  }

  text(id: number): string {
    let before = 0;
    for (const { start, list } of this.lists) {
      if (id < start) break;
      if (id < start + list.size) return list.text(id - start);
      before += list.size;
    }
    const s = this.strings[id - before];
    if (s === undefined) throw new Error(`internal: temporary string id ${id} out of range`);
    return s;
  }

  /** Every string by id (the lists' decoded). */
  texts(): string[] {
    if (this.lists.length === 0) return this.strings;
    return Array.from({ length: this.size }, (_, id) => this.text(id));
  }

  /**
   * Per id, its id in a dictionary: `added` gives those of `strings` (in order), `listed` those of each list's
   * strings.
   */
  idMap(added: Uint32Array, listed: readonly Uint32Array[]): Uint32Array {
    // Shared where there is shared memory: EncodedFacts.remapStrings hands it to the worker pool as it is, not a copy.
    const map = typeof SharedArrayBuffer === 'function' ? new Uint32Array(new SharedArrayBuffer(4 * this.size)) : new Uint32Array(this.size);
    let k = 0;
    this.lists.forEach(({ start, before, list }, l) => {
      map.set(added.subarray(k, before), start - (before - k));
      map.set(listed[l]!.subarray(0, list.size), start);
      k = before;
    });
    map.set(added.subarray(k, this.strings.length), this.size - (this.strings.length - k));
    return map;
  }
}

/**
 * Rows a device already holds (the runtime's device text parser made them): opaque here but for their string words,
 * which the device fills from `stringIds` once the run's dictionary is known, so `remapStrings` rewrites those.
 */
export interface DeviceRows {
  readonly count: number;
  /** The temporary string ids (of the load's interner) the rows' string words stand for (how: the loader's business). */
  readonly stringIds: Uint32Array;
  /** Gives the device memory back (a load that failed, or rows the run never took). */
  release(): void;
}

/** Rows of a relation's first chunk; each next chunk doubles, up to CHUNK_WORDS. */
const FIRST_CHUNK_ROWS = 16;
/**
 * Most words of one chunk (16 MiB). Chunks are never copied to grow, so a relation costs its words plus at most
 * one partly filled chunk, where one doubling array would briefly need three times the words it holds.
 */
export const CHUNK_WORDS = 1 << 22;

export class EncodedRelation {
  readonly width: number;
  /** Rows written so far. */
  count = 0;
  /** Full chunks, then the one being filled. Each holds a whole number of rows. */
  private readonly chunks: Uint32Array[] = [];
  /**
   * Per chunk, where its string words are indices of a loader's own strings (`adopt`), the interner's ids of those;
   * applied when the rows are read (`pieces`) or, with the dictionary's, when they are remapped (`remapStrings`).
   */
  private readonly pending: Array<Uint32Array | undefined> = [];
  /** Rows in the chunks before the last. */
  private rowsBefore = 0;
  /** Word offsets of the string columns within a row. */
  private readonly stringWords: number[];
  /**
   * The string ids the rows hold, as lists (with repeats) noted by whoever added them (`adopt`), or undefined once
   * rows came without such a list: `usedStrings` then reads the rows.
   */
  private noted: Array<ArrayLike<number>> | undefined = [];
  /** Rows on the device, after the host rows (`count` counts only those). */
  readonly device: DeviceRows[] = [];

  constructor(readonly types: readonly ScalarType[]) {
    this.width = rowWords(types);
    this.stringWords = stringWordOffsets(types);
  }

  /**
   * The chunk with room for one more row and that row's first word. The row counts once `commit` is called,
   * so a bad record leaves nothing behind.
   */
  next(): { words: Uint32Array; at: number } {
    this.noted = undefined;
    let last = this.chunks[this.chunks.length - 1];
    let at = (this.count - this.rowsBefore) * this.width;
    if (!last || at + this.width > last.length) {
      if (last) this.rowsBefore += last.length / Math.max(this.width, 1);
      const rows = last ? Math.max(1, Math.min(2 * (last.length / Math.max(this.width, 1)), Math.floor(CHUNK_WORDS / Math.max(this.width, 1)))) : FIRST_CHUNK_ROWS;
      this.chunks.push((last = new Uint32Array(rows * this.width)));
      this.pending.push(undefined);
      at = 0;
    }
    return { words: last, at };
  }

  commit(): void {
    this.count++;
  }

  /**
   * Appends `words`, whole rows back to back, as a chunk of its own (not copied: the relation owns it from now on);
   * `stringIds`, when given, holds every string id they hold. Where `ids` is given, their string words are indices
   * of it, and it holds the interner's ids: the rows get those when read or remapped, without a pass of their own.
   */
  adopt(words: Uint32Array, stringIds?: ArrayLike<number>, ids?: Uint32Array): void {
    if (stringIds && this.noted) this.noted.push(stringIds);
    else if (this.stringWords.length > 0) this.noted = undefined;
    const rows = this.width === 0 ? 0 : words.length / this.width;
    if (rows === 0) return;
    const last = this.chunks.length - 1;
    if (last >= 0) {
      // The chunk being filled ends where its rows do, so every chunk but the last is exactly full.
      const filled = this.count - this.rowsBefore;
      this.chunks[last] = this.chunks[last]!.subarray(0, filled * this.width);
      this.rowsBefore += filled;
    }
    this.chunks.push(words);
    this.pending.push(this.stringWords.length > 0 ? ids : undefined);
    this.count += rows;
  }

  /** Drops the rows from `count` on (a load that starts over). */
  truncate(count: number): void {
    while (this.chunks.length > 0 && this.rowsBefore > count) {
      this.chunks.pop();
      this.pending.pop();
      this.rowsBefore -= this.chunks[this.chunks.length - 1]!.length / this.width;
    }
    this.count = Math.min(this.count, count);
  }

  /** Appends one row of `Value`s (API rows, inline facts). */
  push(row: Row, strings: StringIds): void {
    let { words, at } = this.next();
    for (let c = 0; c < this.types.length; c++) at = encodeValue(this.types[c]!, row[c]!, strings, words, at);
    this.commit();
  }

  /** The rows' words in pieces, rows back to back (views, not copies). */
  pieces(): Uint32Array[] {
    this.pending.forEach((ids, i) => {
      if (ids) remapWords({ words: this.chunks[i]!, width: this.width, stringWords: this.stringWords, map: ids });
      this.pending[i] = undefined;
    });
    const out = this.chunks.slice(0, -1);
    const last = this.chunks[this.chunks.length - 1];
    if (last) out.push(last.subarray(0, (this.count - this.rowsBefore) * this.width));
    return out;
  }

  /** Appends rows a device holds (the relation owns them from now on). */
  addDevice(rows: DeviceRows): void {
    this.device.push(rows);
    this.noted?.push(rows.stringIds);
  }

  /** Whether the relation has no rows, on the host or the device. */
  get empty(): boolean {
    return this.count === 0 && this.device.length === 0;
  }

  /**
   * Rewrites every string word `id` to `map[id]` (a chunk's loader ids to the interner's first: `adopt`). Given
   * `run` (the worker pool's runInWorker), chunks of PARALLEL_WORDS words and more are rewritten on the pool, in
   * one pass each, moved there and back rather than copied; `map` is then best in shared memory.
   */
  async remapStrings(map: Uint32Array, run?: RunTask): Promise<void> {
    if (this.stringWords.length === 0) return;
    for (const d of this.device) for (let i = 0; i < d.stringIds.length; i++) d.stringIds[i] = map[d.stringIds[i]!]!;
    const filled = this.count - this.rowsBefore;
    const jobs: Array<Promise<void>> = [];
    this.chunks.forEach((chunk, i) => {
      // The chunk being filled: only its rows.
      const words = i === this.chunks.length - 1 ? chunk.subarray(0, filled * this.width) : chunk;
      const job: WordsRemap = { words, width: this.width, stringWords: this.stringWords, map, ...(this.pending[i] ? { first: this.pending[i] } : {}) };
      this.pending[i] = undefined;
      // Only a chunk that is its buffer's whole can move (adopted rows, chunks grown here).
      const whole = words.byteOffset === 0 && words.byteLength === words.buffer.byteLength && words.buffer instanceof ArrayBuffer;
      if (!run || words.length < PARALLEL_WORDS || !whole) remapWords(job);
      else jobs.push(run(remapWordsTask, job, [words.buffer as ArrayBuffer]).then((moved) => void (this.chunks[i] = moved)));
    });
    await Promise.all(jobs);
  }

  /** The string ids the rows hold, each once, ascending, where they were noted (`adopt`, `addDevice`); else undefined. */
  usedIds(): Uint32Array | undefined {
    if (!this.noted) return undefined;
    // Marks by id, not a Set of strings: a large file's strings (millions) are listed in one pass.
    const seen = new Uint8Array(this.noted.reduce((m, ids) => Math.max(m, maxOf(ids)), -1) + 1);
    let count = 0;
    for (const ids of this.noted) {
      for (let i = 0; i < ids.length; i++) {
        const id = ids[i]!;
        if (seen[id] === 0) {
          seen[id] = 1;
          count++;
        }
      }
    }
    const used = new Uint32Array(count);
    for (let id = 0, k = 0; k < count; id++) if (seen[id] === 1) used[k++] = id;
    return used;
  }

  /**
   * The strings the rows' string words refer to (ids of `strings`), each id once: distinct strings, except that
   * strings added to the interner without lookup (`StringInterner.add`) may repeat. Where the ids were noted, the
   * strings are decoded as the list is iterated (a store's millions are never decoded by a run that shows none).
   */
  usedStrings(strings: StringIds): Iterable<string> {
    const used = this.usedIds();
    if (used) return { *[Symbol.iterator]() { for (const id of used) yield strings.text(id); } };
    const seen = new StringMap('loading facts');
    const out: string[] = [];
    const note = (s: string): void => {
      if (!seen.has(s)) {
        seen.add(s, 0);
        out.push(s);
      }
    };
    for (const d of this.device) for (const id of d.stringIds) note(strings.text(id));
    for (const words of this.pieces()) {
      for (const off of this.stringWords) {
        for (let at = off; at < words.length; at += this.width) note(strings.text(words[at]!));
      }
    }
    return out;
  }

  rows(strings: StringIds): Row[] {
    if (this.device.length > 0) throw new Error('internal: rows on the device cannot be decoded on the host');
    const out: Row[] = [];
    for (const words of this.pieces()) {
      for (let at = 0; at < words.length; at += this.width) out.push(decodeRow(words, at, this.types, strings));
    }
    return out;
  }
}

function maxOf(ids: ArrayLike<number>): number {
  let m = -1;
  for (let i = 0; i < ids.length; i++) if (ids[i]! > m) m = ids[i]!;
  return m;
}

/** Runs a task on the worker pool, its `transfer` buffers moved there (pool.ts runInWorker). */
export type RunTask = <P, R>(task: Task<P, R>, payload: P, transfer?: readonly ArrayBuffer[]) => Promise<R>;

/** Chunks of fewer words are remapped on the calling thread: moving them costs more than the pass. */
const PARALLEL_WORDS = 1 << 18;

/** Rows (of `width` words) whose string words (at `stringWords` in a row) are rewritten `id` -> `map[first[id]]`. */
export interface WordsRemap {
  words: Uint32Array;
  width: number;
  stringWords: readonly number[];
  /** Where given, the words hold indices of it, and it holds the ids `map` maps. */
  first?: Uint32Array;
  map: Uint32Array;
}

/** Rewrites the string words of `words` in place (see WordsRemap); returns them. */
export function remapWords({ words, width, stringWords, first, map }: WordsRemap): Uint32Array {
  for (const off of stringWords) {
    if (first) for (let at = off; at < words.length; at += width) words[at] = map[first[words[at]!]!]!;
    else for (let at = off; at < words.length; at += width) words[at] = map[words[at]!]!;
  }
  return words;
}

/** remapWords on a worker. */
export const remapWordsTask = defineTask<WordsRemap, Uint32Array>('io/remap-words', import.meta.url, remapWords);

/** The facts of one run, by relation, with the interner their string words refer to. */
export class EncodedFacts {
  /** Emptied by `remapStrings`: the dictionary then holds the strings, and the interner's index is dead weight. */
  strings = new StringInterner();
  readonly relations = new Map<string, EncodedRelation>();
  /** Per temporary id its dictionary id, once string words hold dictionary ids. */
  private remapped: Uint32Array | undefined;

  /** The relation's buffer, created on first use. */
  relation(name: string, types: readonly ScalarType[]): EncodedRelation {
    let rel = this.relations.get(name);
    if (!rel) this.relations.set(name, (rel = new EncodedRelation(types)));
    return rel;
  }

  addRows(name: string, types: readonly ScalarType[], rows: readonly Row[]): void {
    const rel = this.relation(name, types);
    for (const row of rows) rel.push(row, this.strings);
  }

  /**
   * Rewrites every relation's string words from temporary ids to `ids`'s, once: a dictionary, or each temporary id's
   * dictionary id (an array at least as long as the interner's ids: StringInterner.idMap).
   */
  async remapStrings(ids: StringIds | Uint32Array, run?: RunTask): Promise<void> {
    if (this.remapped) throw new Error('internal: facts were already remapped to a dictionary');
    // Shared where the pool reads it, so every task sees it without a copy (a page that is not cross-origin isolated
    // has no SharedArrayBuffer, and its pool runs tasks in turn on its own thread).
    const shared = run !== undefined && typeof SharedArrayBuffer === 'function';
    const size = this.strings.size;
    // A map of every id in shared memory already (StringInterner.idMap's) is taken as it is: a copy of millions of ids.
    const given = ids instanceof Uint32Array && ids.length >= size && (!shared || ids.buffer instanceof SharedArrayBuffer);
    const map = given ? ids.subarray(0, size) : shared ? new Uint32Array(new SharedArrayBuffer(4 * size)) : new Uint32Array(size);
    this.remapped = map;
    if (ids instanceof Uint32Array) {
      if (!given) map.set(ids.subarray(0, map.length));
    } else for (let i = 0; i < map.length; i++) map[i] = ids.id(this.strings.text(i));
    await Promise.all([...this.relations.values()].map((rel) => rel.remapStrings(map, run)));
    this.strings = new StringInterner();
  }

  /** The dictionary ids of temporary ids `ids`, once remapped: ascending, each once. */
  dictionaryIds(ids: Uint32Array): Uint32Array {
    const map = this.remapped;
    if (!map) throw new Error('internal: facts not remapped to a dictionary yet');
    const mapped = new Uint32Array(ids.length);
    for (let i = 0; i < ids.length; i++) mapped[i] = map[ids[i]!]!;
    return distinctAscending(mapped);
  }

  /** Gives back the device memory of rows no run took (a load that failed, a run that did not start). */
  releaseDevice(): void {
    for (const rel of this.relations.values()) for (const d of rel.device.splice(0)) d.release();
  }

  /** Rows by relation as `Value`s (the reference interpreter and the Row-returning loaders). */
  toRows(): Map<string, Row[]> {
    if (this.remapped) throw new Error('internal: facts were remapped; decode them with their dictionary');
    return new Map([...this.relations].map(([name, rel]) => [name, rel.rows(this.strings)]));
  }
}

/** The value types of `columns`, which the buffers are laid out by. */
export const columnTypes = (columns: readonly { type: ScalarType }[]): ScalarType[] => columns.map((c) => c.type);

/** Word offset of each column within a row of `types`. */
export function columnWordOffsets(types: readonly ScalarType[]): number[] {
  const out: number[] = [];
  let at = 0;
  for (const t of types) {
    out.push(at);
    at += rowWords([t]);
  }
  return out;
}

/** Word offsets of the string columns within a row of `types`. */
export function stringWordOffsets(types: readonly ScalarType[]): number[] {
  const offsets = columnWordOffsets(types);
  return offsets.filter((_, c) => types[c] === 'string');
}

/** The columns of a relation's facts (files, API rows): all its source columns when pruneColumns narrowed it. */
export const factsColumns = (r: RelationDecl): Column[] => r.pruned?.sourceColumns ?? r.columns;

/** Ascending runs past which `ascending` sorts rather than merges. */
const MERGED_RUNS = 64;

/**
 * `words` in ascending order: its ascending runs merged two by two where there are few (a store relation's string
 * ids: one run per column's sorted dictionary, 2M of them for TPC-H part's names at SF 10), else sorted.
 */
function ascending(words: Uint32Array): Uint32Array {
  const starts = [0];
  for (let i = 1; i < words.length; i++) {
    if (words[i]! >= words[i - 1]!) continue;
    if (starts.push(i) > MERGED_RUNS) return words.sort();
  }
  let runs = starts.map((s, k) => words.subarray(s, starts[k + 1] ?? words.length));
  while (runs.length > 1) runs = Array.from({ length: Math.ceil(runs.length / 2) }, (_, k) => (2 * k + 1 < runs.length ? mergeAscending(runs[2 * k]!, runs[2 * k + 1]!) : runs[2 * k]!));
  return runs[0]!;
}

/** The words of `words`, each once, ascending (in place where it sorts; see `ascending`). */
export function distinctAscending(words: Uint32Array): Uint32Array {
  const out = ascending(words);
  let distinct = 0;
  for (let i = 0; i < out.length; i++) if (distinct === 0 || out[i] !== out[distinct - 1]) out[distinct++] = out[i]!;
  return out.subarray(0, distinct);
}

function mergeAscending(a: Uint32Array, b: Uint32Array): Uint32Array {
  const out = new Uint32Array(a.length + b.length);
  let i = 0;
  let j = 0;
  let o = 0;
  while (i < a.length && j < b.length) out[o++] = a[i]! <= b[j]! ? a[i++]! : b[j++]!;
  out.set(a.subarray(i), o);
  out.set(b.subarray(j), o + a.length - i);
  return out;
}
