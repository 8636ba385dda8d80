import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { interpret, rowKey, type QpProgram } from '../src/index.js';
import { block, branchEmpty, closureOf, col, halt, i32, i64, jump, rel, str, transitiveClosure } from './plans.js';

describe('interpret', () => {
  it('computes a transitive closure with a hand-written semi-naive loop', () => {
    const out = interpret(transitiveClosure([[1, 2], [2, 3], [3, 4], [4, 2]]));
    expect(out.get('path')).toEqual([
      [1, 2], [1, 3], [1, 4],
      [2, 2], [2, 3], [2, 4],
      [3, 2], [3, 3], [3, 4],
      [4, 2], [4, 3], [4, 4],
    ]);
    expect(out.get('edge')).toEqual([[1, 2], [2, 3], [3, 4], [4, 2]]);
    expect(out.has('$delta')).toBe(false);
  });

  it('agrees with a direct closure on random graphs, with edges given as inputs', () => {
    const edge = fc.tuple(fc.integer({ min: 0, max: 7 }), fc.integer({ min: 0, max: 7 }));
    fc.assert(
      fc.property(fc.array(edge, { maxLength: 20 }), (edges) => {
        const out = interpret(transitiveClosure(), { edge: edges });
        expect(out.get('path')).toEqual(closureOf(edges));
      }),
      { numRuns: 100 },
    );
  });

  it('joins with a filter, constants and int64/string columns', () => {
    const p: QpProgram = {
      relations: [
        rel('emp', 'edb', { id: 'int32', dept: 'string', salary: 'int64' }),
        rel('dept', 'edb', { name: 'string', floor: 'int32' }),
        rel('rich', 'idb', { id: 'int32', floor: 'int32', tag: 'string', bonus: 'int64' }),
      ],
      facts: {
        emp: [
          [1, 'eng', 5000n],
          [2, 'eng', 900n],
          [3, 'ops', 9_000_000_000_000n],
          [4, 'hr', 2000n],
          [5, 'ghost', 7000n],
        ],
        dept: [
          ['eng', 2],
          ['ops', 1],
          ['hr', 3],
        ],
      },
      entry: 'b',
      blocks: [
        block(
          'b',
          [
            {
              kind: 'mapJoin',
              target: 'rich',
              left: 'emp',
              right: 'dept',
              leftKeys: [1],
              rightKeys: [0],
              // salary > 1000L and floor != 3
              filter: [
                { kind: 'compare', op: '>', left: col(2, 'int64'), right: i64(1000n) },
                { kind: 'compare', op: '!=', left: col(4), right: i32(3) },
              ],
              project: [col(0), col(4), str('rich'), i64(-1n)],
            },
          ],
          halt,
        ),
      ],
    };
    expect(interpret(p).get('rich')).toEqual([
      [1, 2, 'rich', -1n],
      [3, 1, 'rich', -1n],
    ]);
  });

  it('takes differences and products (empty join keys)', () => {
    const p: QpProgram = {
      relations: [
        rel('a', 'edb', { x: 'int32' }),
        rel('b', 'edb', { x: 'int32' }),
        rel('onlyA', 'idb', { x: 'int32' }),
        rel('pairs', 'idb', { x: 'int32', y: 'int32' }),
      ],
      facts: { a: [[1], [2], [3]], b: [[2], [4]] },
      entry: 'b0',
      blocks: [
        block(
          'b0',
          [
            { kind: 'difference', target: 'onlyA', left: 'a', right: 'b' },
            {
              kind: 'mapJoin',
              target: 'pairs',
              left: 'a',
              right: 'b',
              leftKeys: [],
              rightKeys: [],
              filter: [{ kind: 'compare', op: '<', left: col(0), right: col(1) }],
              project: [col(0), col(1)],
            },
          ],
          halt,
        ),
      ],
    };
    const out = interpret(p);
    expect(out.get('onlyA')).toEqual([[1], [3]]);
    expect(out.get('pairs')).toEqual([[1, 2], [1, 4], [2, 4], [3, 4]]);
  });

  it('compares int64 beyond 2^53 exactly and strings by code unit', () => {
    const big = 2n ** 60n;
    const p: QpProgram = {
      relations: [
        rel('n', 'edb', { v: 'int64' }),
        rel('s', 'edb', { v: 'string' }),
        rel('bigger', 'idb', { v: 'int64' }),
        rel('before', 'idb', { v: 'string' }),
      ],
      facts: { n: [[big], [big + 1n], [-big], [0n]], s: [['a'], ['B'], ['é'], ['z'], ['m,n'], ['']] },
      entry: 'b',
      blocks: [
        block(
          'b',
          [
            {
              kind: 'mapFilter',
              target: 'bigger',
              source: 'n',
              filter: [{ kind: 'compare', op: '>=', left: col(0, 'int64'), right: i64(big + 1n) }],
              project: [col(0, 'int64')],
            },
            {
              kind: 'mapFilter',
              target: 'before',
              source: 's',
              filter: [{ kind: 'compare', op: '<', left: col(0, 'string'), right: str('z') }],
              project: [col(0, 'string')],
            },
          ],
          halt,
        ),
      ],
    };
    const out = interpret(p);
    expect(out.get('bigger')).toEqual([[big + 1n]]);
    // 'é' (U+00E9) sorts after 'z'; uppercase before lowercase.
    expect(out.get('before')).toEqual([[''], ['B'], ['a'], ['m,n']]);
    expect(out.get('n')).toEqual([[-big], [0n], [big], [big + 1n]]);
  });

  it('keeps set semantics: duplicates collapse, and a command may overwrite one of its inputs', () => {
    const p: QpProgram = {
      relations: [rel('r', 'idb', { x: 'int32', y: 'int32' })],
      facts: { r: [[1, 2], [1, 2], [3, 4]] },
      entry: 'b',
      blocks: [
        block('b', [{ kind: 'mapFilter', target: 'r', source: 'r', filter: [], project: [col(1), i32(0)] }], halt),
      ],
    };
    expect(interpret(p, { r: [[5, 2]] }).get('r')).toEqual([[2, 0], [4, 0]]);
  });

  it('clears relations and follows jumps', () => {
    const p: QpProgram = {
      relations: [rel('a', 'idb', { x: 'int32' }), rel('b', 'idb', { x: 'int32' })],
      facts: { a: [[1]] },
      entry: 'one',
      blocks: [
        block('one', [{ kind: 'copy', target: 'b', source: 'a' }], jump('two')),
        block('two', [{ kind: 'clear', target: 'a' }], branchEmpty(['a'], 'end', 'one')),
        block('end', [], halt),
      ],
    };
    const out = interpret(p);
    expect(out.get('a')).toEqual([]);
    expect(out.get('b')).toEqual([[1]]);
  });

  it('stops a non-terminating plan with a clear error', () => {
    const p: QpProgram = { relations: [], facts: {}, entry: 'spin', blocks: [block('spin', [], jump('spin'))] };
    expect(() => interpret(p, {}, { maxSteps: 50 })).toThrow(/no halt after 50 block executions/);
  });

  it('rejects invalid plans and bad inputs', () => {
    expect(() => interpret({ relations: [], facts: {}, entry: 'nowhere', blocks: [] })).toThrow(/entry block nowhere/);
    expect(() => interpret(transitiveClosure(), { nope: [[1]] })).toThrow(/undeclared relation nope/);
    expect(() => interpret(transitiveClosure(), { edge: [[1, 'x']] })).toThrow(/input row 1 of edge/);
    expect(() => interpret(transitiveClosure(), { edge: [[1, 2n]] })).toThrow(/input row 1 of edge/);
  });
});

describe('rowKey', () => {
  it('distinguishes types and separators inside strings', () => {
    expect(rowKey([1])).not.toBe(rowKey([1n]));
    expect(rowKey([1])).not.toBe(rowKey(['1']));
    expect(rowKey(['a,b'])).not.toBe(rowKey(['a', 'b']));
    expect(rowKey([-0])).toBe(rowKey([0]));
  });
});
