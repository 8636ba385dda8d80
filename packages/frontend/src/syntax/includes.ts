/**
 * The include walk both dialects share: the given files and, transitively, the files they include, each read
 * once, depth first, so that an included file is scanned where its include stands. Include targets resolve
 * against the including file's folder; cycles and unreadable files are diagnostics.
 */
// pathe: POSIX paths without Node's path module, so the front end also runs in a browser.
import { dirname, join, normalize } from 'pathe';
import { errorAt, type Diagnostic, type SourceSpan } from '@vixen/queryplan';

export interface SourceFile {
  path: string;
  text: string;
}

/** Where an include stands: its whole directive (for a cycle) and its path (for a file that cannot be read). */
export interface IncludeAt {
  span: SourceSpan;
  pathSpan: SourceSpan;
}

/**
 * Scans every root and what it includes. `scan(path, text, include)` reads one file and calls
 * `include(target, at, enter)` where an include of `target` (relative to `path`) stands: a file not read yet is
 * then scanned right away, after `enter()`. Returns every file read, by path.
 */
export function walkIncludes(
  roots: readonly SourceFile[],
  readFile: ((path: string) => string | undefined) | undefined,
  diagnostics: Diagnostic[],
  scan: (path: string, text: string, include: (target: string, at: IncludeAt, enter: () => void) => void) => void,
): Map<string, string> {
  const given = new Map(roots.map((f) => [normalize(f.path), f.text]));
  const sources = new Map<string, string>();
  const done = new Set<string>();
  const active: string[] = [];
  const visit = (path: string, text: string): void => {
    done.add(path);
    active.push(path);
    sources.set(path, text);
    scan(path, text, (relative, at, enter) => {
      const target = normalize(join(dirname(path), relative));
      if (active.includes(target)) {
        diagnostics.push(errorAt(`include cycle: ${[...active.slice(active.indexOf(target)), target].join(' -> ')}`, at.span));
        return;
      }
      if (done.has(target)) return;
      const included = given.get(target) ?? readFile?.(target);
      if (included === undefined) {
        diagnostics.push(errorAt(`cannot read included file '${target}'`, at.pathSpan));
        return;
      }
      enter();
      visit(target, included);
    });
    active.pop();
  };
  for (const [path, text] of given) if (!done.has(path)) visit(path, text);
  return sources;
}
