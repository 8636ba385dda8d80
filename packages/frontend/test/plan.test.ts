import { describe, expect, it } from 'vitest';
import type { BasicBlock, Expr, QpCommand } from '@vixen/queryplan';
import { plan as planWithOrigins, withoutOrigins } from './helpers.js';

const plan = (text: string) => withoutOrigins(planWithOrigins(text));

const col = (index: number, type: Expr['type'] = 'int32'): Expr => ({ kind: 'col', index, type });
const int = (value: number): Expr => ({ kind: 'const', type: 'int32', value });
const eq = (left: Expr, right: Expr) => ({ kind: 'compare', op: '=', left, right }) as const;

function block(blocks: BasicBlock[], label: string): BasicBlock {
  const b = blocks.find((x) => x.label === label);
  expect(b, `block ${label}`).toBeDefined();
  return b!;
}

/** The rule-body steps of a block, without the unions and bookkeeping around them. */
type BodyCommand = Extract<QpCommand, { kind: 'mapFilter' | 'mapJoin' }>;
function joinsAndFilters(commands: QpCommand[]): BodyCommand[] {
  return commands.filter((c): c is BodyCommand => c.kind === 'mapFilter' || c.kind === 'mapJoin');
}

describe('plan', () => {
  it('names the rule each command came from (file:line and its text); plan bookkeeping names none', () => {
    const p = planWithOrigins('e(x, y) -> int32(x), int32(y).\np(x, y) <- e(x, y).\np(x, z) <- p(x, y),\n  e(y, z).\n');
    const loop = block(p.blocks, 'loop_p').commands;
    const recursive = [{ file: 'main.logic', line: 3, text: 'p(x, z) <- p(x, y), e(y, z)' }];
    expect(loop.find((c) => c.kind === 'mapJoin')!.rules).toEqual(recursive);
    expect(loop.find((c) => c.kind === 'union' && c.target === '$new_p')!.rules).toEqual(recursive);
    expect(loop.filter((c) => c.kind === 'difference' || c.kind === 'copy' || c.kind === 'clear').every((c) => c.rules === undefined)).toBe(true);
    expect(block(p.blocks, 'entry').commands[0]!.rules).toEqual([{ file: 'main.logic', line: 2, text: 'p(x, y) <- e(x, y)' }]);
  });

  it('a min-recursive head keeps the best value per key, merging only improved keys', () => {
    const rules = 'edge(x, y, w) -> int32(x), int32(y), int32(w).\ndist[0] = 0.\ndist[y] = d <- agg<<d = min(c)>> dist[x] = u, edge(x, y, w), c = u + w.\n';
    // A plain rule in the loop too: its candidates join the aggregate's in $new_dist.
    const p = plan(`${rules}dist[y] = d <- dist[x] = d, edge(x, y, 0).\n`);
    const best = { kind: 'aggregate', groupBy: [0], aggregates: [{ fn: 'min', column: 1, type: 'int32' }] };
    expect(block(p.blocks, 'entry').commands).toEqual([
      { ...best, target: 'dist', source: 'dist' },
      { kind: 'copy', target: '$delta_dist', source: 'dist' },
    ]);
    const loop = block(p.blocks, 'loop_dist').commands;
    const [first] = joinsAndFilters(loop);
    expect(first).toMatchObject({ kind: 'mapJoin', left: '$delta_dist', right: 'edge' });
    // dist and the candidates merged, cut to the best per key; what dist lacks of that is the next delta.
    const merge = loop.slice(loop.findIndex((c) => c.kind === 'union' && c.left === 'dist'));
    const merged = merge[0]!.target;
    expect(merge.map((c) => [c.kind, c.target, 'left' in c ? c.left : 'source' in c ? c.source : '', 'right' in c ? c.right : ''])).toEqual([
      ['union', merged, 'dist', '$new_dist'],
      ['aggregate', merged, merged, ''],
      ['difference', '$delta_dist', merged, 'dist'],
      ['copy', 'dist', merged, ''],
      ['clear', '$new_dist', '', ''],
    ]);
    expect(merge[1]).toMatchObject(best);
    // No join reads dist in the loop: only the rules' join with the delta.
    expect(joinsAndFilters(loop).filter((c) => c.kind === 'mapJoin' && (c.left === 'dist' || c.right === 'dist'))).toEqual([]);
    expect(block(p.blocks, 'loop_dist').terminator).toMatchObject({ kind: 'branch', condition: { kind: 'empty', relations: ['$delta_dist'] } });
    // One aggregate rule alone: its aggregate and the cut after the merge; no functional check of dist is left.
    const single = plan(rules);
    expect(block(single.blocks, 'loop_dist').commands.filter((c) => c.kind === 'aggregate')).toHaveLength(2);
    expect(single.relations.map((r) => r.name)).not.toContain('$functional_dist');
    expect(single.constraints ?? []).toEqual([]);
    // With a second value column the key does not determine it: that dependency is still checked.
    const wide = plan('e(x, y) -> int32(x), int32(y).\np[1] = 5, 0.\np[y] = a, v <- agg<<v = min(w)>> p(x, a, u), e(x, y), w = u + 1.\n');
    expect(wide.constraints).toMatchObject([{ kind: 'functional', relation: '$functional_p', keys: 1 }]);
  });

  it('shortens long rule text to about 60 characters', () => {
    const p = planWithOrigins('e(x, y) -> int32(x), int32(y).\nlongname(aaaaaaaa, bbbbbbbb) <- e(aaaaaaaa, bbbbbbbb), aaaaaaaa < bbbbbbbb, bbbbbbbb > 3.\n');
    const text = block(p.blocks, 'entry').commands[0]!.rules![0]!.text;
    expect(text).toHaveLength(60);
    expect(text).toMatch(/^longname\(aaaaaaaa, bbbbbbbb\) <- e\(.*\.\.\.$/);
  });

  it('rules over the same body share its join (common subexpression elimination)', () => {
    const p = plan(`
      e(x, y) -> int32(x), int32(y).
      f(y, z) -> int32(y), int32(z).
      a(x) <- e(x, y), f(y, z), z > 1.
      b(x) <- e(x, y), f(y, z), z > 1.
      c(x, z) <- e(x, y), f(y, z), z > 1.
    `);
    // a and b share one join; c projects another column, so its join differs.
    const commands = block(p.blocks, 'entry').commands;
    expect(commands.filter((c) => c.kind === 'mapJoin')).toHaveLength(2);
    expect(commands).toHaveLength(5);
    expect(commands.slice(1, 3)).toEqual([
      { kind: 'union', target: 'a', left: 'a', right: '$t1' },
      { kind: 'union', target: 'b', left: 'b', right: '$t1' },
    ]);
    expect(p.relations.filter((r) => r.kind === 'temp').map((r) => r.name)).toEqual(['$t1', '$t3']);
  });

  it('even-odd (Red Fox Listing 1): one semi-naive loop over the mutually recursive pair', () => {
    const p = plan(`
      number(n) -> int32(n).
      number(0). number(1). number(2). number(3).
      next(n,m) -> int32(n), int32(m).
      next(0, 1). next(1, 2). next(2, 3).
      even(n) -> int32(n).
      even(0).
      even(n) <- number(n), next(m,n), odd(m).
      odd(n) -> int32(n).
      odd(n) <- next(m,n), even(m).
    `);
    expect(p.relations.filter((r) => r.kind !== 'temp').map((r) => [r.name, r.kind, r.output])).toEqual([
      ['number', 'edb', false],
      ['next', 'edb', false],
      ['even', 'idb', true],
      ['odd', 'idb', true],
    ]);
    expect(p.relations.filter((r) => r.kind === 'temp').every((r) => r.name.startsWith('$') && !r.output)).toBe(true);
    expect(p.facts).toEqual({ number: [[0], [1], [2], [3]], next: [[0, 1], [1, 2], [2, 3]], even: [[0]] });
    expect(p.entry).toBe('entry');
    expect(p.blocks.map((b) => b.label)).toEqual(['entry', 'loop_even', 'after_even']);
    expect(block(p.blocks, 'entry')).toEqual({
      label: 'entry',
      commands: [
        { kind: 'copy', target: '$delta_even', source: 'even' },
        { kind: 'copy', target: '$delta_odd', source: 'odd' },
      ],
      terminator: { kind: 'jump', target: 'loop_even' },
    });
    const loop = block(p.blocks, 'loop_even');
    expect(loop.commands).toEqual([
      // even(n) <- number(n), next(m,n), odd(m): variant on $delta_odd, joined with next on m, then number on n.
      { kind: 'mapJoin', target: '$t1', left: '$delta_odd', right: 'next', leftKeys: [0], rightKeys: [0], filter: [], project: [col(2)] },
      { kind: 'mapJoin', target: '$t2', left: '$t1', right: 'number', leftKeys: [0], rightKeys: [0], filter: [], project: [col(0)] },
      { kind: 'union', target: '$new_even', left: '$new_even', right: '$t2' },
      // odd(n) <- next(m,n), even(m): variant on $delta_even.
      { kind: 'mapJoin', target: '$t3', left: '$delta_even', right: 'next', leftKeys: [0], rightKeys: [0], filter: [], project: [col(2)] },
      { kind: 'union', target: '$new_odd', left: '$new_odd', right: '$t3' },
      { kind: 'difference', target: '$new_even', left: '$new_even', right: 'even' },
      { kind: 'union', target: 'even', left: 'even', right: '$new_even' },
      { kind: 'copy', target: '$delta_even', source: '$new_even' },
      { kind: 'clear', target: '$new_even' },
      { kind: 'difference', target: '$new_odd', left: '$new_odd', right: 'odd' },
      { kind: 'union', target: 'odd', left: 'odd', right: '$new_odd' },
      { kind: 'copy', target: '$delta_odd', source: '$new_odd' },
      { kind: 'clear', target: '$new_odd' },
    ]);
    expect(loop.terminator).toEqual({
      kind: 'branch',
      condition: { kind: 'empty', relations: ['$delta_even', '$delta_odd'] },
      ifTrue: 'after_even',
      ifFalse: 'loop_even',
    });
    expect(block(p.blocks, 'after_even')).toEqual({ label: 'after_even', commands: [], terminator: { kind: 'halt' } });
  });

  it('transitive closure: the base rule initialises, the recursive rule reads the delta', () => {
    const p = plan(`
      edge(0, 1). edge(1, 2).
      path(x, y) <- edge(x, y).
      path(x, z) <- path(x, y), edge(y, z).
    `);
    expect(p.relations.find((r) => r.name === 'edge')).toMatchObject({
      kind: 'edb',
      columns: [
        { name: 'c0', type: 'int32' },
        { name: 'c1', type: 'int32' },
      ],
    });
    expect(p.relations.find((r) => r.name === 'path')).toMatchObject({ kind: 'idb', output: true, columns: [{ name: 'x' }, { name: 'y' }] });
    expect(block(p.blocks, 'entry').commands).toEqual([
      { kind: 'mapFilter', target: '$t1', source: 'edge', filter: [], project: [col(0), col(1)] },
      { kind: 'union', target: 'path', left: 'path', right: '$t1' },
      { kind: 'copy', target: '$delta_path', source: 'path' },
    ]);
    expect(block(p.blocks, 'loop_path').commands.slice(0, 2)).toEqual([
      { kind: 'mapJoin', target: '$t2', left: '$delta_path', right: 'edge', leftKeys: [1], rightKeys: [0], filter: [], project: [col(0), col(3)] },
      { kind: 'union', target: '$new_path', left: '$new_path', right: '$t2' },
    ]);
    expect(block(p.blocks, 'loop_path').terminator).toMatchObject({ condition: { relations: ['$delta_path'] } });
  });

  it('non-linear recursion: one variant per recursive body atom', () => {
    const p = plan('e(1, 2).\np(x, y) <- e(x, y).\np(x, z) <- p(x, y), p(y, z).');
    const variants = block(p.blocks, 'loop_p').commands.filter((c) => c.kind === 'mapJoin');
    expect(variants).toMatchObject([
      { left: '$delta_p', right: 'p', leftKeys: [1], rightKeys: [0] },
      { left: '$delta_p', right: 'p', leftKeys: [0], rightKeys: [1], project: [col(2), col(1)] },
    ]);
  });

  it('mutual recursion with a base rule: both deltas, init before the loop', () => {
    const p = plan(`
      e(1, 2). e(2, 3).
      a(x) <- e(x, _).
      a(y) <- b(x), e(x, y).
      b(y) <- a(x), e(x, y).
    `);
    const entry = block(p.blocks, 'entry');
    expect(entry.commands.map((c) => c.kind)).toEqual(['mapFilter', 'union', 'copy', 'copy']);
    expect(entry.commands[0]).toEqual({ kind: 'mapFilter', target: '$t1', source: 'e', filter: [], project: [col(0)] });
    const loop = block(p.blocks, 'loop_a');
    expect(joinsAndFilters(loop.commands)).toMatchObject([
      { left: '$delta_b', right: 'e', project: [col(2)] },
      { left: '$delta_a', right: 'e', project: [col(2)] },
    ]);
    expect(loop.terminator).toMatchObject({ condition: { relations: ['$delta_a', '$delta_b'] } });
  });

  it('strata run in dependency order, whatever the source order', () => {
    const p = plan('top(x) <- mid(x).\nmid(x) <- base(x).\nbase(1).');
    expect(p.blocks).toHaveLength(1);
    expect(p.blocks[0]!.commands.filter((c) => c.kind === 'union').map((c) => c.target)).toEqual(['mid', 'top']);
    expect(p.blocks[0]!.terminator).toEqual({ kind: 'halt' });
  });

  it('constants in body atoms are filters, constant head arguments are projected constants', () => {
    const p = plan('q(1, 3). q(2, 4).\np(x, 5, "five") <- q(x, 3).');
    expect(p.blocks[0]!.commands[0]).toEqual({
      kind: 'mapFilter',
      target: '$t1',
      source: 'q',
      filter: [eq(col(1), int(3))],
      project: [col(0), int(5), { kind: 'const', type: 'string', value: 'five' }],
    });
    expect(p.relations.find((r) => r.name === 'p')!.columns.map((c) => c.type)).toEqual(['int32', 'int32', 'string']);
  });

  it('int64: plain literals in int64 positions become bigints; L literals infer int64 columns', () => {
    const p = plan('big(x) -> int64(x).\nbig(7). big(-8).\nm(1, 2L, "s").\nhit(x) <- big(x), x > 5.\nk(y) <- m(_, y, _).');
    expect(p.facts['big']).toEqual([[7n], [-8n]]);
    // k reads only m's second column, so pruneColumns keeps only it; the declaration records all three.
    expect(p.facts['m']).toEqual([[2n]]);
    const m = p.relations.find((r) => r.name === 'm')!;
    expect(m.pruned?.sourceColumns.map((c) => c.type)).toEqual(['int32', 'int64', 'string']);
    expect(m.pruned?.loadColumns).toEqual([1]);
    expect(p.relations.find((r) => r.name === 'k')!.columns.map((c) => c.type)).toEqual(['int64']);
    const hit = p.blocks[0]!.commands[0]!;
    expect(hit).toMatchObject({ kind: 'mapFilter', filter: [{ op: '>', left: col(0, 'int64'), right: { kind: 'const', type: 'int64', value: 5n } }] });
  });

  it('repeated variables: within an atom a filter, across atoms a join key', () => {
    const p = plan(`
      e(1, 1). e(1, 2). e(2, 3). e(3, 1).
      self(x) <- e(x, x).
      tri(x) <- e(x, y), e(y, z), e(z, x).
    `);
    const cmds = joinsAndFilters(p.blocks[0]!.commands);
    expect(cmds[0]).toEqual({ kind: 'mapFilter', target: '$t1', source: 'e', filter: [eq(col(1), col(0))], project: [col(0)] });
    expect(cmds.slice(1)).toEqual([
      { kind: 'mapJoin', target: '$t2', left: 'e', right: 'e', leftKeys: [1], rightKeys: [0], filter: [], project: [col(0), col(3)] },
      // z and x are both bound by the left side: two join keys.
      { kind: 'mapJoin', target: '$t3', left: '$t2', right: 'e', leftKeys: [1, 0], rightKeys: [0, 1], filter: [], project: [col(0)] },
    ]);
  });

  it('atoms without shared variables are a product (empty keys)', () => {
    const p = plan('a(1). a(2). b("x").\npair(x, y) <- a(x), b(y).');
    expect(p.blocks[0]!.commands[0]).toEqual({
      kind: 'mapJoin',
      target: '$t1',
      left: 'a',
      right: 'b',
      leftKeys: [],
      rightKeys: [],
      filter: [],
      project: [col(0), col(1, 'string')],
    });
  });

  it('joins atoms sharing variables first and applies comparisons as soon as they are bound', () => {
    const p = plan(`
      a(1). b(1, 2). c(1, 1).
      r(x, w) <- a(x), b(z, w), c(x, z), x < 9, z != w.
    `);
    const cmds = joinsAndFilters(p.blocks[0]!.commands);
    expect(cmds).toEqual([
      { kind: 'mapFilter', target: '$t1', source: 'a', filter: [{ kind: 'compare', op: '<', left: col(0), right: int(9) }], project: [col(0)] },
      { kind: 'mapJoin', target: '$t2', left: '$t1', right: 'c', leftKeys: [0], rightKeys: [0], filter: [], project: [col(0), col(2)] },
      {
        kind: 'mapJoin',
        target: '$t3',
        left: '$t2',
        right: 'b',
        leftKeys: [1],
        rightKeys: [0],
        filter: [{ kind: 'compare', op: '!=', left: col(1), right: col(3) }],
        project: [col(0), col(3)],
      },
    ]);
  });

  it('keeps only variables needed later', () => {
    const p = plan('e(1, 2).\nq(x) <- e(x, y), e(y, z), e(z, w).');
    const cmds = joinsAndFilters(p.blocks[0]!.commands);
    expect(cmds.map((c) => c.project)).toEqual([[col(0), col(3)], [col(0)]]);
    expect(p.relations.find((r) => r.name === '$t1')!.columns).toEqual([
      { name: 'x', type: 'int32' },
      { name: 'z', type: 'int32' },
    ]);
  });

  it('types of undeclared IDB predicates are inferred through rules', () => {
    const p = plan('name(n, s) -> int32(n), string(s).\na(s, n) <- b(n, s).\nb(n, s) <- name(n, s).');
    expect(p.relations.find((r) => r.name === 'a')!.columns.map((c) => c.type)).toEqual(['string', 'int32']);
  });

  it('a program without rules halts at once', () => {
    const p = plan('e(x) -> int32(x).\ne(1). e(1).');
    expect(p.facts).toEqual({ e: [[1]] });
    expect(p.blocks).toEqual([{ label: 'entry', commands: [], terminator: { kind: 'halt' } }]);
  });
});
