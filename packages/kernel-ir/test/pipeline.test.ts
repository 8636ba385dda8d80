/**
 * The KIR pipeline as the pass manager runs it: its passes in order, optional passes that can be skipped
 * without changing results, and a pass that breaks the IR named by validation.
 */
import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { interpret, listPasses, runPipeline, sequence, VixenError, type QpProgram } from '@vixen/queryplan';
import { insertFrees, kirPipeline, lowerPlan, planToKernels, printKir, scheduleBlocks, simplifyKernels, type KirPass } from '../src/index.js';
import { runKir } from './kir-interp.js';
import { transitiveClosure } from './qp-builders.js';

const optional = listPasses(kirPipeline).filter((e) => !e.required).map((e) => e.name);

describe('the KIR pipeline', () => {
  it('lists its passes in the order they run, with the fixpoints and conditions around them', () => {
    expect(listPasses(kirPipeline).map((e) => [e.name, e.required ? 'required' : 'optional', ...e.within].join(' '))).toEqual([
      'assume-empty-on-entry optional',
      'simplify-kernels optional fixpoint #1',
      'propagate-copies optional fixpoint #1',
      'skip-unneeded-order optional fixpoint #1',
      'anti-joins optional fixpoint #1 when join strategy is not sort-merge',
      'hash-joins optional fixpoint #1 when join strategy is not sort-merge',
      'hash-unique optional fixpoint #1',
      'hash-aggregates optional fixpoint #1',
      'fuse-map-filters optional fixpoint #1 when fusion',
      'remove-dead-kernels optional fixpoint #1',
      'fuse-pipelines optional when fusion fixpoint #2',
      'remove-dead-kernels optional when fusion fixpoint #2',
      'limit-outputs optional',
      'narrow-columns optional fixpoint #3',
      'fuse-aggregate-inputs optional when fusion fixpoint #4',
      'remove-dead-kernels optional when fusion fixpoint #4',
      'compact-kernels optional',
      'narrow-base-relations optional',
      'unordered-selects optional',
      'schedule-blocks required',
      'insert-frees required',
    ]);
  });

  it('runs every pass of passes/, each named as its file', () => {
    const files = readdirSync(join(import.meta.dirname, '../src/passes')).map((f) => f.replace(/\.ts$/, ''));
    expect([...new Set(listPasses(kirPipeline).map((e) => e.name))].sort()).toEqual(files.sort());
  });

  it('gives the same results with any optional pass disabled (random graphs, both join strategies)', () => {
    const check = (plan: QpProgram): void => {
      const expected = interpret(plan, plan.facts).get('path');
      for (const joinStrategy of ['hash', 'sort-merge'] as const) {
        for (const pass of optional) {
          const kir = planToKernels(plan, { joinStrategy, passes: { disable: [pass] } });
          expect(runKir(kir).relations.get('path'), `${pass} disabled, ${joinStrategy} joins`).toEqual(expected);
        }
      }
    };
    const edge = fc.tuple(fc.integer({ min: 0, max: 5 }), fc.integer({ min: 0, max: 5 }));
    fc.assert(fc.property(fc.array(edge, { maxLength: 10 }), (edges) => check(transitiveClosure(edges))), { numRuns: 5 });
  });

  it('with every optional pass disabled gives the lowered program, scheduled and freed', () => {
    const plan = transitiveClosure([[1, 2]]);
    const unoptimized = planToKernels(plan, { passes: { disable: optional } });
    expect(printKir(unoptimized)).toBe(printKir(insertFrees.run(scheduleBlocks.run(lowerPlan(plan)))));
    expect(printKir(unoptimized)).not.toBe(printKir(planToKernels(plan)));
  });

  it('refuses to disable schedule-blocks or insert-frees', () => {
    for (const pass of ['schedule-blocks', 'insert-frees']) {
      expect(() => planToKernels(transitiveClosure([]), { passes: { disable: [pass] } })).toThrow(VixenError);
      expect(() => planToKernels(transitiveClosure([]), { passes: { disable: [pass] } })).toThrow(`pass ${pass} is required`);
    }
  });

  it('names a pass that leaves invalid IR (a test-only pass injected into the pipeline)', () => {
    // A launch of a kernel that does not exist.
    const dangling: KirPass = {
      name: 'launch-nothing',
      required: false,
      run: (p) => ({ ...p, blocks: p.blocks.map((b, i) => (i === 0 ? { ...b, commands: [...b.commands, { kind: 'launch', kernel: p.kernels.length }] } : b)) }),
    };
    const broken = { ...kirPipeline, steps: sequence(simplifyKernels, dangling, scheduleBlocks, insertFrees) };
    const lowered = lowerPlan(transitiveClosure([[1, 2]]));
    expect(() => runPipeline(broken, lowered, {})).toThrow(/^internal compiler error: invalid KIR after pass launch-nothing:\n/);
    expect(() => runPipeline(broken, lowered, {}, { disable: ['launch-nothing'] })).not.toThrow();
  });

  it('prints the IR after the passes asked for', () => {
    const printed: string[] = [];
    planToKernels(transitiveClosure([[1, 2]]), { passes: { printAfter: ['insert-frees'], onPrint: (pass, p) => printed.push(`${pass}\n${printKir(p)}`) } });
    expect(printed).toHaveLength(1);
    expect(printed[0]).toMatch(/^insert-frees\n/);
    expect(printed[0]).toMatch(/free /);
  });
});
