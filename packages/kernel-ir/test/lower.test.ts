import { describe, expect, it } from 'vitest';
import { VixenError, type QpCommand, type QpProgram } from '@vixen/queryplan';
import { lowerPlan, validateKir, type KirKernel, type KirProgram, type LowerOptions } from '../src/index.js';
import { runKir } from './kir-interp.js';
import {
  block,
  clear,
  cmp,
  col,
  cols,
  copy,
  difference,
  lit,
  mapFilter,
  mapJoin,
  program,
  rel,
  transitiveClosure,
  union,
} from './qp-builders.js';

/** One-block plan over r(int32, int32), s(int32, int32) and t (target of the given arity). */
function single(cmd: QpCommand, targetTypes: Array<'int32' | 'int64' | 'string'> = ['int32', 'int32']): QpProgram {
  return program(
    [rel('r', ['int32', 'int32'], 'edb'), rel('s', ['int32', 'int32'], 'edb'), rel('t', targetTypes)],
    [block('b', [cmd])],
    { r: [[1, 2], [2, 3], [3, 1], [1, 5]], s: [[2, 7], [3, 8], [1, 9], [2, 6]] },
  );
}

/** Launched kernels in order, with variable ids replaced by names. */
function kernelsOf(p: KirProgram): Array<Record<string, unknown>> {
  const name = (v: number): string => p.variables[v]!.name;
  return p.blocks.flatMap((b) =>
    b.commands.flatMap((c): Array<Record<string, unknown>> => {
      if (c.kind !== 'launch') return [];
      const k: KirKernel = p.kernels[c.kernel]!;
      switch (k.kind) {
        case 'sort':
          return [{ kind: k.kind, input: name(k.input), output: name(k.output), keys: k.keys }];
        case 'mapFilter':
        case 'unique':
        case 'copy':
        case 'aggregate':
        case 'limit':
          return [{ kind: k.kind, input: name(k.input), output: name(k.output) }];
        case 'mergeJoin':
        case 'difference':
        case 'concat':
        case 'merge':
          return [{ kind: k.kind, left: name(k.left), right: name(k.right), output: name(k.output) }];
        case 'hashJoin':
          return [{ kind: k.kind, build: name(k.build), probe: name(k.probe), output: name(k.output), project: k.project }];
        case 'pipeline':
          return [{ kind: k.kind, input: name(k.input), builds: k.probes.map((pr) => name(pr.build)), output: name(k.output) }];
      }
    }),
  );
}

function lowerChecked(plan: QpProgram, options: LowerOptions = {}): KirProgram {
  const kir = lowerPlan(plan, options);
  expect(validateKir(kir)).toEqual([]);
  return kir;
}

const rowsOf = (kir: KirProgram, name: string) => runKir(kir).relations.get(name);

describe('lowerPlan: variables and structure', () => {
  it('makes one variable per relation, in declaration order, and copies facts and relations', () => {
    const plan = single(copy('t', 'r'));
    const kir = lowerChecked(plan);
    expect(kir.variables.slice(0, 3)).toEqual([
      { id: 0, name: 'r', columns: ['int32', 'int32'], relation: 'r' },
      { id: 1, name: 's', columns: ['int32', 'int32'], relation: 's' },
      { id: 2, name: 't', columns: ['int32', 'int32'], relation: 't' },
    ]);
    expect(kir.relationVars).toEqual({ r: 0, s: 1, t: 2 });
    expect(kir.relations).toEqual(plan.relations);
    expect(kir.facts).toEqual(plan.facts);
    expect(kir.entry).toBe('b');
  });

  it('maps terminators, with branch relations becoming variables', () => {
    const kir = lowerChecked(transitiveClosure([]));
    expect(kir.blocks.map((b) => b.label)).toEqual(['init', 'loop', 'body', 'done']);
    expect(kir.blocks[0]!.terminator).toEqual({ kind: 'jump', target: 'loop' });
    expect(kir.blocks[1]!.terminator).toEqual({
      kind: 'branch',
      condition: { kind: 'empty', vars: [kir.relationVars['$delta_path']!] },
      ifTrue: 'done',
      ifFalse: 'body',
    });
    expect(kir.blocks[3]!.terminator).toEqual({ kind: 'halt' });
  });

  it('numbers kernels by their index and names temporaries %k<id>', () => {
    const kir = lowerChecked(transitiveClosure([[1, 2]]));
    kir.kernels.forEach((k, i) => expect(k.id).toBe(i));
    for (const v of kir.variables.filter((x) => x.relation === undefined)) expect(v.name).toBe(`%k${v.id}`);
    const launched = kir.blocks.flatMap((b) => b.commands.flatMap((c) => (c.kind === 'launch' ? [c.kernel] : [])));
    expect(launched).toEqual(kir.kernels.map((k) => k.id));
  });

  it('gives temporaries the types of the projected expressions', () => {
    const plan = single(mapFilter('t', 'r', [lit(7n), col(1), lit('x')]), ['int64', 'int32', 'string']);
    const kir = lowerChecked(plan);
    const temps = kir.variables.filter((v) => v.relation === undefined);
    expect(temps.map((v) => v.columns)).toEqual([
      ['int64', 'int32', 'string'],
      ['int64', 'int32', 'string'],
    ]);
  });

  it('reports an unknown relation as a VixenError', () => {
    const plan = single(copy('t', 'nope'));
    expect(() => lowerPlan(plan)).toThrow(VixenError);
    expect(() => lowerPlan(plan)).toThrow(/unknown relation 'nope'/);
  });
});

