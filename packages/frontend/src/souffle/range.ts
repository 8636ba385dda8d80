/**
 * Soufflé's `range(from, to[, step])` is a functor with many results: `n = range(0, 10)` binds n to 0, 1, ..., 9
 * (descending where from > to, by `step` where given). With constant number arguments the host knows every value:
 * each distinct call becomes a relation of facts `$rangeK(x)`, and the call a fresh variable that an atom of that
 * relation binds. Where the rule computes the bounds (`range(z, z + 3)`, `range(0, n)` with n a count), the call
 * reads a generator `$rangegenK(from, to, step, x)` over the bounds a demand rule `$rangereqK` collects from the
 * rest of the rule's body. A call inside an aggregate, in a disjunction or a fact with computed bounds, bounds the
 * rest of the body does not bind, and constant ranges of more than MAX_VALUES values are located "not supported"
 * errors.
 */
import { errorAt, type CompareOp, type Diagnostic, type SourceSpan } from '@vixen/queryplan';
import type { SAtom, SFormula, SItem, SouffleAst, STerm } from './ast.js';
import { formulaVars, groundedVars, literals, mapAtom, mapFormula, mapTerm, termVars } from './scoping.js';

const MAX_VALUES = 100_000;

/** Soufflé's `runRange` (EvaluatorUtil.h): the values of `range(from, to, step)`. */
function rangeValues(from: bigint, to: bigint, step: bigint): bigint[] {
  const out: bigint[] = [];
  if (step > 0n) for (let x = from; x < to; x += step) out.push(x);
  else if (step < 0n) for (let x = from; to < x; x += step) out.push(x);
  else if (from !== to) out.push(from);
  return out;
}

/** The number constant `t` stands for; undefined for anything else. */
function constant(t: STerm): bigint | undefined {
  if (t.kind === 'int' && !t.unsigned) return t.value;
  if (t.kind === 'neg') {
    const v = constant(t.operand);
    return v === undefined ? undefined : -v;
  }
  return undefined;
}

/** A range call whose bounds the rule computes, and the variable that stands for it. */
interface Pending {
  call: Extract<STerm, { kind: 'call' }>;
  v: Extract<STerm, { kind: 'var' }>;
}

function and(items: SFormula[], span: SourceSpan): SFormula {
  return items.length === 1 ? items[0]! : { kind: 'and', items, span };
}

