import { describe, expect, it } from 'vitest';
import { planToKernels, printKir, type KirProgram } from '../src/index.js';
import { block, cmp, col, lit, mapFilter, mapJoin, program, rel, transitiveClosure } from './qp-builders.js';

describe('printKir', () => {
  it('prints variables, then blocks with kernels, frees and terminators', () => {
    const text = printKir(planToKernels(transitiveClosure([[1, 2]])));
    expect(text).toBe(
      [
        'variables:',
        '  0 edge: (int32, int32)  [edb]',
        '  1 path: (int32, int32)  [idb]',
        '  2 $delta_path: (int32, int32)  [temp]',
        '  3 $new_path: (int32, int32)  [temp]',
        '  4 %k4: (int32, int32)',
        '  5 %k5: (int32, int32)',
        '  6 %k6: (int32, int32)',
        'entry: init',
        '',
        'init:',
        '  path := copy edge  // k0',
        '  $delta_path := copy path  // k1',
        '  jump loop',
        '',
        'loop:',
        '  branch empty($delta_path) ? done : body',
        '',
        'body:',
        '  %k4 := sort $delta_path by (#1)  // k2',
        '  free $delta_path',
        '  %k5 := mergeJoin %k4 on (#1), edge on (#0) -> (#0, #3)  // k3',
        '  free %k4',
        '  %k6 := sort %k5 by (#0, #1)  // k4',
        '  free %k5',
        '  $new_path := unique %k6  // k5',
        '  free %k6',
        '  $new_path := difference $new_path, path  // k6',
        '  path := merge path, $new_path by (#0, #1)  // k7',
        '  $delta_path := copy $new_path  // k8',
        '  free $new_path',
        '  jump loop',
        '',
        'done:',
        '  free $delta_path',
        '  halt',
        '',
      ].join('\n'),
    );
  });

  it('prints filters and typed constants', () => {
    const plan = program(
      [rel('r', ['int32', 'string'], 'edb'), rel('t', ['int32', 'int64', 'string'])],
      [block('b', [mapFilter('t', 'r', [col(0), lit(-3n), lit('a"b')], [cmp(col(0), '>=', lit(2)), cmp(col(1, 'string'), '!=', lit('x'))])])],
    );
    expect(printKir(planToKernels(plan))).toContain(
      '  %k2 := mapFilter r where #0 >= 2 and #1 != "x" -> (#0, -3L, "a\\"b") (any order)  // k0',
    );
  });

  it('prints a hash join with its build and probe sides and where each output column comes from', () => {
    const plan = program(
      [rel('r', ['int32', 'int32'], 'edb'), rel('s', ['int32', 'int32'], 'edb'), rel('t', ['int32', 'int32'])],
      [block('b', [mapJoin('t', 'r', 's', [1], [0], [col(0), col(3)])])],
    );
    expect(printKir(planToKernels(plan, { joinStrategy: 'hash' }))).toContain(
      '  %k3 := hashJoin build s on (#0), probe r on (#1) -> (probe.#0, build.#1)  // k0',
    );
  });

  it('still prints programs with dangling ids', () => {
    const p: KirProgram = structuredClone(planToKernels(transitiveClosure([])));
    p.blocks[0]!.commands.push({ kind: 'free', vars: [77] }, { kind: 'launch', kernel: 99 });
    const text = printKir(p);
    expect(text).toContain('  free <v77>');
    expect(text).toContain('  launch <missing kernel 99>');
  });
});
