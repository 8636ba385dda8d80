/**
 * The compiler's passes through the API: any optional pass can be disabled and the answers on the device stay
 * the reference interpreter's; pass names that do not exist, or required passes disabled, are user errors.
 */
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { printKir } from '@vixen/kernel-ir';
import { printPlan, VixenError } from '@vixen/queryplan';
import { compile, compileFile, compilerPasses, openGpu, type Gpu, type Program } from '@vixen/runtime';

/**
 * Golden and Soufflé cases that together give every optional pass work, but fuse-map-filters (in these
 * programs fuse-pipelines fuses the chains first; its unit tests are in kernel-ir's optimize.test.ts) and
 * push-semi-joins (it acts only where the caller names the outputs; tests/semi-joins.test.ts).
 */
const cases = [
  'cases/agg-keyed-wildcards',
  'cases/agg-nullary',
  'cases/agg-sum-count',
  'cases/agg-after-recursion',
  'cases/union-of-rules',
  'cases/negation-constants',
  'cases/order-limit-top-k',
  'cases/func-multikey',
  'souffle/disjunction',
  'souffle/min-max',
].map((c) => join(import.meta.dirname, c));
const optional = [...new Set(compilerPasses().filter((p) => !p.required).map((p) => p.name))];

const source = (dir: string): string => join(dir, existsSync(join(dir, 'program.dl')) ? 'program.dl' : 'program.logic');
const factsOf = (dir: string) => (existsSync(join(dir, 'facts')) ? { factsDir: join(dir, 'facts') } : {});
const irText = (p: Program): string => `${printPlan(p.plan!)}\n${printKir(p.kir)}`;

let gpu: Gpu;
beforeAll(async () => {
  gpu = await openGpu();
});
afterAll(() => gpu?.dispose());

describe('disabling an optional pass', () => {
  /** The passes whose disabling changed some case's IR (the others leave nothing to check). */
  const changed = new Set<string>();

  for (const dir of cases) {
    test(`leaves the answers of ${dir.split('/tests/')[1]} as they are`, async () => {
      const program = compileFile(source(dir));
      const reference = await program.interpret(factsOf(dir));
      for (const pass of optional) {
        const without = compileFile(source(dir), { passes: { disable: [pass] } });
        if (irText(without) === irText(program)) continue;
        changed.add(pass);
        const onGpu = await without.run({ ...factsOf(dir), gpu });
        expect(Object.fromEntries(onGpu.relations), `${pass} disabled`).toEqual(Object.fromEntries(reference));
      }
    });
  }

  // After the cases above (tests in a file run in order).
  test('every optional pass but push-semi-joins and fuse-map-filters changed the IR of some case', () => {
    expect(optional.filter((pass) => !changed.has(pass))).toEqual(['push-semi-joins', 'fuse-map-filters']);
  });
});

describe('pass options', () => {
  const src = 'edge(x, y) -> int32(x), int32(y). edge(1, 2). edge(2, 3). path(x, y) <- edge(x, y). path(x, z) <- path(x, y), edge(y, z).';

  test('print the IR after a pass of either stage, as text', () => {
    const printed: string[] = [];
    compile(src, { passes: { printAfter: ['prune-columns', 'insert-frees'], onPrint: (pass, text) => printed.push(`${pass}: ${text}`) } });
    expect(printed).toHaveLength(2);
    expect(printed[0]).toMatch(/^prune-columns: .*path/s);
    expect(printed[1]).toMatch(/^insert-frees: .*free /s);
  });

  test('an unknown pass is an error naming the known ones; a required pass cannot be disabled', () => {
    expect(() => compile(src, { passes: { disable: ['fuse-everything'] } })).toThrow(VixenError);
    expect(() => compile(src, { passes: { disable: ['fuse-everything'] } })).toThrow(/^unknown pass fuse-everything \(known: push-semi-joins, restrict-outputs, .*, insert-frees\)$/);
    expect(() => compile(src, { passes: { printAfter: ['prune-column'] } })).toThrow(/unknown pass prune-column /);
    expect(() => compile(src, { passes: { disable: ['schedule-blocks', 'restrict-outputs'] } })).toThrow(
      'passes restrict-outputs, schedule-blocks are required for correct results and cannot be disabled',
    );
  });

  test('printAfter needs onPrint; options of the wrong type name the field', () => {
    expect(() => compile(src, { passes: { printAfter: ['prune-columns'] } })).toThrow(/printAfter needs onPrint/);
    expect(() => compile(src, { passes: { disable: 'prune-columns' as unknown as string[] } })).toThrow(/options\.passes\.disable: /);
  });
});
