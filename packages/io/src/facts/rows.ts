/**
 * Facts given as rows (through the API, or inline in the program text) encoded into a run's facts: no files, so
 * this also runs in a browser.
 */
import { didYouMean, VixenError, valueHasType, type RelationDecl, type Row, type ScalarType, type Value } from '@vixen/queryplan';
import { quoted } from './convert.js';
import { columnTypes, factsColumns, type EncodedFacts } from './encoded.js';

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
    const checked = converts ? row.map((v, c) => (columns[c]!.type === 'int64' ? BigInt(v as number) : columns[c]!.type === 'float32' ? Math.fround(v as number) + 0 : v)) : row;
    target.push(keep ? keep.map((c) => checked[c]!) : checked, facts.strings);
  });
}

/** Checks and encodes API rows per relation (`FactSources.facts`); `byName`: the relations they may name. */
export function addApiFacts(out: EncodedFacts, byName: ReadonlyMap<string, RelationDecl>, facts: Readonly<Record<string, readonly Row[]>>): void {
  for (const [name, rows] of Object.entries(facts)) {
    const rel = byName.get(name);
    if (!rel) throw new VixenError({ severity: 'error', message: `facts given for unknown relation ${name}${didYouMean(name, byName.keys())}` });
    addCheckedRows(out, rel, rows);
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
