/**
 * Scalar built-in functions (LANGUAGE.md "Built-ins are functional predicates"): date parts and arithmetic,
 * casts between numeric types, and string functions. Each has fixed argument and result types; `evalBuiltin`
 * is the reference semantics the device code follows. Casts wrap like arithmetic (int64 -> int32 keeps the low
 * 32 bits), decimal -> integer truncates toward zero, float32 -> int32 truncates and saturates (NaN gives 0).
 *
 * String functions count Unicode code points (not UTF-16 units, not bytes). They are `table` built-ins: the
 * device never sees characters, so the host tabulates the function over every dictionary id of a run and
 * kernels look the result up; hence all arguments but the first must be constants (`constantArgs`).
 */
import { DECIMAL_SCALE, type ScalarType, type Value } from './types.js';
import { VixenError } from './diagnostics.js';

export interface BuiltinSignature {
  args: ScalarType[];
  result: ScalarType;
  /**
   * A function of a string's dictionary id, looked up in a host-built table: `bits` (boolean results, one bit
   * per id) or `words` (one u32 per id). Arguments after the first must be constants.
   */
  table?: 'bits' | 'words';
}

export const BUILTINS = {
  'date:year': { args: ['date'], result: 'int32' },
  'date:month': { args: ['date'], result: 'int32' },
  'date:day': { args: ['date'], result: 'int32' },
  'date:add_days': { args: ['date', 'int32'], result: 'date' },
  'int32:from_int64': { args: ['int64'], result: 'int32' },
  'int32:from_uint32': { args: ['uint32'], result: 'int32' },
  'int32:from_decimal': { args: ['decimal'], result: 'int32' },
  'int32:from_float32': { args: ['float32'], result: 'int32' },
  'int64:from_int32': { args: ['int32'], result: 'int64' },
  'int64:from_uint32': { args: ['uint32'], result: 'int64' },
  'int64:from_decimal': { args: ['decimal'], result: 'int64' },
  'uint32:from_int32': { args: ['int32'], result: 'uint32' },
  'uint32:from_int64': { args: ['int64'], result: 'uint32' },
  'decimal:from_int32': { args: ['int32'], result: 'decimal' },
  'decimal:from_int64': { args: ['int64'], result: 'decimal' },
  'float32:from_int32': { args: ['int32'], result: 'float32' },
  'string:length': { args: ['string'], result: 'int32', table: 'words' },
  /** SQL `substring(s from i for n)`: 1-based start `i`, at most `n` characters. */
  'string:substring': { args: ['string', 'int32', 'int32'], result: 'string', table: 'words' },
  /** SQL LIKE: `%` any run of characters, `_` one character, no escape character; case-sensitive. */
  'string:like': { args: ['string', 'string'], result: 'boolean', table: 'bits' },
  'string:startswith': { args: ['string', 'string'], result: 'boolean', table: 'bits' },
  'string:endswith': { args: ['string', 'string'], result: 'boolean', table: 'bits' },
  /**
   * Soufflé's bitwise and logical operators on numbers: shifts take the count modulo 32 (as Soufflé masks it),
   * `bshr` keeps the sign and `bshru` does not; logical ones give 0 or 1.
   */
  'int32:band': { args: ['int32', 'int32'], result: 'int32' },
  'int32:bor': { args: ['int32', 'int32'], result: 'int32' },
  'int32:bxor': { args: ['int32', 'int32'], result: 'int32' },
  'int32:bshl': { args: ['int32', 'int32'], result: 'int32' },
  'int32:bshr': { args: ['int32', 'int32'], result: 'int32' },
  'int32:bshru': { args: ['int32', 'int32'], result: 'int32' },
  'int32:bnot': { args: ['int32'], result: 'int32' },
  'int32:land': { args: ['int32', 'int32'], result: 'int32' },
  'int32:lor': { args: ['int32', 'int32'], result: 'int32' },
  'int32:lxor': { args: ['int32', 'int32'], result: 'int32' },
  'int32:lnot': { args: ['int32'], result: 'int32' },
  /** Length in UTF-8 bytes (Soufflé's `strlen`). */
  'string:byte_length': { args: ['string'], result: 'int32', table: 'words' },
  /** Whether the second string occurs in the first (Soufflé's `contains`, arguments swapped). */
  'string:contains': { args: ['string', 'string'], result: 'boolean', table: 'bits' },
  /** Whether the whole string matches a regular expression, as C++'s std::regex_match does (Soufflé's `match`). */
  'string:matches': { args: ['string', 'string'], result: 'boolean', table: 'bits' },
  /**
   * Soufflé's `substr(s, i, n)`: std::string::substr over UTF-8 bytes, 0-based; "" where `i` is past the end, `n`
   * clipped (negative values are huge unsigned ones in C++). A cut inside a multi-byte character is an error.
   */
  'string:substr': { args: ['string', 'int32', 'int32'], result: 'string', table: 'words' },
  /** A leading decimal integer, as C++'s std::stoi reads it; 0 where there is none or it overflows (Soufflé's `to_number`). */
  'string:to_int32': { args: ['string'], result: 'int32', table: 'words' },
} as const satisfies Record<string, BuiltinSignature>;

