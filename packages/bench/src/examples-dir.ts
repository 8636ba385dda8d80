import { existsSync } from 'node:fs';
import { resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

/**
 * The folder examples/<name> of the source tree this code runs from, or else of the current directory: a bundled
 * CLI (`vixen bundle`) is one file with no source tree beside it, and runs from a checkout of the repository.
 */
export function examplesDir(name: string): string {
  const inSource = fileURLToPath(new URL(`../../../../examples/${name}`, import.meta.url));
  return existsSync(inSource) ? inSource : resolve('examples', name);
}
