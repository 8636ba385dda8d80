/**
 * Soufflé's string functors as LogiQL terms. Strings are dictionary ids on the device, so a functor runs there
 * only as a table the host builds over the dictionary: one string argument, the others constants (`strlen`,
 * `to_number`, `contains` with a constant substring, `match` with a constant pattern, `substr` with a constant
 * index and length, whose results the host adds to the dictionary before the run). Calls whose arguments are
 * all constants are evaluated here, as Soufflé would (`cat("a", "b")` is "ab"), and so are those whose variables
 * range over the facts of a relation that has nothing else (specializeTests makes one rule per value, and
 * propagateConstants folds what the value determines: `len = strlen(id), substr(id, 0, len - 5)`). The
 * rest, and the functors that make new strings from other variables (`cat`, `substr`, `to_string`), are located
 * "not supported" errors: the device cannot make strings during evaluation.
 */
import { leadingInt32, regexMatches, regexProblem, souffleSubstr, VixenError, type BuiltinFn, type SourceSpan } from '@vixen/queryplan';
import type { Term } from '../syntax/ast.js';
import type { SAtom, SFormula, STerm } from './ast.js';
import { formulaTerms, termVars } from './scoping.js';
import { mapAtoms } from './traverse.js';

/** Functors that are tests, written like atoms in a body: `contains(sub, s)`, `match(pattern, s)`. */
const TESTS: ReadonlySet<string> = new Set(['contains', 'match']);

export const STRING_FUNCTORS: ReadonlySet<string> = new Set([...TESTS, 'cat', 'strlen', 'len', 'substr', 'ord', 'to_string', 'to_number', 'to_float', 'to_unsigned']);

/**
 * Test functors in a body (those that are no declared relation) as the comparisons `contains(a, b) = true`, so
 * that they are values like the other functors and, like them, bind no variable.
 */
export function testsAsComparisons(f: SFormula, isRelation: (name: string) => boolean): SFormula {
  return mapAtoms(f, (a) => {
    if (!TESTS.has(a.rel) || isRelation(a.rel)) return a;
    const call: STerm = { kind: 'call', name: a.rel, args: a.args, span: a.span, nameSpan: a.relSpan };
    return { kind: 'compare', op: '=', left: call, right: { kind: 'var', name: 'true', span: a.span }, span: a.span };
  });
}

type Problems = [string, SourceSpan][];

const utf8 = new TextEncoder();

function str(t: Term): string | undefined {
  return t.kind === 'string' ? t.value : undefined;
}

function int(t: Term): number | undefined {
  return t.kind === 'int' && t.suffix === '' ? Number(t.value) : undefined;
}

