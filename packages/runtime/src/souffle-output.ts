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
import type { ResultTable } from './result-table.js';
import { writeFilesAtomically, type OutputFile } from './output-files.js';

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

/** The lines Soufflé writes for `rows` of `decl`. */
export function souffleLines(decl: RelationDecl, rows: readonly Row[], delimiter = '\t'): string {
  const types = decl.columns.map((c) => c.type);
  return rows.map((r) => (r.length === 0 ? '()' : r.map((v, i) => souffleValue(v, types[i])).join(delimiter)) + '\n').join('');
}

/** What Soufflé prints for an `IO=stdout` relation. */
export function souffleStdout(decl: RelationDecl, rows: readonly Row[], delimiter = '\t'): string {
  return `---------------\n${decl.name}\n===============\n${souffleLines(decl, rows, delimiter)}===============\n`;
}

/**
 * Writes each relation as its `.output` directives say: files into `outputDir`, `IO=stdout` through `stdout`.
 * A relation with no directive (asked for by name) is a `<rel>.csv` file. `outputDir` `-` sends files to
 * `stdout` too, as Soufflé's `-D-` does. Without `outputDir` no file is written: the relations meant for files
 * come back in `unwritten`, for the caller to show some other way.
 */
export function writeSouffleOutputs(
  io: SouffleIo,
  tables: ReadonlyMap<string, ResultTable>,
  decls: ReadonlyMap<string, RelationDecl>,
  outputDir: string | undefined,
  stdout: (s: string) => void,
): { written: string[]; unwritten: Map<string, ResultTable> } {
  const files: OutputFile[] = [];
  const unwritten = new Map<string, ResultTable>();
  for (const [name, table] of tables) {
    const decl = decls.get(name)!;
    const rows = table.rows();
    const targets: SouffleOutput[] = io.outputs[name] ?? [{ kind: 'file', filename: `${name}.csv`, delimiter: '\t' }];
    for (const target of targets) {
      if (target.kind === 'stdout' || outputDir === '-') {
        stdout(souffleStdout(decl, rows, target.delimiter));
      } else if (outputDir === undefined) {
        unwritten.set(name, table);
      } else {
        const path = isAbsolute(target.filename) ? target.filename : join(outputDir, target.filename);
        files.push({ path, write: (out) => out(souffleLines(decl, rows, target.delimiter)) });
      }
    }
  }
  const written = files.length === 0 || outputDir === undefined ? [] : writeFilesAtomically(outputDir, files, `output files in ${outputDir}`);
  return { written, unwritten };
}
