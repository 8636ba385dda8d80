/**
 * The packed release installed as a user installs it: `npm install` of release/vixen-<version>.tgz into a fresh
 * project (its registry dependencies come from the npm registry). For the release test and the start-up benchmark.
 */
import { execFileSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const root = join(import.meta.dirname, '..');

/** release/vixen-<version>.tgz, as `pnpm release-pack` names it. */
export function releaseTarball(): string {
  const { version } = JSON.parse(readFileSync(join(root, 'packages', 'cli', 'package.json'), 'utf8')) as { version: string };
  return join(root, 'release', `vixen-${version}.tgz`);
}

/** A new project in a temporary folder with the tarball installed; returns the folder. */
export function installRelease(tarball: string = releaseTarball()): string {
  if (!existsSync(tarball)) throw new Error(`${tarball} does not exist: run pnpm release-pack first`);
  const dir = mkdtempSync(join(tmpdir(), 'vixen-release-'));
  writeFileSync(join(dir, 'package.json'), JSON.stringify({ name: 'vixen-consumer', private: true, type: 'module' }) + '\n');
  execFileSync('npm', ['install', '--no-audit', '--no-fund', '--silent', tarball], { cwd: dir, stdio: ['ignore', 'ignore', 'inherit'] });
  return dir;
}