/** The LogiQL term for functor call `t` with its arguments already converted; undefined after a problem. */
export function functorTerm(
  t: Extract<STerm, { kind: 'call' }>,
  args: Term[],
  problems: Problems,
  warn: (message: string) => void,
): Term | undefined {
  const span = t.span;
  const fail = (message: string): undefined => {
    problems.push([message, t.nameSpan]);
    return undefined;
  };
  const arity = (n: number): boolean => args.length === n || (fail(`${t.name} takes ${n} argument(s), found ${args.length}`), false);
  const apply = (fn: BuiltinFn, callArgs: Term[]): Term => ({ kind: 'apply', name: fn, args: callArgs, span, nameSpan: t.nameSpan });
  const string = (value: string): Term => ({ kind: 'string', value, span });
  const number = (value: number): Term => ({ kind: 'int', value: BigInt(value), suffix: '', span });
  const bool = (value: boolean): Term => ({ kind: 'var', name: String(value), span });
  const makesStrings = `${t.name} with non-constant arguments is not supported: it makes new strings, and the device cannot make strings during evaluation`;
  switch (t.name) {
    // `len` is older Soufflé's name for strlen.
    case 'len':
    case 'strlen': {
      if (!arity(1)) return undefined;
      const s = str(args[0]!);
      return s !== undefined ? number(utf8.encode(s).length) : apply('string:byte_length', args);
    }
    case 'to_number': {
      if (!arity(1)) return undefined;
      const s = str(args[0]!);
      return s !== undefined ? number(leadingInt32(s)) : apply('string:to_int32', args);
    }
    case 'contains': {
      if (!arity(2)) return undefined;
      const [sub, s] = [str(args[0]!), str(args[1]!)];
      if (sub !== undefined && s !== undefined) return bool(s.includes(sub));
      if (sub === undefined) return fail('contains(sub, s) with a non-constant substring is not supported: the device tests strings against constants only');
      return apply('string:contains', [args[1]!, args[0]!]);
    }
    case 'match': {
      if (!arity(2)) return undefined;
      const [pattern, s] = [str(args[0]!), str(args[1]!)];
      if (pattern === undefined) return fail('match(pattern, s) with a non-constant pattern is not supported: the device tests strings against constants only');
      const problem = regexProblem(pattern);
      // Soufflé catches std::regex's exception, warns and matches nothing.
      if (problem?.kind === 'invalid') {
        warn(`match never holds: the regular expression "${pattern}" is invalid (${problem.message})`);
        return bool(false);
      }
      if (problem) return fail(`the regular expression "${pattern}" is not supported: ${problem.message}`);
      return s !== undefined ? bool(regexMatches(s, pattern)) : apply('string:matches', [args[1]!, args[0]!]);
    }
    case 'cat': {
      if (args.length < 2) return fail(`cat takes two arguments or more, found ${args.length}`);
      const parts = args.map(str);
      return parts.every((p) => p !== undefined) ? string(parts.join('')) : fail(makesStrings);
    }
    case 'substr': {
      if (!arity(3)) return undefined;
      const [s, i, n] = [str(args[0]!), int(args[1]!), int(args[2]!)];
      if (i === undefined || n === undefined) return fail(`substr with a non-constant index or length is not supported: the device looks substrings up in a table per (index, length)`);
      // Of a variable: a table over the dictionary, which the host closes over its results before the run.
      if (s === undefined) return apply('string:substr', args);
      try {
        return string(souffleSubstr(s, i, n));
      } catch (e) {
        if (e instanceof VixenError) return fail(e.diagnostics[0]!.message);
        throw e;
      }
    }
    case 'to_string': {
      if (!arity(1)) return undefined;
      const n = int(args[0]!);
      if (n !== undefined) return string(String(n));
      // C++'s std::to_string of a float: "%f" of its (32-bit) value, below 1e21 where toFixed writes digits too.
      const x = args[0]!.kind === 'real' ? Math.fround(Number(args[0]!.text)) : undefined;
      return x !== undefined && Math.abs(x) < 1e21 && !Object.is(x, -0) ? string(x.toFixed(6)) : fail(makesStrings);
    }
    case 'ord':
      return fail("ord is not supported here: it gives a symbol's number in Soufflé's symbol table, which Vixen does not reproduce (only ord(a) = ord(b) and != are, as a = b and a != b)");
    default:
      return fail(`the functor ${t.name} is not supported`);
  }
}

/** At most this many copies of a rule for the values of a test's pattern or substring (specializeTests). */
const MAX_COPIES = 64;

/** Functors that make strings: they run only with constant arguments (evaluated when compiling). */
const MAKERS: ReadonlySet<string> = new Set(['cat', 'substr', 'to_string']);

/** Variables that must be constants where they stand in `t`: arguments of string makers, tests' patterns. */
function needsConstant(t: STerm): string[] {
  if (t.kind === 'neg') return needsConstant(t.operand);
  if (t.kind === 'binary') return [...needsConstant(t.left), ...needsConstant(t.right)];
  if (t.kind !== 'call') return [];
  const own = MAKERS.has(t.name) ? t.args : TESTS.has(t.name) ? t.args.slice(0, 1) : [];
  return [...own.flatMap((a) => (a.kind === 'var' ? [a.name] : [])), ...t.args.flatMap(needsConstant)];
}

