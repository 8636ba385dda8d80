/**
 * Same input, same output bytes: a program over a shuffled random graph is run twice through the CLI, and its
 * --output-dir files, CSV and JSON output (and the compiled program file) must be byte-identical. GPU kernels
 * use atomics and parallel reductions whose order varies between runs; the output must not show it.
 */
import { mkdtempSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect, test } from 'vitest';
import { runCli } from '@vixen/cli';

const program = join(import.meta.dirname, 'determinism/program.logic');

/** A seeded random graph of n nodes and m edges (mulberry32), labels with commas and quotes, weights. */
function makeFacts(n: number, m: number, seed: number): string {
  let a = seed;
  const random = (): number => {
    a = (a + 0x6d2b79f5) | 0;
    let t = Math.imul(a ^ (a >>> 15), 1 | a);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 2 ** 32;
  };
  const int = (k: number): number => Math.floor(random() * k);
  const dir = mkdtempSync(join(tmpdir(), 'vixen-det-facts-'));
  const edges = Array.from({ length: m }, () => `${int(n) - 5},${int(n) - 5}`);
  writeFileSync(join(dir, 'edge.csv'), edges.join('\n') + '\n');
  const nodes = Array.from({ length: n }, (_, i) => i - 5);
  writeFileSync(join(dir, 'label.csv'), nodes.map((x) => `${x},"node ${x}, ""${String.fromCharCode(97 + int(26))}"""`).join('\n') + '\n');
  const weights = nodes.map((x) => `${x},${(random() * 2000 - 1000).toFixed(3)},${1990 + int(30)}-0${1 + int(9)}-1${int(9)},${int(100000) / 100}`);
  writeFileSync(join(dir, 'weight.csv'), weights.join('\n') + '\n');
  return dir;
}

async function run(...args: string[]): Promise<string> {
  let out = '';
  let err = '';
  const code = await runCli(['node', 'vixen', 'run', program, ...args], (s) => (out += s), (s) => (err += s));
  expect(code, err).toBe(0);
  return out;
}

const facts = makeFacts(70, 160, 7);

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
