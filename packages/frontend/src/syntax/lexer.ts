/** Tokens of the LogiQL dialect. Labels are what syntax errors print as "expected ...". */
import { createToken, Lexer, type IToken, type TokenType } from 'chevrotain';
import { errorAt, type Diagnostic } from '@vixen/queryplan';
import { tokenSpan } from './span.js';

export const WhiteSpace = createToken({ name: 'WhiteSpace', pattern: /\s+/, group: Lexer.SKIPPED });
export const LineComment = createToken({ name: 'LineComment', pattern: /\/\/[^\n\r]*/, group: Lexer.SKIPPED });
export const BlockComment = createToken({ name: 'BlockComment', pattern: /\/\*[\s\S]*?\*\//, group: Lexer.SKIPPED });
// Unclosed comments and strings lex as whole tokens in a side group so they report once, not char by char.
export const UnclosedComment = createToken({ name: 'UnclosedComment', pattern: /\/\*[\s\S]*/, group: 'unclosed' });

// Unrolled loops (`a*(?:b a*)*`, not `(?:a|b)*`): V8 backtracks through an alternation once per character and
// overflows its stack on a string of a few MB.
export const StringLit = createToken({ name: 'StringLit', pattern: /"[^"\\\n\r]*(?:\\.[^"\\\n\r]*)*"/, label: 'a string' });
export const UnclosedString = createToken({ name: 'UnclosedString', pattern: /"[^"\\\n\r]*(?:\\.[^"\\\n\r]*)*/, group: 'unclosed' });
/** Integers, decimals and exponents with an optional type suffix; the parser sorts out which are supported. */
export const NumberLit = createToken({
  name: 'NumberLit',
  pattern: /[0-9]+(?:\.[0-9]+)?(?:[eE][+-]?[0-9]+)?[uLdf]?/,
  label: 'a number',
});

export const Identifier = createToken({ name: 'Identifier', pattern: /[A-Za-z_][A-Za-z0-9_:]*/, label: 'a name' });
/** Contextual keywords: they are also identifiers (a predicate may be called `order`). */
function keyword(word: string): TokenType {
  return createToken({
    name: `Kw_${word}`,
    pattern: word,
    categories: [Identifier],
    longer_alt: Identifier,
    label: `'${word}'`,
  });
}
export const Include = keyword('include');
export const Order = keyword('order');
export const By = keyword('by');
export const Limit = keyword('limit');
export const Agg = keyword('agg');
export const Asc = keyword('asc');
export const Desc = keyword('desc');

function punct(name: string, text: string): TokenType {
  return createToken({ name, pattern: text, label: `'${text}'` });
}
export const Arrow = punct('Arrow', '->');
export const LArrow = punct('LArrow', '<-');
export const LAngle2 = punct('LAngle2', '<<');
export const RAngle2 = punct('RAngle2', '>>');
export const Le = punct('Le', '<=');
export const Ge = punct('Ge', '>=');
export const Ne = punct('Ne', '!=');
export const Lt = punct('Lt', '<');
export const Gt = punct('Gt', '>');
export const Eq = punct('Eq', '=');
export const Bang = punct('Bang', '!');
export const LParen = punct('LParen', '(');
export const RParen = punct('RParen', ')');
export const LBracket = punct('LBracket', '[');
export const RBracket = punct('RBracket', ']');
export const Comma = punct('Comma', ',');
export const Semi = punct('Semi', ';');
export const Dot = punct('Dot', '.');
export const Plus = punct('Plus', '+');
export const Minus = punct('Minus', '-');
export const Star = punct('Star', '*');
export const Slash = punct('Slash', '/');
export const Percent = punct('Percent', '%');

/** Order matters: longer operators before their prefixes, keywords before Identifier. */
export const allTokens: TokenType[] = [
  WhiteSpace,
  LineComment,
  BlockComment,
  UnclosedComment,
  StringLit,
  UnclosedString,
  NumberLit,
  Include,
  Order,
  By,
  Limit,
  Agg,
  Asc,
  Desc,
  Identifier,
  Arrow,
  LArrow,
  LAngle2,
  RAngle2,
  Le,
  Ge,
  Ne,
  Lt,
  Gt,
  Eq,
  Bang,
  LParen,
  RParen,
  LBracket,
  RBracket,
  Comma,
  Semi,
  Dot,
  Plus,
  Minus,
  Star,
  Slash,
  Percent,
];

const lexer = new Lexer(allTokens, { positionTracking: 'full', ensureOptimizations: false });

/** `using`: another dialect's lexer (the Soufflé one) that shares this file's comment and string tokens. */
export function tokenize(text: string, file: string, using: Lexer = lexer): { tokens: IToken[]; diagnostics: Diagnostic[] } {
  const result = using.tokenize(text);
  const diagnostics: Diagnostic[] = [];
  for (const e of result.errors) {
    const start = { line: e.line ?? 1, column: e.column ?? 1, offset: e.offset };
    const end = { line: start.line, column: start.column + e.length, offset: e.offset + e.length };
    const bad = text.slice(e.offset, e.offset + e.length);
    diagnostics.push(errorAt(`unexpected character ${JSON.stringify(bad)}`, { file, start, end }));
  }
  for (const t of result.groups['unclosed'] ?? []) {
    const what = t.tokenType === UnclosedString ? 'string literal: expected a closing \'"\'' : "comment: expected '*/'";
    // Point at the opening quote or `/*` only: the token may run to the end of the file.
    const { start } = tokenSpan(t, file);
    const width = t.tokenType === UnclosedString ? 1 : 2;
    const span = { file, start, end: { line: start.line, column: start.column + width, offset: start.offset + width } };
    diagnostics.push(errorAt(`unterminated ${what}`, span));
  }
  return { tokens: result.tokens, diagnostics };
}