/** `asts` with each `range(...)` call of a rule or fact read from a relation of facts (see above). */
export function expandRanges(asts: SouffleAst[], diagnostics: Diagnostic[]): SouffleAst[] {
  const relations = new Map<string, { name: string; values: bigint[]; span: SourceSpan }>();
  let vars = 0;
  /**
   * The call as a variable: the atom that binds it pushed to `bound` (constant bounds) or the call to `pending`
   * (computed bounds, see computedRanges); undefined after reporting a problem.
   */
  const expand = (call: Extract<STerm, { kind: 'call' }>, bound: SAtom[], pending: Pending[]): STerm | undefined => {
    const fail = (message: string): undefined => void diagnostics.push(errorAt(message, call.nameSpan));
    if (call.args.length !== 2 && call.args.length !== 3) return fail(`range takes 2 or 3 arguments, found ${call.args.length}`);
    const args = call.args.map(constant);
    if (!args.every((a) => a !== undefined)) {
      const v = { kind: 'var' as const, name: `$range_v${++vars}`, span: call.span };
      pending.push({ call, v });
      return v;
    }
    const [from, to] = args as [bigint, bigint];
    const step = args[2] ?? (from <= to ? 1n : -1n);
    const key = `${from},${to},${step}`;
    let relation = relations.get(key);
    if (!relation) {
      // Counted before listing, so that a huge range is refused without being built.
      const count = step === 0n ? (from !== to ? 1n : 0n) : (to - from + step - (step > 0n ? 1n : -1n)) / step;
      if (count > BigInt(MAX_VALUES)) return fail(`a range of more than ${MAX_VALUES} values is not supported: range(${key}) has ${count}`);
      relation = { name: `$range${relations.size + 1}`, values: rangeValues(from, to, step), span: call.span };
      relations.set(key, relation);
    }
    const v: STerm = { kind: 'var', name: `$range_v${++vars}`, span: call.span };
    bound.push({ kind: 'atom', rel: relation.name, args: [v], span: call.span, relSpan: call.nameSpan });
    return v;
  };
  const replacer = (bound: SAtom[], pending: Pending[]) => (t: STerm): STerm | undefined => {
    if (t.kind === 'aggregate') {
      // Its atom would have to go into the aggregate's body, whose scoping rules differ: refused.
      mapTerm(t, (u) => void (u.kind === 'call' && u.name === 'range' && diagnostics.push(errorAt('range inside an aggregate is not supported', u.nameSpan))));
      return t;
    }
    return t.kind === 'call' && t.name === 'range' ? (expand(t, bound, pending) ?? t) : undefined;
  };
  /** The item with its ranges expanded; none where one was refused (reported, and nothing else to say of it). */
  const rewrite = (item: SItem): SItem[] => {
    if (item.kind !== 'rule' && item.kind !== 'fact') return [item];
    const reported = diagnostics.length;
    const rewritten = expandItem(item);
    return diagnostics.length > reported ? [] : [rewritten];
  };
  const expandItem = (item: Extract<SItem, { kind: 'rule' | 'fact' }>): SItem => {
    const bound: SAtom[] = [];
    const pending: Pending[] = [];
    const fn = replacer(bound, pending);
    if (item.kind === 'fact') {
      const atom = mapAtom(item.atom, fn);
      for (const p of pending) diagnostics.push(errorAt('range with non-constant arguments in a fact is not supported', p.call.nameSpan));
      return bound.length === 0 ? item : { kind: 'rule', heads: [atom], body: and(bound, item.span), span: item.span };
    }
    const heads = item.heads.map((h) => mapAtom(h, fn));
    const body = mapFormula(item.body, fn);
    if (pending.length > 0) bound.push(...computedRanges(pending, [...literals(body), ...bound], item.span));
    return bound.length === 0 ? item : { ...item, heads, body: and([body, ...bound], item.body.span) };
  };

  /** Generators and demand rules of ranges with computed bounds (see above), and the atoms that read them. */
  const computed: SItem[] = [];
  const computedRanges = (pending: Pending[], conjunction: SFormula[], span: SourceSpan): SAtom[] => {
    if (conjunction.some((l) => l.kind === 'or')) {
      for (const p of pending) diagnostics.push(errorAt('range with computed bounds in a disjunction is not supported', p.call.nameSpan));
      return [];
    }
    return pending.flatMap(({ call, v }) => {
      // The demand: every literal that does not read the range's own variable.
      const demand = conjunction.filter((l) => !formulaVars(l).includes(v.name));
      const grounded = groundedVars(demand, () => 'grounded');
      if (!call.args.flatMap(termVars).every((x) => grounded.has(x))) {
        diagnostics.push(errorAt('range with bounds that only the range itself binds is not supported', call.nameSpan));
        return [];
      }
      const k = ++generators;
      const [req, gen] = [`$rangereq${k}`, `$rangegen${k}`];
      const cs = call.span;
      const num = (n: number): STerm => ({ kind: 'int', value: BigInt(n), unsigned: false, span: cs });
      const x = (name: string): STerm => ({ kind: 'var', name, span: cs });
      const atom = (rel: string, args: STerm[]): SAtom => ({ kind: 'atom', rel, args, span: cs, relSpan: cs });
      const cmp = (left: STerm, op: CompareOp, right: STerm): SFormula => ({ kind: 'compare', op, left, right, span: cs });
      const rule = (head: SAtom, body: SFormula[]): SItem => ({ kind: 'rule', heads: [head], body: and(body, cs), span: cs });
      const decl = (rel: string, columns: string[]): SItem => ({
        kind: 'decl',
        rel: { name: rel, span: cs },
        attributes: columns.map((c) => ({ name: { name: c, span: cs }, type: { name: 'number', span: cs } })),
        qualifiers: [],
        span: cs,
      });
      const [from, to] = call.args as [STerm, STerm];
      const [f, t, st, y, z] = ['f', 't', 's', 'y', 'z'].map(x);
      const sum: STerm = { kind: 'binary', op: '+', left: y!, right: st!, span: cs };
      computed.push(
        decl(req, ['f', 't', 's']),
        decl(gen, ['f', 't', 's', 'x']),
        // Soufflé's default step: 1 upwards, -1 downwards.
        ...(call.args[2] ? [rule(atom(req, [from, to, call.args[2]]), demand)] : [
          rule(atom(req, [from, to, num(1)]), [...demand, cmp(from, '<=', to)]),
          rule(atom(req, [from, to, num(-1)]), [...demand, cmp(from, '>', to)]),
        ]),
        // runRange (EvaluatorUtil.h): from, from + step, ... before `to`; a step of 0 gives `from` once unless from = to.
        rule(atom(gen, [f!, t!, st!, f!]), [atom(req, [f!, t!, st!]), cmp(st!, '>', num(0)), cmp(f!, '<', t!)]),
        rule(atom(gen, [f!, t!, st!, f!]), [atom(req, [f!, t!, st!]), cmp(st!, '<', num(0)), cmp(f!, '>', t!)]),
        rule(atom(gen, [f!, t!, st!, f!]), [atom(req, [f!, t!, st!]), cmp(st!, '=', num(0)), cmp(f!, '!=', t!)]),
        rule(atom(gen, [f!, t!, st!, z!]), [atom(gen, [f!, t!, st!, y!]), cmp(st!, '>', num(0)), cmp(z!, '=', sum), cmp(z!, '<', t!)]),
        rule(atom(gen, [f!, t!, st!, z!]), [atom(gen, [f!, t!, st!, y!]), cmp(st!, '<', num(0)), cmp(z!, '=', sum), cmp(z!, '>', t!)]),
      );
      return [atom(gen, [from, to, call.args[2] ?? { kind: 'wildcard', span: cs }, v])];
    });
  };
  let generators = 0;
  const out = asts.map((ast) => ({ ...ast, items: ast.items.flatMap(rewrite) }));
  const generated = [...relations.values()].flatMap(({ name, values, span }): SItem[] => [
    { kind: 'decl', rel: { name, span }, attributes: [{ name: { name: 'x', span }, type: { name: 'number', span } }], qualifiers: [], span },
    ...values.map((x): SItem => ({ kind: 'fact', atom: { kind: 'atom', rel: name, args: [{ kind: 'int', value: x, unsigned: false, span }], span, relSpan: span }, span })),
  ]);
  return out.map((ast, i) => (i === 0 ? { ...ast, items: [...ast.items, ...generated, ...computed] } : ast));
}
