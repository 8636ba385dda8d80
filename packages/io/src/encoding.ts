/**
 * Host <-> device value encoding. A row becomes u32 words: int32, uint32 and date (days) their bits,
 * float32 its f32 bits, boolean 0/1, int64 and decimal (scaled by 10^4) two words (lo, hi), string one
 * word: its id in an order-preserving dictionary, so unsigned id order is string order and kernels compare
 * strings without touching text.
 */
import { VixenError, rowWords, type Row, type ScalarType, type Value } from '@vixen/queryplan';
import { MAX_DISTINCT_STRINGS, StringMap, tooManyStrings } from './string-map.js';
import type { ByteStrings } from './sorted-order.js';

/** Strings to word ids and back: the final dictionary, or the interner that gives ids while facts load. */
export interface StringIds {
  id(s: string): number;
  text(id: number): string;
}

/**
 * `strings` sorted in JS code-unit order, duplicates dropped, in place. The default sort compares in that order
 * without a call into a comparator, and duplicates are dropped after sorting, next to each other, rather than
 * through a Set: on 2M strings 1.0 s instead of 3.5 s with a Set and a comparator.
 */
export function sortDistinct(strings: string[]): string[] {
  strings.sort();
  let distinct = 0;
  for (const s of strings) if (distinct === 0 || s !== strings[distinct - 1]) strings[distinct++] = s;
  strings.length = distinct;
  return strings;
}

/**
 * Distinct strings in JS code-unit order that are decoded one at a time, when asked (a store column's dictionary): a
 * run's dictionary merged from such lists (sort-strings.ts mergeSortedLists) decodes only the strings it shows.
 */
export interface SortedStrings {
  readonly size: number;
  text(i: number): string;
  /** Every string's bytes when all are ASCII (byte order is then code-unit order): merged without decoding. */
  readonly ascii?: AsciiStrings;
}

/**
 * ASCII strings: string i is bytes [starts[i], starts[i + 1]) of `bytes`, back to back; or, with `ends` (as many as
 * `starts`), bytes [starts[i], ends[i]), anywhere in them (the device's sort, runtime gpu/string-sort.ts, names each
 * sorted string where the lists it was given hold it, so its bytes need not be gathered and read back).
 */
export interface AsciiStrings extends ByteStrings {
  readonly ends?: Uint32Array;
}

/** How many strings `a` holds. */
export const asciiCount = (a: AsciiStrings): number => (a.ends ? a.ends.length : a.starts.length - 1);

/** Where string i of `a` ends. */
export const asciiEnd = (a: AsciiStrings, i: number): number => (a.ends ? a.ends[i]! : a.starts[i + 1]!);

/**
 * Where each string of a dictionary merged from ASCII lists lies (runtime sort-strings.ts mergeSortedLists), in runs of
 * ids whose strings are consecutive entries of one list: run r's first id is runIds[r] (ascending, the first 0), its
 * string entry runEntries[r] of lists[runLists[r]], its next ids the next entries. Tables over every id (LIKE) read the
 * bytes, decoding no string. Runs, not a list and an entry per id: a load's dictionary is mostly one file's list, a
 * few runs for millions of ids (5 bytes an id, 115 MB for TPC-H SF 10's, written by each load's merge).
 */
export interface DictionaryBytes {
  readonly lists: readonly AsciiStrings[];
  readonly runIds: Uint32Array;
  readonly runLists: Uint8Array;
  readonly runEntries: Uint32Array;
}

/** The run of `b` that holds dictionary id `id`. */
export function dictionaryRun(b: DictionaryBytes, id: number): number {
  let lo = 0;
  let hi = b.runIds.length - 1;
  while (lo < hi) {
    const mid = (lo + hi + 1) >>> 1;
    if (b.runIds[mid]! <= id) lo = mid;
    else hi = mid - 1;
  }
  return lo;
}

/** Strings a `lazy` dictionary decodes one at a time at most, before it decodes them all (StringDictionary.text). */
const DECODED_IN_MAP = 2 ** 20;

/** Lookups a dictionary answers by binary search before it builds its map (kernel constants, a few inline facts). */
const SEARCHED_LOOKUPS = 4096;

