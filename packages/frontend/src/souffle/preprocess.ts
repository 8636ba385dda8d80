/**
 * The part of the C preprocessor that Soufflé programs commonly use, applied to tokens: `#include "f.dl"`
 * (resolved against the including file's folder, each file once) and object-like `#define NAME value` /
 * `#undef NAME`. Everything else (`#ifdef`, function-like macros, `#include <...>`) is reported, never
 * silently skipped. A macro use keeps its own position, so diagnostics point where the name was written.
 */
import type { IToken } from 'chevrotain';
import { errorAt, type Diagnostic } from '@vixen/queryplan';
import { walkIncludes, type IncludeAt, type SourceFile } from '../syntax/includes.js';
import { tokenSpan } from '../syntax/span.js';
import { Identifier, Preprocessor, tokenizeSouffle } from './lexer.js';

/** A run of tokens from one file; an `#include` splits its file into the runs before and after it. */
export interface TokenRun {
  file: string;
  tokens: IToken[];
}

export interface Preprocessed {
  runs: TokenRun[];
  /** Every file read, by path. */
  sources: Map<string, string>;
}

const DIRECTIVE = /^#\s*([A-Za-z_]*)\s*(.*)$/;

export function preprocess(
  roots: SourceFile[],
  readFile: ((path: string) => string | undefined) | undefined,
  diagnostics: Diagnostic[],
): Preprocessed {
  const runs: TokenRun[] = [];
  // Macros persist across files, as the C preprocessor's do: a `#define` in an included file holds after it.
  const macros = new Map<string, IToken[]>();

  const expand = (use: IToken, seen: string[]): IToken[] => {
    const body = macros.get(use.image);
    if (!body || seen.includes(use.image)) return [use];
    // Each replacement token takes the position of the name it replaces.
    const placed = body.map((t) => ({
      ...t,
      startOffset: use.startOffset,
      endOffset: use.endOffset,
      startLine: use.startLine,
      endLine: use.endLine,
      startColumn: use.startColumn,
      endColumn: use.endColumn,
    }));
    return placed.flatMap((t) => (t.tokenType === Identifier ? expand(t, [...seen, use.image]) : [t]));
  };

  const scan = (path: string, text: string, include: (target: string, at: IncludeAt, enter: () => void) => void): void => {
    const lexed = tokenizeSouffle(text, path);
    diagnostics.push(...lexed.diagnostics);
    let pending: IToken[] = [];
    const flush = (): void => {
      if (pending.length > 0) runs.push({ file: path, tokens: pending });
      pending = [];
    };
    for (const t of lexed.tokens) {
      if (t.tokenType === Identifier) pending.push(...expand(t, []));
      else if (t.tokenType !== Preprocessor) pending.push(t);
      else {
        const target = directive(t, path);
        if (target === undefined) continue;
        flush();
        const span = tokenSpan(t, path);
        include(target, { span, pathSpan: span }, () => undefined);
      }
    }
    flush();
  };

  /** Applies `#define`/`#undef`; returns the path an `#include` names, undefined otherwise. */
  const directive = (t: IToken, path: string): string | undefined => {
    const span = tokenSpan(t, path);
    const [, name = '', rest = ''] = DIRECTIVE.exec(t.image.trimEnd()) ?? [];
    const error = (message: string): undefined => {
      diagnostics.push(errorAt(message, span));
      return undefined;
    };
    switch (name) {
      case 'include': {
        const quoted = /^"([^"]+)"$/.exec(rest);
        if (!quoted) return error(`expected #include "file.dl": only quoted includes are supported, found #include ${rest}`);
        return quoted[1]!;
      }
      case 'define': {
        const def = /^([A-Za-z_][A-Za-z0-9_]*)(\(?)\s*(.*)$/.exec(rest);
        if (!def) return error('expected a macro name after #define');
        if (def[2]) return error(`function-like macros are not supported: #define ${def[1]}(...); only #define NAME value`);
        const body = tokenizeSouffle(def[3]!, path);
        if (body.diagnostics.length > 0 || body.tokens.some((b) => b.tokenType === Preprocessor)) {
          return error(`the value of macro ${def[1]} is not valid Soufflé: ${def[3]}`);
        }
        macros.set(def[1]!, body.tokens);
        return undefined;
      }
      case 'undef':
        macros.delete(rest.trim());
        return undefined;
      default:
        return error(`the preprocessor directive #${name} is not supported (only #include "file", #define NAME value and #undef)`);
    }
  };

  return { runs, sources: walkIncludes(roots, readFile, diagnostics, scan) };
}
