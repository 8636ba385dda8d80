/**
 * Store column encodings (store/column-encoding.ts): any column of one- or two-word values, edge values included
 * (minimum, maximum, negative, all equal, ranges of exactly 2^8, 2^16, 2^24, 2^31 - 1, 2^32 - 1, 2^32 and 2^53,
 * common steps, steps of 2^32 and past), widens back to its words exactly, in the narrowest width its range over its
 * step allows, widened as a load does: in pieces, into its place in wider rows.
 */
import fc from 'fast-check';
import { describe, expect, test } from 'vitest';
import { narrowColumn, widenColumn, type ColumnEncoding } from '../src/store/column-encoding.js';

const U32 = 2n ** 32n;
/** The value's unsigned span a column takes (either wrap of one word; signed 64-bit for two). */
const SPANS = [0n, 1n, 255n, 256n, 65535n, 65536n, 2n ** 24n, 2n ** 31n - 1n, U32 - 1n, U32, 2n ** 40n, 2n ** 53n - 1n, 2n ** 53n];
const STEPS = [1n, 2n, 100n, 10_000n, 65_537n, U32 - 1n, U32, 3n * U32];

/** A column as values (BigInt: signed 64-bit for two words, any 32 bits for one) and its words. */
const column$ = fc
  .record({
    valueWords: fc.constantFrom(1, 2),
    // Where the values start: the type's extremes, zero and minus one, or anywhere.
    start: fc.oneof(fc.constantFrom(-(2n ** 63n), 2n ** 63n - 1n, -(2n ** 31n), 2n ** 31n - 1n, 0n, -1n, U32 - 1n), fc.bigInt({ min: -(2n ** 63n), max: 2n ** 63n - 1n })),
    span: fc.oneof(fc.constantFrom(...SPANS), fc.bigInt({ min: 0n, max: 2n ** 33n })),
    step: fc.oneof(fc.constantFrom(...STEPS), fc.bigInt({ min: 1n, max: 1000n })),
    picks: fc.array(fc.double({ min: 0, max: 1, noNaN: true }), { minLength: 1, maxLength: 200 }),
  })
  .map(({ valueWords, start, span, step, picks }) => {
    const units = span / step;
    // The first value is the start, the second the last: the column's range is the span (as far as it fits).
    const values = picks.map((p, i) => start + (i === 0 ? 0n : i === 1 ? units : BigInt(Math.floor(p * Number(units)))) * step);
    const words = new Uint32Array(values.length * valueWords);
    values.forEach((v, i) => {
      const bits = BigInt.asUintN(64, v);
      words[i * valueWords] = Number(bits & (U32 - 1n));
      if (valueWords === 2) words[i * valueWords + 1] = Number(bits >> 32n);
    });
    return { valueWords, words };
  });

/** Bytes a value needs at least: the span of its words (the smaller wrap of one word) over the gcd of its steps. */
function leastWidth(words: Uint32Array, valueWords: number): number {
  const values = Array.from({ length: words.length / valueWords }, (_, i) =>
    valueWords === 1 ? BigInt(words[i]!) : BigInt.asIntN(64, (BigInt(words[2 * i + 1]!) << 32n) | BigInt(words[2 * i]!)),
  );
  const spanOf = (vs: bigint[]): { span: bigint; min: bigint } => {
    const min = vs.reduce((a, b) => (b < a ? b : a));
    return { span: vs.reduce((a, b) => (b > a ? b : a)) - min, min };
  };
  const { span, min } = [spanOf(values), ...(valueWords === 1 ? [spanOf(values.map((v) => BigInt.asIntN(32, v)))] : [])].reduce((a, b) => (b.span < a.span ? b : a));
  if (span >= 2n ** 53n) return 4 * valueWords;
  const gcd = (a: bigint, b: bigint): bigint => (b === 0n ? a : gcd(b, a % b));
  const signed = valueWords === 1 && span !== spanOf(values).span;
  const step = values.reduce((g, v) => gcd(g, (signed ? BigInt.asIntN(32, v) : v) - min), 0n) || 1n;
  const units = span / step;
  const width = units < 2n ** 8n ? 1 : units < 2n ** 16n ? 2 : units < 2n ** 24n ? 3 : units < U32 ? 4 : 8;
  return width < 4 * valueWords && step < U32 ? width : 4 * valueWords;
}

