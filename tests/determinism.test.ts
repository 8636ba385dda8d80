/**
 * Same input, same output bytes: a program over a shuffled random graph is run twice through the CLI, and its
 * --output-dir files, CSV and JSON output (and the compiled program file) must be byte-identical. GPU kernels
 * use atomics and parallel reductions whose order varies between runs; the output must not show it.
 */
import { mkdtempSync, readdirSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect, test } from 'vitest';
import { runCli } from '@vixen/cli';
import { makeFacts } from './determinism/make-facts.js';

const program = join(import.meta.dirname, 'determinism/program.logic');

async function run(...args: string[]): Promise<string> {
  let out = '';
  let err = '';
  const code = await runCli(['node', 'vixen', 'run', program, ...args], (s) => (out += s), (s) => (err += s));
  expect(code, err).toBe(0);
  return out;
}

const facts = mkdtempSync(join(tmpdir(), 'vixen-det-facts-'));
makeFacts(facts, 70, 160, 7);

test('two runs write byte-identical --output-dir files', async () => {
  const dirs = [mkdtempSync(join(tmpdir(), 'vixen-det-a-')), mkdtempSync(join(tmpdir(), 'vixen-det-b-'))];
  for (const dir of dirs) await run('--facts', facts, '--output-dir', dir);
  const files = readdirSync(dirs[0]!).sort();
  expect(files).toEqual(['named.csv', 'path.csv', 'reach.csv', 'total.csv']);
  expect(readdirSync(dirs[1]!).sort()).toEqual(files);
  for (const f of files) {
    const [a, b] = dirs.map((d) => readFileSync(join(d, f)));
    expect(a!.length, f).toBeGreaterThan(0);
    expect(a!.equals(b!), `${f} differs between runs`).toBe(true);
  }
});

test.each(['csv', 'json'])('two runs print byte-identical %s', async (format) => {
  const [a, b] = [await run('--facts', facts, '--format', format), await run('--facts', facts, '--format', format)];
  expect(a.length).toBeGreaterThan(1000);
  expect(a === b, `--format ${format} output differs between runs`).toBe(true);
});

test('two compilations write byte-identical program files', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'vixen-det-prog-'));
  for (const name of ['a.json', 'b.json']) {
    expect(await runCli(['node', 'vixen', 'compile', program, '-o', join(dir, name)], () => {}, () => {})).toBe(0);
  }
  expect(readFileSync(join(dir, 'a.json')).equals(readFileSync(join(dir, 'b.json')))).toBe(true);
});