export class StringDictionary implements StringIds {
  /**
   * Built on the first lookup past SEARCHED_LOOKUPS: a run whose facts were mapped to ids as the strings were
   * sorted (sortDistinctInWorkers, mergeSortedLists) may never need it, and it costs seconds for millions of strings.
   */
  private ids: StringMap | undefined;
  private lookups = 0;
  /**
   * The strings by id, as far as decoded: all of them but in a dictionary made by `lazy`, where it is empty while
   * `decoded` holds them.
   */
  private texts: Array<string | undefined>;
  /**
   * A `lazy` dictionary's first strings decoded (up to DECODED_IN_MAP), by id. Not an array of its size: a holey array
   * of millions of slots (TPC-H SF 10's 23M strings: 184 MiB) is marked at every major GC for as long as the
   * dictionary lives (held by a Database's resident relations), ~23 ms each on the lent H200 (73 in one SF 10 load).
   */
  private decoded: Map<number, string> | undefined;
  /** Strings of a `lazy` dictionary. */
  private lazySize = 0;
  /** Decodes a string not decoded yet (`lazy`); undefined once all are. */
  private decode: ((id: number) => string) | undefined;
  /** Every string's bytes, where they are ASCII (`lazy`). */
  bytes: DictionaryBytes | undefined;

  /**
   * Ids follow JS code-unit order, the same order the reference interpreter uses (sortDistinct). `sortedDistinct`: `values` is already an array in that order, without
   * duplicates (sortDistinctInWorkers made it), and becomes the dictionary's strings.
   */
  constructor(
    values: Iterable<string>,
    sortedDistinct = false,
    /** See StringMap (tests). */
    private readonly shardLimit?: number,
  ) {
    const sorted = sortedDistinct && Array.isArray(values) ? (values as string[]) : sortDistinct([...values]);
    if (sorted.length > MAX_DISTINCT_STRINGS) throw tooManyStrings('the run\'s string dictionary');
    this.texts = sorted;
  }

  /**
   * A dictionary of `size` distinct strings in code-unit order, string `id` being `decode(id)`, each decoded when first
   * asked for: a run that shows few strings decodes few (a store's dictionaries, merged). `bytes`: where each one's
   * bytes lie, where all are ASCII.
   */
  static lazy(size: number, decode: (id: number) => string, shardLimit?: number, bytes?: DictionaryBytes): StringDictionary {
    if (size > MAX_DISTINCT_STRINGS) throw tooManyStrings('the run\'s string dictionary');
    const dict = new StringDictionary([], true, shardLimit);
    dict.decoded = new Map();
    dict.lazySize = size;
    dict.decode = decode;
    dict.bytes = bytes;
    return dict;
  }

  get size(): number {
    return this.decoded ? this.lazySize : this.texts.length;
  }

  /**
   * The strings `ids` (ascending) as bytes where they all lie in one of the ASCII lists this dictionary was merged
   * from (a resident relation's strings, which came from one file's list): a run's dictionary merges them undecoded.
   */
  asciiOf(ids: Uint32Array): AsciiStrings | undefined {
    const b = this.bytes;
    if (!b || ids.length === 0) return undefined;
    let r = dictionaryRun(b, ids[0]!);
    const l = b.runLists[r]!;
    const list = b.lists[l]!;
    const starts = new Uint32Array(ids.length);
    const ends = new Uint32Array(ids.length);
    for (let i = 0; i < ids.length; i++) {
      const id = ids[i]!;
      while (r + 1 < b.runIds.length && b.runIds[r + 1]! <= id) r++;
      if (b.runLists[r] !== l) return undefined;
      const entry = b.runEntries[r]! + (id - b.runIds[r]!);
      starts[i] = list.starts[entry]!;
      ends[i] = asciiEnd(list, entry);
    }
    return { bytes: list.bytes, starts, ends };
  }

  /** Every string, in id order (decoding those not decoded yet). */
  get strings(): readonly string[] {
    if (this.decode) {
      this.texts = Array.from({ length: this.size }, (_, id) => this.text(id));
      this.decode = undefined;
      this.decoded = undefined;
    }
    return this.texts as string[];
  }

