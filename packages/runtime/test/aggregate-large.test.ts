/**
 * Aggregates over groups larger than a chunk and larger than 65535 rows (llvmpipe ends a shader invocation's loops
 * after 65535 iterations, which once cut TPC-H Q1's sums short), with groups straddling chunk boundaries: the GPU
 * run must equal the reference interpreter for every aggregate function and summable type.
 */
import { afterAll, beforeAll, expect, test } from 'vitest';
import { compile, openGpu, type Gpu } from '@vixen/runtime';
import { rng as seeded } from './gpu-fixtures.js';

let gpu: Gpu;
beforeAll(async () => {
  gpu = await openGpu();
});
afterAll(() => gpu?.dispose());

test('two-pass aggregation of large groups equals the reference interpreter', async () => {
  const program = compile(`
    m(g, i, a, b, d, s, t) -> int32(g), int32(i), int32(a), int64(b), decimal(d), string(s), date(t).
    stats[g] = n, sa, sb, sd, aa, ad <- agg<<n = count(), sa = sum(a), sb = sum(b), sd = sum(d), aa = avg(a), ad = avg(d)>>
        m(g, i, a, b, d, _, _).
    extremes[g] = lo, hi, first, last <- agg<<lo = min(d), hi = max(d), first = min(s), last = max(t)>> m(g, _, _, _, d, s, t).
    all[] = n, sd <- agg<<n = count(), sd = sum(d)>> m(_, _, _, _, d, _, _).
  `);
  const next = seeded(7);
  const rng = { nextInt: (n: number): number => Math.floor(next() * n) };
  // Group 0 holds 70,000 rows; groups 1..20 hold 1..3000 rows each, so many cross the 1024-row chunks.
  const rows: (number | bigint | string)[][] = [];
  let i = 0;
  const add = (g: number, n: number): void => {
    for (let k = 0; k < n; k++, i++) {
      rows.push([
        g,
        i,
        rng.nextInt(2001) - 1000,
        BigInt(rng.nextInt(1 << 30)) * 4096n - 2n ** 41n,
        BigInt(rng.nextInt(20_000_000)) - 5_000_000n,
        `s${rng.nextInt(5000)}`,
        rng.nextInt(20000),
      ]);
    }
  };
  add(0, 70_000);
  for (let g = 1; g <= 20; g++) add(g, 1 + rng.nextInt(3000));
  const facts = { m: rows };
  const want = await program.interpret({ facts });
  const got = await program.run({ facts, gpu });
  for (const rel of ['stats', 'extremes', 'all']) expect(got.relations.get(rel), rel).toEqual(want.get(rel));
  expect(got.relations.get('stats')![0]![1]).toBe(70_000);
}, 120_000);