describe('lowerPlan: mapFilter', () => {
  it('writes an identity projection straight into the target (a filtered canonical relation stays canonical)', () => {
    const kir = lowerChecked(single(mapFilter('t', 'r', cols(0, 1), [cmp(col(0), '<', col(1))])));
    expect(kernelsOf(kir)).toEqual([{ kind: 'mapFilter', input: 'r', output: 't' }]);
    expect(rowsOf(kir, 't')).toEqual([[1, 2], [1, 5], [2, 3]]);
  });

  it('skips only the sort for a prefix projection', () => {
    const kir = lowerChecked(single(mapFilter('t', 'r', cols(0)), ['int32']));
    expect(kernelsOf(kir)).toEqual([
      { kind: 'mapFilter', input: 'r', output: '%k3' },
      { kind: 'unique', input: '%k3', output: 't' },
    ]);
    expect(rowsOf(kir, 't')).toEqual([[1], [2], [3]]);
  });

  it('treats the empty projection as a prefix (no sort; unique keeps at most one row)', () => {
    const kir = lowerChecked(single(mapFilter('t', 'r', []), []));
    expect(kernelsOf(kir).map((k) => k['kind'])).toEqual(['mapFilter', 'unique']);
    expect(rowsOf(kir, 't')).toEqual([[]]);
  });

  it('sorts by all columns and dedups any other projection', () => {
    const kir = lowerChecked(single(mapFilter('t', 'r', cols(1, 0))));
    expect(kernelsOf(kir)).toEqual([
      { kind: 'mapFilter', input: 'r', output: '%k3' },
      { kind: 'sort', input: '%k3', output: '%k4', keys: [0, 1] },
      { kind: 'unique', input: '%k4', output: 't' },
    ]);
    expect(rowsOf(kir, 't')).toEqual([[1, 3], [2, 1], [3, 2], [5, 1]]);
  });

  it('does not take a projection with constants for a prefix', () => {
    const kir = lowerChecked(single(mapFilter('t', 'r', [col(0), lit(0)])));
    expect(kernelsOf(kir).map((k) => k['kind'])).toEqual(['mapFilter', 'sort', 'unique']);
    expect(rowsOf(kir, 't')).toEqual([[1, 0], [2, 0], [3, 0]]);
  });

  it('handles a relation filtered into itself', () => {
    const plan = single(mapFilter('r', 'r', cols(0, 1), [cmp(col(1), '!=', lit(5))]));
    expect(rowsOf(lowerChecked(plan), 'r')).toEqual([[1, 2], [2, 3], [3, 1]]);
  });
});

