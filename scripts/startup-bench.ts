/**
 * Start-up times of the installed `vixen` (issue 40's targets on a 2-core machine: `--help` <= 0.3 s, `run
 * examples/even-odd.logic` <= 1.5 s): installs release/vixen-<version>.tgz into a temporary project (or times
 * the `vixen` given with --bin) and prints the median wall time of a few runs of each, beside bare `node`'s.
 *   pnpm release-pack && pnpm exec tsx scripts/startup-bench.ts [--runs 5] [--bin PATH]
 */
import { spawnSync } from 'node:child_process';
import { rmSync } from 'node:fs';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { installRelease } from './release-install.js';

const { values } = parseArgs({ options: { runs: { type: 'string', default: '5' }, bin: { type: 'string' } } });
const runs = Number(values.runs);
const root = join(import.meta.dirname, '..');
const project = values.bin === undefined ? installRelease() : undefined;
const vixen = values.bin ?? join(project!, 'node_modules', '.bin', 'vixen');

/** Median wall seconds of `runs` runs of the command (which must succeed). */
function median(cmd: string, args: string[]): number {
  const times: number[] = [];
  for (let i = 0; i < runs; i++) {
    const start = performance.now();
    const r = spawnSync(cmd, args, { cwd: root, stdio: 'ignore' });
    if (r.status !== 0) throw new Error(`${cmd} ${args.join(' ')} exited with ${r.status}`);
    times.push((performance.now() - start) / 1000);
  }
  times.sort((a, b) => a - b);
  return times[Math.floor(times.length / 2)]!;
}

try {
  const rows: Array<[string, number]> = [
    ['node -e 0 (baseline)', median(process.execPath, ['-e', '0'])],
    ['vixen --help', median(vixen, ['--help'])],
    ['vixen run examples/even-odd.logic', median(vixen, ['run', 'examples/even-odd.logic'])],
  ];
  for (const [what, s] of rows) console.log(`${s.toFixed(2)} s  ${what}  (median of ${runs})`);
} finally {
  if (project) rmSync(project, { recursive: true, force: true });
}