/** needsConstant over the terms of a formula (atoms, comparisons, negations). */
const formulaNeeds = (f: SFormula): string[] => formulaTerms(f).flatMap(needsConstant);

/** `f` with variable `name` replaced by `value`; undefined when an aggregate mentions it (its scope differs). */
function substitute(f: SFormula, name: string, value: STerm): SFormula | undefined {
  let blocked = false;
  const term = (t: STerm): STerm => {
    switch (t.kind) {
      case 'var':
        return t.name === name ? { ...value, span: t.span } : t;
      case 'wildcard':
      case 'int':
      case 'float':
      case 'string':
        return t;
      case 'neg':
        return { ...t, operand: term(t.operand) };
      case 'binary':
        return { ...t, left: term(t.left), right: term(t.right) };
      case 'call':
      case 'record':
      case 'branch':
        return { ...t, args: t.args.map(term) };
      case 'aggregate':
        blocked ||= termVars(t).includes(name);
        return t;
    }
  };
  const formula = (g: SFormula): SFormula => {
    switch (g.kind) {
      case 'atom':
        return { ...g, args: g.args.map(term) };
      case 'compare':
        return { ...g, left: term(g.left), right: term(g.right) };
      case 'not':
        return { ...g, body: formula(g.body) };
      case 'bool':
        return g;
      case 'and':
      case 'or':
        return { ...g, items: g.items.map(formula) };
    }
  };
  const out = formula(f);
  return blocked ? undefined : out;
}

/** The int32 range of Soufflé's `number`: folding stops where a result leaves it (the device wraps). */
const INT32 = { min: -(2n ** 31n), max: 2n ** 31n - 1n };

/**
 * The constant that ground term `t` evaluates to (integer arithmetic and the string functors, as functorTerm
 * folds them), or undefined where `t` has a variable, another operator, or a result the device would compute
 * differently (int32 overflow, division by zero).
 */
function constantOf(t: STerm): Extract<STerm, { kind: 'int' | 'string' }> | undefined {
  switch (t.kind) {
    case 'int':
      return t.unsigned ? undefined : t;
    case 'string':
      return t;
    case 'neg': {
      const v = constantOf(t.operand);
      return v?.kind === 'int' ? intConstant(-v.value, t.span) : undefined;
    }
    case 'binary': {
      const [l, r] = [constantOf(t.left), constantOf(t.right)];
      if (l?.kind !== 'int' || r?.kind !== 'int') return undefined;
      const [a, b] = [l.value, r.value];
      // BigInt division truncates toward zero, as C++'s does.
      const ops: Partial<Record<string, () => bigint | undefined>> = {
        '+': () => a + b,
        '-': () => a - b,
        '*': () => a * b,
        '/': () => (b === 0n ? undefined : a / b),
        '%': () => (b === 0n ? undefined : a % b),
      };
      const value = ops[t.op]?.();
      return value === undefined ? undefined : intConstant(value, t.span);
    }
    case 'call': {
      if (!STRING_FUNCTORS.has(t.name) || TESTS.has(t.name)) return undefined;
      const args = t.args.map(constantOf);
      if (!args.every((a) => a !== undefined)) return undefined;
      const problems: Problems = [];
      const terms: Term[] = args.map((a) => (a.kind === 'int' ? { kind: 'int', value: a.value, suffix: '', span: a.span } : a));
      const out = functorTerm(t, terms, problems, () => undefined);
      if (problems.length > 0 || !out) return undefined;
      if (out.kind === 'string') return { kind: 'string', value: out.value, span: t.span };
      return out.kind === 'int' ? intConstant(out.value, t.span) : undefined;
    }
    case 'var':
    case 'wildcard':
    case 'float':
    case 'aggregate':
    case 'record':
    case 'branch':
      return undefined;
  }
}

