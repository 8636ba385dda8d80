/**
 * Tokens of the Soufflé dialect (`.dl` files). Whitespace, comments and strings are the LogiQL lexer's own
 * tokens, so unclosed comments and strings report the same way (see `tokenize`).
 */
import { createToken, Lexer, type IToken, type TokenType } from 'chevrotain';
import type { Diagnostic } from '@vixen/queryplan';
import { BlockComment, LineComment, StringLit, tokenize, UnclosedComment, UnclosedString, WhiteSpace } from '../syntax/lexer.js';

/** `#include`, `#define`...: a whole preprocessor line, handled by preprocess.ts before parsing. */
export const Preprocessor = createToken({ name: 'Preprocessor', pattern: /#[^\n\r]*/ });

/** Order matters: floats before integers, `0x`/`0b` before plain digits, `u` suffix kept on the number. */
export const FloatLit = createToken({ name: 'FloatLit', pattern: /[0-9]+\.[0-9]+(?:[eE][+-]?[0-9]+)?/, label: 'a number' });
export const IntLit = createToken({ name: 'IntLit', pattern: /0x[0-9a-fA-F]+|0b[01]+|[0-9]+u?/, label: 'a number' });

/** A name, qualified or not: `edge`, and `London.train.edge` for a relation of a component instance. */
export const Identifier = createToken({ name: 'Identifier', pattern: /[A-Za-z_?][A-Za-z0-9_?]*(?:\.[A-Za-z_?][A-Za-z0-9_?]*)*/, label: 'a name' });

/** Constructs of full Soufflé outside the subset, lexed so the parser can name them. */
export const UserFunctor = createToken({ name: 'UserFunctor', pattern: /@[A-Za-z_?][A-Za-z0-9_?]*/, label: 'a functor' });
/** `$Branch(...)` (an ADT constructor) or a bare `$` (the old counter). */
export const Dollar = createToken({ name: 'Dollar', pattern: /\$[A-Za-z0-9_?]*/, label: "'$'" });
export const ChoiceDomain = createToken({ name: 'ChoiceDomain', pattern: /choice-domain/, label: "'choice-domain'" });
/** Soufflé's word operators (`x band y`, `lnot x`): bitwise and logical arithmetic. */
export const WordOp = createToken({
  name: 'WordOp',
  pattern: /(?:band|bor|bxor|bshl|bshru|bshr|bnot|land|lor|lxor|lnot)(?![A-Za-z0-9_?])/,
  label: 'an operator',
});

/** Aggregate keywords are reserved words in Soufflé. */
function keyword(word: string): TokenType {
  return createToken({ name: `Kw_${word}`, pattern: word, longer_alt: Identifier, label: `'${word}'` });
}
export const Count = keyword('count');
export const Sum = keyword('sum');
export const Min = keyword('min');
export const Max = keyword('max');
export const Mean = keyword('mean');

/** A directive `.name`, not followed by more name characters (`p(1).q(2).` is two facts, not `.q`). */
function directive(word: string): TokenType {
  return createToken({ name: `Dir_${word}`, pattern: new RegExp(`\\.${word}(?![A-Za-z0-9_?])`), label: `'.${word}'` });
}
export const Decl = directive('decl');
export const Input = directive('input');
export const Output = directive('output');
export const Type = directive('type');
export const NumberType = directive('number_type');
export const SymbolType = directive('symbol_type');
/** Directives outside the subset that name relations like `.output` does: parsed as such, then reported. */
export const SizeDirective = createToken({ name: 'SizeDirective', pattern: /\.(?:printsize|limitsize)(?![A-Za-z0-9_?])/, label: 'a directive' });
/** Other directives of full Soufflé (components, functors...): only reported, then skipped. */
export const OtherDirective = createToken({
  name: 'OtherDirective',
  pattern: /\.(?:comp|init|functor|pragma|plan|override|lattice)(?![A-Za-z0-9_?])/,
  label: 'a directive',
});
export const DIRECTIVES: readonly TokenType[] = [Decl, Input, Output, Type, NumberType, SymbolType, SizeDirective, OtherDirective];

function punct(name: string, text: string): TokenType {
  return createToken({ name, pattern: text, label: `'${text}'` });
}
export const If = punct('If', ':-');
export const Subtype = punct('Subtype', '<:');
export const Le = punct('Le', '<=');
export const Ge = punct('Ge', '>=');
export const Ne = punct('Ne', '!=');
export const Lt = punct('Lt', '<');
export const Gt = punct('Gt', '>');
export const Eq = punct('Eq', '=');
export const Bang = punct('Bang', '!');
export const LParen = punct('LParen', '(');
export const RParen = punct('RParen', ')');
export const LBrace = punct('LBrace', '{');
export const RBrace = punct('RBrace', '}');
export const Comma = punct('Comma', ',');
export const Semi = punct('Semi', ';');
export const Colon = punct('Colon', ':');
export const Pipe = punct('Pipe', '|');
export const Dot = punct('Dot', '.');
export const Plus = punct('Plus', '+');
export const Minus = punct('Minus', '-');
export const Star = punct('Star', '*');
export const Slash = punct('Slash', '/');
export const Percent = punct('Percent', '%');
/** Power: Soufflé has it, Vixen's arithmetic does not; lexed so the parser can say so. */
export const Caret = punct('Caret', '^');
export const LBracket = punct('LBracket', '[');
export const RBracket = punct('RBracket', ']');

export const allTokens: TokenType[] = [
  WhiteSpace,
  LineComment,
  BlockComment,
  UnclosedComment,
  StringLit,
  UnclosedString,
  Preprocessor,
  ...DIRECTIVES,
  FloatLit,
  IntLit,
  Count,
  Sum,
  Min,
  Max,
  Mean,
  ChoiceDomain,
  WordOp,
  Identifier,
  UserFunctor,
  Dollar,
  If,
  Subtype,
  Le,
  Ge,
  Ne,
  Lt,
  Gt,
  Eq,
  Bang,
  LParen,
  RParen,
  LBrace,
  RBrace,
  Comma,
  Semi,
  Colon,
  Pipe,
  Dot,
  Plus,
  Minus,
  Star,
  Slash,
  Percent,
  Caret,
  LBracket,
  RBracket,
];

const lexer = new Lexer(allTokens, { positionTracking: 'full', ensureOptimizations: false });

/** Tokens of one file, preprocessor lines included (see preprocess.ts). */
export function tokenizeSouffle(text: string, file: string): { tokens: IToken[]; diagnostics: Diagnostic[] } {
  return tokenize(text, file, lexer);
}
