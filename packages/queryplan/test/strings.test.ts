/** Reference semantics of the string built-ins (LANGUAGE.md; builtins.ts), which the device tables reproduce. */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { builtinTable, constantArgs, evalBuiltin, like, regexMatches, regexProblem, substring, VixenError } from '../src/index.js';

describe('string built-ins', () => {
  it('string:length counts code points', () => {
    expect(evalBuiltin('string:length', [''])).toBe(0);
    expect(evalBuiltin('string:length', ['héllo'])).toBe(5);
    expect(evalBuiltin('string:length', ['😀ab'])).toBe(3);
  });

  it('string:substring is SQL substring(s from i for n): 1-based, clipped to the string', () => {
    expect(substring('13-555-0100', 1, 2)).toBe('13');
    expect(substring('abc', 0, 2)).toBe('a');
    expect(substring('abc', -1, 3)).toBe('a');
    expect(substring('abc', 2, 100)).toBe('bc');
    expect(substring('abc', 4, 1)).toBe('');
    expect(substring('abc', 2, 0)).toBe('');
    expect(substring('abc', 2, -1)).toBe('');
    expect(substring('😀ab', 2, 1)).toBe('a');
    expect(evalBuiltin('string:substring', ['hello', 2, 3])).toBe('ell');
  });

  it('string:like is SQL LIKE: % any run, _ one code point, everything else literal', () => {
    const cases: Array<[string, string, boolean]> = [
      ['forest green', '%green%', true],
      ['green', '%green%', true],
      ['Green', '%green%', false],
      ['', '%', true],
      ['', '', true],
      ['a', '', false],
      ['', '_', false],
      ['😀', '_', true],
      ['abc', 'a_c', true],
      ['ac', 'a_c', false],
      ['a.c', 'a.c', true],
      ['abc', 'a.c', false],
      ['(x)*[y]+?^$|\\', '(x)*[y]+?^$|\\', true],
      ['line\nbreak', 'line_break', true],
      ['special requests', '%special%requests%', true],
      ['requests special', '%special%requests%', false],
      ['mississippi', '%iss%ppi', true],
      ['mississippi', 'm%s_s%i', true],
    ];
    for (const [s, p, want] of cases) expect([s, p, like(s, p)]).toEqual([s, p, want]);
  });

  it('string:like agrees with a regular-expression translation on random patterns and strings', () => {
    const reference = (s: string, p: string): boolean =>
      new RegExp(`^${[...p].map((c) => (c === '%' ? '.*' : c === '_' ? '.' : c)).join('')}$`, 'su').test(s);
    const text = fc.array(fc.constantFrom('a', 'b', '😀'), { maxLength: 8 }).map((cs) => cs.join(''));
    const pattern = fc.array(fc.constantFrom('a', 'b', '😀', '%', '_'), { maxLength: 6 }).map((cs) => cs.join(''));
    fc.assert(
      fc.property(text, pattern, (s, p) => like(s, p) === reference(s, p)),
      { numRuns: 2000 },
    );
  });

  it("string:to_int32 reads numbers as Soufflé's to_number does: decimal, 0x, 0b, a leading 0 as octal", () => {
    const read = (s: string) => evalBuiltin('string:to_int32', [s]);
    expect(['10', '-10', ' 42abc', '0xcafe', '-0xBEEF', '0b100', '-0b100', '010', '08'].map(read)).toEqual([10, -10, 42, 51966, -48879, 4, -4, 8, 0]);
    // Where std::stoi throws (Soufflé stops the program), the table holds 0.
    expect(['abc', '', '0b', '99999999999'].map(read)).toEqual([0, 0, 0, 0]);
    expect(read('-2147483648')).toBe(-2147483648);
  });

  it('string:startswith and string:endswith compare prefixes and suffixes', () => {
    expect(evalBuiltin('string:startswith', ['PROMO PLATED', 'PROMO'])).toBe(true);
    expect(evalBuiltin('string:startswith', ['PROM', 'PROMO'])).toBe(false);
    expect(evalBuiltin('string:startswith', ['', ''])).toBe(true);
    expect(evalBuiltin('string:endswith', ['SMALL BRASS', 'BRASS'])).toBe(true);
    expect(evalBuiltin('string:endswith', ['brass', 'BRASS'])).toBe(false);
  });

  it('are table built-ins whose arguments after the string are constants', () => {
    expect(builtinTable('string:like')).toBe('bits');
    expect(builtinTable('string:substring')).toBe('words');
    expect(builtinTable('date:year')).toBeUndefined();
    expect(constantArgs('string:substring')).toEqual([1, 2]);
    expect(constantArgs('string:length')).toEqual([]);
    expect(constantArgs('date:add_days')).toEqual([]);
  });

  it("std::regex's POSIX classes in brackets read as in C++'s \"C\" locale", () => {
    expect(regexProblem('a[[:digit:]]+#')).toBeUndefined();
    expect(regexMatches('a123#', 'a[[:digit:]]+#')).toBe(true);
    expect(regexMatches('a12x#', 'a[[:digit:]]+#')).toBe(false);
    expect(regexMatches('x_', '[^[:digit:][:upper:]][_[:punct:]]')).toBe(true);
    expect(regexMatches('X_', '[^[:digit:][:upper:]][_[:punct:]]')).toBe(false);
    expect(regexMatches('[:digit:]', '\\[:digit:]')).toBe(true);
    expect(regexProblem('[[:nodigit:]]')?.kind).toBe('differs');
    expect(regexProblem('[[.a.]]')?.kind).toBe('differs');
  });

  it("string:substr is Soufflé's substr: 0-based over UTF-8 bytes, clipped, and a cut character is an error", () => {
    expect(evalBuiltin('string:substr', ['hello', 1, 3])).toBe('ell');
    expect(evalBuiltin('string:substr', ['hello', 3, 10])).toBe('lo');
    expect(evalBuiltin('string:substr', ['hello', 5, 1])).toBe('');
    expect(evalBuiltin('string:substr', ['hello', 6, 1])).toBe('');
    expect(evalBuiltin('string:substr', ['hello', -1, 1])).toBe('');
    expect(evalBuiltin('string:substr', ['hello', 2, -1])).toBe('llo');
    expect(evalBuiltin('string:substr', ['héllo', 0, 3])).toBe('hé');
    expect(evalBuiltin('string:substr', ['héllo', 3, 2])).toBe('ll');
    expect(() => evalBuiltin('string:substr', ['héllo', 0, 2])).toThrow(VixenError);
  });
});
