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
import { compileFile, openGpu, souffleLines, type Gpu, type Program } from '@vixen/runtime';
import { printPlan, type QpProgram, type Row } from '@vixen/queryplan';

const casesDir = join(import.meta.dirname, 'souffle');
const update = process.env.VIXEN_UPDATE_GOLDEN === '1';

/** The lines Soufflé would write for `rows` (tab-separated). */
function lines(program: Program, rel: string, rows: readonly Row[]): string[] {
  const decl = program.relations.find((r) => r.name === rel)!;
  return souffleLines(decl, rows).split('\n').slice(0, -1);
}

/**
 * The printed plan with every relation unprinted (the dialects differ in which relations they print), column
 * names dropped (operators address columns by position) and relation names replaced by their order of first
 * appearance: the dialects name aggregate helpers and temporaries differently. Operators stay as printed.
 */
function planShape(plan: QpProgram): string {
  const text = printPlan({ ...plan, relations: plan.relations.map((r) => ({ ...r, output: false })) });
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

describe('soufflé cases', () => {
  for (const name of readdirSync(casesDir).sort()) {
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
        for (const [rel, rows] of reference) writeFileSync(join(expectedDir, `${rel}.csv`), lines(program, rel, rows).map((l) => l + '\n').join(''));
      }

      // Only `.output` relations are printed by default.
      const outputs = program.outputNames.sort();
      expect([...reference.keys()].sort()).toEqual(outputs);
      expect([...onGpu.relations.keys()].sort()).toEqual(outputs);
      for (const [rel, rows] of reference) {
        expect(lines(program, rel, onGpu.relations.get(rel)!), `${name}: ${rel}`).toEqual(lines(program, rel, rows));
      }
      const expectedFiles = readdirSync(expectedDir).filter((f) => f.endsWith('.csv'));
      expect(expectedFiles.map((f) => f.replace(/\.csv$/, '')).sort()).toEqual(outputs);
      for (const f of expectedFiles) {
        const want = readFileSync(join(expectedDir, f), 'utf8').split('\n').filter((l) => l.length > 0);
        const rel = f.replace(/\.csv$/, '');
        expect(lines(program, rel, onGpu.relations.get(rel)!), `${name}: ${f}`).toEqual(want);
      }

      const logicFile = join(dir, 'program.logic');
      if (existsSync(logicFile)) {
        const logic = compileFile(logicFile);
        const same = await logic.run({ ...sources, gpu, outputs });
        for (const rel of outputs) {
          expect(lines(logic, rel, same.relations.get(rel)!), `${name}: ${rel} from program.logic`).toEqual(lines(program, rel, onGpu.relations.get(rel)!));
        }
        expect(planShape(logic.plan!)).toEqual(planShape(program.plan!));
      }
    });
  }
});
