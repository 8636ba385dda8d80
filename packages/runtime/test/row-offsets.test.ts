/**
 * A join whose result would pass 2^32 rows (the 32-bit row offsets of one relation) stops with a run-limit error
 * naming the kernel, its rule, the relation it computes and the input sizes, before any output is allocated.
 */
import { describe, expect, it } from 'vitest';
import { compile, RunLimitError } from '../src/index.js';

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
});
