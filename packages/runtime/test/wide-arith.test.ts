/**
 * 64-bit and decimal arithmetic on the GPU (128-bit products and long division in WGSL) against the reference
 * interpreter: divisors below and above 2^16 (the short-division path and the bitwise one), signs, zero, products
 * by whole and fractional constants.
 */
import { afterAll, beforeAll, expect, test } from 'vitest';
import fc from 'fast-check';
import { compile, openGpu, type Gpu } from '../src/index.js';

const SOURCE = `
v(i, a, b, x, y) -> int32(i), decimal(a), decimal(b), int64(x), int64(y).
dec(i, p, q) -> int32(i), decimal(p), decimal(q).
dec(i, p, q) <- v(i, a, b, _, _), p = a * b, q = a / b.
int(i, p, q, r) -> int32(i), int64(p), int64(q), int64(r).
int(i, p, q, r) <- v(i, _, _, x, y), p = x * y, q = x / y, r = x % y.
mean[] = m <- agg<<m = avg(a)>> v(_, a, _, _, _).
// Whole constants multiply without a division by 10^4 (mul64); a fraction takes mulDec.
byConst(i, p, q, r, s) -> int32(i), decimal(p), decimal(q), decimal(r), decimal(s).
byConst(i, p, q, r, s) <- v(i, a, _, _, _), p = a * 100d, q = 3d * a, r = a * -2d, s = a * 0.5d.
`;

let gpu: Gpu;
beforeAll(async () => {
  gpu = await openGpu();
});
afterAll(() => gpu?.dispose());

// Scaled decimals up to 10^7 in magnitude keep products (and quotients by >= 0.0001) inside 64 bits.
const decimal = fc.oneof(fc.bigInt({ min: -(10n ** 11n), max: 10n ** 11n }), fc.constantFrom(0n, 1n, -1n, 10000n, 65535n, 65536n, 1000000n));
const int64 = fc.oneof(fc.bigInt({ min: -(2n ** 31n), max: 2n ** 31n }), fc.constantFrom(0n, 1n, -1n, 7n, 65535n, 65536n, -65536n, 4294967296n));
const row = fc.tuple(decimal, decimal, int64, int64);

// Products of a rate (below 2^16 scaled, or just past it) and a magnitude around 2^48: the 16 x 32-bit path and the
// others at its edges.
const RATES = `w(i, a, b) -> int32(i), decimal(a), decimal(b).
prod(i, p) -> int32(i), decimal(p).
prod(i, p) <- w(i, a, b), p = a * b.
`;
const wide = fc.oneof(fc.bigInt({ min: -(2n ** 48n) - 4096n, max: 2n ** 48n + 4096n }), fc.constantFrom(2n ** 48n - 1n, 2n ** 48n, -(2n ** 48n), 2n ** 32n - 1n, 2n ** 32n));
const rate = fc.oneof(fc.bigInt({ min: -70000n, max: 70000n }), fc.constantFrom(65535n, 65536n, -65535n, -65536n, 0n, 10000n));

test('decimal products of rates and 48-bit magnitudes match the interpreter', async () => {
  const program = compile(RATES);
  await fc.assert(
    fc.asyncProperty(fc.array(fc.tuple(wide, rate, fc.boolean()), { minLength: 1, maxLength: 40 }), async (rows) => {
      const facts = { w: rows.map(([a, b, swap], i) => (swap ? [i, b, a] : [i, a, b])) };
      const reference = await program.interpret({ facts });
      const onGpu = await program.run({ facts, gpu });
      expect(onGpu.relations.get('prod')).toEqual(reference.get('prod'));
    }),
    { numRuns: 15 },
  );
}, 120_000);

test('decimal and int64 products, quotients and remainders match the interpreter', async () => {
  const program = compile(SOURCE);
  await fc.assert(
    fc.asyncProperty(fc.array(row, { minLength: 1, maxLength: 40 }), async (rows) => {
      const facts = { v: rows.map(([a, b, x, y], i) => [i, a, b, Number(x), Number(y)]) };
      const reference = await program.interpret({ facts });
      const onGpu = await program.run({ facts, gpu });
      for (const rel of ['dec', 'int', 'mean', 'byConst']) expect(onGpu.relations.get(rel)).toEqual(reference.get(rel));
    }),
    { numRuns: 25 },
  );
}, 120_000);
