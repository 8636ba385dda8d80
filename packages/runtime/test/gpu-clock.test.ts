/** gpuClockMHz: the SM clock the TPC-H bench reports after each query's timed runs, read from nvidia-smi. */
import { chmodSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, expect, test } from 'vitest';
import { gpuClockMHz } from '../src/gpu/device-memory.js';

const path = process.env.PATH;
afterEach(() => {
  process.env.PATH = path;
});

/** Puts first on PATH an nvidia-smi that prints `lines` for any query (or fails), as the driver's tool would. */
function fakeSmi(lines: string | null): void {
  const dir = mkdtempSync(join(tmpdir(), 'vixen-smi-'));
  const file = join(dir, 'nvidia-smi');
  writeFileSync(file, lines === null ? '#!/bin/sh\nexit 9\n' : `#!/bin/sh\nprintf '${lines}'\n`);
  chmodSync(file, 0o755);
  process.env.PATH = `${dir}:${path}`;
}

test('the clock of the busiest GPU and its most, from clocks.sm and clocks.max.sm', () => {
  fakeSmi('345, 1980\\n1755, 1980\\n');
  expect(gpuClockMHz(false)).toEqual({ sm: 1755, max: 1980 });
});

test('none for a CPU adapter, where nvidia-smi fails, or where it prints no numbers', () => {
  fakeSmi('1980, 1980\\n');
  expect(gpuClockMHz(true)).toBeUndefined();
  fakeSmi(null);
  expect(gpuClockMHz(false)).toBeUndefined();
  fakeSmi('[N/A], [N/A]\\n');
  expect(gpuClockMHz(false)).toBeUndefined();
});
