/**
 * The pass manager on a toy IR (numbers) and on the QP pipeline: fixpoints and conditions run as declared,
 * passes list in order, disabling and printing go by name, and validation names the pass that broke the IR.
 */
import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import {
  checkPassOptions,
  errorAt,
  fixpoint,
  listPasses,
  printPlan,
  qpPipeline,
  runPipeline,
  sequence,
  VixenError,
  when,
  type Pass,
  type Pipeline,
  type QpPass,
  type QpPassContext,
  type QpProgram,
} from '../src/index.js';
import { transitiveClosure } from './plans.js';

type Ctx = { halve: boolean };
const halve: Pass<number, Ctx> = { name: 'halve', required: false, run: (n) => (n > 1 ? Math.floor(n / 2) : n) };
const addOne: Pass<number, Ctx> = { name: 'add-one', required: true, run: (n) => n + 1 };
/** Numbers must stay below 1000. */
const toy = (steps: Pipeline<number, Ctx>['steps']): Pipeline<number, Ctx> => ({
  stage: 'TOY',
  steps,
  validate: (n) => (n < 1000 ? [] : [errorAt(`${n} is too large`)]),
});

describe('runPipeline', () => {
  it('repeats a fixpoint body until it returns its argument, at most maxRounds times, and runs `when` steps where they hold', () => {
    expect(runPipeline(toy(fixpoint(halve)), 100, { halve: true })).toBe(1);
    expect(runPipeline(toy(fixpoint(addOne, 5)), 0, { halve: true })).toBe(5);
    const halveWhen = toy(when('halving', (c) => c.halve, halve));
    expect(runPipeline(halveWhen, 8, { halve: false })).toBe(8);
    expect(runPipeline(halveWhen, 8, { halve: true })).toBe(4);
  });

  it('lists passes in order with the steps around them', () => {
    const p = toy(sequence(addOne, fixpoint(sequence(halve, when('halving', (c) => c.halve, fixpoint(addOne))))));
    expect(listPasses(p)).toEqual([
      { stage: 'TOY', name: 'add-one', required: true, within: [] },
      { stage: 'TOY', name: 'halve', required: false, within: ['fixpoint #1'] },
      { stage: 'TOY', name: 'add-one', required: true, within: ['fixpoint #1', 'when halving', 'fixpoint #2'] },
    ]);
  });

  it('skips disabled optional passes and refuses to skip required ones', () => {
    const p = toy(sequence(addOne, halve));
    expect(runPipeline(p, 9, { halve: true })).toBe(5);
    expect(runPipeline(p, 9, { halve: true }, { disable: ['halve'] })).toBe(10);
    expect(() => runPipeline(p, 9, { halve: true }, { disable: ['add-one'] })).toThrow(
      new VixenError(errorAt('pass add-one is required for correct results and cannot be disabled')),
    );
  });

  it('prints the IR after every run of the passes asked for', () => {
    const printed: string[] = [];
    runPipeline(toy(sequence(addOne, fixpoint(halve), addOne)), 6, { halve: true }, { printAfter: ['add-one'], onPrint: (pass, n) => printed.push(`${pass}: ${n}`) });
    expect(printed).toEqual(['add-one: 7', 'add-one: 2']);
    expect(() => runPipeline(toy(sequence(addOne)), 1, { halve: true }, { printAfter: ['add-one'] })).toThrow(/printAfter needs onPrint/);
  });

  it('validates after every pass when asked, naming the pass that broke the IR', () => {
    const tenfold: Pass<number, Ctx> = { name: 'tenfold', required: false, run: (n) => n * 10 };
    const p = toy(sequence(halve, tenfold, addOne));
    expect(runPipeline(p, 200, { halve: true }, { validate: false })).toBe(1001);
    expect(() => runPipeline(p, 200, { halve: true }, { validate: true })).toThrow('internal compiler error: invalid TOY after pass tenfold:\n1000 is too large');
    expect(() => runPipeline(p, 2000, { halve: true }, { validate: true })).toThrow(/invalid TOY given to the pass pipeline/);
  });

  it('validates by default under vitest (VIXEN_VALIDATE_PASSES=1 in vitest.config.ts)', () => {
    expect(process.env.VIXEN_VALIDATE_PASSES).toBe('1');
    expect(() => runPipeline(toy(fixpoint(addOne, 2000)), 0, { halve: true })).toThrow(/after pass add-one/);
  });
});

describe('checkPassOptions', () => {
  const passes = [...listPasses(toy(sequence(addOne, halve))), ...listPasses(qpPipeline)];
  it('accepts the passes of every stage it is given', () => {
    expect(() => checkPassOptions({ disable: ['halve', 'prune-columns'], printAfter: ['add-one', 'restrict-outputs'] }, passes)).not.toThrow();
  });
  it('names unknown passes with the known ones, and required passes disabled', () => {
    expect(() => checkPassOptions({ printAfter: ['halv'] }, passes)).toThrow(
      'unknown pass halv (known: add-one, halve, restrict-outputs, eliminate-common-subexpressions, merge-unioned-selects, prune-columns)',
    );
    expect(() => checkPassOptions({ disable: ['restrict-outputs', 'add-one'] }, passes)).toThrow(/passes add-one, restrict-outputs are required/);
  });
});

describe('the QP pipeline', () => {
  it('lists restrict-outputs, eliminate-common-subexpressions, merge-unioned-selects and prune-columns in order', () => {
    expect(listPasses(qpPipeline).map((e) => `${e.name}${e.required ? ' (required)' : ''}`)).toEqual([
      'restrict-outputs (required)',
      'eliminate-common-subexpressions',
      'merge-unioned-selects',
      'prune-columns',
    ]);
  });

  it('runs every pass of passes/, each named as its file', () => {
    const files = readdirSync(join(import.meta.dirname, '../src/passes')).map((f) => f.replace(/\.ts$/, ''));
    expect(listPasses(qpPipeline).map((e) => e.name).sort()).toEqual(files.sort());
  });

  it('names a pass that leaves an invalid plan (a test-only pass injected into the pipeline)', () => {
    // Reads a relation the plan does not declare.
    const dangling: QpPass = {
      name: 'read-nothing',
      required: false,
      run: (p) => ({ ...p, blocks: p.blocks.map((b) => ({ ...b, commands: b.commands.map((c) => (c.kind === 'mapFilter' ? { ...c, source: 'nothing' } : c)) })) }),
    };
    const broken: Pipeline<QpProgram, QpPassContext> = { ...qpPipeline, steps: sequence(qpPipeline.steps, dangling) };
    const plan = transitiveClosure([[1, 2]]);
    expect(printPlan(runPipeline(qpPipeline, plan, {}))).toContain('path');
    expect(() => runPipeline(broken, plan, {})).toThrow(/^internal compiler error: invalid QP after pass read-nothing:\n.*nothing/);
  });
});
