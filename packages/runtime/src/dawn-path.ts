import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';

/** Path of the Dawn addon (`dawn.node`) the `webgpu` package loads on this platform. */
export function dawnAddonPath(platform: string = process.platform, arch: string = process.arch): string {
  const pkg = dirname(createRequire(import.meta.url).resolve('webgpu'));
  return join(pkg, 'dist', `${platform}-${platform === 'darwin' ? 'universal' : arch}`, 'dawn.node');
}
