import { execFile } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';

const script = fileURLToPath(new URL('../../../scripts/facts-memory.ts', import.meta.url));
const ROWS = 2_000_000;

/**
 * Issue #3: a large facts file must cost about its encoded size, not an array of JS values per row. Measured in a
 * child with --expose-gc, so retained memory is exact and this process's heap does not blur it.
 */
describe('facts loading memory', () => {
  it(`holds ${ROWS} rows x 4 columns in far less memory than Row[]`, async () => {
    const { stdout } = await promisify(execFile)(
      process.execPath,
      ['--expose-gc', '--import', 'tsx', script, '--rows', String(ROWS), '--compare', '--json'],
      { maxBuffer: 1 << 20 },
    );
    const report = JSON.parse(stdout) as {
      rows: number;
      gcExposed: boolean;
      retained: { heapMiB: number; arrayBuffersMiB: number; wordsMiB: number };
      rowArraysHeapMiB: number;
    };
    expect(report.rows).toBe(ROWS);
    expect(report.gcExposed).toBe(true);
    // 6 words a row (int32 1, int64 2, decimal 2, string 1).
    expect(report.retained.wordsMiB).toBeCloseTo((ROWS * 6 * 4) / 2 ** 20, 0);
    const encoded = report.retained.heapMiB + report.retained.arrayBuffersMiB;
    // The words, one partly filled chunk (at most 16 MiB), 5000 interned strings, and read buffers the GC has
    // not returned yet.
    expect(encoded).toBeLessThan(report.retained.wordsMiB + 32);
    expect(encoded * 3).toBeLessThan(report.rowArraysHeapMiB);
  }, 120_000);
});
