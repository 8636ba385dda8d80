/**
 * A join whose result would pass 2^32 rows (the 32-bit row offsets of one relation) stops with a run-limit error
 * naming the kernel, its rule, the relation it computes and the input sizes, before any output is allocated.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { compile, Database, openGpu, RunLimitError } from '../src/index.js';

describe('row counts past 2^32', () => {
  it('names the join, its rule, the relation and the sizes', async () => {
    const program = compile(
      `
a(k, x) -> int32(k), int32(x).
b(k, y) -> int32(k), int32(y).
pairs(x, y) <- a(k, x), b(k, y).
`,
      { filename: 'pairs.logic' },
    );
    // 70,000 rows on each side with one key: 4.9e9 pairs, counted on the device (offsets wrap), never written.
    const n = 70_000;
    const side = Array.from({ length: n }, (_, i) => [0, i]);
    const error = await program.run({ facts: { a: side, b: side } }).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(error).toBeInstanceOf(RunLimitError);
    const message = (error as RunLimitError).message;
    expect(message).toMatch(/^kernel k\d+ \(\w+, from block \S+ command \d+, rule pairs\.logic:4: pairs\(x, y\) <- a\(k, x\), b\(k, y\)\.?\)/);
    expect(message).toMatch(/computing (relation pairs|temporary \S+ for relation pairs)/);
    expect(message).toContain(`joining ${n} rows with up to ${n} rows each gives more than 4294967295 rows, past the 32-bit row offsets of one relation`);
  });

  it('stops so too where a run on resident relations guessed the join rows (the wrap fails the guess)', async () => {
    const program = compile(`a(k, x) -> int32(k), int32(x).
b(k, y) -> int32(k), int32(y).
pairs(x, y) <- a(k, x), b(k, y).`);
    const n = 70_000;
    const dir = mkdtempSync(join(tmpdir(), 'vixen-offsets-'));
    const gpu = await openGpu();
    try {
      const rows = Array.from({ length: n }, (_, i) => `0,${i}`).join('\n') + '\n';
      writeFileSync(join(dir, 'a.csv'), rows);
      writeFileSync(join(dir, 'b.csv'), rows);
      const db = new Database(gpu, dir);
      // The first run loads the relations and reads the join's total; a later one guesses the join's rows, the
      // wrapped scan fails the guess, and the run again without guesses reports it.
      for (let i = 0; i < 3; i++) await expect(db.run(program)).rejects.toThrow(/past the 32-bit row offsets of one relation/);
    } finally {
      gpu.dispose();
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
