import type { Diagnostic } from '@vixen/queryplan';
import type { SourceAst } from './ast.js';
import { tokenize } from './lexer.js';
import { parseTokens } from './parser.js';

/** Lexes and parses one file. Lexical errors do not stop parsing: the remaining tokens are still checked. */
export function parse(text: string, file: string): { ast: SourceAst; diagnostics: Diagnostic[] } {
  const lexed = tokenize(text, file);
  const parsed = parseTokens(lexed.tokens, file);
  return { ast: parsed.ast, diagnostics: [...lexed.diagnostics, ...parsed.diagnostics] };
}
