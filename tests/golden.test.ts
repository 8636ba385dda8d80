/**
 * Golden end-to-end cases: one folder per case under tests/cases with `program.logic`, optional `facts/`, and
 * `expected/<relation>.csv` (tab-separated lines of the formatted values) plus `expected/plan.txt`.
 * Every case runs on real WebGPU and must equal both the reference interpreter and the expected files.
 * `VIXEN_UPDATE_GOLDEN=1` rewrites the expected files from the reference interpreter (review the diff!).
 * Every case runs once per join strategy (`VIXEN_JOIN_STRATEGIES=hash,auto` picks some), so both the
 * sort-merge and the hash lowering of every join stay tested.
 */
import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { compileFile, openGpu, type Gpu, type JoinStrategy } from '@vixen/runtime';
import { formatValue, printPlan, type Row, type ScalarType } from '@vixen/queryplan';

const casesDir = join(import.meta.dirname, 'cases');
const update = process.env.VIXEN_UPDATE_GOLDEN === '1';
const allStrategies: JoinStrategy[] = ['sort-merge', 'hash', 'auto'];
const strategies = process.env.VIXEN_JOIN_STRATEGIES?.split(',').map((s) => {
  if (!allStrategies.includes(s as JoinStrategy)) throw new Error(`VIXEN_JOIN_STRATEGIES: unknown strategy '${s}'`);
  return s as JoinStrategy;
}) ?? allStrategies;

function toLines(rows: readonly Row[], types: readonly ScalarType[]): string[] {
  return rows.map((r) => r.map((v, i) => formatValue(v, types[i])).join('\t'));
}

let gpu: Gpu;
beforeAll(async () => {
  gpu = await openGpu();
});
afterAll(() => gpu?.dispose());

describe.each(strategies)('golden cases, %s joins', (joinStrategy) => {
  for (const name of readdirSync(casesDir).sort()) {
    const dir = join(casesDir, name);
    test(name, async () => {
      const program = compileFile(join(dir, 'program.logic'), { joinStrategy });
      const factsDir = existsSync(join(dir, 'facts')) ? join(dir, 'facts') : undefined;
      const sources = factsDir ? { factsDir } : {};
      const reference = await program.interpret(sources);
      const onGpu = await program.run({ ...sources, gpu });
      const expectedDir = join(dir, 'expected');
      const plan = printPlan(program.plan!) + '\n';
      const types = new Map(program.plan!.relations.map((r) => [r.name, r.columns.map((c) => c.type)]));
      const lines = (rel: string, rows: readonly Row[]) => toLines(rows, types.get(rel)!);

      if (update && joinStrategy === strategies[0]) {
        rmSync(expectedDir, { recursive: true, force: true });
        mkdirSync(expectedDir);
        for (const [rel, rows] of reference) writeFileSync(join(expectedDir, `${rel}.csv`), lines(rel, rows).map((l) => l + '\n').join(''));
        writeFileSync(join(expectedDir, 'plan.txt'), plan);
      }

      expect([...onGpu.relations.keys()].sort()).toEqual([...reference.keys()].sort());
      for (const [rel, rows] of reference) expect(lines(rel, onGpu.relations.get(rel)!), `${name}: ${rel}`).toEqual(lines(rel, rows));

      const expectedFiles = readdirSync(expectedDir).filter((f) => f.endsWith('.csv'));
      expect(expectedFiles.map((f) => f.replace(/\.csv$/, '')).sort()).toEqual([...reference.keys()].sort());
      for (const f of expectedFiles) {
        const want = readFileSync(join(expectedDir, f), 'utf8').split('\n').filter((l) => l.length > 0);
        const rel = f.replace(/\.csv$/, '');
        expect(lines(rel, onGpu.relations.get(rel)!), `${name}: ${f}`).toEqual(want);
      }
      expect(plan).toEqual(readFileSync(join(expectedDir, 'plan.txt'), 'utf8'));
    });
  }
});