  /** The id of `s`, or -1. */
  private find(s: string): number {
    if (!this.ids && ++this.lookups > SEARCHED_LOOKUPS) {
      this.ids = new StringMap('the run\'s string dictionary', this.shardLimit);
      this.strings.forEach((t, i) => this.ids!.add(t, i));
    }
    if (this.ids) return this.ids.get(s) ?? -1;
    // Code-unit order, as the strings were sorted.
    let lo = 0;
    let hi = this.size;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (this.text(mid) < s) lo = mid + 1;
      else hi = mid;
    }
    return lo < this.size && this.text(lo) === s ? lo : -1;
  }

  has(s: string): boolean {
    return this.find(s) >= 0;
  }

  /**
   * The id of `s`, or -1, looked for from id `from` on (the id of a string below `s`, or 0) by galloping: strings looked
   * up in order cost a few comparisons each, and no map (Database remaps a resident relation's ids so).
   */
  seek(s: string, from: number): number {
    let step = 1;
    let lo = from;
    let hi = from;
    while (hi < this.size && this.text(hi) < s) {
      lo = hi + 1;
      hi += step;
      step *= 2;
    }
    hi = Math.min(hi, this.size);
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (this.text(mid) < s) lo = mid + 1;
      else hi = mid;
    }
    return lo < this.size && this.text(lo) === s ? lo : -1;
  }

  id(s: string): number {
    const id = this.find(s);
    if (id < 0) throw new Error(`internal: string ${JSON.stringify(s)} missing from the dictionary`);
    return id;
  }

  text(id: number): string {
    const s = this.decoded ? this.decoded.get(id) : this.texts[id];
    if (s !== undefined) return s;
    if (!this.decode || !(id >= 0 && id < this.size)) throw new Error(`internal: dictionary id ${id} out of range`);
    const t = this.decode(id);
    if (!this.decoded) this.texts[id] = t;
    else if (this.decoded.size < DECODED_IN_MAP) this.decoded.set(id, t);
    else {
      // Many asked for (a Map holds 2^24 at most): from now on in an array of its size, as they are decoded.
      this.texts = new Array<string | undefined>(this.lazySize);
      for (const [i, d] of this.decoded) this.texts[i] = d;
      this.texts[id] = t;
      this.decoded = undefined;
    }
    return t;
  }
}

const INT64_MIN = -(1n << 63n);
const INT64_MAX = (1n << 63n) - 1n;

/** Reinterprets f32 bits and back. */
const f32 = new Float32Array(1);
const f32Bits = new Uint32Array(f32.buffer);

/** Appends the words of one value at `at`; returns the next offset. */
export function encodeValue(type: ScalarType, value: Value, dict: StringIds, out: Uint32Array, at: number): number {
  switch (type) {
    case 'int32':
    case 'uint32':
    case 'date':
      out[at] = (value as number) >>> 0;
      return at + 1;
    case 'float32':
      f32[0] = value as number;
      out[at] = f32Bits[0]!;
      return at + 1;
    case 'boolean':
      out[at] = value ? 1 : 0;
      return at + 1;
    case 'int64':
    case 'decimal': {
      if (typeof value === 'number' && Number.isSafeInteger(value)) {
        // Exact for safe integers, and much cheaper than BigInt: hi = floor(v / 2^32), lo the rest.
        const hi = Math.floor(value / 4294967296);
        out[at] = (value - hi * 4294967296) >>> 0;
        out[at + 1] = hi >>> 0;
        return at + 2;
      }
      const v = BigInt(value as bigint | number);
      if (v < INT64_MIN || v > INT64_MAX) throw new VixenError({ severity: 'error', message: `${type} value out of range: ${v}` });
      const bits = BigInt.asUintN(64, v);
      out[at] = Number(bits & 0xffffffffn);
      out[at + 1] = Number(bits >> 32n);
      return at + 2;
    }
    case 'string':
      out[at] = dict.id(value as string);
      return at + 1;
  }
}

export function encodeRows(rows: readonly Row[], types: readonly ScalarType[], dict: StringDictionary): Uint32Array {
  const width = rowWords(types);
  const out = new Uint32Array(rows.length * width);
  let at = 0;
  for (const row of rows) {
    for (let c = 0; c < types.length; c++) at = encodeValue(types[c]!, row[c]!, dict, out, at);
  }
  return out;
}

/** The row whose words start at `at`. */
export function decodeRow(words: Uint32Array, at: number, types: readonly ScalarType[], dict: StringIds): Row {
  const row: Value[] = new Array(types.length);
  for (let c = 0; c < types.length; c++) {
    switch (types[c]!) {
      case 'int32':
      case 'date':
        row[c] = words[at]! | 0;
        at += 1;
        break;
      case 'uint32':
        row[c] = words[at]!;
        at += 1;
        break;
      case 'float32':
        f32Bits[0] = words[at]!;
        row[c] = f32[0]!;
        at += 1;
        break;
      case 'boolean':
        row[c] = words[at]! !== 0;
        at += 1;
        break;
      case 'int64':
      case 'decimal':
        row[c] = BigInt.asIntN(64, (BigInt(words[at + 1]!) << 32n) | BigInt(words[at]!));
        at += 2;
        break;
      case 'string':
        row[c] = dict.text(words[at]!);
        at += 1;
        break;
    }
  }
  return row;
}
