/**
 * Soufflé's counter `autoinc()` (old spelling `$`): each evaluation of a rule's head takes the next number, so the
 * values follow Soufflé's evaluation order, which Vixen does not reproduce. Vixen numbers instead each match of the
 * rule's body by the one number variable that body binds (distinct matches, distinct numbers), and accepts the
 * counter only where no output can tell that numbering from Soufflé's:
 * - the counter is a head argument of one non-recursive rule, the only rule that uses it, whose body binds exactly
 *   one variable, of a number column (no wildcard, no other variable);
 * - its relation has nothing else (no other rule, fact or input file) and is not printed;
 * - every use of the counter's column is a join on it: the variable there occurs nowhere else in its rule but at
 *   that column of that relation.
 * Outputs then depend only on which tuples share a number, the same under both numberings. Anything else is a
 * located "not supported" error.
 */
import { errorAt, type Diagnostic, type ScalarType, type SourceSpan } from '@vixen/queryplan';
import type { SAtom, SFormula, SItem, STerm } from './ast.js';
import { literals } from './scoping.js';
import { mapAtoms, relationsRead } from './traverse.js';

type Rule = Extract<SItem, { kind: 'rule' }>;
type Call = Extract<STerm, { kind: 'call' }>;

const isCounter = (t: STerm): t is Call => t.kind === 'call' && t.name === 'autoinc';

/** Every atom of `f`, those in aggregate bodies and negations included. */
function atomsOf(f: SFormula): SAtom[] {
  const out: SAtom[] = [];
  mapAtoms(f, (a) => (out.push(a), a));
  return out;
}

/** Every term of a rule (heads and body, nested ones included), each with the atom and column it stands at. */
function termsOf(rule: Rule): { term: STerm; at?: [SAtom, number] }[] {
  const out: { term: STerm; at?: [SAtom, number] }[] = [];
  const visit = (t: STerm, at?: [SAtom, number]): void => {
    out.push({ term: t, ...(at ? { at } : {}) });
    switch (t.kind) {
      case 'neg':
        return visit(t.operand);
      case 'binary':
        return (visit(t.left), visit(t.right));
      case 'call':
      case 'record':
      case 'branch':
        return t.args.forEach((a) => visit(a));
      case 'aggregate':
        if (t.target) visit(t.target);
        return formula(t.body);
      case 'var':
      case 'wildcard':
      case 'int':
      case 'float':
      case 'string':
        return;
    }
  };
  const atom = (a: SAtom): void => a.args.forEach((t, i) => visit(t, [a, i]));
  const formula = (f: SFormula): void => {
    switch (f.kind) {
      case 'atom':
        return atom(f);
      case 'compare':
        return (visit(f.left), visit(f.right));
      case 'not':
        return formula(f.body);
      case 'bool':
        return;
      case 'and':
      case 'or':
        return f.items.forEach(formula);
    }
  };
  rule.heads.forEach(atom);
  formula(rule.body);
  return out;
}

export interface CounterContext {
  outputs: ReadonlySet<string>;
  inputs: ReadonlySet<string>;
  columnType: (rel: string, column: number) => ScalarType | undefined;
}

/**
 * The rules of `items` that use the counter, each with its replacement (the counter as the body's variable), or
 * undefined after reporting why it is refused.
 */
