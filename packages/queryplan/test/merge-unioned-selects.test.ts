import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { interpret, mergeUnionedSelects, printPlan, validatePlan, type Predicate, type QpCommand, type QpProgram } from '../src/index.js';
import { block, col, halt, i32, rel } from './plans.js';

const cmp = (op: '=' | '<' | '>', c: number, v: number): Predicate => ({ kind: 'compare', op, left: col(c), right: i32(v) });

/** `x(a, b) <- e(a, b), F1 ; e(a, b), F2 ; ...` as lowered: one select into a temporary and one union per variant. */
function variants(filters: Predicate[][], options: { source?: string; project?: number[][]; between?: QpCommand[] } = {}): QpProgram {
  const source = options.source ?? 'e';
  const commands = filters.flatMap((filter, i): QpCommand[] => [
    ...(i > 0 ? (options.between ?? []) : []),
    { kind: 'mapFilter', target: `$t${i}`, source, filter, project: (options.project?.[i] ?? [0, 1]).map((c) => col(c)) },
    { kind: 'union', target: 'x', left: 'x', right: `$t${i}` },
  ]);
  return {
    relations: [
      rel('e', 'edb', { a: 'int32', b: 'int32' }),
      rel('x', 'idb', { a: 'int32', b: 'int32' }),
      ...filters.map((_, i) => rel(`$t${i}`, 'temp', { a: 'int32', b: 'int32' })),
    ],
    facts: { e: [[1, 2], [2, 3], [3, 4], [4, 1], [5, 5]] },
    blocks: [block('entry', commands, halt)],
    entry: 'entry',
  };
}

describe('merge-unioned-selects', () => {
  it('turns the variants of a disjunction into one select with the same rows', () => {
    const before = variants([[cmp('=', 0, 1)], [cmp('>', 1, 3), cmp('<', 0, 5)], [cmp('=', 1, 5)]]);
    const after = mergeUnionedSelects.run(before);
    expect(validatePlan(after)).toEqual([]);
    expect(printPlan(after)).toContain('$t0 := mapFilter e where (#0 = 1 or #1 > 3 and #0 < 5 or #1 = 5) project (#0, #1)');
    expect(after.blocks[0]!.commands).toHaveLength(2);
    expect(after.relations.map((r) => r.name)).toEqual(['e', 'x', '$t0']);
    expect(interpret(after).get('x')).toEqual([[1, 2], [3, 4], [5, 5]]);
    expect(interpret(after)).toEqual(interpret(before));
  });

  it('drops the filter when one variant selects every row', () => {
    const after = mergeUnionedSelects.run(variants([[cmp('=', 0, 1)], []]));
    expect(printPlan(after)).toContain('$t0 := mapFilter e project (#0, #1)');
    expect(interpret(after).get('x')).toHaveLength(5);
  });

  it('keeps selects with different projections, of different relations or of the relation being unioned into', () => {
    const projections = variants([[cmp('=', 0, 1)], [cmp('=', 0, 2)]], { project: [[0, 1], [1, 0]] });
    expect(mergeUnionedSelects.run(projections)).toBe(projections);
    // The second select reads x after the first union wrote it.
    const selfRead = variants([[cmp('=', 0, 1)], [cmp('=', 0, 2)]], { source: 'x' });
    expect(mergeUnionedSelects.run(selfRead)).toBe(selfRead);
    const apart = variants([[cmp('=', 0, 1)], [cmp('=', 0, 2)]], { between: [{ kind: 'clear', target: 'e' }] });
    expect(mergeUnionedSelects.run(apart)).toBe(apart);
  });

  it('keeps a temporary that is read elsewhere', () => {
    const plan = variants([[cmp('=', 0, 1)], [cmp('=', 0, 2)]]);
    const y: QpProgram = {
      ...plan,
      relations: [...plan.relations, rel('y', 'idb', { a: 'int32', b: 'int32' })],
      blocks: [block('entry', [...plan.blocks[0]!.commands, { kind: 'copy', target: 'y', source: '$t0' }], halt)],
    };
    expect(mergeUnionedSelects.run(y)).toBe(y);
  });

  it('gives the rows of the unmerged plan for any variants over any facts', () => {
    const comparison = fc.record({ op: fc.constantFrom('=' as const, '<' as const, '>' as const), c: fc.integer({ min: 0, max: 1 }), v: fc.integer({ min: 0, max: 6 }) });
    const filter = fc.array(comparison.map(({ op, c, v }) => cmp(op, c, v)), { maxLength: 2 });
    const facts = fc.array(fc.tuple(fc.integer({ min: 0, max: 6 }), fc.integer({ min: 0, max: 6 })), { maxLength: 12 });
    fc.assert(
      fc.property(fc.array(filter, { minLength: 1, maxLength: 4 }), facts, (filters, rows) => {
        const before = { ...variants(filters), facts: { e: rows } };
        const after = mergeUnionedSelects.run(before);
        expect(validatePlan(after)).toEqual([]);
        expect(interpret(after)).toEqual(interpret(before));
      }),
    );
  });
});
