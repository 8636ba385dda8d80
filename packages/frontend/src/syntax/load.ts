/**
 * Reads and parses the given files and, transitively, the files they `include` (each file once; a path
 * is resolved against the including file's folder). Clauses of an included file come where its include stood.
 */
import { posix } from 'node:path';
import { errorAt, type Diagnostic } from '@vixen/queryplan';
import type { Clause, SourceAst } from './ast.js';
import { parse } from './parse.js';

export interface SourceFile {
  path: string;
  text: string;
}

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
  const given = new Map(roots.map((f) => [posix.normalize(f.path), f.text]));
  const sources = new Map<string, string>();
  const files: SourceAst[] = [];
  const done = new Set<string>();
  const active: string[] = [];

  const visit = (path: string, text: string): void => {
    done.add(path);
    active.push(path);
    sources.set(path, text);
    const parsed = parse(text, path);
    diagnostics.push(...parsed.diagnostics);
    // Split the file around its includes so that included clauses land where the include stood.
    let pending: Clause[] = [];
    const flush = (): void => {
      if (pending.length > 0) files.push({ file: path, clauses: pending });
      pending = [];
    };
    for (const clause of parsed.ast.clauses) {
      if (clause.kind !== 'include') {
        pending.push(clause);
        continue;
      }
      const target = posix.normalize(posix.join(posix.dirname(path), clause.path));
      if (active.includes(target)) {
        const cycle = [...active.slice(active.indexOf(target)), target].join(' -> ');
        diagnostics.push(errorAt(`include cycle: ${cycle}`, clause.span));
        continue;
      }
      if (done.has(target)) continue;
      const included = given.get(target) ?? readFile?.(target);
      if (included === undefined) {
        diagnostics.push(errorAt(`cannot read included file '${target}'`, clause.pathSpan));
        continue;
      }
      flush();
      visit(target, included);
    }
    flush();
    active.pop();
  };

  for (const [path, text] of given) if (!done.has(path)) visit(path, text);
  return { files, sources };
}
