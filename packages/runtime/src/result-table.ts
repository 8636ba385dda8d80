/**
 * A relation a run hands back. Rows read from the device stay encoded words and are decoded on demand, so a
 * relation of 10^8 tuples is written out row by row instead of becoming 10^8 JS arrays (which the heap cannot hold).
 */
import { applyOutputOrder, compareRows, rowWords, wordsOf, type OutputOrder, type Row, type ScalarType } from '@vixen/queryplan';
import { decodeRow, type StringDictionary } from '@vixen/io';

type Source =
  | { kind: 'words'; words: Uint32Array; dict: StringDictionary; count: number }
  | { kind: 'rows'; rows: readonly Row[] };

export class ResultTable {
  /** Rows in output order (after the limit of `order ... limit N`). */
  readonly size: number;
  private materialized: Row[] | undefined;

  private constructor(
    readonly columns: readonly ScalarType[],
    private readonly source: Source,
    private readonly order: OutputOrder | undefined,
  ) {
    const count = source.kind === 'words' ? source.count : source.rows.length;
    this.size = order?.limit === undefined ? count : Math.min(count, order.limit);
  }

  /**
   * Rows as the device holds them: the column types' words, sorted by unsigned words. A nullary relation's rows
   * have no words, so `nullaryCount` says how many there are.
   */
  static fromWords(columns: readonly ScalarType[], words: Uint32Array, dict: StringDictionary, order?: OutputOrder, nullaryCount?: number): ResultTable {
    const width = rowWords(columns);
    return new ResultTable(columns, { kind: 'words', words, dict, count: width === 0 ? (nullaryCount ?? 0) : words.length / width }, order);
  }

  /** Duplicate-free rows in any order (the reference interpreter's). */
  static fromRows(columns: readonly ScalarType[], rows: readonly Row[], order?: OutputOrder): ResultTable {
    return new ResultTable(columns, { kind: 'rows', rows }, order);
  }

  /** All rows in output order, as arrays (kept after the first call). */
  rows(): Row[] {
    if (!this.materialized) {
      const all = this.source.kind === 'words' ? [...this.decodeInWordOrder()] : [...this.source.rows];
      this.materialized = applyOutputOrder(all.sort(compareRows), this.order);
    }
    return this.materialized;
  }

  /** Rows in output order, one at a time; without materializing them when the device order is already that order. */
  *[Symbol.iterator](): IterableIterator<Row> {
    if (this.materialized || this.source.kind === 'rows' || this.order || !wordOrderIsValueOrder(this.source.words, this.columns)) {
      yield* this.rows();
      return;
    }
    yield* this.decodeInWordOrder();
  }

  private *decodeInWordOrder(): IterableIterator<Row> {
    if (this.source.kind !== 'words') return;
    const { words, dict, count } = this.source;
    const width = rowWords(this.columns);
    for (let r = 0; r < count; r++) yield decodeRow(words, r * width, this.columns, dict);
  }
}

/**
 * Whether unsigned word order of these rows is the typed order users see, so sorted device rows need no re-sort:
 * true when no signed column holds a negative value and every 64-bit column has one high word (its low words
 * come first in a row, so they may only decide the order when the high words tie everywhere).
 */
function wordOrderIsValueOrder(words: Uint32Array, columns: readonly ScalarType[]): boolean {
  const width = rowWords(columns);
  let offset = 0;
  for (const type of columns) {
    const at = offset;
    offset += wordsOf(type);
    switch (type) {
      case 'uint32':
      case 'string':
      case 'boolean':
        break;
      case 'int32':
      case 'date':
      case 'float32':
        for (let i = at; i < words.length; i += width) if (words[i]! >= 0x80000000) return false;
        break;
      case 'int64':
      case 'decimal': {
        const hi = words[at + 1];
        if (hi !== undefined && hi >= 0x80000000) return false;
        for (let i = at + 1; i < words.length; i += width) if (words[i] !== hi) return false;
        break;
      }
    }
  }
  return true;
}
