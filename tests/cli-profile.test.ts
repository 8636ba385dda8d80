/**
 * CLI surface of run limits, profiles and `vixen explain`: --profile lists every kernel and QP operator,
 * --max-iterations, --max-tuples, --timeout and --max-device-memory fail with clear errors, exit status 4 and partial
 * stats, explain prints text and DOT.
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, test } from 'vitest';
import { EXIT_LIMIT } from '@vixen/cli';
import { cli } from './helpers/cli.js';
import { compileFile } from '@vixen/runtime';
import { progressLine } from '../packages/cli/src/report.js';

const root = join(import.meta.dirname, '..');
const tcFile = join(root, 'examples/transitive-closure.logic');
const countUp = join(root, 'tests/runaway/count-up.logic');

/** A facts folder with a chain 0 -> 1 -> ... -> n as edge.csv. */
function chainFacts(n: number): string {
  const dir = mkdtempSync(join(tmpdir(), 'vixen-chain-'));
  writeFileSync(join(dir, 'edge.csv'), Array.from({ length: n }, (_, i) => `${i},${i + 1}\n`).join(''));
  return dir;
}
const chain12 = chainFacts(12);
const pathRows = (n: number): number => (n * (n + 1)) / 2;

describe('run --profile and --stats', () => {
  test('--profile lists every kernel and every QP operator on stderr, results alone on stdout', async () => {
    const r = await cli('run', tcFile, '--facts', chain12, '--profile', '--format', 'csv');
    expect(r.code).toBe(0);
    expect(r.out.split('\n').filter((l) => /^\d+,\d+$/.test(l))).toHaveLength(pathRows(12));
    const kernels = compileFile(tcFile).kir.kernels;
    const section = r.err.slice(r.err.indexOf('kernels:'));
    for (const k of kernels) expect(section).toMatch(new RegExp(`^  k${k.id}\\s+${k.kind}\\s+\\S+#\\d+\\s+\\d+`, 'm'));
    // Each kernel's rules, where only: the recursive rule's join, none for the fixpoint's difference.
    expect(section).toMatch(/^ {2}k\d+\s+mergeJoin\s.*\stransitive-closure\.logic:7$/m);
    expect(section).toMatch(/^ {2}k\d+\s+difference\s.*\s-$/m);
    expect(r.err).toMatch(/QP operators:/);
    expect(r.err).toMatch(/loop_path\s+0\s+12\s+[\d.]+\s+\d+\s+\d+\s+\d+\s+\d+\s+\$t\d+ := mapJoin \$delta_path, edge/);
    expect(r.err).toMatch(/device times/);
    // Per kernel, its copies', clears' and created buffers' MiB and its readbacks: what the device times leave out.
    expect(section).toMatch(/bytes out\s+copied MiB\s+cleared MiB\s+created MiB\s+readbacks\s+rules/);
    for (const k of kernels) expect(section).toMatch(new RegExp(`^  k${k.id}\\s.*\\s\\d+\\.\\d\\s+\\d+\\.\\d\\s+\\d+\\.\\d\\s+\\d+\\s+\\S+$`, 'm'));
    expect(r.err).not.toContain('\r');
  });

  test('--stats reports peak device memory and fixpoint iterations', async () => {
    const r = await cli('run', tcFile, '--facts', chain12, '--stats', '--output', 'path');
    expect(r.code).toBe(0);
    expect(r.err).toMatch(/peak device memory: [\d.]+ KiB \(\d+ bytes\)/);
    expect(r.err).toMatch(/fixpoint loop loop_path \(path\): 12 iterations( \(\d+ in-kernel\))? in \d+ batch(es)?, \d+ host syncs?, [\d.]+ dispatches per iteration/);
    const [, batches, syncs] = /(\d+) batch(?:es)?, (\d+) host sync/.exec(r.err)!;
    // Every batch ends in one exit test read on the host, and the loop's syncs are among the run's.
    expect(Number(batches)).toBeGreaterThanOrEqual(1);
    expect(Number(batches)).toBeLessThanOrEqual(12);
    expect(Number(syncs)).toBeLessThanOrEqual(Number(/host syncs: (\d+)/.exec(r.err)![1]));
    // Copies, clears and readbacks besides the compute passes: every host sync is a readback, and so is the final read.
    const work = /device work outside compute passes: (\d+) copies \([\d.]+ MiB\), (\d+) clears \([\d.]+ MiB\), \d+ buffers created \([\d.]+ MiB\), (\d+) readbacks \((\d+) besides the host syncs\)/.exec(r.err);
    expect(work).not.toBeNull();
    expect(Number(work![2])).toBeGreaterThan(0);
    expect(Number(work![4])).toBeGreaterThanOrEqual(0);
  });
});