function intConstant(value: bigint, span: SourceSpan): Extract<STerm, { kind: 'int' }> | undefined {
  return value < INT32.min || value > INT32.max ? undefined : { kind: 'int', value, unsigned: false, span };
}

/**
 * `rule` with each variable that an equality of its body binds to a ground term (`len = strlen("abc")`) replaced
 * by that term's value everywhere else, so that functors on it fold to constants (`substr(s, 0, len - 1)` in a
 * copy of specializeTests). The equality stays, with the value, binding the variable as before.
 */
function propagateConstants(rule: { heads: SAtom[]; body: SFormula }): { heads: SAtom[]; body: SFormula } {
  let conjuncts = rule.body.kind === 'and' ? rule.body.items : [rule.body];
  let heads = rule.heads;
  const done = new Set<string>();
  for (let changed = true; changed; ) {
    changed = false;
    for (const [j, c] of conjuncts.entries()) {
      if (c.kind !== 'compare' || c.op !== '=') continue;
      const [v, value] = c.left.kind === 'var' ? [c.left, constantOf(c.right)] : c.right.kind === 'var' ? [c.right, constantOf(c.left)] : [];
      if (!v || !value || done.has(v.name)) continue;
      done.add(v.name);
      const others = conjuncts.map((d, k) => (k === j ? { ...c, left: v, right: value } : substitute(d, v.name, value)));
      const newHeads = heads.map((h) => substitute(h, v.name, value));
      // An aggregate that mentions the variable has its own scope: leave the rule as it is.
      if (others.some((d) => d === undefined) || newHeads.some((h) => h === undefined)) continue;
      conjuncts = others as SFormula[];
      heads = newHeads as SAtom[];
      changed = true;
    }
  }
  if (done.size === 0) return rule;
  return { heads, body: conjuncts.length === 1 ? conjuncts[0]! : { ...(rule.body as Extract<SFormula, { kind: 'and' }>), items: conjuncts } };
}

/**
 * A rule where a functor needs a constant but has a variable (a `match` pattern, a `cat` argument), as one rule
 * per value that variable can have, when a positive atom of the body binds it from a relation of facts only (no
 * rules, no input file): the host then knows every value, and each copy has a constant there
 * (`pattern(p), word(w), match(p, w)` is `pattern("a.*"), word(w), match("a.*", w)` and so on; the atom, now
 * with the constant, keeps only the copies that hold). Otherwise the rule comes back unchanged.
 */
export function specializeTests(
  original: { heads: SAtom[]; body: SFormula },
  factsOnly: (rel: string) => SAtom[] | undefined,
): { heads: SAtom[]; body: SFormula }[] {
  const rule = propagateConstants(original);
  const conjuncts = rule.body.kind === 'and' ? rule.body.items : [rule.body];
  const wanted = new Set([...rule.heads.flatMap(formulaNeeds), ...conjuncts.flatMap(formulaNeeds)]);
  for (const name of wanted) {
    for (const atom of conjuncts) {
      if (atom.kind !== 'atom') continue;
      const column = atom.args.findIndex((t) => t.kind === 'var' && t.name === name);
      const facts = column < 0 ? undefined : factsOnly(atom.rel);
      if (!facts) continue;
      const values = new Map<string, STerm>();
      for (const f of facts) {
        const v = f.args[column];
        if (v?.kind !== 'string' && v?.kind !== 'int') return [rule];
        values.set(JSON.stringify(v.kind === 'string' ? v.value : String(v.value)), v);
      }
      if (values.size > MAX_COPIES) return [rule];
      const copies: { heads: SAtom[]; body: SFormula }[] = [];
      for (const value of values.values()) {
        const body = substitute(rule.body, name, value);
        const heads = rule.heads.map((h) => substitute(h, name, value));
        if (!body || heads.some((h) => h === undefined)) return [rule];
        copies.push(...specializeTests({ heads: heads as SAtom[], body }, factsOnly));
        if (copies.length > MAX_COPIES) return [rule];
      }
      return copies;
    }
  }
  return [rule];
}
