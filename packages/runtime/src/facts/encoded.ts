/**
 * Facts held as they will be uploaded: each relation one growable buffer of u32 words in the device row layout
 * (encoding.ts), never an array of JS values per row, so a large file costs about its encoded size in memory.
 * Strings get temporary ids from one interner shared by the whole load; once every string of the run is known
 * the executor builds the sorted dictionary and `remapStrings` rewrites those ids in place.
 */
import { rowWords, type Row, type ScalarType } from '@vixen/queryplan';
import { decodeRow, encodeValue, type StringIds } from '../encoding.js';

/** Temporary string ids in first-seen order. */
export class StringInterner implements StringIds {
  private readonly ids = new Map<string, number>();
  readonly strings: string[] = [];

  id(s: string): number {
    let id = this.ids.get(s);
    if (id === undefined) {
      id = this.strings.length;
      this.ids.set(s, id);
      this.strings.push(s);
    }
    return id;
  }

  text(id: number): string {
    const s = this.strings[id];
    if (s === undefined) throw new Error(`internal: temporary string id ${id} out of range`);
    return s;
  }
}

/** Words to start a relation with; it doubles from there. */
const INITIAL_WORDS = 1024;

export class EncodedRelation {
  readonly width: number;
  /** Rows written so far. */
  count = 0;
  private buffer: Uint32Array;
  /** Word offsets of the string columns within a row. */
  private readonly stringWords: number[] = [];

  constructor(readonly types: readonly ScalarType[]) {
    this.width = rowWords(types);
    this.buffer = new Uint32Array(Math.max(this.width, 1) * 16);
    let at = 0;
    for (const t of types) {
      if (t === 'string') this.stringWords.push(at);
      at += rowWords([t]);
    }
  }

  /**
   * The buffer with room for one more row and that row's first word. The row counts once `commit` is called,
   * so a bad record leaves nothing behind.
   */
  next(): { words: Uint32Array; at: number } {
    const at = this.count * this.width;
    if (at + this.width > this.buffer.length) {
      const grown = new Uint32Array(Math.max(INITIAL_WORDS, this.buffer.length * 2));
      grown.set(this.buffer.subarray(0, at));
      this.buffer = grown;
    }
    return { words: this.buffer, at };
  }

  commit(): void {
    this.count++;
  }

  /** Drops the rows from `count` on (a load that starts over). */
  truncate(count: number): void {
    this.count = Math.min(this.count, count);
  }

  /** Appends one row of `Value`s (API rows, inline facts). */
  push(row: Row, strings: StringIds): void {
    let { words, at } = this.next();
    for (let c = 0; c < this.types.length; c++) at = encodeValue(this.types[c]!, row[c]!, strings, words, at);
    this.commit();
  }

  /** The rows' words (a view, not a copy). */
  get words(): Uint32Array {
    return this.buffer.subarray(0, this.count * this.width);
  }

  /** Rewrites every string word `id` to `map[id]`. */
  remapStrings(map: Uint32Array): void {
    if (this.stringWords.length === 0) return;
    const words = this.buffer;
    const end = this.count * this.width;
    for (const off of this.stringWords) {
      for (let at = off; at < end; at += this.width) words[at] = map[words[at]!]!;
    }
  }

  rows(strings: StringIds): Row[] {
    const out: Row[] = new Array(this.count);
    for (let r = 0; r < this.count; r++) out[r] = decodeRow(this.buffer, r * this.width, this.types, strings);
    return out;
  }
}

/** The facts of one run, by relation, with the interner their string words refer to. */
export class EncodedFacts {
  readonly strings = new StringInterner();
  readonly relations = new Map<string, EncodedRelation>();
  /** Set once string words hold final dictionary ids. */
  private remapped = false;

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

  /** Rewrites every relation's string words from temporary ids to `ids`'s, once. */
  remapStrings(ids: StringIds): void {
    if (this.remapped) throw new Error('internal: facts were already remapped to a dictionary');
    this.remapped = true;
    const map = new Uint32Array(this.strings.strings.length);
    this.strings.strings.forEach((s, i) => (map[i] = ids.id(s)));
    for (const rel of this.relations.values()) rel.remapStrings(map);
  }

  /** Rows by relation as `Value`s (the reference interpreter and the Row-returning loaders). */
  toRows(): Map<string, Row[]> {
    if (this.remapped) throw new Error('internal: facts were remapped; decode them with their dictionary');
    return new Map([...this.relations].map(([name, rel]) => [name, rel.rows(this.strings)]));
  }
}

/** The value types of `columns`, which the buffers are laid out by. */
export const columnTypes = (columns: readonly { type: ScalarType }[]): ScalarType[] => columns.map((c) => c.type);
