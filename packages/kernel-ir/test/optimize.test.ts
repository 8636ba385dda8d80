import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { fixpoint, interpret, runPipeline, type Aggregate, type Expr, type Predicate, type QpCommand, type QpProgram, type RelationDecl, type Row } from '@vixen/queryplan';
import {
  blockEntryStates,
  compactKernels,
  emptyOnEntry,
  fuseAggregateInputs,
  fuseMapFilters,
  fusePipelines,
  kirPipeline,
  lowerPlan,
  narrowColumns,
  planToKernels,
  printKir,
  propagateCopies,
  removeDeadKernels,
  simplifyKernels,
  skipUnneededOrder,
  TOP_K_MAX,
  validateKir,
  type KirPass,
  type KirProgram,
} from '../src/index.js';
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
  unoptimizedKernels,
} from './qp-builders.js';

/** Kernel lines of a block as printKir shows them, without the `// kN` comments. */
function kernelLines(p: KirProgram, label: string): string[] {
  const text = printKir(p);
  const start = text.indexOf(`\n${label}:\n`);
  const body = text.slice(start + label.length + 3).split('\n\n')[0]!;
  return body
    .split('\n')
    .map((l) => l.trim())
    .filter((l) => l.includes(':=') || l.startsWith('clear'))
    .map((l) => l.replace(/\s+\/\/.*$/, ''));
}

const launches = (p: KirProgram): number => p.blocks.reduce((n, b) => n + b.commands.filter((c) => c.kind === 'launch').length, 0);

/** The lowered program with the entry assumption planToKernels makes (what the single passes see there). */
const lowered = (plan: QpProgram): KirProgram => {
  const p = lowerPlan(plan);
  return { ...p, emptyOnEntry: emptyOnEntry(p) };
};

/** `pass` repeated until it changes nothing, validated as the KIR pipeline validates. */
const toFixpoint = (pass: KirPass, p: KirProgram): KirProgram => runPipeline({ ...kirPipeline, steps: fixpoint(pass) }, p, {});

/** Results of the optimized program (fusion on and off) agree with the reference interpreter. */
function expectSameResults(plan: QpProgram): void {
  const expected = interpret(plan, plan.facts);
  for (const fusion of [true, false]) {
    const kir = planToKernels(plan, { fusion });
    expect(validateKir(kir)).toEqual([]);
    const run = runKir(kir);
    for (const r of plan.relations.filter((r) => r.kind !== 'temp')) {
      expect(run.relations.get(r.name), `${r.name} (fusion ${fusion})`).toEqual(expected.get(r.name));
    }
  }
}

/** r(a, b) edb; `$a` a temp, `t` an idb of the given arity. */
function unionIntoEmpty(): QpProgram {
  return program(
    [rel('r', ['int32', 'int32'], 'edb'), rel('$a', ['int32', 'int32'], 'temp'), rel('t', ['int32', 'int32'])],
    [block('b', [mapFilter('$a', 'r', cols(1, 0)), union('t', 't', '$a')])],
    { r: [[1, 2], [2, 1], [3, 1], [1, 2]] },
  );
}

/** Semi-naive reachability whose result relation starts empty and is first written inside the loop. */
function reachFromEmpty(edges: Row[]): QpProgram {
  const pair = ['int32', 'int32'] as const;
  return program(
    [rel('edge', [...pair], 'edb'), rel('path', [...pair]), rel('$delta', [...pair], 'temp'), rel('$new', [...pair], 'temp')],
    [
      block('init', [mapFilter('$delta', 'edge', cols(0, 1))], { kind: 'jump', target: 'loop' }),
      block('loop', [], { kind: 'branch', condition: { kind: 'empty', relations: ['$delta'] }, ifTrue: 'done', ifFalse: 'body' }),
      block(
        'body',
        [difference('$new', '$delta', 'path'), union('path', 'path', '$new'), mapJoin('$delta', '$new', 'edge', [1], [0], cols(0, 3))],
        { kind: 'jump', target: 'loop' },
      ),
      block('done', []),
    ],
    { edge: edges },
  );
}

describe('property analysis', () => {
  it('knows derived relations empty on entry, and not after a loop back edge wrote them', () => {
    const p = lowered(reachFromEmpty([[1, 2]]));
    const states = blockEntryStates(p);
    const path = p.relationVars['path']!;
    expect(states.get('init')!.get(path)).toMatchObject({ empty: true });
    expect(states.get('body')!.get(path)).toMatchObject({ empty: false, key: [0, 1], sorted: [0, 1] });
    expect(states.get('done')!.get(path)?.empty).toBe(false);
  });

  it('assumes nothing empty for edb relations, inline-seeded or seeded relations, or a program without the field', () => {
    const plan = program(
      [rel('e', ['int32'], 'edb'), rel('s', ['int32']), rel('f', ['int32']), rel('t', ['int32'], 'temp')],
      [block('b', [])],
      { s: [[1]] },
    );
    const p = lowerPlan(plan);
    expect(emptyOnEntry(p, ['f'])).toEqual(['t']);
    expect([...blockEntryStates(p).get('b')!.values()].every((v) => !v.empty)).toBe(true);
  });
});

describe('simplify-kernels', () => {
  it('turns a merge with an empty side and a unique of a duplicate-free input into copies', () => {
    const p = simplifyKernels.run(lowered(unionIntoEmpty()));
    expect(kernelLines(p, 'b')).toEqual([
      '%k3 := mapFilter r -> (#1, #0)',
      '%k4 := sort %k3 by (#0, #1)',
      // A permutation of the columns of a duplicate-free relation is duplicate-free.
      '$a := copy %k4',
      '%k5 := copy $a',
      't := copy %k5',
    ]);
  });

  it('turns a sort of sorted rows into a copy, and a kernel whose result is known empty into a clear', () => {
    const plan = program(
      [rel('r', ['int32', 'int32'], 'edb'), rel('$e', ['int32', 'int32'], 'temp'), rel('t', ['int32', 'int32']), rel('u', ['int32'])],
      [block('b', [mapJoin('t', 'r', '$e', [0], [0], cols(0, 1)), mapFilter('u', 'r', [col(0)], [cmp(col(1), '>', lit(0))])])],
      { r: [[1, 2]] },
    );
    const p = simplifyKernels.run(lowered(plan));
    expect(kernelLines(p, 'b')).toEqual(['clear %k4', 'clear %k5', 'clear t', '%k6 := mapFilter r where #1 > 0 -> (#0)', 'u := unique %k6']);
    // r is canonical: sorted by (#0) already, not by (#1).
    const sorts: KirProgram = { ...p, variables: [...p.variables, { id: 7, name: '%s0', columns: ['int32', 'int32'] }, { id: 8, name: '%s1', columns: ['int32', 'int32'] }] };
    sorts.kernels = [...p.kernels, { kind: 'sort', id: 5, input: 0, output: 7, keys: [0] }, { kind: 'sort', id: 6, input: 0, output: 8, keys: [1] }];
    sorts.blocks = [{ ...p.blocks[0]!, commands: [...p.blocks[0]!.commands, { kind: 'launch', kernel: 5 }, { kind: 'launch', kernel: 6 }] }];
    expect(kernelLines(simplifyKernels.run(sorts), 'b').slice(-2)).toEqual(['%s0 := copy r', '%s1 := sort r by (#1)']);
  });

  it('returns the program itself when nothing changes', () => {
    const p = planToKernels(transitiveClosure([[1, 2]]));
    expect(simplifyKernels.run(p)).toBe(p);
  });
});

