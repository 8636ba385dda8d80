/**
 * Reads and parses the given files and, transitively, the files they `include` (each file once; a path
 * is resolved against the including file's folder). Clauses of an included file come where its include stood.
 */
import type { Diagnostic } from '@vixen/queryplan';
import type { Clause, SourceAst } from './ast.js';
import { walkIncludes, type SourceFile } from './includes.js';
import { parse } from './parse.js';

export type { SourceFile } from './includes.js';

export interface LoadedProgram {
  /** Parsed files, in the order their clauses take effect. */
  files: SourceAst[];
  /** Every file read, by path (for rendering diagnostics). */
  sources: Map<string, string>;
}

export function loadProgram(
  roots: SourceFile[],
  readFile: ((path: string) => string | undefined) | undefined,
  diagnostics: Diagnostic[],
): LoadedProgram {
  const files: SourceAst[] = [];
  const sources = walkIncludes(roots, readFile, diagnostics, (path, text, include) => {
    const parsed = parse(text, path);
    diagnostics.push(...parsed.diagnostics);
    // Split the file around its includes so that included clauses land where the include stood.
    let pending: Clause[] = [];
    const flush = (): void => {
      if (pending.length > 0) files.push({ file: path, clauses: pending });
      pending = [];
    };
    for (const clause of parsed.ast.clauses) {
      if (clause.kind === 'include') include(clause.path, { span: clause.span, pathSpan: clause.pathSpan }, flush);
      else pending.push(clause);
    }
    flush();
  });
  return { files, sources };
}