describe('lowerPlan: mapJoin, sort-merge', () => {
  const sm: LowerOptions = { joinStrategy: 'sort-merge' };
  it('needs no input sorts when both keys are column prefixes', () => {
    const kir = lowerChecked(single(mapJoin('t', 'r', 's', [0], [0], cols(1, 3))));
    expect(kernelsOf(kir)).toEqual([
      { kind: 'mergeJoin', left: 'r', right: 's', output: '%k3' },
      { kind: 'sort', input: '%k3', output: '%k4', keys: [0, 1] },
      { kind: 'unique', input: '%k4', output: 't' },
    ]);
    // r(1,2),(1,5) x s(1,9); r(2,3) x s(2,6),(2,7); r(3,1) x s(3,8)
    expect(rowsOf(kir, 't')).toEqual([[1, 8], [2, 9], [3, 6], [3, 7], [5, 9]]);
  });

  it('sorts an input whose keys are not a prefix, and joins the sorted copy', () => {
    const kir = lowerChecked(single(mapJoin('t', 'r', 's', [1], [0], cols(0, 3))), sm);
    expect(kernelsOf(kir)).toEqual([
      { kind: 'sort', input: 'r', output: '%k3', keys: [1] },
      { kind: 'mergeJoin', left: '%k3', right: 's', output: '%k4' },
      { kind: 'sort', input: '%k4', output: '%k5', keys: [0, 1] },
      { kind: 'unique', input: '%k5', output: 't' },
    ]);
    // r(3,1) x s(1,9); r(1,2) x s(2,6),(2,7); r(2,3) x s(3,8)
    expect(rowsOf(kir, 't')).toEqual([[1, 6], [1, 7], [2, 8], [3, 9]]);
  });

  it('sorts both sides by multi-column keys out of prefix order', () => {
    const kir = lowerChecked(single(mapJoin('t', 'r', 's', [1, 0], [0, 1], cols(0, 1))), sm);
    expect(kernelsOf(kir).slice(0, 2)).toEqual([
      { kind: 'sort', input: 'r', output: '%k3', keys: [1, 0] },
      { kind: 'mergeJoin', left: '%k3', right: 's', output: '%k4' },
    ]);
    expect(rowsOf(kir, 't')).toEqual([]);
  });

  it('needs no sorts for a cross product (empty keys)', () => {
    const kir = lowerChecked(single(mapJoin('t', 'r', 's', [], [], cols(0, 2), [cmp(col(0), '=', lit(3))])));
    expect(kernelsOf(kir).map((k) => k['kind'])).toEqual(['mergeJoin', 'sort', 'unique']);
    expect(rowsOf(kir, 't')).toEqual([[3, 1], [3, 2], [3, 3]]);
  });

  it('sorts a self-join input once when both sides use the same keys', () => {
    const kir = lowerChecked(single(mapJoin('t', 'r', 'r', [1], [1], cols(0, 2))), sm);
    expect(kernelsOf(kir).slice(0, 2)).toEqual([
      { kind: 'sort', input: 'r', output: '%k3', keys: [1] },
      { kind: 'mergeJoin', left: '%k3', right: '%k3', output: '%k4' },
    ]);
    expect(rowsOf(kir, 't')).toEqual([[1, 1], [2, 2], [3, 3]]);
  });
});

describe('lowerPlan: mapJoin, hash', () => {
  it('auto hashes a join outside loops that would sort, writing the projected columns from the probe', () => {
    const kir = lowerChecked(single(mapJoin('t', 'r', 's', [1], [0], cols(0, 3))));
    expect(kernelsOf(kir)).toEqual([
      // Build on the right side; t = (r#0, s#1).
      {
        kind: 'hashJoin',
        build: 's',
        probe: 'r',
        output: '%k3',
        project: [
          { side: 'probe', column: 0 },
          { side: 'build', column: 1 },
        ],
      },
      { kind: 'sort', input: '%k3', output: '%k4', keys: [0, 1] },
      { kind: 'unique', input: '%k4', output: 't' },
    ]);
    expect(rowsOf(kir, 't')).toEqual([[1, 6], [1, 7], [2, 8], [3, 9]]);
  });

  it('auto keeps merge join when both sides are already sorted by their keys', () => {
    const kir = lowerChecked(single(mapJoin('t', 'r', 's', [0], [0], cols(1, 3))));
    expect(kernelsOf(kir).map((k) => k['kind'])).toEqual(['mergeJoin', 'sort', 'unique']);
  });

  it('keeps merge join for a cross product even when hash is forced', () => {
    const kir = lowerChecked(single(mapJoin('t', 'r', 's', [], [], cols(0, 2), [cmp(col(0), '=', lit(3))])), { joinStrategy: 'hash' });
    expect(kernelsOf(kir).map((k) => k['kind'])).toEqual(['mergeJoin', 'sort', 'unique']);
  });

  it('hash with a filter joins all columns, then a mapFilter filters and projects', () => {
    const kir = lowerChecked(single(mapJoin('t', 'r', 's', [1], [0], cols(0, 3), [cmp(col(3), '>', lit(6))])), { joinStrategy: 'hash' });
    expect(kernelsOf(kir).map((k) => k['kind'])).toEqual(['hashJoin', 'mapFilter', 'sort', 'unique']);
    const join = kir.kernels.find((k) => k.kind === 'hashJoin');
    expect(join?.kind === 'hashJoin' && join.project.map((c) => c.side)).toEqual(['probe', 'probe', 'build', 'build']);
    expect(rowsOf(kir, 't')).toEqual([[1, 7], [2, 8], [3, 9]]);
  });

  it('builds on the left when only the left keys are all its columns (unique keys)', () => {
    const plan = program(
      [rel('u', ['int32'], 'edb'), rel('s', ['int32', 'int32'], 'edb'), rel('t', ['int32', 'int32'])],
      [block('b', [mapJoin('t', 'u', 's', [0], [1], [col(0), col(1)])])],
      { u: [[6], [8], [9]], s: [[2, 7], [3, 8], [1, 9], [2, 6]] },
    );
    const kir = lowerChecked(plan);
    expect(kernelsOf(kir)[0]).toMatchObject({ kind: 'hashJoin', build: 'u', probe: 's' });
    expect(rowsOf(kir, 't')).toEqual([[6, 2], [8, 3], [9, 1]]);
  });

  it('a forced hash self-join builds and probes the same relation', () => {
    const kir = lowerChecked(single(mapJoin('t', 'r', 'r', [1], [1], cols(0, 2))), { joinStrategy: 'hash' });
    expect(kernelsOf(kir)[0]).toMatchObject({ kind: 'hashJoin', build: 'r', probe: 'r' });
    expect(rowsOf(kir, 't')).toEqual([[1, 1], [2, 2], [3, 3]]);
  });
});