describe('limits', () => {
  test('--max-iterations stops a long fixpoint with the loop relations, the limit and partial stats', async () => {
    const r = await cli('run', tcFile, '--facts', chain12, '--max-iterations', '3', '--stats');
    expect(r.code).toBe(4);
    expect(r.out).toBe('');
    expect(r.err).toMatch(/error: the fixpoint loop computing path \(block loop_path\) did not converge within 3 iterations/);
    expect(r.err).toMatch(/statistics up to the error:\n.*\npeak device memory: .*\nfixpoint loop loop_path \(path\): 3 iterations/);
    expect(r.err).not.toMatch(/\n\s+at /);
  });

  test('--max-iterations that suffices changes nothing', async () => {
    const r = await cli('run', tcFile, '--facts', chain12, '--max-iterations', '12', '--format', 'csv');
    expect(r.code).toBe(0);
    expect(r.out.split('\n').filter((l) => /^\d+,\d+$/.test(l))).toHaveLength(pathRows(12));
  });

  test('a low --max-device-memory fails with the variable and sizes; a sufficient one gives the answer', async () => {
    // Kernels run in partitions, but one row of each side of the join and its output (three buffers of 256 bytes, the
    // least a buffer takes) do not fit 600 bytes.
    const low = await cli('run', tcFile, '--facts', chain12, '--max-device-memory', '600');
    expect(low.code).toBe(4);
    expect(low.err).toMatch(/error: device memory limit exceeded: .* reads (relation edge|temporary %k\d+) of 12 rows, 96 bytes; its smallest partition, 1 row, 8 bytes, .* the limit is 600 bytes/);
    expect(low.out).toBe('');
    const enough = await cli('run', tcFile, '--facts', chain12, '--max-device-memory', '64MiB', '--format', 'csv');
    expect(enough.code).toBe(0);
    expect(enough.out.split('\n').filter((l) => /^\d+,\d+$/.test(l))).toHaveLength(pathRows(12));
  });

  test('a --max-device-memory below the peak spills relations to host memory and gives the same answer', async () => {
    const r = await cli('run', tcFile, '--facts', chain12, '--max-device-memory', '1.5KiB', '--format', 'csv', '--stats');
    expect(r.code).toBe(0);
    expect(r.out.split('\n').filter((l) => /^\d+,\d+$/.test(l))).toHaveLength(pathRows(12));
    expect(r.err).toMatch(/peak device memory: [\d.]+ KiB \(\d+ bytes\) of a 1\.5 KiB \(1536 bytes\) budget/);
    expect(r.err).toMatch(/spilled to host memory: [\d.]+ KiB \(\d+ bytes\) in \d+ spills, uploaded again: [\d.]+ KiB/);
  });

  test('--max-tuples stops a runaway recursion with exit 4, partial stats, and no output files', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'vixen-limit-out-'));
    writeFileSync(join(dir, 'count.csv'), 'earlier result\n');
    const r = await cli('run', countUp, '--max-tuples', '20', '--output-dir', dir);
    expect(r.code).toBe(EXIT_LIMIT);
    expect(r.out).toBe('');
    expect(r.err).toMatch(
      /error: tuple limit exceeded: .* made relation count hold 21 tuples; the limit is 20 per relation \(maxTuples \/ --max-tuples\); stopped after 20 fixpoint iterations, \d+ kernel launches and [\d.]+ s of evaluation, holding 20 tuples \(count 20\)/,
    );
    expect(readdirSync(dir)).toEqual(['count.csv']);
    expect(readFileSync(join(dir, 'count.csv'), 'utf8')).toBe('earlier result\n');
  });

  test('--timeout stops a runaway recursion with exit 4 and partial stats', async () => {
    const r = await cli('run', countUp, '--timeout', '0.5', '--stats');
    expect(r.code).toBe(EXIT_LIMIT);
    expect(r.out).toBe('');
    expect(r.err).toMatch(/statistics up to the error:\n.*\n.*\nfixpoint loop loop_count \(count\): \d+ iterations/);
    const m = /error: timed out after ([\d.]+) s; the limit is 0\.5 s \(timeout \/ --timeout\); stopped after (\d+) fixpoint iterations, .* holding (\d+) tuples \(count \d+\)/.exec(r.err);
    expect(m).not.toBeNull();
    expect(Number(m![1])).toBeGreaterThanOrEqual(0.5);
    expect(Number(m![3])).toBeGreaterThan(1);
  });

  test('the real binary exits with status 4 on a limit', () => {
    const r = spawnSync(process.execPath, ['--import', 'tsx', join(root, 'packages/cli/src/main.ts'), 'run', countUp, '--max-iterations', '5'], {
      encoding: 'utf8',
    });
    expect(r.status).toBe(4);
    expect(r.stderr).toMatch(/error: the fixpoint loop computing count .* did not converge within 5 iterations .*; stopped after 5 fixpoint iterations/);
    expect(r.stderr).not.toMatch(/\n\s+at /);
  });

  test('bad limit values are option errors', async () => {
    const size = await cli('run', tcFile, '--max-device-memory', 'lots');
    expect(size.code).toBe(1);
    expect(size.err).toMatch(/option --max-device-memory: 'lots' is not a byte size/);
    const iters = await cli('run', tcFile, '--max-iterations', '0');
    expect(iters.code).toBe(1);
    expect(iters.err).toMatch(/option --max-iterations/);
  });
});

