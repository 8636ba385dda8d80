/**
 * `pnpm release-pack`: builds the `vixen` npm package and writes release/vixen-<version>.tgz. The workspace
 * packages build to dist/ with declarations (tsc -b); esbuild bundles their JavaScript into the CLI, its worker
 * entry and the API module, leaving registry dependencies as imports; rollup-plugin-dts bundles the API's
 * declarations. The version is the CLI package's; the dependencies are the workspace packages' own.
 */
import { execFileSync } from 'node:child_process';
import { copyFileSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { rollup, type Plugin } from 'rollup';
import { dts } from 'rollup-plugin-dts';
import { buildJs } from '@vixen/cli';

const root = join(import.meta.dirname, '..');
const packagesDir = join(root, 'packages');
const releaseDir = join(root, 'release');
const stage = join(releaseDir, 'package');

interface Manifest {
  name: string;
  version: string;
  dependencies?: Record<string, string>;
  publishConfig?: { exports?: Record<string, { types: string; default: string }> };
}
const readManifest = (dir: string): Manifest => JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8')) as Manifest;

/** Optional peers: `vixen bench` reports when DuckDB is missing. */
const OPTIONAL_PEERS = ['@duckdb/node-api'];

/**
 * Registry dependencies bundled into the JavaScript rather than imported, for start-up time: chevrotain's ESM
 * build is some 300 modules (with lodash-es), which took about 1 s of every `vixen run` on a 2-core machine,
 * apache-arrow's 158 took 0.2 s, and resolving and loading zod's and commander's modules about a fifth of `vixen
 * --help`'s 0.4 s. They stay dependencies where the declarations import them (zod: the compiled-program file's type).
 */
const INLINED = ['apache-arrow', 'chevrotain', 'commander', 'zod'];

/** The registry dependencies of every workspace package, one range each (two different ranges are an error). */
function registryDependencies(): Record<string, string> {
  const deps = new Map<string, string>();
  for (const name of readdirSync(packagesDir).sort()) {
    for (const [dep, range] of Object.entries(readManifest(join(packagesDir, name)).dependencies ?? {})) {
      if (dep.startsWith('@vixen/')) continue;
      const known = deps.get(dep);
      if (known !== undefined && known !== range) throw new Error(`${dep} is ${known} in one package and ${range} in packages/${name}`);
      deps.set(dep, range);
    }
  }
  return Object.fromEntries([...deps].sort(([a], [b]) => a.localeCompare(b)));
}

/** `@vixen/<name>[/sub]` in the built declarations: that package's dist declarations (its publishConfig export). */
const workspaceDeclarations: Plugin = {
  name: 'vixen-workspace-declarations',
  resolveId(id) {
    const m = /^@vixen\/([a-z-]+)(\/.*)?$/.exec(id);
    if (!m) return null;
    const dir = join(packagesDir, m[1]!);
    const entry = readManifest(dir).publishConfig?.exports?.[`.${m[2] ?? ''}`];
    if (!entry) throw new Error(`${id}: no publishConfig export in packages/${m[1]}/package.json`);
    return join(dir, entry.types);
  },
};

async function bundleDeclarations(external: readonly string[], out: string): Promise<void> {
  const bundle = await rollup({
    input: join(packagesDir, 'cli', 'dist', 'api.d.ts'),
    plugins: [workspaceDeclarations, dts()],
    external: (id) => id.startsWith('node:') || external.some((d) => id === d || id.startsWith(`${d}/`)),
  });
  // The API's types name WebGPU's (GPUDevice): the webgpu package brings them.
  await bundle.write({ file: out, format: 'es', banner: '/// <reference types="webgpu" />' });
  await bundle.close();
}

const cli = readManifest(join(packagesDir, 'cli'));
const workspace = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as { engines: Record<string, string> };
const all = registryDependencies();
const external = Object.keys(all).filter((d) => !INLINED.includes(d));
const peers = Object.fromEntries(Object.entries(all).filter(([d]) => OPTIONAL_PEERS.includes(d)));

execFileSync(process.execPath, [join(root, 'node_modules', 'typescript', 'bin', 'tsc'), '-b', join(packagesDir, 'cli')], { stdio: 'inherit' });
rmSync(stage, { recursive: true, force: true });
mkdirSync(join(stage, 'dist'), { recursive: true });
await buildJs({ outDir: join(stage, 'dist'), api: true, external, minify: true });
await bundleDeclarations(Object.keys(all), join(stage, 'dist', 'index.d.ts'));
// What the installed package imports: the JavaScript's external packages and those the declarations name.
const declared = readFileSync(join(stage, 'dist', 'index.d.ts'), 'utf8');
const imported = (d: string): boolean => external.includes(d) || new RegExp(`(from |types=)["']${d}(/[^"']*)?["']`).test(declared);
const dependencies = Object.fromEntries(Object.entries(all).filter(([d]) => !OPTIONAL_PEERS.includes(d) && imported(d)));
copyFileSync(join(packagesDir, 'cli', 'README.md'), join(stage, 'README.md'));
const manifest = {
  name: 'vixen',
  version: cli.version,
  description: 'Compile and run LogiQL-style Datalog (and Soufflé programs) on GPUs through WebGPU',
  type: 'module',
  bin: { vixen: './dist/vixen.mjs' },
  exports: { '.': { types: './dist/index.d.ts', default: './dist/index.mjs' } },
  files: ['dist', 'README.md'],
  engines: workspace.engines,
  dependencies,
  peerDependencies: peers,
  peerDependenciesMeta: Object.fromEntries(Object.keys(peers).map((d) => [d, { optional: true }])),
};
writeFileSync(join(stage, 'package.json'), JSON.stringify(manifest, null, 2) + '\n');
const tarball = execFileSync('npm', ['pack', '--silent', '--pack-destination', releaseDir], { cwd: stage, encoding: 'utf8' }).trim();
console.log(join('release', tarball));
