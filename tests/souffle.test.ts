/**
 * Soufflé end-to-end cases: one folder per case under tests/souffle with `program.dl`, `facts/*.facts` and
 * `expected/<relation>.csv` (one file per `.output` relation, as Soufflé writes it). Each runs on real WebGPU and
 * must equal the reference interpreter and the expected files. A case may add `program.logic`, the same program
 * in LogiQL: it must give the same outputs and, up to which relations are printed and how things are named, the
 * same query plan. `VIXEN_UPDATE_GOLDEN=1` rewrites the expected files from the reference interpreter (review
 * the diff!).
 */
import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { compileFile, openGpu, type Gpu, type Program } from '@vixen/runtime';
import { souffleLines } from '@vixen/io';
import { printPlan, type QpProgram, type Row } from '@vixen/queryplan';

const casesDir = join(import.meta.dirname, 'souffle');
const update = process.env.VIXEN_UPDATE_GOLDEN === '1';

/** The file Soufflé would write for `rows` (tab-separated). */
function text(program: Program, rel: string, rows: readonly Row[]): string {
  return souffleLines(program.relations.find((r) => r.name === rel)!, rows, '\t', program.souffleIo?.records?.[rel]);
}

/**
 * The printed plan with every relation unprinted (the dialects differ in which relations they print), column
 * names and rule origins dropped (operators address columns by position) and relation names replaced by their order of first
 * appearance: the dialects name aggregate helpers and temporaries differently. Operators stay as printed.
 */
function planShape(plan: QpProgram): string {
  // Rule origins dropped too: the dialects write the rules differently.
  const blocks = plan.blocks.map((b) => ({ ...b, commands: b.commands.map(({ rules: _, ...c }) => c) }));
  const text = printPlan({ ...plan, blocks, relations: plan.relations.map((r) => ({ ...r, output: false })) });
  const names = new Set(plan.relations.map((r) => r.name));
  const ids = new Map<string, string>();
  const rename = (word: string): string => {
    if (!ids.has(word)) ids.set(word, `R${ids.size}`);
    return ids.get(word)!;
  };
  return text
    .replace(/[$A-Za-z_][$A-Za-z0-9_]*: /g, '')
    .replace(/[$A-Za-z_][$A-Za-z0-9_]*/g, (word) => {
      const label = /^(loop|after)_(.*)$/.exec(word);
      if (label && names.has(label[2]!)) return `${label[1]}_${rename(label[2]!)}`;
      return names.has(word) ? rename(word) : word;
    });
}

let gpu: Gpu;
beforeAll(async () => {
  gpu = await openGpu();
});
afterAll(() => gpu?.dispose());

// `evaluation`, `example` and `semantic` hold Soufflé's own suites, run by souffle-evaluation.test.ts.
const caseNames = readdirSync(casesDir).filter((name) => !['evaluation', 'example', 'semantic'].includes(name)).sort();

describe('soufflé cases', () => {
  for (const name of caseNames) {
    const dir = join(casesDir, name);
    test(name, async () => {
      const program = compileFile(join(dir, 'program.dl'));
      const sources = { factsDir: join(dir, 'facts') };
      const reference = await program.interpret(sources);
      const onGpu = await program.run({ ...sources, gpu });
      const expectedDir = join(dir, 'expected');
      if (update) {
        rmSync(expectedDir, { recursive: true, force: true });
        mkdirSync(expectedDir);
        for (const [rel, rows] of reference) writeFileSync(join(expectedDir, `${rel}.csv`), text(program, rel, rows));
      }

      // Only `.output` relations are printed by default.
      const outputs = program.outputNames.sort();
      expect([...reference.keys()].sort()).toEqual(outputs);
      expect([...onGpu.relations.keys()].sort()).toEqual(outputs);
      for (const [rel, rows] of reference) {
        expect(text(program, rel, onGpu.relations.get(rel)!), `${name}: ${rel}`).toEqual(text(program, rel, rows));
      }
      const expectedFiles = readdirSync(expectedDir).filter((f) => f.endsWith('.csv'));
      expect(expectedFiles.map((f) => f.replace(/\.csv$/, '')).sort()).toEqual(outputs);
      for (const f of expectedFiles) {
        const rel = f.replace(/\.csv$/, '');
        expect(text(program, rel, onGpu.relations.get(rel)!), `${name}: ${f}`).toEqual(readFileSync(join(expectedDir, f), 'utf8'));
      }
    });
  }
});

describe('the same program in both dialects has the same plan and results', () => {
  const cases = caseNames.filter((name) => existsSync(join(casesDir, name, 'program.logic')));
  test('there are cases for TC, negation and aggregates', () => {
    expect(cases).toEqual(expect.arrayContaining(['transitive-closure', 'negation', 'count-grouped', 'sum-grouped']));
  });
  for (const name of cases.sort()) {
    test(name, async () => {
      const dir = join(casesDir, name);
      const souffle = compileFile(join(dir, 'program.dl'));
      const logic = compileFile(join(dir, 'program.logic'));
      expect(planShape(logic.plan!)).toEqual(planShape(souffle.plan!));
      const sources = { factsDir: join(dir, 'facts'), gpu };
      const outputs = souffle.outputNames;
      const [a, b] = [await souffle.run(sources), await logic.run({ ...sources, outputs })];
      for (const rel of outputs) expect(text(logic, rel, b.relations.get(rel)!), rel).toEqual(text(souffle, rel, a.relations.get(rel)!));
    });
  }
});