export function numberCounters(items: readonly SItem[], context: CounterContext, diagnostics: Diagnostic[]): Map<SItem, SItem | undefined> {
  const rules = items.filter((i): i is Rule => i.kind === 'rule');
  const out = new Map<SItem, SItem | undefined>();
  const reads = relationsRead(items);
  const users = rules.filter((r) => termsOf(r).some(({ term }) => isCounter(term)));
  for (const [n, rule] of users.entries()) {
    const problem = (message: string, span: SourceSpan): void => {
      diagnostics.push(errorAt(`autoinc() is not supported here: ${message}`, span));
      out.set(rule, undefined);
    };
    const calls = termsOf(rule).filter((t): t is { term: Call; at?: [SAtom, number] } => isCounter(t.term));
    const call = calls[0]!.term;
    const recursive = rule.heads.find((h) => atomsOf(rule.body).some((a) => a.rel === h.rel || reads(a.rel).has(h.rel)));
    if (recursive) problem(`${recursive.rel} is recursive, and Vixen numbers tuples by their rule body`, call.nameSpan);
    else if (n > 0) problem('only one rule of a program may use it (Vixen numbers tuples by their rule body, not by one counter)', call.nameSpan);
    else if (call.args.length > 0) problem(`autoinc takes no arguments, found ${call.args.length}`, call.nameSpan);
    else if (calls.length > 1 || rule.heads.length > 1 || !calls[0]!.at || !rule.heads.includes(calls[0]!.at[0])) {
      problem('it must be a head argument, once in a rule of one head', (calls[1] ?? calls[0]!).term.nameSpan);
    } else refuseOrNumber(rule, calls[0]!.at, items, context, problem, out);
  }
  return out;
}

function refuseOrNumber(
  rule: Rule,
  [head, column]: [SAtom, number],
  items: readonly SItem[],
  context: CounterContext,
  problem: (message: string, span: SourceSpan) => void,
  out: Map<SItem, SItem | undefined>,
): void {
  const call = head.args[column] as Call;
  const rel = head.rel;
  const rules = items.filter((i): i is Rule => i.kind === 'rule');
  const fact = items.find((i) => i.kind === 'fact' && i.atom.rel === rel);
  if (fact) return problem(`${rel} also has facts`, fact.span);
  const bodyVars = new Set<string>();
  let shapeOk = rule.body.kind !== 'or';
  for (const { term } of termsOf(rule)) {
    if (term.kind === 'var') bodyVars.add(term.name);
    if (term.kind === 'aggregate') shapeOk = false;
  }
  for (const l of literals(rule.body)) {
    if (l.kind === 'atom') shapeOk &&= l.args.every((t) => t.kind === 'var' || t.kind === 'int' || t.kind === 'string');
    if (l.kind === 'or' || l.kind === 'and') shapeOk = false;
  }
  const v = [...bodyVars][0];
  const binder = v === undefined ? undefined : literals(rule.body).find((l): l is SAtom => l.kind === 'atom' && l.args.some((t) => t.kind === 'var' && t.name === v));
  const column_ = binder?.args.findIndex((t) => t.kind === 'var' && t.name === v);
  const numberVar = binder && column_ !== undefined && context.columnType(binder.rel, column_) === 'int32';
  if (!shapeOk || bodyVars.size !== 1 || !numberVar) {
    return problem('Vixen numbers the matches of a rule body by its one variable, and this body must bind exactly one, of type number, with no wildcard, disjunction or aggregate', call.nameSpan);
  }
  if (context.outputs.has(rel)) return problem(`${rel} is printed, and its numbers would differ from Soufflé's`, call.nameSpan);
  if (context.inputs.has(rel)) return problem(`${rel} also reads an input file`, call.nameSpan);
  for (const r of rules) {
    if (r !== rule && r.heads.some((h) => h.rel === rel)) return problem(`${rel} has other rules`, r.heads.find((h) => h.rel === rel)!.relSpan);
    // A variable at the counter's column may occur only at that column of that relation: a join on the numbers.
    const terms = termsOf(r);
    const atCounter = (t: { at?: [SAtom, number] }): boolean => t.at?.[0].rel === rel && t.at[1] === column;
    for (const t of terms) {
      if (r === rule || !atCounter(t) || t.term.kind === 'wildcard') continue;
      const name = t.term.kind === 'var' ? t.term.name : undefined;
      const leak = name === undefined ? t : terms.find((u) => u.term.kind === 'var' && u.term.name === name && !atCounter(u));
      if (leak) return problem(`a rule uses the numbers of ${rel} as values (only joins on them give Soufflé's answers)`, leak.term.span);
    }
  }
  const numbered: STerm = { kind: 'var', name: v!, span: call.span };
  const heads = [{ ...head, args: head.args.map((t, i) => (i === column ? numbered : t)) }];
  out.set(rule, { ...rule, heads });
}

