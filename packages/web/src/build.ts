/**
 * Builds the playground: the page's script bundled by esbuild for the browser (the `browser` conditions of io
 * and runtime pick their browser entries, so the bundle holds no Node built-in; a Node-only import anywhere on
 * the page's path fails the build), beside its HTML and CSS.
 */
import { copyFileSync, existsSync, mkdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { build, type Plugin } from 'esbuild';
import { VixenError } from '@vixen/queryplan';

const PAGE = join(import.meta.dirname, 'page');

/** The files of a built site. */
export const SITE_FILES = ['index.html', 'style.css', 'app.js'] as const;

export interface BuildSiteResult {
  /** Bytes of the page's script. */
  scriptBytes: number;
  /** Modules the script imports from outside the bundle: none in a working build. */
  externalImports: string[];
}

/** `import text from './file?raw'`: the file's text, as Vite gives it (the gallery imports the examples so). */
const rawText: Plugin = {
  name: 'raw-text',
  setup(b) {
    b.onResolve({ filter: /\?raw$/ }, (a) => ({ path: join(a.resolveDir, a.path.slice(0, -'?raw'.length)), namespace: 'raw-text' }));
    b.onLoad({ filter: /.*/, namespace: 'raw-text' }, (a) => ({ contents: readFileSync(a.path, 'utf8'), loader: 'text' }));
  },
};

export async function buildSite(outDir: string, options: { minify?: boolean } = {}): Promise<BuildSiteResult> {
  // The page is built from its sources, which a bundled CLI (the release package, `vixen bundle`) does not carry.
  if (!existsSync(join(PAGE, 'main.ts'))) throw new VixenError({ severity: 'error', message: 'this installation has no playground sources: run `vixen serve` (or `pnpm web`) from a Vixen checkout' });
  mkdirSync(outDir, { recursive: true });
  const result = await build({
    entryPoints: [join(PAGE, 'main.ts')],
    outfile: join(outDir, 'app.js'),
    bundle: true,
    platform: 'browser',
    format: 'esm',
    target: 'es2022',
    minify: options.minify ?? true,
    logLevel: 'silent',
    metafile: true,
    plugins: [rawText],
  });
  for (const f of ['index.html', 'style.css']) copyFileSync(join(PAGE, f), join(outDir, f));
  const output = Object.values(result.metafile.outputs)[0]!;
  return { scriptBytes: output.bytes, externalImports: output.imports.filter((i) => i.external).map((i) => i.path) };
}
