/**
 * `vixen shell` driven through its input: clauses are checked and kept, queries answer with their time, errors are
 * shown at their column and the session goes on; base relations from --facts stay resident across queries.
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { describe, expect, test } from 'vitest';
import { completions, runShell } from '@vixen/cli';

const root = join(import.meta.dirname, '..');
const tc = join(root, 'examples/transitive-closure.logic');
const tcFacts = join(root, 'examples/transitive-closure');

async function shell(lines: string[], options: { file?: string; factsDir?: string } = {}): Promise<{ out: string; err: string }> {
  let out = '';
  let err = '';
  await runShell({ input: Readable.from(lines.map((l) => l + '\n')), out: (s) => (out += s), err: (s) => (err += s), interactive: false, ...options });
  return { out, err };
}

describe('vixen shell', () => {
  test('queries over resident facts, clauses typed in, yes/no questions', async () => {
    const { out, err } = await shell(
      ['?- path(1, x).', 'edge(4, 1).', 'cycle(x) <- path(x, x).', '?- cycle(x), x < 3.', '?- path(1, 4).', '?- path(x,', '  y), x = 4, y < 2.'],
      { file: tc, factsDir: tcFacts },
    );
    expect(err).toBe('');
    const answers = out.split(/\(\d+ rows?, [\d.]+ ms\)\n/);
    expect(answers[0]).toBe('query (3 rows)\nx\n-\n2\n3\n4\n');
    // The typed fact joins the file's edges: 1 -> 2 -> 3 -> 4 -> 1 is a cycle.
    expect(answers[1]).toBe('query (2 rows)\nx\n-\n1\n2\n');
    expect(answers[2]).toBe('yes\n');
    expect(answers[3]).toBe('query (1 row)\nx  y\n-  -\n4  1\n');
  });

  test('an error is shown at its column, the clause is dropped and the session goes on', async () => {
    const { out, err } = await shell(['p(x) -> int32(x).', 'p(1). p(2).', 'q(x) <- p(x), r(x).', '?- p(x), x > "a".', 'q(x) <- p(x), x > 1.', '?- q(x).', '.frobnicate']);
    expect(err).toContain('<shell>:3:15: error: undeclared predicate r: expected a declaration, facts or rules for it\n  |\n3 | q(x) <- p(x), r(x).\n  |               ^^^^');
    expect(err).toMatch(/<shell>:3:\d+: error: type mismatch/);
    expect(err).toContain('error: unknown command .frobnicate; .help lists them');
    expect(out).toMatch(/^query \(1 row\)\nx\n-\n2\n\(1 row, [\d.]+ ms\)\n$/);
  });

  test('.plan, .kernels, .profile and .save', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'vixen-shell-'));
    const { out, err } = await shell(['?- path(x, 4).', '.plan', '.kernels', '.profile', '?- path(2, x).', '.save ' + dir, '.help'], { file: tc, factsDir: tcFacts });
    expect(out).toMatch(/block loop_path:\n {2}\$t\d+ := mapJoin \$delta_path, edge/);
    expect(out).toMatch(/variables:\n {2}0 edge: \(int32, int32\) {2}\[edb\]/);
    expect(out).toContain('profile on\n');
    expect(err).toMatch(/QP operators:/);
    expect(err).toContain(`wrote ${join(dir, 'path.csv')}`);
    expect(readFileSync(join(dir, 'path.csv'), 'utf8').split('\n')).toContain('1,4');
    expect(out).toMatch(/\?- body\. +ask a query/);
  });

  test('a query over facts that break a functional dependency answers with the violation, placed in the file', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'vixen-shell-fd-'));
    writeFileSync(join(dir, 'q.csv'), '1,2\n1,3\n');
    const { out, err } = await shell(['q[x] = y -> int32(x), int32(y).', '?- q[x] = y.'], { factsDir: dir });
    const csv = join(dir, 'q.csv');
    expect(err).toBe(`error: ${csv}:1:1: functional dependency violated: q has more than one value for a key (2 offending tuples)\n  q[1] = 2  (${csv}:1:1)\n  q[1] = 3  (${csv}:2:1)\n`);
    expect(out).toBe('');
  });

  test('without facts it names the empty base relations once', async () => {
    const { err } = await shell(['?- path(1, x).', '?- edge(x, y).'], { file: tc });
    expect(err.match(/warning: no facts for base relation edge/g)).toHaveLength(1);
  });

  test('tab completion offers relation names and dot commands', () => {
    expect(completions(['edge', 'path', 'person'], '?- pa')).toEqual([['path'], 'pa']);
    expect(completions(['edge', 'path', 'person'], 'q(x) <- p')).toEqual([['path', 'person'], 'p']);
    expect(completions(['edge'], '.pro')).toEqual([['.profile'], '.pro']);
  });

  test('the real binary reads statements from stdin', () => {
    const r = spawnSync(process.execPath, ['--import', 'tsx', join(root, 'packages/cli/src/main.ts'), 'shell', tc, '--facts', tcFacts], {
      input: '?- path(7, x).\n.quit\n?- path(1, x).\n',
      encoding: 'utf8',
    });
    expect(r.status).toBe(0);
    expect(r.stdout).toMatch(/^query \(1 row\)\nx\n-\n8\n\(1 row, [\d.]+ ms\)\n$/);
    expect(r.stderr).toBe('');
  });
});
