/**
 * Runs the bad-input corpus (tests/bad-input/cases.ts): every CLI case gives its exit status and message on stderr,
 * nothing (or exactly the accepted output) on stdout, and never a stack trace; every API case throws a VixenError
 * with its message.
 */
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, test } from 'vitest';
import { runCli } from '@vixen/cli';
import { VixenError } from '@vixen/queryplan';
import { apiCases, cliCases, pathsIn } from './bad-input/cases.js';

function readable(path: string): boolean {
  try {
    readFileSync(path);
    return true;
  } catch {
    return false;
  }
}

describe.each(['source', 'facts', 'options', 'program-json'] as const)('%s', (kind) => {
  for (const c of cliCases.filter((x) => x.kind === kind)) {
    test(c.name, async (ctx) => {
      const paths = pathsIn(mkdtempSync(join(tmpdir(), 'vixen-bad-')));
      c.setup?.(paths);
      const locked = c.unreadable?.(paths);
      if (locked !== undefined && readable(locked)) {
        ctx.skip(`chmod 000 does not stop this user (uid ${process.getuid?.()}, e.g. root) from reading ${locked}, so the case cannot fail here`);
      }
      let out = '';
      let err = '';
      const code = await runCli(['node', 'vixen', ...c.args(paths)], (s) => (out += s), (s) => (err += s));
      expect({ code, err }).toEqual({ code: c.code, err: expect.stringMatching(c.stderr) });
      expect(err).not.toMatch(/\n\s+at .*:\d+:\d+/);
      // Compared as a boolean first, so a mismatch on the 10 MB case does not print a 10 MB diff.
      const expected = c.stdout ?? '';
      if (out !== expected) expect(out.length > 1000 ? `${out.slice(0, 1000)}...` : out).toBe(expected.length > 1000 ? `${expected.slice(0, 1000)}...` : expected);
      expect(out === expected).toBe(true);
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
  expect([...kinds].sort()).toEqual(['api', 'facts', 'options', 'program-json', 'source']);
});
