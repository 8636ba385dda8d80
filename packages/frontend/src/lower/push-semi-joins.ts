/**
 * Semi-join pushdown across rules. A temporary relation T (derived, not an output, read by one body atom of one
 * rule) whose column k that reading rule joins with a small atom S (one the rule filters by a constant, or a
 * derived relation made only of such atoms) keeps, of its rows, only those the join can match:
 * `$semijoin_T_k(v) <- S, <the rule's comparisons over S's variables>` and every rule of T gains the atom
 * `$semijoin_T_k(<its head's column k>)`, first, so that T's joins start from it. T's rules must join (see
 * `joins`). Repeated until nothing applies: a key set pushed into an aggregate goes on into the join it sums.
 * TPC-H Q7 built all 15M order-nation pairs at SF 10 and joined 18M lines with them before its two-nation
 * filter; Q2 took the minimum cost of every part before the part filter.
 *
 * Why the answer is the same: T's rows are read only by that atom, where a row without a match in S joins with
 * nothing. The added atom binds no new variable, so an aggregated rule of T (grouping by column k) keeps its
 * groups whole and drops only groups the reader never matches. T must be neither recursive nor read by what S
 * reads, nor limited by an order clause; its own functional check counts as a reader unless T is one aggregate
 * rule, which can never break it. S joins on its key (see `keyed`), so the key set is no larger than S.
 */
import type { Column, Pass } from '@vixen/queryplan';
import type { CheckedProgram, Relation, TypedAtom, TypedRule } from '../check/program.js';
import { termVars } from './rule-chain.js';

export interface SemiJoinScope {
  /** The relations a run reads back; without them every derived relation is an output and nothing is pushed. */
  outputs?: readonly string[];
  /** Relations read or written outside the rules (Soufflé `.input`/`.output`, order clauses). */
  external: readonly string[];
}

const semiJoinName = (t: string, k: number): string => `$semijoin_${t}_${k}`;

/** The pass (rulesPipeline, before lowering), so `--disable-pass push-semi-joins` can compare plans with and without it. */
export const pushSemiJoinsPass: Pass<CheckedProgram, SemiJoinScope> = { name: 'push-semi-joins', required: false, run: pushSemiJoins };

export function pushSemiJoins(program: CheckedProgram, scope: SemiJoinScope): CheckedProgram {
  if (!scope.outputs) return program;
  const outputs = new Set([...scope.outputs, ...scope.external]);
  let rules = [...program.rules];
  const relations = [...program.relations];
  const done = new Set<string>();
  for (;;) {
    const next = pushOne(rules, relations, outputs, done);
    if (!next) return { ...program, relations, rules };
    rules = next;
  }
}

