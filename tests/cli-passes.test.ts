/**
 * `vixen plan` for debugging the compiler: --passes lists the passes in order, --print-after prints the IR a pass
 * leaves, --disable-pass skips optional passes; unknown or required passes are user errors (exit 1).
 */
import { join } from 'node:path';
import { describe, expect, test } from 'vitest';
import { cli } from './helpers/cli.js';

const root = join(import.meta.dirname, '..');
const ssb = join(root, 'examples/ssb/q1.1.logic');
const disjunction = join(import.meta.dirname, 'cases/disjunction/program.logic');

/** The IR printed after each pass, in order: [pass, text] for every `// after pass P` header of `out`. */
function dumps(out: string): Array<[string, string]> {
  return out
    .split(/^\/\/ after pass /m)
    .slice(1)
    .map((d) => {
      const [pass, ...text] = d.split('\n');
      return [pass!, text.join('\n')];
    });
}

describe('vixen plan --passes', () => {
  test('lists every pass in the order it runs, its stage, whether it may be disabled and where it runs; no FILE needed', async () => {
    const r = await cli('plan', '--passes');
    expect(r.code).toBe(0);
    const rows = r.out.trim().split('\n').map((l) => l.trim().split(/ {2,}/));
    expect(rows[0]).toEqual(['stage', 'pass', 'kind', 'runs within']);
    expect(rows.slice(1).map((row) => row.slice(0, 3).join(' '))).toEqual([
      'rules push-semi-joins optional',
      'QP restrict-outputs required',
      'QP eliminate-common-subexpressions optional',
      'QP merge-unioned-selects optional',
      'QP prune-columns optional',
      'KIR assume-empty-on-entry optional',
      'KIR simplify-kernels optional',
      'KIR propagate-copies optional',
      'KIR skip-unneeded-order optional',
      'KIR anti-joins optional',
      'KIR hash-joins optional',
      'KIR hash-unique optional',
      'KIR hash-aggregates optional',
      'KIR fuse-map-filters optional',
      'KIR remove-dead-kernels optional',
      'KIR fuse-pipelines optional',
      'KIR remove-dead-kernels optional',
      'KIR limit-outputs optional',
      'KIR narrow-columns optional',
      'KIR fuse-aggregate-inputs optional',
      'KIR remove-dead-kernels optional',
      'KIR compact-kernels optional',
      'KIR narrow-base-relations optional',
      'KIR unordered-selects optional',
      'KIR schedule-blocks required',
      'KIR insert-frees required',
    ]);
    expect(r.out).toMatch(/hash-joins +optional +fixpoint #1, when join strategy is not sort-merge\n/);
    expect(r.out).toMatch(/fuse-pipelines +optional +when fusion, fixpoint #2\n/);
  });

  test('plan without FILE or --passes is a command-line error', async () => {
    const r = await cli('plan');
    expect(r.code).toBe(2);
    expect(r.err).toMatch(/missing required argument 'file'/);
  });
});

describe('vixen plan --print-after', () => {
  test('prints the plan a QP pass leaves: the disjunction over item is one select after merge-unioned-selects', async () => {
    const r = await cli('plan', disjunction, '--print-after', 'eliminate-common-subexpressions,merge-unioned-selects');
    expect(r.code).toBe(0);
    const [before, after] = dumps(r.out);
    expect(before![0]).toBe('eliminate-common-subexpressions');
    expect(before![1]).toMatch(/:= mapFilter item where #0 > 3 project/);
    expect(before![1]).not.toMatch(/ or /);
    expect(after![0]).toBe('merge-unioned-selects');
    expect(after![1]).toMatch(/:= mapFilter item where \(#0 > 3 or #1 = 5 or #1 < 0\) project \(#0, #1\)/);
  });

  test('prints the kernel IR after every run of a KIR pass (repeatable): fused pipelines appear with fuse-pipelines', async () => {
    const r = await cli('plan', ssb, '--print-after', 'hash-aggregates', '--print-after', 'fuse-pipelines');
    expect(r.code).toBe(0);
    const printed = dumps(r.out);
    // Each pass ran once per round of its fixpoint; hash-aggregates' rounds all come before fusion.
    const passes = printed.map(([pass]) => pass);
    expect(passes.filter((p) => p === 'hash-aggregates').length).toBeGreaterThan(1);
    expect(passes.lastIndexOf('hash-aggregates')).toBeLessThan(passes.indexOf('fuse-pipelines'));
    const [, hashed] = printed.find(([pass]) => pass === 'hash-aggregates')!;
    expect(hashed).toMatch(/aggregate by \(\) compute \(sum\(#0\): int64\)  \/\/ k\d+ \(hashed aggregate\)/);
    expect(hashed).not.toMatch(/\(fused /);
    const [, fused] = printed.find(([pass]) => pass === 'fuse-pipelines')!;
    expect(fused).toMatch(/:= pipeline lineorder where .*, probe day on \(#0\) = \(#2\) .*\(fused 2 kernels: scan\+filter, 1 probe, project\) from q1\.1\.logic:7: line\(/);
  });
});

describe('vixen plan --disable-pass', () => {
  test('skips optional passes: without fuse-pipelines the probe stays a hash join', async () => {
    const fused = await cli('plan', ssb, '--ir', 'kernel');
    expect(fused.out).not.toMatch(/hashJoin/);
    const r = await cli('plan', ssb, '--ir', 'kernel', '--disable-pass', 'fuse-pipelines');
    expect(r.code).toBe(0);
    expect(r.out).toMatch(/hashJoin build day on \(#0\)/);
    expect(r.out).not.toMatch(/\(fused k\d+\+k\d+: scan\+filter, 1 probe/);
    const none = await cli('plan', ssb, '--ir', 'kernel', '--disable-pass', 'fuse-pipelines,hash-aggregates', '--disable-pass', 'prune-columns');
    expect(none.code).toBe(0);
    expect(none.out).not.toMatch(/hashed aggregate/);
  });

  test('a required pass is an error that says so; an unknown one lists the known passes', async () => {
    const required = await cli('plan', ssb, '--disable-pass', 'insert-frees');
    expect(required.code).toBe(1);
    expect(required.err).toBe('error: pass insert-frees is required for correct results and cannot be disabled\n');
    const unknown = await cli('plan', ssb, '--print-after', 'fuse-pipeline');
    expect(unknown.code).toBe(1);
    expect(unknown.err).toMatch(/^error: unknown pass fuse-pipeline \(known: push-semi-joins, restrict-outputs, eliminate-common-subexpressions, .*, fuse-pipelines, .*, insert-frees\)\n$/);
  });
});
