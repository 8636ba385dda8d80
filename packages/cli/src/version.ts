/**
 * Versions `vixen --version` prints. Built code (build-js.ts) has them defined at build time; from the sources
 * they are read from the CLI package's and the webgpu package's package.json.
 */
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';

declare const VIXEN_VERSION: string | undefined;
declare const VIXEN_WEBGPU_VERSION: string | undefined;

const versionIn = (packageJson: string): string => (JSON.parse(readFileSync(packageJson, 'utf8')) as { version: string }).version;

/** The vixen package's version (the CLI package's in the workspace). */
export const vixenVersion = (): string =>
  typeof VIXEN_VERSION === 'string' ? VIXEN_VERSION : versionIn(join(import.meta.dirname, '..', 'package.json'));

/** The version of the webgpu package, which brings Dawn. */
export const webgpuVersion = (): string =>
  typeof VIXEN_WEBGPU_VERSION === 'string'
    ? VIXEN_WEBGPU_VERSION
    : versionIn(join(dirname(createRequire(import.meta.url).resolve('webgpu')), 'package.json'));
