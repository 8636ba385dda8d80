/**
 * Runs the bad-input corpus (tests/bad-input/cases.ts): every CLI case gives its exit status and message on stderr,
 * nothing (or exactly the accepted output) on stdout, and never a stack trace; every API case throws a VixenError
 * with its message.
 */
import { spawnSync } from 'node:child_process';
import { chmodSync, existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, onTestFinished, test } from 'vitest';
import { runCli } from '@vixen/cli';
import { VixenError } from '@vixen/queryplan';
import { apiCases, cliCases, pathsIn } from './bad-input/cases.js';

const main = join(import.meta.dirname, '../packages/cli/src/main.ts');
const setpriv = ['/usr/bin/setpriv', '/bin/setpriv'].find((p) => existsSync(p));

/**
 * The CLI's exit status and output. For a case whose file chmod 000 cannot lock for this user (root), the real
 * binary runs as the unprivileged uid 65534 through setpriv, where there is one.
 */
async function runCase(args: string[], asNobody: boolean): Promise<{ code: number; out: string; err: string }> {
  if (asNobody) {
    const r = spawnSync(setpriv!, ['--reuid=65534', '--regid=65534', '--clear-groups', process.execPath, '--import', 'tsx', main, ...args], {
      encoding: 'utf8',
      env: { ...process.env, HOME: tmpdir() },
    });
    return { code: r.status ?? -1, out: r.stdout, err: r.stderr };
  }
  let out = '';
  let err = '';
  const code = await runCli(['node', 'vixen', ...args], (s) => (out += s), (s) => (err += s));
  return { code, out, err };
}

function readable(path: string): boolean {
  try {
    readFileSync(path);
    return true;
  } catch {
    return false;
  }
}

describe.each(['source', 'facts', 'store', 'options', 'program-json'] as const)('%s', (kind) => {
  for (const c of cliCases.filter((x) => x.kind === kind)) {
    test(c.name, async (ctx) => {
      const tmp = mkdtempSync(join(tmpdir(), 'vixen-bad-'));
      onTestFinished(() => rmSync(tmp, { recursive: true, force: true }));
      // Others may enter it, so only the locked file itself stops an unprivileged run.
      chmodSync(tmp, 0o755);
      const paths = pathsIn(tmp);
      await c.setup?.(paths);
      const locked = c.unreadable?.(paths);
      const asNobody = locked !== undefined && readable(locked);
      if (asNobody && (setpriv === undefined || process.getuid?.() !== 0)) {
        ctx.skip(`chmod 000 does not stop this user (uid ${process.getuid?.()}) from reading ${locked}, and there is no setpriv to drop root`);
      }
      const { code, out, err } = await runCase(c.args(paths), asNobody);
      expect({ code, err }).toEqual({ code: c.code, err: expect.stringMatching(c.stderr) });
      expect(err).not.toMatch(/\n\s+at .*:\d+:\d+/);
      // A mismatch shows the first 1000 characters, not a 10 MB diff; the second check compares all of it.
      const expected = c.stdout ?? '';
      if (out !== expected) expect(out.length > 1000 ? `${out.slice(0, 1000)}...` : out).toBe(expected.length > 1000 ? `${expected.slice(0, 1000)}...` : expected);
      expect(out === expected).toBe(true);
    });
  }
});

// Facts parsed on the device give the host parser's messages (the device leaves every bad file to it) and outputs.
describe('facts with --parse device', () => {
  for (const c of cliCases.filter((x) => x.kind === 'facts' && !x.unreadable)) {
    test(c.name, async () => {
      const tmp = mkdtempSync(join(tmpdir(), 'vixen-bad-'));
      onTestFinished(() => rmSync(tmp, { recursive: true, force: true }));
      const paths = pathsIn(tmp);
      await c.setup?.(paths);
      const args = c.args(paths);
      if (args[0] !== 'run' || args.includes('--reference')) return;
      const device = await runCase([...args, '--parse', 'device'], false);
      expect({ code: device.code, err: device.err }).toEqual({ code: c.code, err: expect.stringMatching(c.stderr) });
      expect(device).toEqual(await runCase([...args, '--parse', 'host'], false));
    });
  }
});

describe('api', () => {
  for (const c of apiCases) {
    test(c.name, async () => {
      const thrown = await (async () => c.call())().then(
        () => undefined,
        (e: unknown) => e,
      );
      expect(thrown).toBeInstanceOf(VixenError);
      expect((thrown as Error).message).toMatch(c.message);
    });
  }
});

test('the corpus has a case of every kind', () => {
  const kinds = new Set([...cliCases, ...apiCases].map((c) => c.kind));
  expect([...kinds].sort()).toEqual(['api', 'facts', 'options', 'program-json', 'source', 'store']);
});

// Device faults: Dawn's real refusal of a buffer, injected (VIXEN_REFUSE_BUFFER) where the run does what it names,
// through the real binary: a message naming what asked for the buffer and its status, no Dawn text on stdout or
// stderr (dawn.node itself prints device errors nobody handles), and in one process the next query answers.
describe('device faults', () => {
  const examples = join(import.meta.dirname, '../examples');
  const tc = [join(examples, 'transitive-closure.logic'), '--facts', join(examples, 'transitive-closure')];
  const DAWN = /validation:|out of memory:|Invalid (Buffer|BindGroup|CommandBuffer)|While (calling|encoding|validating)|VK_ERROR|CreateBuffer/;
  const binary = (args: string[], refuse: string, input?: string) =>
    spawnSync(process.execPath, ['--import', 'tsx', main, ...args], { encoding: 'utf8', env: { ...process.env, VIXEN_REFUSE_BUFFER: refuse, VIXEN_DEBUG: '' }, ...(input ? { input } : {}) });

  test('a buffer refused while a facts file is parsed on the device', () => {
    const r = binary(['run', ...tc, '--parse', 'device'], 'parsed on the device');
    expect({ status: r.status, stdout: r.stdout }).toEqual({ status: 4, stdout: '' });
    expect(r.stderr).toMatch(/^error: loading the facts of edge \(parsed on the device\) needed a buffer of 4\.0 GiB \(4294967296 bytes\), more than the device's largest buffer, [\d.]+ GiB \(\d+ bytes\)\n$/);
  });

  test.each([
    ['while its facts load', 'loading the facts of edge', /^error: loading the facts of edge \(9 rows\) needed a buffer of 4\.0 GiB/],
    ['while a kernel runs', 'computing relation path', /^error: kernel k\d+ \(\w+, from block \w+ command \d+\) computing relation path needed a buffer of 4\.0 GiB/],
  ])('a shell query whose buffer is refused %s fails alone: the next one answers', (_, refuse, message) => {
    const r = binary(['shell', ...tc], refuse, '?- path(1, x).\n?- path(1, x).\n');
    expect(r.status).toBe(0);
    expect(r.stderr).toMatch(message);
    expect(r.stderr.split('\n').filter((l) => l.length > 0)).toHaveLength(1);
    expect(r.stdout).toMatch(/^query \(3 rows\)\nx\n-\n2\n3\n4\n\(3 rows, [\d.]+ ms\)\n$/);
    expect(r.stdout + r.stderr).not.toMatch(DAWN);
  });
});
