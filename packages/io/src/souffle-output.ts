/**
 * Results of a Soufflé program written the way Soufflé writes them, so files can be compared one to one:
 * `<rel>.csv` (or the directive's `filename`) in the output directory, one tuple a line, fields split by the
 * delimiter (tab by default), floats with 9 significant digits (`max_digits10` of a float), `()` for a tuple
 * of a nullary relation, `IO=stdout` relations framed by Soufflé's dashed and double rules, and `printsize`
 * relations as `<rel>\t<size>` lines.
 *
 * Row order: rows come sorted by their columns (numbers by value, unsigned as unsigned, floats by value). That is
 * Soufflé's order for number columns when its primary index is in column order (the usual case); Soufflé orders
 * symbols by their symbol-table number (order of first appearance), which no file can reproduce, so symbols
 * sort by code unit here.
 */
import { isAbsolute, join } from 'node:path';
import { layoutWidth, type PrintLayout, type SouffleIo, type SouffleOutput } from '@vixen/frontend';
import type { RelationDecl, Row } from '@vixen/queryplan';
import { writeFilesAtomically, writeLines, type OutputFile } from './output-files.js';
import { souffleAttribute, souffleValue } from './souffle-values.js';

/** Soufflé's line (without its newline) for each of `rows` of `decl`; `layout` groups record columns. */
function* souffleRowLines(decl: RelationDecl, rows: Iterable<Row>, delimiter: string, layout: readonly PrintLayout[] | undefined): IterableIterator<string> {
  const types = decl.columns.map((c) => c.type);
  for (const r of rows) {
    if (r.length === 0) yield '()';
    else if (!layout) yield r.map((v, i) => souffleValue(v, types[i])).join(delimiter);
    else {
      const parts: string[] = [];
      let at = 0;
      for (const l of layout) {
        parts.push(souffleAttribute(l, r, at, types, false));
        at += layoutWidth(l);
      }
      yield parts.join(delimiter);
    }
  }
}

/** Writes the lines Soufflé writes for `rows` of `decl` through `out`, in chunks (never one string per relation). */
function writeSouffleLines(decl: RelationDecl, rows: Iterable<Row>, delimiter: string, layout: readonly PrintLayout[] | undefined, out: (s: string) => void): void {
  writeLines(souffleRowLines(decl, rows, delimiter, layout), out);
}

/** The lines Soufflé writes for `rows` of `decl` (`layout`: its record attributes, from `SouffleIo.records`). */
export function souffleLines(decl: RelationDecl, rows: Iterable<Row>, delimiter = '\t', layout?: readonly PrintLayout[]): string {
  const parts: string[] = [];
  writeSouffleLines(decl, rows, delimiter, layout, (s) => parts.push(s));
  return parts.join('');
}

/** What Soufflé prints for an `IO=stdout` relation, through `out`. */
function writeSouffleStdout(decl: RelationDecl, rows: Iterable<Row>, delimiter: string, layout: readonly PrintLayout[] | undefined, out: (s: string) => void): void {
  out(`---------------\n${decl.name}\n===============\n`);
  writeSouffleLines(decl, rows, delimiter, layout, out);
  out('===============\n');
}

function count(rows: Iterable<Row>): number {
  let n = 0;
  for (const _ of rows) n++;
  return n;
}

/**
 * Writes each relation as its `.output` directives say: files into `outputDir`, `IO=stdout` through `stdout`,
 * and `printsize` as Soufflé prints it (`<rel>\t<size>`) through `stdout`.
 * A relation with no directive (asked for by name) is a `<rel>.csv` file. `outputDir` `-` sends files to
 * `stdout` too, as Soufflé's `-D-` does. Without `outputDir` no file is written: the relations meant for files
 * come back in `unwritten`, for the caller to show some other way.
 */
export function writeSouffleOutputs<Table extends Iterable<Row>>(
  io: SouffleIo,
  tables: ReadonlyMap<string, Table>,
  decls: ReadonlyMap<string, RelationDecl>,
  outputDir: string | undefined,
  stdout: (s: string) => void,
): { written: string[]; unwritten: Map<string, Table> } {
  const files: OutputFile[] = [];
  const unwritten = new Map<string, Table>();
  for (const [name, table] of tables) {
    const decl = decls.get(name)!;
    const layout = io.records?.[name];
    const targets: SouffleOutput[] = io.outputs[name] ?? [{ kind: 'file', filename: `${name}.csv`, delimiter: '\t' }];
    for (const target of targets) {
      if (target.kind === 'size') {
        stdout(`${name}\t${count(table)}\n`);
      } else if (target.kind === 'stdout' || outputDir === '-') {
        writeSouffleStdout(decl, table, target.delimiter, layout, stdout);
      } else if (outputDir === undefined) {
        unwritten.set(name, table);
      } else {
        const path = isAbsolute(target.filename) ? target.filename : join(outputDir, target.filename);
        files.push({ path, write: (out) => writeSouffleLines(decl, table, target.delimiter, layout, out) });
      }
    }
  }
  const written = files.length === 0 || outputDir === undefined ? [] : writeFilesAtomically(outputDir, files, `output files in ${outputDir}`);
  return { written, unwritten };
}