/**
 * `bytes` (`rows` values) widened as a load widens them: in two pieces, into rows of one more word at word 1; the
 * column's words read back from the rows (the other word of each row untouched).
 */
function widen(bytes: Uint8Array, encoding: ColumnEncoding, rows: number, valueWords: number): Uint32Array {
  const stride = valueWords + 1;
  const out = new Uint32Array(rows * stride).fill(0xdeadbeef);
  const half = rows >> 1;
  widenColumn(bytes, encoding, valueWords, 0, half, { out, at: 1, stride });
  widenColumn(bytes, encoding, valueWords, half, rows - half, { out: out.subarray(half * stride), at: 1, stride });
  for (let r = 0; r < rows; r++) expect(out[r * stride]).toBe(0xdeadbeef);
  return Uint32Array.from({ length: rows * valueWords }, (_, k) => out[Math.floor(k / valueWords) * stride + 1 + (k % valueWords)]!);
}

describe('column encodings', () => {
  test('a column widens back to its words, as narrow as its range over its step allows', () => {
    const seen = new Set<string>();
    fc.assert(
      fc.property(column$, ({ valueWords, words }) => {
        const rows = words.length / valueWords;
        const { encoding, bytes } = narrowColumn(words, valueWords);
        seen.add(`${valueWords}:${encoding.kind === 'frame' ? encoding.width : 'words'}`);
        expect(bytes.length).toBe(rows * leastWidth(words, valueWords));
        // Widened from a copy in a buffer of its own, as a load reads a file.
        expect(widen(bytes.slice(), encoding, rows, valueWords)).toEqual(words);
      }),
      { numRuns: 2000, seed: 37 },
    );
    // A one-word frame of 4 bytes is no narrower than the words.
    expect([...seen].sort()).toEqual(['1:1', '1:2', '1:3', '1:words', '2:1', '2:2', '2:3', '2:4', '2:words']);
  });

  test('all-equal, one-value and extreme columns', () => {
    // Two-word values as (lo, hi) pairs.
    const cases: Array<[number[], number, string]> = [
      [[7, 7, 7], 1, 'frame 1'],
      [[5], 1, 'frame 1'],
      [[0x80000000, 0x7fffffff], 1, 'frame 1'],
      [[0, 0xffffffff], 1, 'frame 1'],
      [[0, 0x7fffffff], 1, 'frame 1'],
      [[0, 0x7fffffff, 1], 1, 'words'],
      [[0x80000000, 0x7fffffff, 0], 1, 'words'],
      [[0, 0x10000, 0x20000], 1, 'frame 1'],
      [[0xffffffff, 0x7fffffff, 0, 0x80000000], 2, 'words'],
      [[0, 0x80000000, 1, 0x80000000, 0xffffffff, 0x80000000], 2, 'frame 4'],
      [[0xffffffff, 0x7fffffff, 0xfffffffe, 0x7fffffff], 2, 'frame 1'],
      [[0xffffffff, 0xffffffff, 0, 0], 2, 'frame 1'],
      [[0xffffffff, 0, 0, 1], 2, 'frame 1'],
      [[0, 0, 0, 1], 2, 'words'],
      // 2^32 apart (a step the device does not multiply by), and 2^32 - 1 apart (widened through a 64-bit product).
      [[0, 0, 0, 1, 0, 2], 2, 'words'],
      [[0, 0, 0xffffffff, 0, 0xfffffffe, 1], 2, 'frame 1'],
      [[0, 0, 1, 0, 0xffffff, 0], 1, 'frame 3'],
      [[0, 5, 0, 5, 0, 5], 2, 'frame 1'],
    ];
    for (const [values, valueWords, expected] of cases) {
      const words = Uint32Array.from(values);
      const { encoding, bytes } = narrowColumn(words, valueWords);
      expect(encoding.kind === 'frame' ? `frame ${encoding.width}` : 'words', JSON.stringify(values)).toBe(expected);
      expect(widen(bytes.slice(), encoding, words.length / valueWords, valueWords)).toEqual(words);
    }
  });
});
