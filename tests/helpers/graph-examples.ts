/** The programs of examples/graphs, compiled with their file names (so diagnostics and origins name them). */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { compile, type Program } from '@vixen/runtime';

const examples = join(import.meta.dirname, '..', '..', 'examples', 'graphs');

export function loadGraphExample(name: string): Program {
  const filename = join(examples, `${name}.logic`);
  return compile(readFileSync(filename, 'utf8'), { filename });
}