describe('declared keys', () => {
  /** line(o, ln, x) from item(o, p, ln, q) keyed by (o, ln), and a join of it with orders(o, d) keyed by o. */
  function keyedJoin(): QpProgram {
    const item = { ...rel('item', ['int32', 'int32', 'int32', 'int32'], 'edb'), keys: [{ columns: [0, 2], text: 'item key' }] };
    const orders = { ...rel('orders', ['int32', 'int32'], 'edb'), keys: [{ columns: [0], text: 'orders key' }] };
    return program(
      [item, orders, rel('line', ['int32', 'int32', 'int32'], 'temp'), rel('t', ['int32', 'int32', 'int32'], 'temp'), rel('u', ['int32', 'int32'])],
      [
        block('b', [
          mapFilter('line', 'item', [col(0), col(2), { kind: 'binary', op: '+', left: col(1), right: col(3), type: 'int32' }]),
          mapJoin('t', 'orders', 'line', [0], [0], cols(1, 3, 4)),
          mapFilter('u', 't', cols(0, 2)),
        ]),
      ],
      {
        item: [[1, 5, 1, 5], [1, 4, 2, 6], [2, 3, 1, 7], [3, 9, 1, 1]],
        orders: [[1, 100], [2, 200]],
      },
    );
  }

  it('leave out the duplicate elimination of a projection that keeps a key, and of a join that keeps one of each side', () => {
    const p = planToKernels(keyedJoin(), { fusion: false });
    const kinds = p.kernels.filter((k) => p.blocks[0]!.commands.some((c) => c.kind === 'launch' && c.kernel === k.id)).map((k) => k.kind);
    // line keeps (o, ln); t = orders ⋈ line keeps line's key and meets one orders row per line: no unique anywhere
    // but for u, which drops line's key (x repeats: 10 twice for o = 1).
    expect(kinds.filter((k) => k === 'unique')).toHaveLength(1);
    expect(kernelLines(p, 'b').filter((l) => l.includes('unique'))).toEqual([expect.stringMatching(/^u := unique/)]);
    expectSameResults(keyedJoin());
  });

  it('let a merge join read a right side sorted by its keys without a sort by all columns', () => {
    const plan = keyedJoin();
    const p = planToKernels(plan, { fusion: false, joinStrategy: 'sort-merge' });
    // line comes from item, sorted by (o, p, ln, q): by o, the join key, but not by all its columns. The one sort
    // left is u's canonicalization.
    const lines = kernelLines(p, 'b');
    expect(lines[1]).toMatch(/^%k\d+ := mergeJoin orders on \(#0\), %k\d+ on \(#0\)/);
    expect(lines.filter((l) => l.includes(':= sort'))).toEqual([expect.stringMatching(/^%k\d+ := sort %k\d+ by \(#0, #1\)$/)]);
    expectSameResults(plan);
  });
});

describe('hash-joins', () => {
  /** line(ln, o, x) from item(o, p, ln, q), not sorted by o; t = orders(o, d) ⋈ line on o. */
  function unsortedSide(): QpProgram {
    const item = { ...rel('item', ['int32', 'int32', 'int32', 'int32'], 'edb'), keys: [{ columns: [0, 2], text: 'item key' }] };
    const orders = { ...rel('orders', ['int32', 'int32'], 'edb'), keys: [{ columns: [0], text: 'orders key' }] };
    return program(
      [item, orders, rel('line', ['int32', 'int32', 'int32'], 'temp'), rel('t', ['int32', 'int32', 'int32'])],
      [
        block('b', [
          mapFilter('line', 'item', [col(2), col(0), { kind: 'binary', op: '+', left: col(1), right: col(3), type: 'int32' }]),
          mapJoin('t', 'orders', 'line', [0], [1], cols(1, 2, 4), [cmp(col(1), '<', col(4))]),
        ]),
      ],
      {
        item: [[1, 5, 1, 5], [1, 4, 2, 6], [2, 3, 1, 7], [3, 9, 1, 1], [2, 1, 2, 1]],
        orders: [[1, 9], [2, 4], [4, 1]],
      },
    );
  }

  it('hashes a merge join that sorts a side for itself alone, its table over that side', () => {
    const plan = unsortedSide();
    const merged = kernelLines(planToKernels(plan, { fusion: false, joinStrategy: 'sort-merge' }), 'b');
    expect(merged.some((l) => /:= sort %k\d+ by \(#1\)/.test(l))).toBe(true);
    expect(merged.some((l) => l.includes('mergeJoin'))).toBe(true);
    const hashed = kernelLines(planToKernels(plan, { fusion: false }), 'b');
    // No sort before the join (the one sort left is t's canonicalization); the join's filter follows it.
    expect(hashed.filter((l) => l.includes(':= sort') || l.includes('mergeJoin'))).toEqual([expect.stringMatching(/^%k\d+ := sort %k\d+ by \(#0, #1, #2\)$/)]);
    expect(hashed.find((l) => l.includes('hashJoin'))).toMatch(/^%k\d+ := hashJoin build %k\d+ on \(#1\), probe orders on \(#0\)/);
    // Fused, the probe of the line table joins the scan of orders.
    expect(kernelLines(planToKernels(plan), 'b').find((l) => l.includes('probe'))).toMatch(/:= pipeline orders, probe %k\d+ on \(#1\) = \(#0\)/);
    expectSameResults(plan);
  });

  it("hashes a merge join that only an aggregate reads, its table over the side the keys identify, into the aggregate's scan", () => {
    // rev[c] = sum(x) over orders(o, c) ⋈ item(o, ln, x) -> (c, o, ln, x): both sides sorted by o already (no sort
    // to drop), the joined rows duplicate-free (item's key kept).
    const orders = { ...rel('orders', ['int32', 'int32'], 'edb'), keys: [{ columns: [0], text: 'orders key' }] };
    const item = { ...rel('item', ['int32', 'int32', 'int32'], 'edb'), keys: [{ columns: [0, 1], text: 'item key' }] };
    const plan = program(
      [orders, item, rel('$j', ['int32', 'int32', 'int32', 'int32'], 'temp'), rel('rev', ['int32', 'int32'])],
      [
        block('b', [
          mapJoin('$j', 'orders', 'item', [0], [0], cols(1, 0, 3, 4)),
          { kind: 'aggregate', target: 'rev', source: '$j', groupBy: [0], aggregates: [{ fn: 'sum', column: 3, type: 'int32' }] },
        ]),
      ],
      { orders: [[1, 7], [2, 8], [3, 7], [5, 9]], item: [[1, 1, 10], [1, 2, 5], [2, 1, 3], [3, 1, 4], [4, 1, 100], [5, 3, 2]] },
    );
    const fused = kernelLines(planToKernels(plan), 'b');
    expect(fused.some((l) => l.includes('mergeJoin') || l.includes('hashJoin'))).toBe(false);
    expect(fused.find((l) => l.includes('pipeline'))).toMatch(/:= pipeline item, probe orders on \(#0\) = \(#0\) -> .* aggregate by \(#0\)/);
    expect(kernelLines(planToKernels(plan, { joinStrategy: 'sort-merge' }), 'b').some((l) => l.includes('mergeJoin'))).toBe(true);
    expectSameResults(plan);
  });

  it('keeps merge joins in fixpoint loops', () => {
    const p = planToKernels(transitiveClosure([[1, 2], [2, 3], [3, 1]]));
    const body = kernelLines(p, 'body');
    expect(body.some((l) => l.includes('mergeJoin'))).toBe(true);
    expect(body.some((l) => l.includes('hashJoin') || l.includes('pipeline'))).toBe(false);
  });
});

describe('anti-joins', () => {
  /**
   * out(b, a) <- r(a, b), b > 0, !s(a, 7): `$t` the kept rows of r, `$k` those with a partner in s (the join the
   * front end lowers a negated atom to), `$rest` their difference.
   */
  function negation(r: Row[], s: Row[]): QpProgram {
    const pair = ['int32', 'int32'] as const;
    return program(
      [rel('r', [...pair], 'edb'), rel('s', [...pair], 'edb'), rel('$t', [...pair], 'temp'), rel('$k', [...pair], 'temp'), rel('$rest', [...pair], 'temp'), rel('out', [...pair])],
      [
        block('b', [
          mapFilter('$t', 'r', cols(0, 1), [cmp(col(1), '>', lit(0))]),
          mapJoin('$k', '$t', 's', [0], [0], cols(0, 1), [cmp(col(3), '=', lit(7))]),
          difference('$rest', '$t', '$k'),
          mapFilter('out', '$rest', cols(1, 0)),
        ]),
      ],
      { r, s },
    );
  }
  const r: Row[] = [[1, 1], [1, 2], [2, 5], [3, 0], [4, 4], [5, 1], [5, 9]];
  const s: Row[] = [[1, 7], [2, 6], [4, 7], [4, 8], [5, 6]];

  it("probes a table of the negated side's keys instead of joining, sorting the matches and taking the difference", () => {
    const merged = kernelLines(planToKernels(negation(r, s), { fusion: false, joinStrategy: 'sort-merge' }), 'b');
    expect(merged.some((l) => l.includes('mergeJoin'))).toBe(true);
    expect(merged.some((l) => l.includes('difference'))).toBe(true);
    const probed = kernelLines(planToKernels(negation(r, s), { fusion: false }), 'b');
    expect(probed.some((l) => /mergeJoin|hashJoin|difference/.test(l))).toBe(false);
    // The join's filter on s becomes the table's build filter.
    expect(probed.find((l) => l.includes('pipeline'))).toMatch(/:= pipeline \S+, absent from s where #1 = 7 on \(#0\) = \(#0\) -> \(#0, #1\)$/);
    expectSameResults(negation(r, s));
  });

  it("fuses the kept rows' producer and reader into the anti-join's scan", () => {
    const fused = kernelLines(planToKernels(negation(r, s)), 'b');
    expect(fused.filter((l) => l.includes('pipeline'))).toEqual([expect.stringMatching(/:= pipeline r where #1 > 0, absent from s where #1 = 7 on \(#0\) = \(#0\) -> \(#1, #0\)$/)]);
    expect(launches(planToKernels(negation(r, s)))).toBeLessThan(launches(planToKernels(negation(r, s), { joinStrategy: 'sort-merge' })));
  });

  it('gives the answers of the reference interpreter on random rows, an empty side included', () => {
    const rows = fc.array(fc.tuple(fc.integer({ min: -2, max: 6 }), fc.integer({ min: -2, max: 9 })), { maxLength: 20 });
    fc.assert(fc.property(rows, rows, (rr, ss) => expectSameResults(negation(rr, ss))), { numRuns: 40 });
  });
});

describe('limit-outputs', () => {
  /** t(v, k) <- r(k, v), printed by v descending, first `limit` rows; `u` reads t where `read`. */
  function ranked(limit: number, read = false): QpProgram {
    const pair = ['int32', 'int32'] as const;
    const plan = program(
      [rel('r', [...pair], 'edb'), rel('t', [...pair]), rel('u', [...pair])],
      [block('b', [mapFilter('t', 'r', cols(1, 0)), ...(read ? [mapFilter('u', 't', cols(1, 0))] : [])])],
      { r: [[1, 5], [2, 7], [3, 7], [4, 1], [5, 9], [6, 7]] },
    );
    return { ...plan, orders: { t: { keys: [{ column: 0, descending: true }], limit } } };
  }

  it('keeps only the first rows of a limited output no kernel reads, instead of sorting all of them', () => {
    const kir = planToKernels(ranked(2));
    expect(kernelLines(kir, 'b')).toContainEqual(expect.stringMatching(/^t := limit %k\d+ by \(#0 desc\) to 2$/));
    // The largest v, then of the three rows with v = 7 the first by all columns ascending; in canonical order.
    expect(runKir(kir).relations.get('t')).toEqual([
      [7, 2],
      [9, 5],
    ]);
    expect(runKir(planToKernels(ranked(3))).relations.get('t')).toEqual([
      [7, 2],
      [7, 3],
      [9, 5],
    ]);
  });

  it('keeps the first rows of a limited output that copies duplicate-free rows (an aggregate result, TPC-H Q21)', () => {
    const pair = ['int32', 'int32'] as const;
    const plan = program([rel('r', [...pair], 'edb'), rel('t', [...pair])], [block('b', [copy('t', 'r')])], {
      r: [[1, 5], [2, 7], [3, 7], [4, 1], [5, 9]],
    });
    const kir = planToKernels({ ...plan, orders: { t: { keys: [{ column: 1, descending: true }], limit: 2 } } });
    expect(kernelLines(kir, 'b')).toEqual(['t := limit r by (#1 desc) to 2']);
    expect(runKir(kir).relations.get('t')).toEqual([
      [2, 7],
      [5, 9],
    ]);
  });

  it('leaves outputs that kernels read, and limits past TOP_K_MAX, sorted whole', () => {
    for (const plan of [ranked(2, true), ranked(TOP_K_MAX + 1)]) expect(kernelLines(planToKernels(plan), 'b').some((l) => l.includes('limit'))).toBe(false);
  });
});

describe('propagate-copies and remove-dead-kernels', () => {
  it('writes the relation in place of the temporary, and drops copies nothing reads', () => {
    const p = compactKernels.run(removeDeadKernels.run(propagateCopies.run(simplifyKernels.run(lowered(unionIntoEmpty())))));
    expect(kernelLines(p, 'b')).toEqual(['%k3 := mapFilter r -> (#1, #0)', '%k4 := sort %k3 by (#0, #1)', 't := copy %k4']);
    expect(p.kernels.map((k) => k.id)).toEqual([0, 1, 2]);
    expect(kernelLines(planToKernels(unionIntoEmpty()), 'b')).toEqual(['%k3 := mapFilter r -> (#1, #0) (any order)', 't := sort %k3 by (#0, #1)']);
    expect(validateKir(p)).toEqual([]);
  });

  it('does not coalesce when the relation is read between the write and the copy', () => {
    // out := copy $a then $a := ...: the old value of $a flows into out, and `r` is read in between.
    const plan = program(
      [rel('r', ['int32'], 'edb'), rel('$a', ['int32'], 'temp'), rel('out', ['int32']), rel('keep', ['int32'])],
      [block('b', [copy('$a', 'r'), copy('keep', 'out'), copy('out', '$a')])],
      { r: [[4], [5]] },
    );
    expectSameResults(plan);
  });
});

describe('unordered-selects', () => {
  it('lets a select leave its rows in any order where only a sort by all columns reads them, not where a relation or a unique does', () => {
    const plan = program(
      [rel('r', ['int32', 'int32'], 'edb'), rel('whole', ['int32', 'int32']), rel('first', ['int32']), rel('swapped', ['int32', 'int32'])],
      [
        block('b', [
          mapFilter('whole', 'r', [col(0), col(1)], [{ kind: 'compare', op: '>', left: col(0), right: lit(1) }]),
          mapFilter('first', 'r', [col(0)]),
          mapFilter('swapped', 'r', [col(1), col(0)]),
        ]),
      ],
      { r: [[1, 5], [2, 4], [2, 3], [3, 3], [4, 1]] },
    );
    expect(kernelLines(planToKernels(plan), 'b')).toEqual([
      // Written into the relation: it stays canonical.
      'whole := mapFilter r where #0 > 1 -> (#0, #1)',
      // A column prefix stays sorted: the unique reads it without a sort.
      '%k4 := mapFilter r -> (#0)',
      'first := unique %k4',
      '%k5 := mapFilter r -> (#1, #0) (any order)',
      // (r has no duplicates, so neither has the permutation: no unique.)
      'swapped := sort %k5 by (#0, #1)',
    ]);
    // The reference KIR interpreter reverses unordered selects' rows.
    expectSameResults(plan);
  });
});

describe('skip-unneeded-order', () => {
  const sumPlan = (type: 'decimal' | 'float32'): QpProgram =>
    program(
      [rel('r', ['int32', type], 'edb'), rel('total', [type])],
      [block('b', [{ kind: 'aggregate', target: 'total', source: 'r', groupBy: [], aggregates: [{ fn: 'sum', column: 1, type }] }])],
    );

  it('lets an aggregate without group-by read the unsorted rows', () => {
    const plan = program(
      [rel('r', ['int32', 'int32'], 'edb'), rel('$p', ['int32', 'int32'], 'temp'), rel('n', ['int32'])],
      [
        block('b', [
          mapFilter('$p', 'r', cols(1, 0)),
          { kind: 'aggregate', target: 'n', source: '$p', groupBy: [], aggregates: [{ fn: 'count', type: 'int32' }] },
        ]),
      ],
      { r: [[1, 2], [2, 1], [3, 3]] },
    );
    // (narrow-columns keeps one of the columns the count does not read.)
    expect(kernelLines(planToKernels(plan, { fusion: false }), 'b')).toEqual(['%k5 := mapFilter r -> (#1) (any order)', 'n := pipeline %k5 -> () aggregate by () compute (count(): int32)']);
    // Fused, the count reads r itself: one kernel.
    expect(kernelLines(planToKernels(plan), 'b')).toEqual(['n := pipeline r -> () aggregate by () compute (count(): int32)']);
    expectSameResults(plan);
  });

  it('keeps the sort for float32 sums (their rounding depends on row order) and when the sort is read again', () => {
    const sorted = { ...lowered(sumPlan('float32')) };
    // A hand-built sort in front of the aggregate, as lowering makes for group-by keys.
    const p: KirProgram = {
      ...sorted,
      variables: [...sorted.variables, { id: sorted.variables.length, name: '%s', columns: ['int32', 'float32'] }],
    };
    const s = p.variables.length - 1;
    const agg = p.kernels[0]!;
    p.kernels = [{ kind: 'sort', id: 0, input: 0, output: s, keys: [1] }, { ...agg, id: 1, input: s } as typeof agg];
    p.blocks = [{ ...p.blocks[0]!, commands: [{ kind: 'launch', kernel: 0 }, { kind: 'launch', kernel: 1 }] }];
    expect(skipUnneededOrder.run(p)).toBe(p);
    const decimal: KirProgram = { ...p, variables: p.variables.map((v) => ({ ...v, columns: v.columns.map((c) => (c === 'float32' ? 'decimal' : c)) })) };
    decimal.kernels = p.kernels.map((k) => (k.kind === 'aggregate' ? { ...k, aggregates: [{ fn: 'sum', column: 1, type: 'decimal' }] } : k));
    expect((skipUnneededOrder.run(decimal).kernels[1] as { input: number }).input).toBe(0);
    // A second reader of the sorted rows keeps the sort.
    const twice: KirProgram = { ...decimal, kernels: [...decimal.kernels, { kind: 'copy', id: 2, input: s, output: 1 }] };
    twice.blocks = [{ ...decimal.blocks[0]!, commands: [...decimal.blocks[0]!.commands, { kind: 'launch', kernel: 2 }] }];
    expect(skipUnneededOrder.run(twice)).toBe(twice);
  });
});

describe('hash-unique', () => {
  /** $p := {#1 | r} (a projection with duplicates, out of order: lowering sorts it for the unique), then `reader` over $p. */
  const projectThen = (reader: QpCommand, out: RelationDecl): QpProgram =>
    program(
      [rel('r', ['int32', 'int32'], 'edb'), rel('$p', ['int32'], 'temp'), out],
      [block('b', [mapFilter('$p', 'r', cols(1)), reader])],
      { r: [[1, 2], [1, 3], [2, 1], [1, 4], [3, 3], [2, 2]] },
    );

  it('drops duplicates through a hash table when no reader needs the rows sorted', () => {
    const plan = projectThen({ kind: 'aggregate', target: 'n', source: '$p', groupBy: [], aggregates: [{ fn: 'count', type: 'int32' }] }, rel('n', ['int32']));
    const p = planToKernels(plan);
    expect(kernelLines(p, 'b')).toEqual(['%k3 := mapFilter r -> (#1) (any order)', '$p := unique %k3 (hashed)', 'n := pipeline $p -> () aggregate by () compute (count(): int32)']);
    expectSameResults(plan);
  });

  it('keeps sort and unique when a reader needs the order (a relation the program returns)', () => {
    const plan = projectThen(union('t', 't', '$p'), rel('t', ['int32']));
    expect(printKir(planToKernels(plan))).not.toContain('(hashed)');
    expectSameResults(plan);
  });
});

describe('skip-unneeded-order with fusion', () => {
  /** $a := {#1 + 1 | r}; out := {#0 * 2 | $a}: each result is canonicalized (sort + unique) as lowering makes it. */
  const twoMaps = (): QpProgram =>
    program(
      [rel('r', ['int32', 'int32'], 'edb'), rel('$a', ['int32'], 'temp'), rel('out', ['int32'])],
      [
        block('b', [
          mapFilter('$a', 'r', [{ kind: 'binary', op: '+', left: col(1), right: lit(1), type: 'int32' }]),
          mapFilter('out', '$a', [{ kind: 'binary', op: '*', left: col(0), right: lit(2), type: 'int32' }], [cmp(col(0), '!=', lit(4))]),
        ]),
      ],
      { r: [[1, 1], [2, 1], [3, 3], [4, 5], [5, 3]] },
    );

  it('drops the canonicalization of an intermediate that only feeds a canonicalized map, then fuses the maps', () => {
    expect(kernelLines(lowered(twoMaps()), 'b')).toEqual([
      '%k3 := mapFilter r -> ((#1 + 1))',
      '%k4 := sort %k3 by (#0)',
      '$a := unique %k4',
      '%k5 := mapFilter $a where #0 != 4 -> ((#0 * 2))',
      '%k6 := sort %k5 by (#0)',
      'out := unique %k6',
    ]);
    expect(kernelLines(planToKernels(twoMaps()), 'b')).toEqual([
      '%k5 := mapFilter r where (#1 + 1) != 4 -> (((#1 + 1) * 2)) (any order)',
      '%k6 := sort %k5 by (#0)',
      'out := unique %k6',
    ]);
    expect(kernelLines(planToKernels(twoMaps(), { fusion: false }), 'b')).toEqual([
      '%k3 := mapFilter r -> ((#1 + 1)) (any order)',
      '%k5 := mapFilter %k3 where #0 != 4 -> ((#0 * 2)) (any order)',
      '%k6 := sort %k5 by (#0)',
      'out := unique %k6',
    ]);
    expectSameResults(twoMaps());
  });

  it('keeps the unique when a count reads the rows (multiplicity matters)', () => {
    const plan = program(
      [rel('r', ['int32', 'int32'], 'edb'), rel('$a', ['int32'], 'temp'), rel('n', ['int32'])],
      [
        block('b', [
          mapFilter('$a', 'r', [{ kind: 'binary', op: '+', left: col(1), right: lit(1), type: 'int32' }]),
          { kind: 'aggregate', target: 'n', source: '$a', groupBy: [], aggregates: [{ fn: 'count', type: 'int32' }] },
        ]),
      ],
      { r: [[1, 1], [2, 1], [3, 3]] },
    );
    // The duplicates still go (through a hash table: the count ignores order, hash-unique.ts).
    expect(kernelLines(planToKernels(plan), 'b')).toEqual([
      '%k3 := mapFilter r -> ((#1 + 1)) (any order)',
      '$a := unique %k3 (hashed)',
      'n := pipeline $a -> () aggregate by () compute (count(): int32)',
    ]);
    expectSameResults(plan);
  });
});

describe('fuse-map-filters', () => {
  /** $a := filter/project of r; out := filter/project of $a: a chain through a temporary read once. */
  const chain = (extraRead: boolean): QpProgram =>
    program(
      [rel('r', ['int32', 'int32'], 'edb'), rel('$a', ['int32', 'int32'], 'temp'), rel('out', ['int32']), rel('also', ['int32', 'int32'])],
      [
        block('b', [
          // A filter keeps $a canonical, so lowering reads it straight into the next mapFilter.
          mapFilter('$a', 'r', cols(0, 1), [cmp(col(0), '>', lit(1))]),
          mapFilter('out', '$a', [{ kind: 'binary', op: '*', left: col(0), right: { kind: 'binary', op: '+', left: col(1), right: lit(10), type: 'int32' }, type: 'int32' }], [cmp(col(1), '<', lit(5))]),
          ...(extraRead ? [copy('also', '$a')] : []),
        ]),
      ],
      { r: [[1, 1], [2, 2], [3, 9], [4, 3], [2, 4]] },
    );

  it('gives a fused kernel the rules of the commands it fused, and prints them', () => {
    const plan = chain(false);
    const rule = (line: number) => [{ file: '/src/a.logic', line, text: `rule ${line}` }];
    plan.blocks[0]!.commands = plan.blocks[0]!.commands.map((c, i) => ({ ...c, rules: rule(i + 1) }));
    const p = planToKernels(plan);
    expect(p.kernels.find((k) => k.kind === 'mapFilter' && k.fused)?.rules).toEqual([...rule(1), ...rule(2)]);
    expect(printKir(p)).toContain('// k0 (fused 2 kernels) from a.logic:1: rule 1; a.logic:2: rule 2');
  });

  it('fuses a mapFilter into the mapFilter that alone reads its result, and records and prints what it fused', () => {
    const p = planToKernels(chain(false));
    const fused = p.kernels.find((k) => k.kind === 'mapFilter' && k.fused);
    expect(fused).toMatchObject({ kind: 'mapFilter', fused: [0, 1] });
    expect(printKir(p)).toContain('mapFilter r where #0 > 1 and #1 < 5 -> ((#0 * (#1 + 10))) (any order)  // k0 (fused 2 kernels)');
    expect(launches(p)).toBeLessThan(launches(planToKernels(chain(false), { fusion: false })));
    expectSameResults(chain(false));
  });

  it('leaves the chain alone when the intermediate has another reader, or with fusion off', () => {
    expect(planToKernels(chain(true)).kernels.some((k) => k.kind === 'mapFilter' && k.fused)).toBe(false);
    expect(planToKernels(chain(false), { fusion: false }).kernels.some((k) => k.kind === 'mapFilter' && k.fused)).toBe(false);
    expectSameResults(chain(true));
    const p = lowered(chain(false));
    expect(fuseMapFilters.run(fuseMapFilters.run(p))).toEqual(fuseMapFilters.run(p));
  });
});

describe('fuse-pipelines', () => {
  const i32s = (n: number): Array<'int32'> => Array.from({ length: n }, () => 'int32' as const);
  /**
   * A star: fact(k, d1, d2, v) filtered and projected into $a, joined with dim1 on d1 into $b, $b joined with
   * dim2 on d2 into out. dim1 repeats key 1 (two matches per fact row, so the probe walks a chain).
   */
  const star = (extraRead: boolean, filter: Predicate[] = []): QpProgram =>
    program(
      [
        rel('fact', i32s(4), 'edb'),
        rel('dim1', i32s(2), 'edb'),
        rel('dim2', i32s(2), 'edb'),
        rel('$a', i32s(4), 'temp'),
        rel('$b', i32s(4), 'temp'),
        rel('out', i32s(4)),
        rel('also', i32s(4)),
      ],
      [
        block('b', [
          mapFilter('$a', 'fact', [col(0), col(1), col(2), { kind: 'binary', op: '+', left: col(3), right: lit(1), type: 'int32' }], [cmp(col(3), '>', lit(0))]),
          // $a ++ dim1 -> (k, d2, v + 1, x)
          mapJoin('$b', '$a', 'dim1', [1], [0], cols(0, 2, 3, 5)),
          // $b ++ dim2 -> (k, x, y, v + 1)
          mapJoin('out', '$b', 'dim2', [1], [0], cols(0, 3, 5, 2), filter),
          ...(extraRead ? [copy('also', '$b')] : []),
        ]),
      ],
      {
        fact: [[1, 1, 7, 5], [2, 1, 8, 6], [3, 2, 7, 0], [4, 2, 9, 2], [5, 3, 7, 1], [6, 2, 8, -4]],
        dim1: [[1, 10], [1, 11], [2, 20], [3, 30]],
        dim2: [[7, 70], [8, 80]],
      },
    );

  /** planToKernels with hash joins agrees with the reference interpreter, fusion on and off. */
  const expectSame = (plan: QpProgram): void => {
    const expected = interpret(plan, plan.facts);
    for (const fusion of [true, false]) {
      const kir = planToKernels(plan, { joinStrategy: 'hash', fusion });
      expect(validateKir(kir)).toEqual([]);
      const run = runKir(kir);
      // Relations the plan does not return may keep fewer columns on the device (narrowBaseRelations).
      for (const r of plan.relations.filter((r) => r.output)) expect(run.relations.get(r.name), `${r.name} (fusion ${fusion})`).toEqual(expected.get(r.name));
    }
  };

  it('fuses filter -> probe -> probe -> project into one pipeline kernel and prints what it fused', () => {
    const p = planToKernels(star(false), { joinStrategy: 'hash' });
    const pipelines = p.kernels.filter((k) => k.kind === 'pipeline');
    expect(pipelines).toHaveLength(1);
    // The mapFilter and both joins, by the ids lowering gave them.
    expect(pipelines[0]!.kind === 'pipeline' && pipelines[0]!.fused.length).toBe(3);
    expect(p.kernels.some((k) => k.kind === 'hashJoin' || k.kind === 'mapFilter')).toBe(false);
    expect(printKir(p)).toMatch(
      /:= pipeline fact where #3 > 0, probe dim1 on \(#0\) = \(#1\), probe dim2 on \(#0\) = \(#2\) -> \(#0, #5, #7, \(#3 \+ 1\)\)  \/\/ k\d+ \(fused 3 kernels: scan\+filter, 2 probes, project\)/,
    );
    const unfused = planToKernels(star(false), { joinStrategy: 'hash', fusion: false });
    expect(launches(unfused) - launches(p)).toBe(2);
    expectSame(star(false));
  });

  it('takes in the mapFilter of a join filter: on the scanned row before the lookups, on a build row as a check', () => {
    const scanned = planToKernels(star(false, [cmp(col(0), '!=', lit(4))]), { joinStrategy: 'hash' });
    expect(scanned.kernels.filter((k) => k.kind === 'pipeline' || k.kind === 'mapFilter' || k.kind === 'hashJoin').map((k) => k.kind)).toEqual(['pipeline']);
    expect(printKir(scanned)).toMatch(/:= pipeline fact where #3 > 0 and #0 != 4, probe dim1/);
    expectSame(star(false, [cmp(col(0), '!=', lit(4))]));
    const build = planToKernels(star(false, [cmp(col(5), '!=', lit(80))]), { joinStrategy: 'hash' });
    expect(build.kernels.filter((k) => k.kind === 'pipeline' || k.kind === 'mapFilter' || k.kind === 'hashJoin').map((k) => k.kind)).toEqual(['pipeline']);
    expect(printKir(build)).toMatch(/:= pipeline fact where #3 > 0, probe dim1 on \(#0\) = \(#1\), probe dim2 on \(#0\) = \(#2\) check #7 != 80 -> /);
    expectSame(star(false, [cmp(col(5), '!=', lit(80))]));
  });

  /**
   * The star with dim2 (key, y, tag, unused) selected first: $c(y, key) <- dim2 rows with tag != 0 (`pick`: the
   * mapFilter's projection), out(k, x, y, v + 1) <- $b joined with $c on d2 = key.
   */
  const filteredDimension = (pick: Expr[] = [col(1), col(0)]): QpProgram =>
    program(
      [
        rel('fact', i32s(4), 'edb'),
        rel('dim1', i32s(2), 'edb'),
        rel('dim2', i32s(4), 'edb', false),
        rel('$a', i32s(4), 'temp'),
        rel('$b', i32s(4), 'temp'),
        rel('$c', i32s(2), 'temp'),
        rel('out', i32s(4)),
      ],
      [
        block('b', [
          mapFilter('$a', 'fact', [col(0), col(1), col(2), { kind: 'binary', op: '+', left: col(3), right: lit(1), type: 'int32' }], [cmp(col(3), '>', lit(0))]),
          mapJoin('$b', '$a', 'dim1', [1], [0], cols(0, 2, 3, 5)),
          mapFilter('$c', 'dim2', pick, [cmp(col(2), '!=', lit(0))]),
          // $b ++ $c -> (k, x, y, v + 1)
          mapJoin('out', '$b', '$c', [1], [1], cols(0, 3, 4, 2)),
        ]),
      ],
      {
        fact: [[1, 1, 7, 5], [2, 1, 8, 6], [3, 2, 7, 0], [4, 2, 9, 2], [5, 3, 7, 1], [6, 2, 8, -4]],
        dim1: [[1, 10], [1, 11], [2, 20], [3, 30]],
        dim2: [[7, 70, 1, 0], [8, 80, 0, 0], [9, 90, 2, 0]],
      },
    );

  it("takes in a dimension's select as a probe's build filter; the dimension keeps only the columns the pipeline reads", () => {
    const p = planToKernels(filteredDimension(), { joinStrategy: 'hash' });
    expect(p.kernels.filter((k) => k.kind === 'pipeline' || k.kind === 'mapFilter' || k.kind === 'hashJoin').map((k) => k.kind)).toEqual(['pipeline']);
    // The table over dim2 is keyed by its column 0 (the select's #1) and built from the rows with tag != 0.
    expect(printKir(p)).toMatch(/:= pipeline fact where #3 > 0, probe dim1 on \(#0\) = \(#1\), probe dim2 where #2 != 0 on \(#0\) = \(#2\) -> \(#0, #5, #7, \(#3 \+ 1\)\)  \/\/ k\d+ \(fused 4 kernels: scan\+filter, 2 probes, project\)/);
    expect(p.relations.find((r) => r.name === 'dim2')!.deviceColumns).toEqual([0, 1, 2]);
    expect(validateKir(p)).toEqual([]);
    expectSame(filteredDimension());
    const out = interpret(filteredDimension(), filteredDimension().facts).get('out')!;
    // The fact rows whose d2 is 8 meet no kept dim2 row.
    expect(out.some((r) => r[2] === 80)).toBe(false);
    expect(out.length).toBeGreaterThan(0);
  });

  it('leaves a select that computes a column a kernel of its own', () => {
    const computed = filteredDimension([{ kind: 'binary', op: '+', left: col(1), right: lit(1), type: 'int32' }, col(0)]);
    const p = planToKernels(computed, { joinStrategy: 'hash' });
    expect(p.kernels.filter((k) => k.kind === 'pipeline' || k.kind === 'mapFilter' || k.kind === 'hashJoin').map((k) => k.kind)).toEqual(['mapFilter', 'pipeline']);
    expect(p.kernels.some((k) => k.kind === 'pipeline' && k.probes.some((pr) => pr.buildFilter))).toBe(false);
    expectSame(computed);
  });

  it('stops at an intermediate another kernel reads, and is idempotent', () => {
    const p = planToKernels(star(true), { joinStrategy: 'hash' });
    const kinds = p.kernels.filter((k) => k.kind === 'pipeline' || k.kind === 'hashJoin').map((k) => [k.kind, k.kind === 'pipeline' ? k.probes.length : 0]);
    expect(kinds).toEqual([['pipeline', 1], ['hashJoin', 0]]);
    expectSame(star(true));
    const once = toFixpoint(fusePipelines, lowered(star(false)));
    expect(fusePipelines.run(once)).toBe(once);
  });
});

describe('narrow-columns', () => {
  /** $j(k, d, v, x) <- fact(k, d, v), dim(d, x); total[x] = sum(v) over $j: the sort and aggregate read x and v only. */
  const grouped = (): QpProgram =>
    program(
      [rel('fact', ['int32', 'int32', 'int32'], 'edb'), rel('dim', ['int32', 'int32'], 'edb'), rel('$j', ['int32', 'int32', 'int32', 'int32'], 'temp'), rel('total', ['int32', 'int32'])],
      [
        block('b', [
          mapJoin('$j', 'fact', 'dim', [1], [0], cols(0, 1, 2, 4)),
          { kind: 'aggregate', target: 'total', source: '$j', groupBy: [3], aggregates: [{ fn: 'sum', column: 2, type: 'int32' }] },
        ]),
      ],
      { fact: [[1, 1, 5], [2, 1, 5], [3, 2, 7], [4, 3, 1]], dim: [[1, 10], [1, 11], [2, 10]] },
    );

  it('writes only the columns the hashed aggregate after it reads, from the join on; fused, the join rows are not written', () => {
    const unfused = kernelLines(planToKernels(grouped(), { joinStrategy: 'hash', fusion: false }), 'b').map((l) => l.replace(/%k\d+/g, '%k'));
    expect(unfused).toEqual([
      '%k := hashJoin build dim on (#0), probe fact on (#1) -> (probe.#2, build.#1)',
      '%k := pipeline %k -> (#0, #1) aggregate by (#1) compute (sum(#0): int32)',
      'total := sort %k by (#0)',
    ]);
    const fused = kernelLines(planToKernels(grouped(), { joinStrategy: 'hash' }), 'b').map((l) => l.replace(/%k\d+/g, '%k'));
    expect(fused).toEqual(['%k := pipeline fact, probe dim on (#0) = (#1) -> (#2, #4) aggregate by (#1) compute (sum(#0): int32)', 'total := sort %k by (#0)']);
    const expected = interpret(grouped(), grouped().facts).get('total');
    expect(expected).toEqual([[10, 17], [11, 10]]);
    for (const fusion of [true, false]) expect(runKir(planToKernels(grouped(), { joinStrategy: 'hash', fusion })).relations.get('total')).toEqual(expected);
  });

  it('leaves values read by kernels that need every column (a unique) or read after the block, and is idempotent', () => {
    // Lowered, the join rows are sorted and uniqued into $j before the aggregate: nothing is narrowed there.
    const p = lowered(grouped());
    expect(kernelLines(unoptimizedKernels(grouped()), 'b').some((l) => l.includes(':= unique'))).toBe(true);
    expect(narrowColumns.run(p)).toBe(p);
    const optimized = planToKernels(grouped(), { joinStrategy: 'hash' });
    expect(toFixpoint(narrowColumns, optimized)).toBe(optimized);
  });
});

describe('narrow-base-relations', () => {
  /** total[r] = sum(a) over sale(id, r, a), keyed by id: equal (r, a) of two sales both count. */
  const sales = (extra: QpCommand[] = [], output = false): QpProgram =>
    program(
      [
        { ...rel('sale', ['int32', 'int32', 'int32'], 'edb'), output, keys: [{ columns: [0], text: 'sale key' }] },
        rel('total', ['int32', 'int32']),
        rel('all', ['int32', 'int32', 'int32']),
      ],
      [block('b', [{ kind: 'aggregate', target: 'total', source: 'sale', groupBy: [1], aggregates: [{ fn: 'sum', column: 2, type: 'int32' }] }, ...extra])],
      { sale: [[1, 10, 5], [2, 10, 5], [3, 20, 7]] },
    );

  it('keeps on the device only the columns kernels read, with the answers of the plan', () => {
    const kir = planToKernels(sales());
    expect(validateKir(kir)).toEqual([]);
    expect(kir.relations.find((r) => r.name === 'sale')!.deviceColumns).toEqual([1, 2]);
    expect(kir.variables[kir.relationVars['sale']!]!.columns).toEqual(['int32', 'int32']);
    const expected = interpret(sales(), sales().facts).get('total');
    expect(expected).toEqual([[10, 10], [20, 7]]);
    expect(runKir(kir).relations.get('total')).toEqual(expected);
  });

  it('keeps every column of a relation some kernel reads whole, or that the program returns', () => {
    for (const plan of [sales([copy('all', 'sale')]), sales([], true)]) {
      const kir = planToKernels(plan);
      expect(kir.relations.find((r) => r.name === 'sale')!.deviceColumns).toBeUndefined();
      expect(runKir(kir).relations.get('total')).toEqual([[10, 10], [20, 7]]);
    }
  });
});

describe('the optimization pipeline', () => {
  it('removes the redundant kernels of a union into an empty relation', () => {
    expect(launches(planToKernels(unionIntoEmpty()))).toBe(2);
    expect(launches(unoptimizedKernels(unionIntoEmpty()))).toBe(5);
    expectSameResults(unionIntoEmpty());
  });

  it('keeps loop-carried unions and differences (the relation is empty only on the first iteration)', () => {
    const p = planToKernels(reachFromEmpty([[1, 2], [2, 3]]));
    expect(kernelLines(p, 'body').some((l) => l.startsWith('path := merge path'))).toBe(true);
    expect(kernelLines(p, 'body').some((l) => l.includes('difference $delta, path'))).toBe(true);
  });

  it('preserves results on random graphs (semi-naive loops), fusion on and off', () => {
    const edge = fc.tuple(fc.integer({ min: -3, max: 6 }), fc.integer({ min: -3, max: 6 }));
    fc.assert(
      fc.property(fc.array(edge, { maxLength: 12 }), (edges) => {
        expectSameResults(transitiveClosure(edges));
        expectSameResults(reachFromEmpty(edges));
      }),
      { numRuns: 40 },
    );
  });

  it('clears a temp relation emptied by a clear before it is read', () => {
    const plan = program(
      [rel('r', ['int32'], 'edb'), rel('$t', ['int32'], 'temp'), rel('out', ['int32'])],
      [block('b', [copy('$t', 'r'), clear('$t'), union('out', 'r', '$t')])],
      { r: [[3], [1]] },
    );
    expect(kernelLines(planToKernels(plan), 'b')).toEqual(['out := copy r']);
    expectSameResults(plan);
  });
});

describe('keys', () => {
  it('knows the group-by columns of an aggregate are a key, so a sort by them and any more columns is a copy', () => {
    // total(g, s) is an aggregate by g; ($p := {(g, 0) | total}) keeps the key g, so its canonicalization needs no sort and no unique.
    const plan = program(
      [rel('r', ['int32', 'int32'], 'edb'), rel('total', ['int32', 'int32']), rel('$p', ['int32', 'int32'], 'temp'), rel('out', ['int32', 'int32'])],
      [
        block('b', [
          { kind: 'aggregate', target: 'total', source: 'r', groupBy: [0], aggregates: [{ fn: 'sum', column: 1, type: 'int32' }] },
          mapFilter('$p', 'total', [col(0), lit(0)]),
          union('out', 'out', '$p'),
        ]),
      ],
      { r: [[1, 5], [1, 6], [2, 7]] },
    );
    expect(kernelLines(unoptimizedKernels(plan), 'b')).toEqual([
      'total := aggregate r by (#0) compute (sum(#1): int32)',
      '%k4 := mapFilter total -> (#0, 0)',
      '%k5 := sort %k4 by (#0, #1)',
      '$p := unique %k5',
      '%k6 := merge out, $p by (#0, #1)',
      'out := unique %k6',
    ]);
    expect(kernelLines(planToKernels(plan), 'b')).toEqual(['total := aggregate r by (#0) compute (sum(#1): int32)', 'out := mapFilter total -> (#0, 0)']);
    expectSameResults(plan);
  });
});

describe('fuse-aggregate-inputs', () => {
  /**
   * $p := the columns `project` of r (`width` int32 columns, sorted); total := by $p's #0 (sorted by it: no sort),
   * the sums of its columns 1..`sums` and a count.
   */
  const projected = (width: number, project: Expr[], filter: Predicate[] = [], sums = 1): QpProgram =>
    program(
      [
        rel('r', Array<'int32'>(width).fill('int32'), 'edb'),
        rel('$p', Array<'int32'>(project.length).fill('int32'), 'temp'),
        rel('total', Array<'int32'>(sums + 2).fill('int32')),
      ],
      [
        block('b', [
          mapFilter('$p', 'r', project, filter),
          {
            kind: 'aggregate',
            target: 'total',
            source: '$p',
            groupBy: [0],
            aggregates: [...Array.from({ length: sums }, (_, k): Aggregate => ({ fn: 'sum', column: 1 + k, type: 'int32' })), { fn: 'count', type: 'int32' }],
          },
        ]),
      ],
      { r: [[1, 5, 2, ...Array<number>(width - 3).fill(0)], [1, 6, 3, ...Array<number>(width - 3).fill(0)], [2, 7, 4, ...Array<number>(width - 3).fill(1)], [2, 8, 4, ...Array<number>(width - 3).fill(1)]] },
    );

  it('lets an aggregate read the relation a projection alone read for it', () => {
    const plan = projected(3, cols(0, 2, 1));
    expect(kernelLines(planToKernels(plan), 'b')).toEqual(['total := aggregate r by (#0) compute (sum(#2): int32, count(): int32)']);
    expect(kernelLines(planToKernels(plan, { fusion: false }), 'b')[0]).toMatch(/^%k\d+ := mapFilter r -> \(#0, #2(, #1)?\)$/);
    expectSameResults(plan);
    const p = lowered(plan);
    expect(fuseAggregateInputs.run(fuseAggregateInputs.run(p))).toEqual(fuseAggregateInputs.run(p));
  });

  it('keeps a projection that filters, computes, or reads rows over twice as wide as it writes', () => {
    const plus1: Expr = { kind: 'binary', op: '+', left: col(2), right: lit(1), type: 'int32' };
    // All columns (the first two swapped: no copy): narrowed to what the aggregate reads.
    const all = (width: number): Expr[] => cols(0, 2, 1, ...Array.from({ length: width - 3 }, (_, c) => c + 3));
    // The last two: 7 columns narrowed to 2; 16 narrowed to 9, within twice their width but past the 15 words the
    // aggregate reads coalesced.
    const plans = [projected(3, cols(0, 2, 1), [cmp(col(2), '>', lit(2))]), projected(3, [col(0), plus1, col(1)]), projected(7, all(7)), projected(16, all(16), [], 8)];
    for (const plan of plans) {
      const lines = kernelLines(planToKernels(plan), 'b');
      expect(lines[0]).toMatch(/ := mapFilter r /);
      expect(lines.filter((l) => l.includes(':= aggregate r '))).toEqual([]);
      expectSameResults(plan);
    }
  });
});

describe('join keys', () => {
  it('counts a join key as kept when its partner is: a join keeping the probe row and the build non-key columns is duplicate-free', () => {
    // $j(k, d, v, x) <- fact(k, d, v), dim(d, x): dim's d is not projected, fact's d is, so each output row names
    // its pair; the sum over $j then needs no unique (nor a sort) of its rows.
    const plan = program(
      [rel('fact', ['int32', 'int32', 'int32'], 'edb'), rel('dim', ['int32', 'int32'], 'edb'), rel('$j', ['int32', 'int32', 'int32', 'int32'], 'temp'), rel('total', ['int32'])],
      [
        block('b', [
          mapJoin('$j', 'fact', 'dim', [1], [0], cols(0, 1, 2, 4)),
          { kind: 'aggregate', target: 'total', source: '$j', groupBy: [], aggregates: [{ fn: 'sum', column: 2, type: 'int32' }] },
        ]),
      ],
      { fact: [[1, 1, 5], [2, 1, 5], [3, 2, 7], [4, 3, 1]], dim: [[1, 10], [1, 11], [2, 20]] },
    );
    const kinds = (p: KirProgram): string[] => p.blocks.flatMap((b) => b.commands.flatMap((c) => (c.kind === 'launch' ? [p.kernels[c.kernel]!.kind] : [])));
    expect(kinds(unoptimizedKernels(plan, { joinStrategy: 'hash' }))).toContain('unique');
    expect(kinds(planToKernels(plan, { joinStrategy: 'hash', fusion: false }))).toEqual(['hashJoin', 'pipeline']);
    const expected = interpret(plan, plan.facts).get('total');
    expect(expected).toEqual([[27]]);
    expect(runKir(planToKernels(plan, { joinStrategy: 'hash' })).relations.get('total')).toEqual(expected);
  });
});

describe('self-joins on a key and aggregate sorts', () => {
  /** The functional-dependency check the front end emits for total[g] = s: pairs of rows agreeing on g, differing on s. */
  const functionalCheck = (): QpProgram =>
    program(
      [rel('r', ['int32', 'int32'], 'edb'), rel('total', ['int32', 'int32']), rel('$bad', ['int32', 'int32'])],
      [
        block('b', [
          { kind: 'aggregate', target: 'total', source: 'r', groupBy: [0], aggregates: [{ fn: 'sum', column: 1, type: 'int32' }] },
          mapJoin('$bad', 'total', 'total', [0], [0], cols(0, 1), [cmp(col(1), '!=', col(3))]),
        ]),
      ],
      { r: [[1, 5], [1, 6], [2, 7]] },
    );

  it('reads a join of a relation with itself on a key as a map of one row, and a filter e != e as empty', () => {
    for (const joinStrategy of ['sort-merge', 'hash'] as const) {
      const p = planToKernels(functionalCheck(), { joinStrategy });
      expect(kernelLines(p, 'b'), joinStrategy).toEqual(['total := aggregate r by (#0) compute (sum(#1): int32)']);
    }
    expectSameResults(functionalCheck());
  });

  it('keeps a self-join on columns that are no key', () => {
    const plan = program(
      [rel('r', ['int32', 'int32'], 'edb'), rel('pairs', ['int32', 'int32'])],
      [block('b', [mapJoin('pairs', 'r', 'r', [0], [0], cols(1, 3), [cmp(col(1), '!=', col(3))])])],
      { r: [[1, 5], [1, 6], [2, 7]] },
    );
    expect(kernelLines(planToKernels(plan), 'b').some((l) => l.includes('mergeJoin r on (#0), r on (#0)'))).toBe(true);
    expectSameResults(plan);
  });

  // {(b, a) | r} is duplicate-free but sorted by neither column: the aggregate by #0 needs its groups together.
  const byFirst = (arg: 'int32' | 'float32'): QpProgram =>
    program(
      [rel('r', [arg, 'int32'], 'edb'), rel('$s', ['int32', arg], 'temp'), rel('by', ['int32', arg])],
      [
        block('b', [
          mapFilter('$s', 'r', [col(1), col(0, arg)]),
          { kind: 'aggregate', target: 'by', source: '$s', groupBy: [0], aggregates: [{ fn: 'max', column: 1, type: arg }] },
        ]),
      ],
      { r: [[1, 5], [2, 5], [3, 4]] },
    );

  it('sorts rows only aggregates by g read by g alone (an aggregate that cannot hash: max of float32)', () => {
    expect(kernelLines(planToKernels(byFirst('float32')), 'b')).toEqual([
      '%k3 := mapFilter r -> (#1, #0) (any order)',
      '%k4 := sort %k3 by (#0)',
      'by := aggregate %k4 by (#0) compute (max(#1): float32)',
    ]);
    expectSameResults(byFirst('float32'));
  });

  it('aggregates in a hash table instead of sorting the rows, then sorts the groups; fused with the rows producer', () => {
    expect(kernelLines(planToKernels(byFirst('int32')), 'b')).toEqual(['%k5 := pipeline r -> (#1, #0) aggregate by (#0) compute (max(#1): int32)', 'by := sort %k5 by (#0)']);
    expect(kernelLines(planToKernels(byFirst('int32'), { fusion: false }), 'b')).toEqual([
      '%k3 := mapFilter r -> (#1, #0) (any order)',
      '%k5 := pipeline %k3 -> (#0, #1) aggregate by (#0) compute (max(#1): int32)',
      'by := sort %k5 by (#0)',
    ]);
    expectSameResults(byFirst('int32'));
  });
});
