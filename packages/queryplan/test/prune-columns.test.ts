import { describe, expect, it } from 'vitest';
import { interpret, prunedProblem, pruneColumns, validatePlan, type QpCommand, type QpProgram } from '../src/index.js';
import { block, col, halt, i32, rel } from './plans.js';

const E = { a: 'int32', b: 'int32', c: 'int32' } as const;
const F = { x: 'int32', y: 'int32', z: 'int32' } as const;

/** e(a, b, c), f(x, y, z) with rows that differ only in columns no command reads (b of e, x of f). */
function plan(commands: QpCommand[], extra: QpProgram['relations'] = []): QpProgram {
  return {
    relations: [rel('e', 'edb', E), rel('f', 'edb', F), rel('out', 'idb', { c: 'int32', z: 'int32' }), ...extra],
    facts: {
      e: [[1, 10, 5], [1, 11, 5], [2, 12, 6], [3, 13, 7]],
      f: [[20, 1, 8], [21, 1, 8], [22, 2, 9], [23, 4, 9]],
    },
    entry: 'entry',
    blocks: [block('entry', commands, halt)],
  };
}

// out(c, z) <- e(a, _, c), f(_, a, z), c > 5.
const join: QpCommand = {
  kind: 'mapJoin',
  target: 'out',
  left: 'e',
  right: 'f',
  leftKeys: [0],
  rightKeys: [1],
  filter: [{ kind: 'compare', op: '>', left: col(2), right: i32(5) }],
  project: [col(2), col(5)],
};

describe('prune-columns', () => {
  it('narrows base relations to the columns commands read and renumbers the commands', () => {
    const before = plan([join]);
    const after = pruneColumns.run(before);
    const e = after.relations.find((r) => r.name === 'e')!;
    const f = after.relations.find((r) => r.name === 'f')!;
    expect(e.columns.map((c) => c.name)).toEqual(['a', 'c']);
    expect(e.pruned).toEqual({ sourceColumns: before.relations[0]!.columns, loadColumns: [0, 2] });
    expect(f.columns.map((c) => c.name)).toEqual(['y', 'z']);
    expect(f.pruned?.loadColumns).toEqual([1, 2]);
    expect(after.blocks[0]!.commands[0]).toEqual({
      ...join,
      leftKeys: [0],
      rightKeys: [0],
      filter: [{ kind: 'compare', op: '>', left: col(1), right: i32(5) }],
      project: [col(1), col(3)],
    });
    expect(after.facts.e).toEqual([[1, 5], [1, 5], [2, 6], [3, 7]]);
    expect(validatePlan(after)).toEqual([]);
    // Set semantics: the projected relations give the same answers.
    expect(interpret(after, {}).get('out')).toEqual(interpret(before, {}).get('out'));
    expect(interpret(after, {}).get('out')).toEqual([[6, 9]]);
  });

  it('keeps every column of relations read as whole rows, printed, or written', () => {
    const count: QpCommand = { kind: 'aggregate', target: 'n', source: 'e', groupBy: [0], aggregates: [{ fn: 'count', type: 'int32' }] };
    const copy: QpCommand = { kind: 'copy', target: 'g', source: 'f' };
    const p = pruneColumns.run(plan([count, copy], [rel('n', 'idb', { a: 'int32', n: 'int32' }), rel('g', 'idb', F)]));
    expect(p.relations.filter((r) => r.pruned)).toEqual([]);
    // Counting distinct rows: dropping b would merge (1, 10, 5) and (1, 11, 5).
    expect(interpret(p, {}).get('n')).toContainEqual([1, 2]);
    const printed = { ...plan([join]), relations: plan([join]).relations.map((r) => (r.name === 'e' ? { ...r, output: true } : r)) };
    expect(pruneColumns.run(printed).relations.find((r) => r.name === 'e')!.pruned).toBeUndefined();
  });

  it('keeps one column of a relation read only for being non-empty', () => {
    // some() <- e(_, _, _), as a projection to no columns.
    const p = pruneColumns.run(plan([{ kind: 'mapFilter', target: 'some', source: 'e', filter: [], project: [] }], [rel('some', 'idb', {})]));
    expect(p.relations.find((r) => r.name === 'e')!.pruned?.loadColumns).toEqual([0]);
    expect(interpret(p, {}).get('some')).toEqual([[]]);
  });

  it('leaves a plan without dead base columns as it is', () => {
    const all: QpCommand = { kind: 'mapJoin', target: 'out', left: 'e', right: 'f', leftKeys: [0], rightKeys: [1], filter: [], project: [col(1), col(3)] };
    const withZ: QpCommand = { kind: 'mapFilter', target: 'out', source: 'f', filter: [], project: [col(2), col(2)] };
    const both: QpCommand = { kind: 'mapFilter', target: 'out', source: 'e', filter: [], project: [col(2), col(2)] };
    const p = plan([all, withZ, both]);
    expect(pruneColumns.run(p)).toBe(p);
  });
});

describe('prunedProblem', () => {
  it('accepts what pruneColumns records and names what a program file could get wrong', () => {
    const p = pruneColumns.run(plan([join]));
    expect(validatePlan(p)).toEqual([]);
    const e = p.relations.find((r) => r.name === 'e')!;
    expect(prunedProblem(e)).toBeUndefined();
    expect(prunedProblem({ ...e, pruned: { ...e.pruned!, loadColumns: [2, 0] } })).toMatch(/must ascend/);
    expect(prunedProblem({ ...e, pruned: { ...e.pruned!, loadColumns: [0] } })).toMatch(/keeps 1 facts columns but has 2/);
    const wrongType = { ...e, pruned: { ...e.pruned!, sourceColumns: e.pruned!.sourceColumns.map((c) => ({ ...c, type: 'string' as const })) } };
    expect(prunedProblem(wrongType)).toMatch(/column 1 is int32 but facts column 1 is string/);
  });
});