/** One pushdown, or undefined when none applies. */
function pushOne(rules: TypedRule[], relations: Relation[], outputs: ReadonlySet<string>, done: Set<string>): TypedRule[] | undefined {
  const byName = new Map(relations.map((r) => [r.name, r]));
  const rulesOf = (p: string): TypedRule[] => rules.filter((r) => r.head.pred === p);
  const reads = (r: TypedRule): string[] => [...r.atoms, ...r.negated].map((a) => a.pred);
  /** Every relation `p` reads, through rules, itself included only through a cycle. */
  const reached = (p: string): Set<string> => {
    const seen = new Set<string>();
    const todo = [p];
    while (todo.length > 0) for (const r of rulesOf(todo.pop()!)) for (const q of reads(r)) if (!seen.has(q) && seen.add(q)) todo.push(q);
    return seen;
  };
  const pinned = (rule: TypedRule, a: TypedAtom): boolean =>
    a.args.some((t) => t.kind === 'const') ||
    rule.comparisons.some((c) => c.op === '=' && [c.left, c.right].some((s) => s.kind === 'var' && a.args.some((t) => t.kind === 'var' && t.name === s.name)) && [c.left, c.right].some((s) => s.kind === 'const'));
  // Small: derived, not recursive, every positive atom of every rule pinned or small itself.
  const small = new Set<string>();
  for (let grew = true; grew; ) {
    grew = false;
    for (const r of relations) {
      if (small.has(r.name) || !r.hasRules || r.facts.length > 0) continue;
      const own = rulesOf(r.name);
      if (own.every((rule) => rule.atoms.length > 0 && rule.atoms.every((a) => small.has(a.pred) || pinned(rule, a)))) {
        small.add(r.name);
        grew = true;
      }
    }
  }
  /**
   * Whether column `j` of `p` is a key of the rows it comes from: a declared one-column key of a base relation, or
   * in every rule of a small relation a variable at such a column of a body atom. A filtered dimension joined on
   * its key is what makes the semi-join worth its cost; a filtered fact table (Q10's returned lines, one order's
   * key on many rows) would make a key set as large as the rows it restricts.
   */
  const keyed = (p: string, j: number): boolean => {
    const r = byName.get(p)!;
    if (!r.hasRules) return (r.declaredKeys ?? []).some((k) => k.columns.length === 1 && k.columns[0] === j);
    if (!small.has(p)) return false;
    return rulesOf(p).every((rule) => {
      const h = rule.head.args[j]!;
      return h.kind === 'var' && rule.atoms.some((a) => a.args.some((x, i) => x.kind === 'var' && x.name === h.name && keyed(a.pred, i)));
    });
  };
  /**
   * Whether `p` joins: a rule of two or more atoms, here or in a derived relation a rule of `p` reads. A semi-join
   * is one join more; it pays where it shrinks a join's rows before they are made. A scan or an aggregate of one
   * table the reader probes anyway would only trade its rows for a probe and a key set (Q21's counts per order
   * over all lines, by half the orders: 3x the kernel time on llvmpipe at SF 0.1).
   */
  const joins = (p: string, seen = new Set<string>()): boolean =>
    !seen.has(p) && seen.add(p) && rulesOf(p).some((r) => r.atoms.length >= 2 || r.atoms.some((a) => joins(a.pred, seen)));
  for (const t of relations) {
    if (!t.hasRules || t.facts.length > 0 || t.name.startsWith('$') || outputs.has(t.name) || small.has(t.name)) continue;
    const own = rulesOf(t.name);
    const oneAggregate = own.length === 1 && own[0]!.aggregate !== undefined;
    const check = `$functional_${t.name}`;
    const readers = rules.filter((r) => reads(r).includes(t.name) && !(oneAggregate && r.head.pred === check));
    if (readers.length !== 1 || readers[0]!.negated.some((a) => a.pred === t.name)) continue;
    const reader = readers[0]!;
    const at = reader.atoms.filter((a) => a.pred === t.name);
    if (at.length !== 1 || reached(t.name).has(t.name) || !joins(t.name)) continue;
    const atom = at[0]!;
    for (let k = 0; k < atom.args.length; k++) {
      const v = atom.args[k]!;
      if (v.kind !== 'var' || done.has(semiJoinName(t.name, k))) continue;
      // The head's column k in every rule of T: a variable bound by the body, not an aggregate's result.
      const heads = own.map((r) => r.head.args[k]!);
      if (!own.every((r, i) => { const h = heads[i]!; return h.kind === 'var' && !r.aggregate?.some((b) => b.target === h.name) && r.atoms.some((a) => a.args.some((x) => x.kind === 'var' && x.name === h.name)); })) continue;
      const s = reader.atoms.find((a) => a !== atom && (small.has(a.pred) || pinned(reader, a)) && a.args.some((x, j) => x.kind === 'var' && x.name === v.name && keyed(a.pred, j)));
      if (!s || s.pred === t.name || reached(s.pred).has(t.name)) continue;
      const name = semiJoinName(t.name, k);
      done.add(name);
      const sVars = new Set(s.args.flatMap(termVars));
      const column: Column = { ...t.columns[k]!, name: v.name };
      relations.push({ name, columns: [column], hasRules: true, facts: [], factSpans: [], span: t.span });
      const keyRule: TypedRule = {
        head: { pred: name, args: [v], span: reader.head.span },
        atoms: [s],
        negated: [],
        comparisons: reader.comparisons.filter((c) => [c.left, c.right].flatMap(termVars).every((x) => sVars.has(x))),
        assignments: [],
        span: reader.span,
        text: `semi-join of ${t.name} by ${s.pred} (${reader.text})`,
      };
      return [
        ...rules.map((r) => (r.head.pred === t.name ? { ...r, atoms: [{ pred: name, args: [r.head.args[k]!], span: r.span }, ...r.atoms] } : r)),
        keyRule,
      ];
    }
  }
  return undefined;
}
