import { describe, expect, it } from 'vitest';
import { eliminateCommonSubexpressions, interpret, printPlan, validatePlan, type Predicate, type QpCommand, type QpProgram } from '../src/index.js';
import { block, col, halt, i32, rel } from './plans.js';

const gt1: Predicate = { kind: 'compare', op: '>', left: col(3), right: i32(1) };

/** Two heads over the same join and filter (as two rules with one body give), the second chain repeated in full. */
function twoRules(between: QpCommand[] = []): QpProgram {
  const join = (target: string): QpCommand => ({ kind: 'mapJoin', target, left: 'e', right: 'f', leftKeys: [1], rightKeys: [0], filter: [gt1], project: [col(0), col(3)] });
  return {
    relations: [
      rel('e', 'edb', { x: 'int32', y: 'int32' }),
      rel('f', 'edb', { y: 'int32', z: 'int32' }),
      rel('a', 'idb', { x: 'int32' }),
      rel('b', 'idb', { x: 'int32' }),
      rel('$t1', 'temp', { x: 'int32', z: 'int32' }),
      rel('$t2', 'temp', { x: 'int32' }),
      rel('$t3', 'temp', { x: 'int32', z: 'int32' }),
      rel('$t4', 'temp', { x: 'int32' }),
    ],
    facts: { e: [[1, 2], [2, 3], [3, 4]], f: [[2, 5], [3, 1], [4, 9]] },
    blocks: [
      block('entry', [
        join('$t1'),
        { kind: 'mapFilter', target: '$t2', source: '$t1', filter: [], project: [col(0)] },
        { kind: 'union', target: 'a', left: 'a', right: '$t2' },
        ...between,
        join('$t3'),
        { kind: 'mapFilter', target: '$t4', source: '$t3', filter: [], project: [col(0)] },
        { kind: 'union', target: 'b', left: 'b', right: '$t4' },
      ], halt),
    ],
    entry: 'entry',
  };
}

describe('eliminate-common-subexpressions', () => {
  it('computes a repeated join (and the projection over it) once, with the same results', () => {
    const before = twoRules();
    const after = eliminateCommonSubexpressions.run(before);
    expect(validatePlan(after)).toEqual([]);
    expect(after.blocks[0]!.commands).toHaveLength(4);
    expect(before.blocks[0]!.commands).toHaveLength(6);
    expect(printPlan(after)).toContain('b := union b, $t2');
    expect(after.relations.map((r) => r.name)).not.toContain('$t3');
    expect(interpret(after)).toEqual(interpret(before));
    expect(interpret(after).get('b')).toEqual([[1], [3]]);
  });

  it('keeps a repeat whose input was written in between', () => {
    const before = twoRules([{ kind: 'clear', target: 'e' }]);
    const after = eliminateCommonSubexpressions.run(before);
    expect(after).toBe(before);
    expect(interpret(after).get('b')).toEqual([]);
  });
});
