/**
 * Where offending facts were written: a violated functional dependency of a base relation names the facts file
 * lines of its rows, as it names the source lines of inline facts (queryplan locateFacts). Only run on that error
 * path: it reads the relation's file again, noting where each row starts.
 */
import { rowKey, type RelationDecl, type Row, type SourceSpan, type Violation } from '@vixen/queryplan';
import { loadFactsDirInto } from './dir.js';
import { columnTypes, EncodedFacts, factsColumns } from './encoded.js';
import { loadFactsFileInto, type RowStart } from './file.js';

/** The place in `decl`'s facts file in `dir` of each of `rows` (its first occurrence), or undefined. */
async function locateRows(dir: string, decl: RelationDecl, rows: readonly Row[]): Promise<Array<SourceSpan | undefined>> {
  const facts = new EncodedFacts();
  const starts: RowStart[] = [];
  let file = '';
  await loadFactsDirInto(dir, [decl], [], [decl.name], facts, (d, path, into) => {
    file = path;
    const target = into.relation(d.name, columnTypes(d.columns));
    return loadFactsFileInto(path, factsColumns(d), target, into.strings, d.name, undefined, d.pruned?.loadColumns, undefined, starts);
  });
  const at = new Map<string, SourceSpan>();
  (facts.relations.get(decl.name)?.rows(facts.strings) ?? []).forEach((row, i) => {
    // A columnar store has no lines to name.
    const s = starts[i];
    const key = rowKey(row);
    if (s && !at.has(key)) at.set(key, { file, start: { line: s.line, column: 1, offset: s.offset }, end: { line: s.line, column: 2, offset: s.offset + 1 } });
  });
  return rows.map((row) => at.get(rowKey(row)));
}

/**
 * `violations` with the facts file place of each offending row of a functional dependency on a base relation
 * whose facts come from `dir` (rows already placed, inline facts, keep their place).
 */
export async function locateFileFacts(violations: Violation[], relations: readonly RelationDecl[], dir: string): Promise<Violation[]> {
  const placed: Violation[] = [];
  for (const v of violations) {
    const decl = relations.find((r) => r.name === v.constraint.text && r.kind === 'edb');
    if (v.constraint.kind !== 'functional' || !decl || v.rowSpans?.every((s) => s !== undefined)) {
      placed.push(v);
      continue;
    }
    const spans = await locateRows(dir, decl, v.rows);
    const rowSpans = v.rows.map((_, i) => v.rowSpans?.[i] ?? spans[i]);
    placed.push(rowSpans.some((s) => s !== undefined) ? { ...v, rowSpans } : v);
  }
  return placed;
}
