/**
 * The one esbuild configuration of Vixen's JavaScript builds: the release package (`pnpm release-pack`, registry
 * dependencies left as imports) and `vixen bundle` (everything inlined, Dawn loaded from beside the bundle). Both
 * build the CLI (vixen.mjs) and the entry of the worker pool's threads (vixen-worker.mjs), which io's
 * parallel/pool.ts looks for beside the module it is bundled into.
 */
import { existsSync, readdirSync, rmSync } from 'node:fs';
import { basename, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Plugin } from 'esbuild';
import { vixenVersion, webgpuVersion } from './version.js';

export interface BuildJsOptions {
  outDir: string;
  /** Also build the API entry (index.mjs, from api.ts): the release package's main module. */
  api?: boolean;
  /** Packages left as imports, resolved where the output is installed. */
  external: readonly string[];
  plugins?: Plugin[];
  minify: boolean;
}

/**
 * The entry points: from the sources when running from them, else (an installed release running `vixen bundle`)
 * the release's own built files beside this module, which then get their dependencies inlined.
 */
function entryPoints(api: boolean): Record<string, string> {
  const fromSources = import.meta.url.endsWith('.ts');
  const file = (source: string, built: string): string => (fromSources ? join(import.meta.dirname, source) : fileURLToPath(new URL(built, import.meta.url)));
  return {
    vixen: file('main.ts', './vixen.mjs'),
    'vixen-worker': file('worker.ts', './vixen-worker.mjs'),
    ...(api ? { index: file('api.ts', './index.mjs') } : {}),
  };
}

/** Builds into `outDir` (its earlier .mjs files removed) and returns the names of the files written. */
export async function buildJs(options: BuildJsOptions): Promise<string[]> {
  // Imported here: the CLI loads esbuild only for the commands that build.
  const { build } = await import('esbuild');
  // Chunks are named by content hash: those of an earlier build would stay behind unused.
  if (existsSync(options.outDir)) for (const f of readdirSync(options.outDir)) if (f.endsWith('.mjs')) rmSync(join(options.outDir, f));
  const result = await build({
    entryPoints: entryPoints(options.api ?? false),
    outdir: options.outDir,
    outExtension: { '.js': '.mjs' },
    bundle: true,
    // Shared code in chunks beside the entries, so the CLI, the API and the worker load one copy of each module.
    splitting: true,
    chunkNames: 'vixen-[hash]',
    platform: 'node',
    format: 'esm',
    target: 'node20',
    minify: options.minify,
    logLevel: 'silent',
    plugins: options.plugins ?? [],
    external: [...options.external],
    // CommonJS dependencies inside an ESM bundle still call require().
    banner: { js: "import { createRequire as __vixenRequire } from 'node:module'; const require = __vixenRequire(import.meta.url);" },
    define: { VIXEN_VERSION: JSON.stringify(vixenVersion()), VIXEN_WEBGPU_VERSION: JSON.stringify(webgpuVersion()) },
    metafile: true,
  });
  return Object.keys(result.metafile.outputs).map((f) => basename(f));
}
