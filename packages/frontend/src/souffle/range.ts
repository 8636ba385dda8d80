/**
 * Soufflé's `range(from, to[, step])` is a functor with many results: `n = range(0, 10)` binds n to 0, 1, ..., 9
 * (descending where from > to, by `step` where given). With constant number arguments the host knows every value:
 * each distinct call becomes a relation of facts `$rangeK(x)`, and the call a fresh variable that an atom of that
 * relation binds. Other arguments, a call inside an aggregate, and ranges of more than MAX_VALUES values are
 * located "not supported" errors.
 */
import { errorAt, type Diagnostic, type SourceSpan } from '@vixen/queryplan';
import type { SAtom, SFormula, SItem, SouffleAst, STerm } from './ast.js';
import { mapAtom, mapFormula, mapTerm } from './scoping.js';

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

function and(items: SFormula[], span: SourceSpan): SFormula {
  return items.length === 1 ? items[0]! : { kind: 'and', items, span };
}

/** `asts` with each `range(...)` call of a rule or fact read from a relation of facts (see above). */
export function expandRanges(asts: SouffleAst[], diagnostics: Diagnostic[]): SouffleAst[] {
  const relations = new Map<string, { name: string; values: bigint[]; span: SourceSpan }>();
  let vars = 0;
  /** The call as a variable, the atom that binds it pushed to `bound`; undefined after reporting a problem. */
  const expand = (call: Extract<STerm, { kind: 'call' }>, bound: SAtom[]): STerm | undefined => {
    const fail = (message: string): undefined => void diagnostics.push(errorAt(message, call.nameSpan));
    if (call.args.length !== 2 && call.args.length !== 3) return fail(`range takes 2 or 3 arguments, found ${call.args.length}`);
    const args = call.args.map(constant);
    if (!args.every((a) => a !== undefined)) return fail('range with non-constant arguments is not supported: its values must be known when compiling (number constants)');
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
  const replacer = (bound: SAtom[]) => (t: STerm): STerm | undefined => {
    if (t.kind === 'aggregate') {
      // Its atom would have to go into the aggregate's body, whose scoping rules differ: refused.
      mapTerm(t, (u) => void (u.kind === 'call' && u.name === 'range' && diagnostics.push(errorAt('range inside an aggregate is not supported', u.nameSpan))));
      return t;
    }
    return t.kind === 'call' && t.name === 'range' ? (expand(t, bound) ?? t) : undefined;
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
    const fn = replacer(bound);
    if (item.kind === 'fact') {
      const atom = mapAtom(item.atom, fn);
      return bound.length === 0 ? item : { kind: 'rule', heads: [atom], body: and(bound, item.span), span: item.span };
    }
    const heads = item.heads.map((h) => mapAtom(h, fn));
    const body = mapFormula(item.body, fn);
    return bound.length === 0 ? item : { ...item, heads, body: and([body, ...bound], item.body.span) };
  };
  const out = asts.map((ast) => ({ ...ast, items: ast.items.flatMap(rewrite) }));
  const generated = [...relations.values()].flatMap(({ name, values, span }): SItem[] => [
    { kind: 'decl', rel: { name, span }, attributes: [{ name: { name: 'x', span }, type: { name: 'number', span } }], qualifiers: [], span },
    ...values.map((x): SItem => ({ kind: 'fact', atom: { kind: 'atom', rel: name, args: [{ kind: 'int', value: x, unsigned: false, span }], span, relSpan: span }, span })),
  ]);
  return out.map((ast, i) => (i === 0 ? { ...ast, items: [...ast.items, ...generated] } : ast));
}
