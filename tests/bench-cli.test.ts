/** `vixen bench operators` end to end on a tiny size: the table, the JSON report, and option errors. */
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect, test } from 'vitest';
import { cli } from './helpers/cli.js';

test('bench operators --operators/--selectivities/--json', async () => {
  const json = join(mkdtempSync(join(tmpdir(), 'vixen-bench-')), 'report.json');
  const r = await cli('bench', 'operators', '--sizes', '10', '--runs', '1', '--warmup', '0', '--operators', 'hashProbe,groupBy,mapFilter', '--selectivities', '0.1,0.9', '--json', json);
  expect(r.err).not.toMatch(/error/i);
  expect(r.code).toBe(0);
  expect(r.out).toMatch(/hashProbe .*probes\/s/);
  const report = JSON.parse(readFileSync(json, 'utf8')) as { subgroups: boolean; results: Array<{ operator: string; variant: string; copyRatio: number }> };
  expect(report.results.map((x) => x.operator)).toEqual(['copy', 'mapFilter', 'mapFilter', 'mapFilter', 'mapFilter', 'hashProbe', 'groupBy', 'groupBy']);
  expect(report.results.filter((x) => x.operator === 'mapFilter').map((x) => x.variant)).toEqual([
    '10% of int32 values',
    '10% of (int32, int32), swapped',
    '90% of int32 values',
    '90% of (int32, int32), swapped',
  ]);
  expect(typeof report.subgroups).toBe('boolean');
});

test.each([
  [['--operators', 'hashProbe,nope'], /--operators/],
  [['--selectivities', '0'], /--selectivities/],
  [['--selectivities', '0.5,x'], /--selectivities/],
])('bench operators rejects %j', async (args, pattern) => {
  const r = await cli('bench', 'operators', '--sizes', '10', ...args);
  expect(r.code).not.toBe(0);
  expect(r.err).toMatch(pattern);
  expect(r.err).not.toMatch(/\n\s+at /);
});
