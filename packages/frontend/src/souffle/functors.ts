/**
 * Soufflé's string functors as LogiQL terms. Strings are dictionary ids on the device, so a functor runs there
 * only as a table the host builds over the dictionary: one string argument, the others constants (`strlen`,
 * `to_number`, `contains` with a constant substring, `match` with a constant pattern). Calls whose arguments are
 * all constants are evaluated here, as Soufflé would (`cat("a", "b")` is "ab"). The rest, and the functors that
 * make new strings from variables (`cat`, `substr`, `to_string`), are located "not supported" errors: the
 * device cannot make strings during evaluation.
 */
import { leadingInt32, regexMatches, regexProblem, type BuiltinFn, type SourceSpan } from '@vixen/queryplan';
import type { Term } from '../syntax/ast.js';
import type { SFormula, STerm } from './ast.js';
import { mapAtoms } from './traverse.js';

/** Functors that are tests, written like atoms in a body: `contains(sub, s)`, `match(pattern, s)`. */
const TESTS: ReadonlySet<string> = new Set(['contains', 'match']);

export const STRING_FUNCTORS: ReadonlySet<string> = new Set([...TESTS, 'cat', 'strlen', 'substr', 'ord', 'to_string', 'to_number', 'to_float', 'to_unsigned']);

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
const isAscii = (s: string): boolean => /^[\x00-\x7f]*$/.test(s);

function str(t: Term): string | undefined {
  return t.kind === 'string' ? t.value : undefined;
}

function int(t: Term): number | undefined {
  return t.kind === 'int' && t.suffix === '' ? Number(t.value) : undefined;
}

/** `std::string::substr(i, n)` of Soufflé's `substr`, on ASCII: "" where `i` is past the end, `n` clipped. */
function substr(s: string, i: number, n: number): string {
  // Negative arguments become huge unsigned values in C++: an index past the end, a length to the end.
  if (i < 0 || i > s.length) return '';
  return n < 0 ? s.slice(i) : s.slice(i, i + n);
}

/** The LogiQL term for functor call `t` with its arguments already converted; undefined after a problem. */
export function functorTerm(t: Extract<STerm, { kind: 'call' }>, args: Term[], problems: Problems): Term | undefined {
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
      if (problem) return fail(`the regular expression "${pattern}" is not supported: ${problem}`);
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
      if (s === undefined || i === undefined || n === undefined) return fail(makesStrings);
      // Soufflé counts bytes: only ASCII strings have as many characters.
      if (!isAscii(s)) return fail('substr of a non-ASCII string is not supported: Soufflé counts bytes, not characters');
      return string(substr(s, i, n));
    }
    case 'to_string': {
      if (!arity(1)) return undefined;
      const n = int(args[0]!);
      return n !== undefined ? string(String(n)) : fail(makesStrings);
    }
    case 'ord':
      return fail("ord is not supported: it gives a symbol's number in Soufflé's symbol table, which Vixen does not reproduce");
    default:
      return fail(`the functor ${t.name} is not supported`);
  }
}