export type BuiltinFn = keyof typeof BUILTINS;

export function isBuiltin(name: string): name is BuiltinFn {
  return Object.hasOwn(BUILTINS, name);
}

/** How `fn` runs on the device: through a host-built table, or (undefined) as WGSL code. */
export function builtinTable(fn: BuiltinFn): 'bits' | 'words' | undefined {
  return (BUILTINS[fn] as BuiltinSignature).table;
}

/** Argument positions of `fn` that must be constants (those after the string of a table built-in). */
export function constantArgs(fn: BuiltinFn): number[] {
  return builtinTable(fn) ? BUILTINS[fn].args.map((_, k) => k).slice(1) : [];
}

/** Whether `s` has characters outside the BMP (UTF-16 surrogates), where code points and code units differ. */
const SURROGATE = /[\uD800-\uDFFF]/;

/** Characters (code points) of `s`. */
export function stringLength(s: string): number {
  return SURROGATE.test(s) ? [...s].length : s.length;
}

/** SQL `substring(s from start for count)` over code points: positions start .. start + count - 1 that exist. */
export function substring(s: string, start: number, count: number): string {
  const wide = SURROGATE.test(s);
  const chars = wide ? [...s] : s;
  const from = Math.max(start, 1);
  const to = Math.min(start + count, chars.length + 1);
  if (from >= to) return '';
  return wide ? (chars as string[]).slice(from - 1, to - 1).join('') : s.slice(from - 1, to - 1);
}

/** Whether a table built-in makes strings, so that the dictionary must hold its results before a run. */
export function makesStrings(fn: BuiltinFn): boolean {
  return builtinTable(fn) !== undefined && BUILTINS[fn].result === 'string';
}

const strictUtf8 = new TextDecoder('utf-8', { fatal: true });

/** Soufflé's `substr` (see BUILTINS['string:substr']). */
export function souffleSubstr(s: string, i: number, n: number): string {
  const ascii = /^[\x00-\x7f]*$/.test(s);
  const units = ascii ? s : new TextEncoder().encode(s);
  if (i < 0 || i > units.length) return '';
  const end = n < 0 ? units.length : Math.min(i + n, units.length);
  if (typeof units === 'string') return units.slice(i, end);
  try {
    return strictUtf8.decode(units.subarray(i, end));
  } catch {
    const message = `substr(${JSON.stringify(s)}, ${i}, ${n}) is not supported: it cuts a multi-byte UTF-8 character, and Soufflé's bytes would be no string here`;
    throw new VixenError({ severity: 'error', message });
  }
}

/** Compiled LIKE patterns: tables and the interpreter test many strings (millions of ids) against few patterns. */
const likePatterns = new Map<string, (s: string) => boolean>();

/** SQL LIKE over code points: `%` matches any run (also empty), `_` exactly one character. */
export function like(s: string, pattern: string): boolean {
  let test = likePatterns.get(pattern);
  if (!test) likePatterns.set(pattern, (test = compileLike(pattern)));
  return test(s);
}

function compileLike(pattern: string): (s: string) => boolean {
  if (!pattern.includes('_')) return likeLiteral(pattern.split('%'));
  const body = [...pattern].map((ch) => (ch === '%' ? '.*' : ch === '_' ? '.' : ch.replace(/[\\^$.*+?()[\]{}|/]/g, '\\$&'))).join('');
  // `s`: `.` also matches line breaks; `u`: `.` is one code point.
  const re = new RegExp(`^(?:${body})$`, 'su');
  return (s) => re.test(s);
}

/**
 * LIKE without `_`: the literal pieces between the `%`s, in order, without overlap; the first anchored at the
 * start, the last at the end. Picking each piece's first occurrence is optimal, so no backtracking.
 */
function likeLiteral(pieces: readonly string[]): (s: string) => boolean {
  const first = pieces[0]!;
  if (pieces.length === 1) return (s) => s === first;
  const last = pieces[pieces.length - 1]!;
  const middle = pieces.slice(1, -1).filter((p) => p !== '');
  return (s) => {
    if (s.length < first.length + last.length || !s.startsWith(first)) return false;
    let at = first.length;
    const end = s.length - last.length;
    for (const piece of middle) {
      const found = s.indexOf(piece, at);
      if (found < 0 || found + piece.length > end) return false;
      at = found + piece.length;
    }
    return s.endsWith(last);
  };
}