describe('lowerPlan: other commands', () => {
  it('lowers union to merge, unique (no sort: both sides are canonical)', () => {
    const kir = lowerChecked(single(union('t', 'r', 's')));
    expect(kernelsOf(kir)).toEqual([
      { kind: 'merge', left: 'r', right: 's', output: '%k3' },
      { kind: 'unique', input: '%k3', output: 't' },
    ]);
    expect(rowsOf(kir, 't')).toHaveLength(8);
  });

  it('keeps a join index of a recursive relation by a non-prefix key across iterations: sorted once, merged into', () => {
    // Non-linear closure: path(x, z) <- path(x, y), delta(y, z) joins path on its second column every iteration.
    const T: ['int32', 'int32'] = ['int32', 'int32'];
    const plan = program(
      [rel('edge', T, 'edb'), rel('path', T), rel('$delta', T, 'temp'), rel('$new', T, 'temp')],
      [
        block('init', [mapFilter('path', 'edge', cols(0, 1)), copy('$delta', 'path')], { kind: 'jump', target: 'loop' }),
        block(
          'loop',
          [
            mapJoin('$new', '$delta', 'path', [0], [1], cols(2, 1)),
            difference('$new', '$new', 'path'),
            union('path', 'path', '$new'),
            copy('$delta', '$new'),
          ],
          { kind: 'branch', condition: { kind: 'empty', relations: ['$delta'] }, ifTrue: 'done', ifFalse: 'loop' },
        ),
        block('done', []),
      ],
      { edge: [[1, 2], [2, 3], [3, 4], [4, 5], [5, 1], [7, 7]] },
    );
    const kir = lowerChecked(plan);
    const name = (v: number): string => kir.variables[v]!.name;
    const launched = (label: string): KirKernel[] =>
      kir.blocks.find((b) => b.label === label)!.commands.flatMap((c) => (c.kind === 'launch' ? [kir.kernels[c.kernel]!] : []));
    const loop = launched('loop');
    // The loop never sorts the whole relation: the join reads the index, the union merges the new rows into it.
    expect(loop.filter((k) => k.kind === 'sort' && name(k.input) === 'path')).toEqual([]);
    expect(loop.some((k) => k.kind === 'mergeJoin' && name(k.right) === 'path@(#1)')).toBe(true);
    expect(loop.filter((k) => k.kind === 'merge' && name(k.output) === 'path@(#1)').map((k) => (k as { keys: number[] }).keys)).toEqual([[1, 0]]);
    // Built once, first thing, from the relation (facts included).
    expect(launched('init')[0]).toMatchObject({ kind: 'sort', keys: [1] });
    expect(name(launched('init')[0]!.output)).toBe('path@(#1)');
    const cycle = [1, 2, 3, 4, 5].flatMap((x) => [1, 2, 3, 4, 5].map((y) => [x, y]));
    expect(runKir(kir).relations.get('path')).toEqual([...cycle, [7, 7]]);
  });

  it('lowers a union into a temp that is empty on every path into the block (cleared last, or never written) to a copy', () => {
    const T: ['int32'] = ['int32'];
    const loopPlan = (clearAtEnd: boolean) =>
      program(
        [rel('r', T, 'edb'), rel('s', T), rel('$new', T, 'temp'), rel('$d', T, 'temp')],
        [
          block('init', [copy('$d', 'r')], { kind: 'jump', target: 'loop' }),
          block(
            'loop',
            [
              union('$new', '$new', '$d'),
              union('$new', '$new', 'r'),
              difference('$new', '$new', 's'),
              union('s', 's', '$new'),
              copy('$d', '$new'),
              ...(clearAtEnd ? [clear('$new')] : []),
            ],
            { kind: 'branch', condition: { kind: 'empty', relations: ['$d'] }, ifTrue: 'done', ifFalse: 'loop' },
          ),
          block('done', []),
        ],
        { r: [[1], [2]] },
      );
    const firstKinds = (kir: KirProgram): string[] => kernelsOf(kir).slice(1, 4).map((k) => String(k.kind));
    const cleared = lowerChecked(loopPlan(true));
    // The first union copies; the second merges (the temp now holds rows).
    expect(firstKinds(cleared)).toEqual(['copy', 'merge', 'unique']);
    expect(runKir(cleared).relations.get('s')).toEqual([[1], [2]]);
    // Without the clear, the second iteration starts with last iteration's rows: no copy.
    expect(firstKinds(lowerChecked(loopPlan(false)))).toEqual(['merge', 'unique', 'merge']);
  });

  it('lowers the union of a relation with a difference against it to a merge alone', () => {
    const plan = program(
      [rel('r', ['int32'], 'edb'), rel('s', ['int32'], 'edb'), rel('$n', ['int32'], 'temp')],
      [block('b', [difference('$n', 's', 'r'), union('r', 'r', '$n'), union('r', 'r', '$n')])],
      { r: [[1], [3], [5]], s: [[2], [3], [4], [6]] },
    );
    const kir = lowerChecked(plan);
    // The second union follows a write of r, so r and $n are no longer known to be disjoint.
    expect(kernelsOf(kir)).toEqual([
      { kind: 'difference', left: 's', right: 'r', output: '$n' },
      { kind: 'merge', left: 'r', right: '$n', output: 'r' },
      { kind: 'merge', left: 'r', right: '$n', output: '%k3' },
      { kind: 'unique', input: '%k3', output: 'r' },
    ]);
    expect(runKir(kir).relations.get('r')).toEqual([[1], [2], [3], [4], [5], [6]]);
  });

  it('lowers difference and copy to one kernel each, and clear to a command', () => {
    const plan = program(
      [rel('r', ['int32'], 'edb'), rel('s', ['int32'], 'edb'), rel('t', ['int32']), rel('u', ['int32'])],
      [block('b', [difference('t', 'r', 's'), copy('u', 't'), clear('r')])],
      { r: [[1], [2], [3]], s: [[2]] },
    );
    const kir = lowerChecked(plan);
    expect(kernelsOf(kir)).toEqual([
      { kind: 'difference', left: 'r', right: 's', output: 't' },
      { kind: 'copy', input: 't', output: 'u' },
    ]);
    expect(kir.blocks[0]!.commands[2]).toEqual({ kind: 'clear', var: 0 });
    const out = runKir(kir).relations;
    expect(out.get('t')).toEqual([[1], [3]]);
    expect(out.get('u')).toEqual([[1], [3]]);
    expect(out.get('r')).toEqual([]);
  });
});

