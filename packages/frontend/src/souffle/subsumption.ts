/**
 * Soufflé's subsumption `r(k..., a) <= r(k..., b) :- b < a.` deletes a tuple that another one of the same key
 * dominates. Where it prefers the least (or greatest) last column per key, that is a lattice predicate, as a
 * `btree_min` (`btree_max`) relation is (lattice.ts). Where the relation is recursive with other relations, those
 * may keep what Soufflé derived from a tuple before deleting it, which depends on its evaluation order: refused.
 */
import { errorAt, type Diagnostic } from '@vixen/queryplan';
import type { SAtom, SFormula, SItem } from './ast.js';
import { relationsRead } from './traverse.js';

export const SUBSUMPTION_FORMS =
  'subsumption (<=) is not supported here: only one that keeps the least or greatest last column per key is (r(k..., a) <= r(k..., b) :- b < a, or <=, >, >=, with the same key variables)';

/**
 * Which extreme `dominated <= dominating :- body` keeps per key: `min` where the body says the dominating last
 * column is the smaller, `max` where the greater; undefined for any other subsumption.
 */
export function preference(dominated: SAtom, dominating: SAtom, body: SFormula): 'min' | 'max' | undefined {
  const n = dominated.args.length;
  if (dominating.rel !== dominated.rel || dominating.args.length !== n || n === 0 || body.kind !== 'compare') return undefined;
  const names = (a: SAtom): (string | undefined)[] => a.args.map((t) => (t.kind === 'var' ? t.name : undefined));
  const [mine, theirs] = [names(dominated), names(dominating)];
  if ([...mine, ...theirs].some((v) => v === undefined)) return undefined;
  const keys = mine.slice(0, -1);
  const [a, b] = [mine[n - 1]!, theirs[n - 1]!];
  if (keys.some((k, i) => k !== theirs[i]) || new Set([...keys, a, b]).size !== n + 1) return undefined;
  const { left, right, op } = body;
  if (left.kind !== 'var' || right.kind !== 'var') return undefined;
  // Normalised to `b OP a`: the dominating value OP the dominated one.
  const flipped: Partial<Record<string, string>> = { '<': '>', '<=': '>=', '>': '<', '>=': '<=' };
  const relation = left.name === b && right.name === a ? op : left.name === a && right.name === b ? flipped[op] : undefined;
  return relation === '<' || relation === '<=' ? 'min' : relation === '>' || relation === '>=' ? 'max' : undefined;
}

/**
 * The relation each `subsume` item makes a lattice, with its aggregate; a located error for a relation that is
 * recursive with another one, or that two subsumptions prefer differently.
 */
export function subsumptionLattices(items: readonly SItem[], diagnostics: Diagnostic[]): Map<string, 'min' | 'max'> {
  const reachable = relationsRead(items);
  const out = new Map<string, 'min' | 'max'>();
  for (const item of items) {
    if (item.kind !== 'subsume') continue;
    const rel = item.rel.name;
    const prior = out.get(rel);
    const partner = [...reachable(rel)].find((other) => other !== rel && reachable(other).has(rel));
    if (prior && prior !== item.fn) diagnostics.push(errorAt(`subsumption on ${rel} is not supported: its subsumptions keep both the least and the greatest value`, item.span));
    else if (partner) diagnostics.push(errorAt(`subsumption on ${rel} is not supported: ${rel} is recursive with ${partner}, which may keep what Soufflé derives from deleted tuples`, item.span));
    else out.set(rel, item.fn);
  }
  return out;
}
