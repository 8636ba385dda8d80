/**
 * Facts given as rows or as columns (through the API), or inline in the program text, encoded into a run's facts:
 * no files, so this also runs in a browser.
 */
import { didYouMean, VixenError, rowWords, valueHasType, type Column, type RelationDecl, type Row, type ScalarType, type Value } from '@vixen/queryplan';
import { encodeValue } from '../encoding.js';
import { quoted } from './convert.js';
import { CHUNK_WORDS, columnTypes, columnWordOffsets, factsColumns, type EncodedFacts, type EncodedRelation } from './encoded.js';

/** One declared column's values: a typed array where its type has one (see COLUMN_ARRAYS), or an array of values. */
export type FactColumn = Int32Array | Uint32Array | Float32Array | Float64Array | BigInt64Array | readonly Value[];

/** A relation's facts as columns, one per declared column (all of one length): no row objects to build. */
export interface ColumnFacts {
  readonly columns: readonly FactColumn[];
}

/** A relation's facts through the API: rows, or columns. */
export type FactRelation = readonly Row[] | ColumnFacts;

/** The typed arrays a column of each type takes (`Symbol.toStringTag` names), and how a message says so. */
const COLUMN_ARRAYS: Record<ScalarType, { arrays: readonly string[]; says: string }> = {
  int32: { arrays: ['Int32Array'], says: 'an Int32Array or an array of numbers' },
  date: { arrays: ['Int32Array'], says: 'an Int32Array (days since 1970-01-01) or an array of numbers' },
  uint32: { arrays: ['Uint32Array'], says: 'a Uint32Array or an array of numbers' },
  float32: { arrays: ['Float32Array', 'Float64Array'], says: 'a Float32Array, a Float64Array or an array of numbers' },
  int64: { arrays: ['BigInt64Array'], says: 'a BigInt64Array or an array of bigints' },
  decimal: { arrays: ['BigInt64Array'], says: 'a BigInt64Array (values scaled by 10^4) or an array of bigints' },
  boolean: { arrays: [], says: 'an array of booleans' },
  string: { arrays: [], says: 'an array of strings' },
};

function valueFits(type: ScalarType, v: Value): boolean {
  // An int64 may also be given as a safe-integer number; a float32 as any number (rounded to f32).
  if (type === 'int64' && typeof v === 'number') return Number.isSafeInteger(v);
  if (type === 'float32') return typeof v === 'number';
  return valueHasType(type, v);
}

/**
 * Checks API rows (every column, pruned or not: they are already values) and encodes them into `facts`, only the
 * columns the relation keeps; a row of Values lives only while it is encoded.
 */
function addCheckedRows(facts: EncodedFacts, rel: RelationDecl, rows: readonly Row[]): void {
  const target = facts.relation(rel.name, columnTypes(rel.columns));
  const columns = factsColumns(rel);
  const keep = rel.pruned?.loadColumns;
  // Only int64 (BigInt) and float32 (rounded) values change; rows of other types are pushed as given, not copied.
  const converts = columns.some((c) => c.type === 'int64' || c.type === 'float32');
  rows.forEach((row, i) => {
    if (row.length !== columns.length) {
      throw new VixenError({
        severity: 'error',
        message: `facts for ${rel.name}, row ${i + 1}: expected ${columns.length} values, found ${row.length}`,
      });
    }
    for (let c = 0; c < columns.length; c++) {
      const col = columns[c]!;
      const v = row[c];
      if (!valueFits(col.type, v)) {
        throw new VixenError({
          severity: 'error',
          message: `facts for ${rel.name}, row ${i + 1}: expected ${col.type} in column ${c + 1} (${col.name}), found ${typeof v} ${typeof v === 'string' ? quoted(v) : String(v)}`,
        });
      }
    }
    const checked = converts ? row.map((v, c) => convert(columns[c]!.type, v)) : row;
    target.push(keep ? keep.map((c) => checked[c]!) : checked, facts.strings);
  });
}

/** A checked API value as the encoder takes it: int64 as a BigInt, float32 rounded (and -0 as 0). */
const convert = (type: ScalarType, v: Value): Value => (type === 'int64' ? BigInt(v as number) : type === 'float32' ? Math.fround(v as number) + 0 : v);

/** The typed array's name (`Int32Array`), or undefined for a plain array. */
const arrayName = (col: FactColumn): string | undefined => (Array.isArray(col) ? undefined : (col as Int32Array)[Symbol.toStringTag]);

/**
 * Checks API columns (count, lengths, each against its declared type) and encodes the columns the relation keeps
 * straight into row words, a chunk at a time: typed arrays are copied word by word, plain arrays checked value by value.
 */