describe('lowerPlan: semantics on whole programs', () => {
  it('computes a transitive closure through the loop', () => {
    const kir = lowerChecked(transitiveClosure([[1, 2], [2, 3], [3, 4], [4, 2]]));
    expect(rowsOf(kir, 'path')).toEqual([
      [1, 2], [1, 3], [1, 4],
      [2, 2], [2, 3], [2, 4],
      [3, 2], [3, 3], [3, 4],
      [4, 2], [4, 3], [4, 4],
    ]);
  });

  it('orders int64 and negative values by device words and still gets set semantics right', () => {
    const plan = program(
      [rel('a', ['int64', 'int32'], 'edb'), rel('b', ['int32', 'int64']), rel('c', ['int64'])],
      [block('x', [mapFilter('b', 'a', [col(1), col(0, 'int64')]), mapFilter('c', 'b', [col(1, 'int64')], [cmp(col(0), '<', lit(0))])])],
      { a: [[-1n, -5], [2n ** 40n, 3], [-1n, -5], [7n, -5], [-(2n ** 62n), 0]] },
    );
    const out = runKir(lowerChecked(plan)).relations;
    expect(out.get('b')).toEqual([[-5, -1n], [-5, 7n], [0, -(2n ** 62n)], [3, 2n ** 40n]]);
    expect(out.get('c')).toEqual([[-1n], [7n]]);
  });
});
