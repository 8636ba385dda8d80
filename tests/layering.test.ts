/**
 * The package graph of README's architecture section: each package imports only packages before it in the
 * pipeline, in its package.json and in its sources, so no stage depends on a later one.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';

const PIPELINE = ['queryplan', 'frontend', 'kernel-ir', 'codegen-wgsl', 'io', 'runtime', 'bench', 'web', 'cli'];
const root = join(import.meta.dirname, '..', 'packages');

function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) => (e.isDirectory() ? sourceFiles(join(dir, e.name)) : e.name.endsWith('.ts') ? [join(dir, e.name)] : []));
}

/** The workspace packages a file names in its imports and re-exports (static and dynamic). */
function importedPackages(file: string): string[] {
  const text = readFileSync(file, 'utf8');
  return [...text.matchAll(/(?:from|import)\s*\(?\s*'@vixen\/([a-z-]+)/g)].map((m) => m[1]!);
}

describe('package layering', () => {
  it('every package directory is in the pipeline', () => {
    expect(readdirSync(root).sort()).toEqual([...PIPELINE].sort());
  });

  for (const [rank, name] of PIPELINE.entries()) {
    const earlier = new Set(PIPELINE.slice(0, rank));
    it(`${name} depends on and imports only packages before it`, () => {
      const manifest = JSON.parse(readFileSync(join(root, name, 'package.json'), 'utf8')) as { dependencies?: Record<string, string> };
      const declared = Object.keys(manifest.dependencies ?? {}).filter((d) => d.startsWith('@vixen/')).map((d) => d.slice('@vixen/'.length));
      expect(declared.filter((d) => !earlier.has(d))).toEqual([]);
      const dirs = ['src', 'test'].map((d) => join(root, name, d));
      const offending = dirs.flatMap((d) => { try { return sourceFiles(d); } catch { return []; } })
        .flatMap((f) => importedPackages(f).filter((p) => !earlier.has(p) && p !== name).map((p) => `${f.slice(root.length + 1)} imports @vixen/${p}`));
      expect(offending).toEqual([]);
      // Sources reach other packages only through their package names, never by relative paths into them.
      const reaching = dirs.flatMap((d) => { try { return sourceFiles(d); } catch { return []; } })
        .filter((f) => /from '(\.\.\/){2,}(?!\.\.)[a-z-]+\/(src|test)\//.test(readFileSync(f, 'utf8')))
        .map((f) => f.slice(root.length + 1));
      expect(reaching).toEqual([]);
    });
  }
});
