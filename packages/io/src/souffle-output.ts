/**
 * Results of a Soufflé program written the way Soufflé writes them, so files can be compared one to one:
 * `<rel>.csv` (or the directive's `filename`) in the output directory, one tuple a line, fields split by the
 * delimiter (tab by default), floats with 9 significant digits (`max_digits10` of a float), `()` for a tuple
 * of a nullary relation, and `IO=stdout` relations framed by Soufflé's dashed and double rules.
 *
 * Row order: rows come sorted by their columns (numbers by value, unsigned as unsigned, floats by value). That is
 * Soufflé's order for number columns when its primary index is in column order (the usual case); Soufflé orders
 * symbols by their symbol-table number (order of first appearance), which no file can reproduce, so symbols
 * sort by code unit here.
 */
import { isAbsolute, join } from 'node:path';
import type { SouffleIo, SouffleOutput } from '@vixen/frontend';
import { formatValue, type RelationDecl, type Row, type ScalarType, type Value } from '@vixen/queryplan';
import { writeFilesAtomically, writeLines, type OutputFile } from './output-files.js';

/** C++'s `ostream << float` at precision 9: `%.9g` (shortest of fixed and exponent form, zeros trimmed). */
export function formatSouffleFloat(x: number): string {
  if (Number.isNaN(x)) return 'nan';
  if (!Number.isFinite(x)) return x > 0 ? 'inf' : '-inf';
  if (x === 0) return Object.is(x, -0) ? '-0' : '0';
  const [mantissa, exp] = x.toExponential(8).split('e') as [string, string];
  const e = Number(exp);
  const trim = (s: string): string => (s.includes('.') ? s.replace(/0+$/, '').replace(/\.$/, '') : s);
  if (e < -4 || e >= 9) return `${trim(mantissa)}e${e < 0 ? '-' : '+'}${String(Math.abs(e)).padStart(2, '0')}`;
  return trim(x.toFixed(8 - e));
}

function souffleValue(v: Value, type: ScalarType | undefined): string {
  return type === 'float32' ? formatSouffleFloat(v as number) : formatValue(v, type);
}

/** Soufflé's line (without its newline) for each of `rows` of `decl`. */
function* souffleRowLines(decl: RelationDecl, rows: Iterable<Row>, delimiter: string): IterableIterator<string> {
  const types = decl.columns.map((c) => c.type);
  for (const r of rows) yield r.length === 0 ? '()' : r.map((v, i) => souffleValue(v, types[i])).join(delimiter);
}

/** Writes the lines Soufflé writes for `rows` of `decl` through `out`, in chunks (never one string per relation). */
function writeSouffleLines(decl: RelationDecl, rows: Iterable<Row>, delimiter: string, out: (s: string) => void): void {
  writeLines(souffleRowLines(decl, rows, delimiter), out);
}

/** The lines Soufflé writes for `rows` of `decl`. */
export function souffleLines(decl: RelationDecl, rows: Iterable<Row>, delimiter = '\t'): string {
  const parts: string[] = [];
  writeSouffleLines(decl, rows, delimiter, (s) => parts.push(s));
  return parts.join('');
}

/** What Soufflé prints for an `IO=stdout` relation, through `out`. */
function writeSouffleStdout(decl: RelationDecl, rows: Iterable<Row>, delimiter: string, out: (s: string) => void): void {
  out(`---------------\n${decl.name}\n===============\n`);
  writeSouffleLines(decl, rows, delimiter, out);
  out('===============\n');
}

/**
 * Writes each relation as its `.output` directives say: files into `outputDir`, `IO=stdout` through `stdout`.
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
    const targets: SouffleOutput[] = io.outputs[name] ?? [{ kind: 'file', filename: `${name}.csv`, delimiter: '\t' }];
    for (const target of targets) {
      if (target.kind === 'stdout' || outputDir === '-') {
        writeSouffleStdout(decl, table, target.delimiter, stdout);
      } else if (outputDir === undefined) {
        unwritten.set(name, table);
      } else {
        const path = isAbsolute(target.filename) ? target.filename : join(outputDir, target.filename);
        files.push({ path, write: (out) => writeSouffleLines(decl, table, target.delimiter, out) });
      }
    }
  }
  const written = files.length === 0 || outputDir === undefined ? [] : writeFilesAtomically(outputDir, files, `output files in ${outputDir}`);
  return { written, unwritten };
}
