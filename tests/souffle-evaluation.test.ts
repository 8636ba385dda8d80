/**
 * Soufflé's own `tests/evaluation`, `tests/example` and `tests/semantic` programs, unchanged (tests/souffle/
 * evaluation, example and semantic; see the first's README for their source and license). Each case either gives
 * Soufflé's expected output files (`expected/<relation>.csv`) or fails to compile with located "not supported"
 * errors, the first of which `unsupported.txt` names; never a different answer. `unchecked.txt` names outputs whose
 * expected file the mirror the cases come from does not hold (it stores each file content once), so only their
 * presence is checked. `stdout.txt` is what Soufflé prints (its `<case>.out`: `printsize` lines). Soufflé itself
 * does not fix the order of output lines (its test harness sorts them), so lines are compared sorted. Each case runs
 * on real WebGPU and on the reference interpreter.
 */
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { compileFile, openGpu, type Gpu, type Program } from '@vixen/runtime';
import { souffleLines, writeSouffleOutputs } from '@vixen/io';
import { VixenError, type Row } from '@vixen/queryplan';

/** Soufflé's `tests/evaluation` cases by their names, its `tests/example` and `tests/semantic` ones prefixed. */
const suites = [
  ['evaluation', ''],
  ['example', 'example/'],
  ['semantic', 'semantic/'],
].map(([dir, prefix]) => [join(import.meta.dirname, 'souffle', dir!), prefix!] as const);
const cases = suites.flatMap(([dir, prefix]) =>
  readdirSync(dir)
    .filter((name) => existsSync(join(dir, name, 'program.dl')))
    .sort()
    .map((name) => ({ name: `${prefix}${name}`, dir: join(dir, name) })),
);

/** The lines Soufflé would write for `rows`, sorted. */
function lines(program: Program, rel: string, rows: readonly Row[]): string[] {
  const decl = program.relations.find((r) => r.name === rel)!;
  return souffleLines(decl, rows, '\t', program.souffleIo?.records?.[rel]).split('\n').filter((l) => l !== '').sort();
}

let gpu: Gpu;
beforeAll(async () => {
  gpu = await openGpu();
});
afterAll(() => gpu?.dispose());

describe("Soufflé's evaluation suite", () => {
  for (const { name, dir } of cases) {
    const unsupported = join(dir, 'unsupported.txt');
    if (existsSync(unsupported)) {
      test(`${name} (not supported)`, () => {
        const expected = readFileSync(unsupported, 'utf8').trim();
        let thrown: unknown;
        try {
          compileFile(join(dir, 'program.dl'));
        } catch (e) {
          thrown = e;
        }
        expect(thrown).toBeInstanceOf(VixenError);
        const errors = (thrown as VixenError).diagnostics.filter((d) => d.severity === 'error');
        expect(errors[0]?.message).toBe(expected);
        for (const d of errors) {
          expect(d.span, d.message).toBeDefined();
          expect(d.message).toMatch(/not supported/);
        }
      });
      continue;
    }
    test(name, async () => {
      const program = compileFile(join(dir, 'program.dl'));
      const expectedDir = join(dir, 'expected');
      // A case whose every output is unchecked has no expected files.
      const files = existsSync(expectedDir) ? readdirSync(expectedDir).filter((f) => f.endsWith('.csv')).map((f) => f.replace(/\.csv$/, '')) : [];
      const uncheckedFile = join(dir, 'unchecked.txt');
      const unchecked = existsSync(uncheckedFile) ? readFileSync(uncheckedFile, 'utf8').split('\n').filter((l) => l !== '') : [];
      // Relations only printed by size (`printsize`) are checked against Soufflé's stdout instead.
      const sizeOnly = (rel: string) => program.souffleIo!.outputs[rel]!.every((o) => o.kind === 'size');
      expect(program.outputNames.filter((rel) => !sizeOnly(rel)).sort()).toEqual([...files, ...unchecked].sort());
      const sources = { factsDir: join(dir, 'facts') };
      const reference = await program.interpret(sources);
      const onGpu = await program.run({ ...sources, gpu });
      const stdoutFile = join(dir, 'stdout.txt');
      if (existsSync(stdoutFile)) {
        const decls = new Map(program.relations.map((r) => [r.name, r]));
        const printed = (tables: ReadonlyMap<string, Iterable<Row>>): string[] => {
          const parts: string[] = [];
          writeSouffleOutputs(program.souffleIo!, tables, decls, undefined, (s) => parts.push(s));
          return parts.join('').split('\n').filter((l) => l !== '').sort();
        };
        const expected = readFileSync(stdoutFile, 'utf8').split('\n').filter((l) => l !== '').sort();
        expect(printed(reference), `${name}: stdout (interpreter)`).toEqual(expected);
        expect(printed(onGpu.relations), `${name}: stdout`).toEqual(expected);
      }
      for (const rel of files) {
        const expected = readFileSync(join(expectedDir, `${rel}.csv`), 'utf8').split('\n').filter((l) => l !== '').sort();
        expect(lines(program, rel, reference.get(rel)!), `${name}: ${rel} (interpreter)`).toEqual(expected);
        expect(lines(program, rel, onGpu.relations.get(rel)!), `${name}: ${rel}`).toEqual(expected);
      }
    });
  }
});