const utf8 = new TextEncoder();

/** `s` as one character per UTF-8 byte: C++ regular expressions over std::string see bytes. */
function bytes(s: string): string {
  // Only non-ASCII strings need it; ASCII is its own byte string.
  return /^[\x00-\x7f]*$/.test(s) ? s : String.fromCharCode(...utf8.encode(s));
}

/** The ranges of std::regex's POSIX classes (`[[:digit:]]`) in the "C" locale, as JavaScript writes them in brackets. */
const POSIX_CLASSES: Readonly<Record<string, string>> = {
  alnum: '0-9A-Za-z',
  alpha: 'A-Za-z',
  blank: '\\t ',
  cntrl: '\\x00-\\x1f\\x7f',
  d: '0-9',
  digit: '0-9',
  graph: '!-~',
  lower: 'a-z',
  print: ' -~',
  punct: '!-\\/:-@\\[-`{-~',
  s: '\\t\\n\\v\\f\\r ',
  space: '\\t\\n\\v\\f\\r ',
  upper: 'A-Z',
  w: '0-9A-Za-z_',
  xdigit: '0-9A-Fa-f',
};

/**
 * `pattern` with each POSIX class inside a bracket expression (`[^[:alpha:]_]`) written as its ranges, which
 * JavaScript reads as C++ reads the class; undefined for a class name C++ does not know.
 */
function posixClasses(pattern: string): string | undefined {
  let out = '';
  let inBracket = false;
  for (let k = 0; k < pattern.length; k++) {
    const ch = pattern[k]!;
    if (ch === '\\') {
      out += pattern.slice(k, k + 2);
      k++;
    } else if (inBracket && pattern.startsWith('[:', k)) {
      const end = pattern.indexOf(':]', k + 2);
      const ranges = end < 0 ? undefined : POSIX_CLASSES[pattern.slice(k + 2, end)];
      if (ranges === undefined) return undefined;
      out += ranges;
      k = end + 1;
    } else {
      if (!inBracket && ch === '[') inBracket = true;
      else if (inBracket && ch === ']') inBracket = false;
      out += ch;
    }
  }
  return out;
}

/**
 * Why a regular expression is outside what `regexMatches` runs as C++'s std::regex (ECMAScript grammar) would,
 * or undefined when it is inside: `differs` for JavaScript-only syntax (lookbehind, named groups, `\p`, `\u`, `\k`),
 * collating elements and equivalence classes (`[[.a.]]`, `[[=a=]]`, C++ only) and unknown POSIX classes (POSIX
 * classes are rewritten as ranges); `invalid` for patterns JavaScript rejects, which std::regex rejects too (its
 * ECMAScript grammar is the stricter one).
 */