function addCheckedColumns(facts: EncodedFacts, rel: RelationDecl, given: ColumnFacts): void {
  const columns = factsColumns(rel);
  const where = (c: number): string => `facts for ${rel.name}, column ${c + 1} (${columns[c]!.name})`;
  if (given.columns.length !== columns.length) {
    throw new VixenError({ severity: 'error', message: `facts for ${rel.name}: expected ${columns.length} columns, found ${given.columns.length}` });
  }
  const count = given.columns[0]?.length ?? 0;
  given.columns.forEach((col, c) => {
    if (col.length !== count) throw new VixenError({ severity: 'error', message: `${where(c)}: expected ${count} values (as column 1), found ${col.length}` });
    const name = arrayName(col);
    const { arrays, says } = COLUMN_ARRAYS[columns[c]!.type];
    if (name === undefined ? !Array.isArray(col) : !arrays.includes(name)) {
      throw new VixenError({ severity: 'error', message: `${where(c)}: ${/^[aeiou]/.test(columns[c]!.type) ? 'an' : 'a'} ${columns[c]!.type} column takes ${says}, found ${name ?? typeof col}` });
    }
    if (name === undefined) {
      const values = col as readonly Value[];
      for (let i = 0; i < count; i++) {
        const v = values[i]!;
        if (!valueFits(columns[c]!.type, v)) {
          throw new VixenError({ severity: 'error', message: `${where(c)}, row ${i + 1}: expected ${columns[c]!.type}, found ${typeof v} ${typeof v === 'string' ? quoted(v) : String(v)}` });
        }
      }
    }
  });
  const keep = rel.pruned?.loadColumns ?? columns.map((_, c) => c);
  encodeColumns(facts.relation(rel.name, columnTypes(rel.columns)), facts, keep.map((c) => ({ decl: columns[c]!, values: given.columns[c]! })), count);
}

/** Appends `count` rows made of `kept` columns (checked) to `target`, in chunks of at most CHUNK_WORDS words. */
function encodeColumns(target: EncodedRelation, facts: EncodedFacts, kept: readonly { decl: Column; values: FactColumn }[], count: number): void {
  const width = rowWords(kept.map((k) => k.decl.type));
  if (width === 0) {
    for (let i = 0; i < count; i++) target.push([], facts.strings);
    return;
  }
  const offsets = columnWordOffsets(kept.map((k) => k.decl.type));
  const rowsPerChunk = Math.max(1, Math.floor(CHUNK_WORDS / width));
  for (let first = 0; first < count; first += rowsPerChunk) {
    const n = Math.min(rowsPerChunk, count - first);
    const words = new Uint32Array(n * width);
    kept.forEach(({ decl, values }, k) => writeColumn(decl.type, values, first, n, words, offsets[k]!, width, facts));
    target.adopt(words);
  }
}

/** Writes values first .. first + n - 1 of one column into every row of `words`, from word `off` of each. */
function writeColumn(type: ScalarType, col: FactColumn, first: number, n: number, words: Uint32Array, off: number, width: number, facts: EncodedFacts): void {
  switch (arrayName(col)) {
    case 'Int32Array':
    case 'Uint32Array': {
      const bits = new Uint32Array((col as Int32Array).buffer, (col as Int32Array).byteOffset + 4 * first, n);
      for (let i = 0, at = off; i < n; i++, at += width) words[at] = bits[i]!;
      return;
    }
    case 'Float32Array':
    case 'Float64Array': {
      const floats = new Float32Array(words.buffer, words.byteOffset, words.length);
      const values = col as Float64Array;
      // Rounded to f32 by the store, and -0 written as 0, as API rows are.
      for (let i = 0, at = off; i < n; i++, at += width) floats[at] = values[first + i]! + 0;
      return;
    }
    case 'BigInt64Array': {
      // Little-endian (every WebGPU host): each value's low word, then its high word, as the row layout has them.
      const halves = new Uint32Array((col as BigInt64Array).buffer, (col as BigInt64Array).byteOffset + 8 * first, 2 * n);
      for (let i = 0, at = off; i < n; i++, at += width) {
        words[at] = halves[2 * i]!;
        words[at + 1] = halves[2 * i + 1]!;
      }
      return;
    }
    default: {
      const values = col as readonly Value[];
      for (let i = 0, at = off; i < n; i++, at += width) encodeValue(type, convert(type, values[first + i]!), facts.strings, words, at);
    }
  }
}

/** Checks and encodes API rows or columns per relation (`FactSources.facts`); `byName`: the relations they may name. */
export function addApiFacts(out: EncodedFacts, byName: ReadonlyMap<string, RelationDecl>, facts: Readonly<Record<string, FactRelation>>): void {
  for (const [name, given] of Object.entries(facts)) {
    const rel = byName.get(name);
    if (!rel) throw new VixenError({ severity: 'error', message: `facts given for unknown relation ${name}${didYouMean(name, byName.keys())}` });
    if (Array.isArray(given)) addCheckedRows(out, rel, given);
    else addCheckedColumns(out, rel, given as ColumnFacts);
  }
}

/** Adds the program's inline facts to the external ones (duplicates are removed on the device). */
export function addInlineFacts(
  facts: EncodedFacts,
  relations: readonly RelationDecl[],
  inline: Readonly<Record<string, readonly Row[]>>,
): EncodedFacts {
  const byName = new Map(relations.map((r) => [r.name, r]));
  for (const [name, rows] of Object.entries(inline)) {
    const rel = byName.get(name);
    if (rel && rows.length > 0) facts.addRows(name, columnTypes(rel.columns), rows);
  }
  return facts;
}