describe('explain', () => {
  test('prints the query plan and the kernel IR as text', async () => {
    const r = await cli('explain', tcFile);
    expect(r.code).toBe(0);
    expect(r.out).toMatch(/^query plan:\n/);
    expect(r.out).toMatch(/block loop_path:\n\s+\$t\d+ := mapJoin/);
    expect(r.out).toMatch(/kernel IR:\nvariables:/);
    expect(r.out).toMatch(/mergeJoin .* \/\/ k\d+/);
    expect(r.out).not.toMatch(/profile/);
  });

  test('--dot prints both CFGs as clusters of one Graphviz graph', async () => {
    const r = await cli('explain', tcFile, '--dot');
    expect(r.code).toBe(0);
    expect(r.out).toMatch(/^digraph cfg \{/);
    expect(r.out).toContain('subgraph cluster_0 {\n    label="query plan";');
    expect(r.out).toContain('subgraph cluster_1 {\n    label="kernel IR";');
    expect(r.out).toContain('"1:loop_path" -> "1:loop_path" [label="false"];');
    expect(r.out.trimEnd().endsWith('}')).toBe(true);
  });

  test('--profile runs the program and puts times and rows on operators, kernels and blocks', async () => {
    const text = await cli('explain', tcFile, '--facts', chain12, '--profile');
    expect(text.code).toBe(0);
    expect(text.out).toMatch(/QP operators:/);
    expect(text.out).toMatch(/^ {2}k0\s+copy\s+entry#1 /m);
    const dot = await cli('explain', tcFile, '--facts', chain12, '--profile', '--dot');
    expect(dot.code).toBe(0);
    expect(dot.out).toMatch(/block loop_path:  \[ran 12x\]/);
    expect(dot.out).toMatch(/mapJoin \$delta_path, edge[^\\]*\\l {4}12 runs, [\d.]+ ms, rows \d+ -\\> \d+/);
    expect(dot.out).toMatch(/\/\/ k\d+\\l {4}12 launches, [\d.]+ ms, rows/);
  });
});

describe('progress line', () => {
  test('redraws one line in place, throttled and only for long runs, and erases it when done', () => {
    let written = '';
    const line = progressLine((s) => (written += s));
    const at = (elapsedMs: number, iteration: number) =>
      line.update({ loop: 'loop_path', relations: ['path'], iteration, deltas: [{ name: '$delta_path', rows: 7 }], elapsedMs });
    at(100, 1); // too early: short runs show nothing
    line.done();
    expect(written).toBe('');
    at(600, 2);
    at(650, 3); // within 100 ms of the last redraw
    at(800, 4);
    line.done();
    expect(written).toBe(
      '\rpath: iteration 2, delta $delta_path=7, 0.6 s\x1b[K\rpath: iteration 4, delta $delta_path=7, 0.8 s\x1b[K\r\x1b[K',
    );
  });
});