export function regexProblem(pattern: string): { kind: 'differs' | 'invalid'; message: string } | undefined {
  const differs = { kind: 'differs', message: 'it uses syntax whose meaning differs between C++ and JavaScript' } as const;
  if (/\(\?<|\\[pPuk]|\[\[[.=]/.test(pattern)) return differs;
  const js = posixClasses(pattern);
  if (js === undefined) return differs;
  try {
    new RegExp(bytes(js));
  } catch (e) {
    return { kind: 'invalid', message: (e as Error).message };
  }
  return undefined;
}

const regexes = new Map<string, RegExp>();

/** std::regex_match(s, std::regex(pattern)): the whole string matches, over bytes. */
export function regexMatches(s: string, pattern: string): boolean {
  let re = regexes.get(pattern);
  if (!re) regexes.set(pattern, (re = new RegExp(`^(?:${bytes(posixClasses(pattern) ?? pattern)})$`)));
  return re.test(bytes(s));
}

/** Digits of each base std::stoi reads. */
const DIGITS: Readonly<Record<number, RegExp>> = { 2: /^[01]+/, 8: /^[0-7]+/, 10: /^[0-9]+/, 16: /^[0-9a-fA-F]+/ };

/**
 * std::stoi(s, nullptr, base): leading blanks, a sign, then digits of the base, the rest ignored; base 0 reads
 * `0x` as hexadecimal and a leading `0` as octal. Undefined where stoi throws (no digits, out of range).
 */
function stoi(s: string, base: 0 | 2): number | undefined {
  const m = /^[ \t\n\v\f\r]*([+-]?)(.*)$/s.exec(s)!;
  let rest = m[2]!;
  let radix = base === 2 ? 2 : 10;
  if (base === 0 && /^0[xX][0-9a-fA-F]/.test(rest)) [radix, rest] = [16, rest.slice(2)];
  else if (base === 0 && rest.startsWith('0')) radix = 8;
  const digits = DIGITS[radix]!.exec(rest)?.[0];
  if (digits === undefined) return undefined;
  const prefix = radix === 16 ? '0x' : radix === 8 ? '0o' : radix === 2 ? '0b' : '';
  const n = (m[1] === '-' ? -1n : 1n) * BigInt(prefix + digits);
  return n >= -(2n ** 31n) && n < 2n ** 31n ? Number(n) : undefined;
}

/**
 * Soufflé's to_number on a string (symbol2numeric, RamSignedFromString with base 0): `0b` or `-0b` and binary
 * digits, else std::stoi with base 0 (decimal, `0x` hexadecimal, a leading `0` octal). Where that throws (no
 * digits, out of range) Soufflé stops the program; the table has to hold something: 0.
 */
export function leadingInt32(s: string): number {
  if (s.startsWith('-0b')) {
    const n = stoi(s.slice(3), 2);
    return n === undefined ? 0 : -n | 0;
  }
  return (s.startsWith('0b') ? stoi(s.slice(2), 2) : stoi(s, 0)) ?? 0;
}

const MS_PER_DAY = 86_400_000;

export function evalBuiltin(fn: BuiltinFn, args: readonly Value[]): Value {
  const [a, b, c] = args;
  switch (fn) {
    case 'date:year':
      return new Date((a as number) * MS_PER_DAY).getUTCFullYear();
    case 'date:month':
      return new Date((a as number) * MS_PER_DAY).getUTCMonth() + 1;
    case 'date:day':
      return new Date((a as number) * MS_PER_DAY).getUTCDate();
    case 'date:add_days':
      return ((a as number) + (b as number)) | 0;
    case 'int32:from_int64':
      return Number(BigInt.asIntN(32, a as bigint));
    case 'int32:from_uint32':
      return (a as number) | 0;
    case 'int32:from_decimal':
      return Number(BigInt.asIntN(32, (a as bigint) / DECIMAL_SCALE));
    case 'int32:from_float32': {
      const x = a as number;
      return Number.isNaN(x) ? 0 : Math.max(-(2 ** 31), Math.min(2 ** 31 - 1, Math.trunc(x))) + 0;
    }
    case 'int64:from_int32':
    case 'int64:from_uint32':
      return BigInt(a as number);
    case 'int64:from_decimal':
      return (a as bigint) / DECIMAL_SCALE;
    case 'uint32:from_int32':
      return (a as number) >>> 0;
    case 'uint32:from_int64':
      return Number(BigInt.asUintN(32, a as bigint));
    case 'decimal:from_int32':
      return BigInt(a as number) * DECIMAL_SCALE;
    case 'decimal:from_int64':
      return BigInt.asIntN(64, (a as bigint) * DECIMAL_SCALE);
    case 'float32:from_int32':
      return Math.fround(a as number);
    case 'string:length':
      return stringLength(a as string);
    case 'string:substring':
      return substring(a as string, b as number, c as number);
    case 'string:substr':
      return souffleSubstr(a as string, b as number, c as number);
    case 'string:like':
      return like(a as string, b as string);
    case 'string:startswith':
      return (a as string).startsWith(b as string);
    case 'string:endswith':
      return (a as string).endsWith(b as string);
    case 'int32:band':
      return (a as number) & (b as number);
    case 'int32:bor':
      return (a as number) | (b as number);
    case 'int32:bxor':
      return (a as number) ^ (b as number);
    case 'int32:bshl':
      return (a as number) << ((b as number) & 31);
    case 'int32:bshr':
      return (a as number) >> ((b as number) & 31);
    case 'int32:bshru':
      return ((a as number) >>> ((b as number) & 31)) | 0;
    case 'int32:bnot':
      return ~(a as number);
    case 'int32:land':
      return a !== 0 && b !== 0 ? 1 : 0;
    case 'int32:lor':
      return a !== 0 || b !== 0 ? 1 : 0;
    case 'int32:lxor':
      return (a !== 0) !== (b !== 0) ? 1 : 0;
    case 'int32:lnot':
      return a === 0 ? 1 : 0;
    case 'string:byte_length':
      return utf8.encode(a as string).length;
    case 'string:contains':
      return (a as string).includes(b as string);
    case 'string:matches':
      return regexMatches(a as string, b as string);
    case 'string:to_int32':
      return leadingInt32(a as string);
  }
}
