/**
 * The CLI end to end: bad input gives a located, readable error and a non-zero exit without a stack trace;
 * outputs, --output-dir, compile/run of a program file, and plan dumps work.
 */
import { execFileSync, spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, test } from 'vitest';
import { cli } from './helpers/cli.js';

const root = join(import.meta.dirname, '..');
const bad = join(import.meta.dirname, 'bad-input');

// Every kind of bad input, with its message and exit status: tests/bad-input.test.ts.
describe('bad input is a located error, never a stack trace', () => {
  test('source errors show the line and a caret', async () => {
    const r = await cli('plan', join(bad, 'unsafe-head.logic'));
    expect(r.err).toContain('path(x, z) <- edge(x, y).');
    expect(r.err).toMatch(/\|\s+\^/);
  });

  test('the real binary exits non-zero with no stack trace', () => {
    const r = spawnSync(process.execPath, ['--import', 'tsx', join(root, 'packages/cli/src/main.ts'), 'run', join(bad, 'syntax-error.logic')], {
      encoding: 'utf8',
    });
    expect(r.status).toBe(1);
    expect(r.stderr).toMatch(/syntax-error\.logic:2:25: error:/);
    expect(r.stderr).not.toMatch(/\s+at /);
  });
});

describe('running programs', () => {
  test('even-odd prints both sets and names the adapter', async () => {
    const r = await cli('run', join(root, 'examples/even-odd.logic'), '--format', 'json');
    expect(r.code).toBe(0);
    expect(r.err).toMatch(/adapter: \S+/);
    const json = JSON.parse(r.out) as Record<string, { rows: number[][] }>;
    expect(json.even!.rows.map((x) => x[0])).toEqual(Array.from({ length: 51 }, (_, i) => 2 * i));
    expect(json.odd!.rows.map((x) => x[0])).toEqual(Array.from({ length: 50 }, (_, i) => 2 * i + 1));
  });

  test('--output-dir writes CSV files and a failed run leaves them intact', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'vixen-out-'));
    const ok = await cli('run', join(root, 'examples/transitive-closure.logic'), '--facts', join(root, 'examples/transitive-closure'), '--output-dir', dir);
    expect(ok.code).toBe(0);
    const path = readFileSync(join(dir, 'path.csv'), 'utf8');
    expect(path.split('\n')).toContain('1,4');
    expect(path.split('\n')).not.toContain('4,1');
    const failed = await cli('run', join(bad, 'uses-edge.logic'), '--facts', join(bad, 'facts-bad'), '--output-dir', dir);
    expect(failed.code).not.toBe(0);
    expect(readFileSync(join(dir, 'path.csv'), 'utf8')).toBe(path);
  });

  test('compile writes a program file that runs without the front end', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'vixen-prog-'));
    const file = join(dir, 'tc.json');
    const c = await cli('compile', join(root, 'examples/transitive-closure.logic'), '-o', file);
    expect(c.code).toBe(0);
    expect(existsSync(file)).toBe(true);
    const fromSource = await cli('run', join(root, 'examples/transitive-closure.logic'), '--facts', join(root, 'examples/transitive-closure'), '--format', 'csv');
    const fromFile = await cli('run', file, '--facts', join(root, 'examples/transitive-closure'), '--format', 'csv');
    expect(fromFile.code).toBe(0);
    expect(fromFile.out).toBe(fromSource.out);
    const json = JSON.parse(readFileSync(file, 'utf8')) as { kir: { kernels: unknown[] } };
    json.kir.kernels = 'oops' as unknown as unknown[];
    writeFileSync(file, JSON.stringify(json));
    const broken = await cli('run', file);
    expect(broken.code).toBe(1);
    expect(broken.err).toMatch(/kernels/);
  });

  test('plan dumps: QP text, DOT, kernel IR, WGSL', async () => {
    const src = join(root, 'examples/transitive-closure.logic');
    expect((await cli('plan', src)).out).toMatch(/path/);
    expect((await cli('plan', src, '--dot')).out).toMatch(/^digraph/);
    expect((await cli('plan', src, '--ir', 'kernel')).out).toMatch(/sort|mergeJoin/);
    expect((await cli('plan', src, '--wgsl')).out).toMatch(/@compute/);
  });

  test('plan --wgsl --kernel prints only the kernels named as --ir kernel names them', async () => {
    const src = join(root, 'examples/transitive-closure.logic');
    const kir = (await cli('plan', src, '--ir', 'kernel')).out;
    const sort = /(\S+) := sort .*\/\/ k(\d+)/.exec(kir)!;
    const only = await cli('plan', src, '--wgsl', '--kernel', `k${sort[2]}`);
    const headers = [...new Set(only.out.match(/^\/\/ kernel \d+ \(\w+\)/gm))];
    expect(headers).toEqual([`// kernel ${sort[2]} (sort)`]);
    expect(only.out).toMatch(/@compute/);
    const all = await cli('plan', src, '--wgsl');
    expect(all.out.length).toBeGreaterThan(only.out.length);
    const missing = await cli('plan', src, '--wgsl', '--kernel', 'k999');
    expect(missing.code).toBe(1);
    expect(missing.err).toMatch(/--kernel: no kernel k999; this program has k0\.\.k\d+/);
  });

  test('plan --ir kernel shows the fused pipeline of SSB Q1.1 and what it fused; --wgsl its passes', async () => {
    const src = join(root, 'examples/ssb/q1.1.logic');
    const fused = await cli('plan', src, '--ir', 'kernel');
    expect(fused.code).toBe(0);
    // The lineorder scan, its filter, the probe of the 1993 days and the projection: one kernel, no hashJoin.
    expect(fused.out).toMatch(
      /:= pipeline lineorder where #5 >= 1 and #5 <= 3 and #3 < 25, probe day on \(#0\) = \(#2\) -> \(#0, #1, int64:from_int32\[\(#4 \* #5\)\]\)  \/\/ k\d+ \(fused 2 kernels: scan\+filter, 1 probe, project\) from q1\.1\.logic:7: /,
    );
    expect(fused.out).not.toMatch(/hashJoin/);
    const unfused = await cli('plan', src, '--ir', 'kernel', '--no-fusion');
    expect(unfused.out).toMatch(/hashJoin build day on \(#0\)/);
    expect(unfused.out).not.toMatch(/pipeline lineorder/);
    // line keeps lineorder's declared key (lo_orderkey, lo_linenumber): its rows are distinct without a unique.
    expect(unfused.out).not.toMatch(/unique/);
    // The sum over all rows reads them in any order: a hashed aggregate (one group), unfused a kernel of its own.
    expect(unfused.out).toMatch(/:= pipeline %k\d+ -> \(#0\) aggregate by \(\) compute \(sum\(#0\): int64\)  \/\/ k\d+ \(hashed aggregate\)/);
    const wgsl = await cli('plan', src, '--wgsl');
    expect(wgsl.out).toMatch(/\/\/ kernel \d+ \(pipeline\), pass hashBuild\.0\n/);
    expect(wgsl.out).toMatch(/\/\/ kernel \d+ \(pipeline\), pass pipelineProbe\n\/\/ vixen pass: pipelineProbe/);
    // As `run --output result` compiles it: line is an intermediate, the scan aggregates, and lineorder's key,
    // read by no kernel, is not kept on the device.
    const forResult = await cli('plan', src, '--ir', 'kernel', '--output', 'result');
    expect(forResult.out).toMatch(/lineorder: \(int32, int32, int32, int32\) {2}\[edb\] {2}columns 2, 3, 4, 5 of 6 kept after loading/);
    expect(forResult.out).toMatch(/revenue := pipeline lineorder where .* aggregate by \(\) compute \(sum\(#0\): int64\)/);
    expect((await cli('plan', src, '--output', 'nothing')).code).not.toBe(0);
  });

  test('--join-strategy picks the join lowering, --no-fusion keeps kernels unfused; a bad value is an option error', async () => {
    const src = join(root, 'examples/transitive-closure.logic');
    const hash = await cli('plan', src, '--ir', 'kernel', '--join-strategy', 'hash');
    expect(hash.out).toMatch(/hashJoin build/);
    expect(hash.out).not.toMatch(/mergeJoin/);
    const merge = await cli('plan', src, '--ir', 'kernel', '--join-strategy', 'sort-merge');
    expect(merge.out).toMatch(/mergeJoin/);
    expect(merge.out).not.toMatch(/hashJoin/);
    const unfused = await cli('plan', src, '--ir', 'kernel', '--no-fusion');
    expect(unfused.code).toBe(0);
    expect(unfused.out).not.toMatch(/\(fused /);
    const facts = join(root, 'examples/transitive-closure');
    const [fused, plain] = [await cli('run', src, '--facts', facts, '--format', 'csv'), await cli('run', src, '--facts', facts, '--format', 'csv', '--no-fusion')];
    expect(plain.code).toBe(0);
    expect(plain.out).toBe(fused.out);
    const bad = await cli('plan', src, '--join-strategy', 'nested-loop');
    expect(bad.code).not.toBe(0);
    expect(bad.err).toMatch(/sort-merge, hash, auto/);
  });
});

test('pnpm vixen works from the repo root', () => {
  const out = execFileSync('pnpm', ['--silent', 'vixen', 'run', 'examples/even-odd.logic', '--output', 'odd', '--format', 'csv'], {
    cwd: root,
    encoding: 'utf8',
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  expect(out.split('\n').slice(0, 4)).toEqual(['n', '1', '3', '5']);
});

// Issue 42: what a new user trips on.
describe('first steps', () => {
  const tc = join(root, 'examples/transitive-closure.logic');
  const tcFacts = join(root, 'examples/transitive-closure');

  test('a run without --facts names the base relations that start empty; with --facts it says nothing', async () => {
    const none = await cli('run', tc, '--format', 'count');
    expect(none.code).toBe(0);
    expect(none.err).toMatch(/^warning: no facts for base relation edge: it is empty; --facts DIR reads DIR\/<relation>\.csv/m);
    const given = await cli('run', tc, '--facts', tcFacts, '--format', 'count');
    expect(given.err).not.toMatch(/warning/);
    // Inline facts are facts.
    expect((await cli('run', join(root, 'examples/even-odd.logic'), '--format', 'count')).err).not.toMatch(/warning/);
  });

  test('--format count reads back row counts only, as many as the rows a run returns', async () => {
    const counted = await cli('run', tc, '--facts', tcFacts, '--format', 'count', '--stats');
    const rows = await cli('run', tc, '--facts', tcFacts, '--format', 'json', '--stats');
    const json = JSON.parse(rows.out) as Record<string, { rows: unknown[] }>;
    expect(counted.out).toBe(Object.entries(json).map(([name, t]) => `${name}: ${t.rows.length} row${t.rows.length === 1 ? '' : 's'}\n`).join(''));
    expect(json.path!.rows.length).toBeGreaterThan(1);
    // Pending counts at most, none of the rows (8 bytes a path row).
    const readBack = (err: string): number => Number(/read back: (\d+) bytes/.exec(err)?.[1] ?? /read back: [^(]*\((\d+) bytes\)/.exec(err)?.[1]);
    expect(readBack(counted.err)).toBeLessThanOrEqual(readBack(rows.err) - 8 * json.path!.rows.length);
  });

  test('--output-dir files read back through --facts as the same rows, strings with commas, quotes and newlines too', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'vixen-roundtrip-'));
    const strings = ['a,b', 'say "hi"', 'tab\there', '', ' lead', 'line\nbreak', '#x', 'ünï'];
    const facts = strings.map((s, i) => `s(${i}, ${JSON.stringify(s)}).`).join(' ');
    const decl = 's(i, t) -> int32(i), string(t).\n';
    writeFileSync(join(dir, 'first.logic'), `${decl}${facts}\ncopy(i, t) <- s(i, t).\n`);
    writeFileSync(join(dir, 'again.logic'), `${decl}copy(i, t) <- s(i, t).\n`);
    const out = join(dir, 'out');
    expect((await cli('run', join(dir, 'first.logic'), '--output-dir', out)).code).toBe(0);
    renameSync(join(out, 'copy.csv'), join(out, 's.csv'));
    const again = await cli('run', join(dir, 'again.logic'), '--facts', out, '--format', 'json');
    expect(again.code).toBe(0);
    const rows = (JSON.parse(again.out) as Record<string, { rows: [number, string][] }>).copy!.rows;
    expect(rows).toEqual(strings.map((s, i) => [i, s]));
  });

  test('--format csv is plain CSV with a header; several relations on stdout are framed by # lines', async () => {
    const one = await cli('run', tc, '--facts', tcFacts, '--output', 'path', '--format', 'csv');
    expect(one.out.split('\n').slice(0, 3)).toEqual(['x,y', '1,2', '1,3']);
    expect(one.out).not.toMatch(/#/);
    const two = await cli('run', join(root, 'examples/even-odd.logic'), '--output', 'even,odd', '--format', 'csv');
    expect(two.out).toMatch(/^# even\nn\n0\n2\n/);
    expect(two.out).toMatch(/\n98\n100\n\n# odd\nn\n1\n3\n/);
  });

  test('explain takes --output, --no-fusion and --join-strategy as plan does', async () => {
    const src = join(root, 'examples/ssb/q1.1.logic');
    const fused = await cli('explain', src, '--output', 'result');
    expect(fused.code).toBe(0);
    expect(fused.out).toMatch(/pipeline lineorder/);
    const plain = await cli('explain', src, '--output', 'result', '--no-fusion', '--join-strategy', 'hash');
    expect(plain.out).not.toMatch(/pipeline lineorder/);
    expect(plain.out).toMatch(/hashJoin build/);
    expect((await cli('explain', tc, '--join-strategy', 'sort-merge')).out).toMatch(/mergeJoin/);
    expect((await cli('explain', tc, '--output', 'pth')).err).toMatch(/unknown output relation: pth \(known: edge, path\); did you mean path\?/);
  });

  test('a violated functional dependency of facts points at both facts and prints no rows', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'vixen-fd-'));
    const file = join(dir, 'fd.logic');
    writeFileSync(file, 'q[x] = y -> int32(x), int32(y).\nq[1] = 2.\nq[2] = 5.\nq[1] = 3.\nr(x) <- q[x] = _.\n');
    const r = await cli('run', file);
    expect(r.code).toBe(3);
    expect(r.out).toBe('');
    expect(r.err).toContain(
      `error: ${file}:2:1: functional dependency violated: q has more than one value for a key (2 offending tuples)\n  q[1] = 2  (${file}:2:1)\n  q[1] = 3  (${file}:4:1)\n`,
    );
    // Facts from a file are placed at their lines (blank lines counted), on the GPU and the interpreter alike.
    writeFileSync(file, 'q[x] = y -> int32(x), int32(y).\nr(x) <- q[x] = _.\n');
    writeFileSync(join(dir, 'q.csv'), '1,2\n2,5\n\n1,3\n3,3\n');
    const csv = join(dir, 'q.csv');
    for (const extra of [[], ['--reference']]) {
      const f = await cli('run', file, '--facts', dir, ...extra);
      expect(f.code).toBe(3);
      expect(f.out).toBe('');
      expect(f.err).toContain(`error: ${csv}:1:1: functional dependency violated: q has more than one value for a key (2 offending tuples)\n  q[1] = 2  (${csv}:1:1)\n  q[1] = 3  (${csv}:4:1)\n`);
    }
  });

  test("stderr holds only Vixen's words: Dawn's limit warnings show with --verbose", () => {
    const main = join(root, 'packages/cli/src/main.ts');
    const run = (...extra: string[]) =>
      spawnSync(process.execPath, ['--import', 'tsx', main, 'run', join(root, 'examples/even-odd.logic'), '--format', 'count', ...extra], { encoding: 'utf8' });
    const quiet = run();
    expect(quiet.status).toBe(0);
    expect(quiet.stdout).toBe('even: 51 rows\nodd: 50 rows\n');
    expect(quiet.stderr).toMatch(/^adapter: .+\n$/);
    const verbose = run('--verbose');
    expect(verbose.status).toBe(0);
    expect(verbose.stdout).toBe(quiet.stdout);
    // Dawn warns here (llvmpipe through GL reports 90 dynamic uniform buffers, Dawn allows 16).
    expect(verbose.stderr).toMatch(/^Warning: maxDynamicUniformBuffersPerPipelineLayout artificially reduced/m);
    // A failing command still exits with its status.
    expect(run('--output', 'nope').status).toBe(1);
  });
});
