/**
 * Soufflé's scoping of aggregate variables (scoping.ts) on single rules: which variables are injected into an
 * aggregate (it is evaluated per binding of them) and which are witnesses, as Soufflé's Aggregate.cpp decides.
 */
import { describe, expect, it } from 'vitest';
import { parseSouffle } from '../src/index.js';
import { dnf, normalizeAggregates } from '../src/souffle/normalize.js';
import { formulaAggregates, injectedVars, innerAggregates, witnessVars, type SClause } from '../src/souffle/scoping.js';

/** The rule's clause (one head, one disjunct) and its aggregates, outermost first, nested ones after theirs. */
function clause(rule: string): { clause: SClause; aggregates: ReturnType<typeof formulaAggregates> } {
  const { ast, diagnostics } = parseSouffle(rule, 'r.dl');
  expect(diagnostics).toEqual([]);
  const item = ast.items[0]!;
  if (item.kind !== 'rule') throw new Error('expected a rule');
  const [body] = dnf(normalizeAggregates(item.body, []));
  const c = { head: item.heads[0]!, body: body! };
  return { clause: c, aggregates: c.body.flatMap(formulaAggregates).flatMap((a) => [a, ...innerAggregates(a)]) };
}

function scopes(rule: string): { injected: string[]; witnesses: string[] }[] {
  const { clause: c, aggregates } = clause(rule);
  return aggregates.map((a) => ({ injected: injectedVars(c, a), witnesses: witnessVars(c, a) }));
}

describe('aggregate scoping', () => {
  it('a variable bound outside the aggregate is injected; the others are local', () => {
    expect(scopes('p(x, n) :- q(x), n = count : { r(x, y) }.')).toEqual([{ injected: ['x'], witnesses: [] }]);
  });

  it('a variable only compared inside is injected when bound outside', () => {
    expect(scopes('p(x, n) :- q(x), n = count : { q(y), y > x }.')).toEqual([{ injected: ['x'], witnesses: [] }]);
  });

  it('head variables bound only inside a max are its witnesses', () => {
    expect(scopes('p(y, x, l) :- l = max m : len(x, y, m).')).toEqual([{ injected: [], witnesses: ['y', 'x'] }]);
  });

  it('the target is local even where the rule binds the same name', () => {
    expect(scopes('p(a) :- a = max a : r(a, _).')).toEqual([{ injected: [], witnesses: [] }]);
  });

  it('a variable bound by another aggregate is injected', () => {
    expect(scopes('p(x, c) :- x = max v : a(v), c = count : { b(x, _) }.')).toEqual([
      { injected: [], witnesses: [] },
      { injected: ['x'], witnesses: [] },
    ]);
  });

  it('a nested aggregate sees what the outer body and the rule bind', () => {
    expect(scopes('p(x, n) :- q(x), n = count : { r(x, y), y = max z : s(x, z) }.')).toEqual([
      { injected: ['x'], witnesses: [] },
      { injected: ['x'], witnesses: [] },
    ]);
  });

  it('head arguments do not bind: a head-only variable of a count is a witness (an error later)', () => {
    expect(scopes('p(x, n) :- n = count : { e(x, _) }.')).toEqual([{ injected: [], witnesses: ['x'] }]);
  });
});
