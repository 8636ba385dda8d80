/**
 * Fixed-seed differential fuzzing: random well-typed programs run on real WebGPU must agree with the
 * reference interpreter (and an independent naive evaluator) on every relation. On a mismatch fast-check
 * shrinks the program and the failure message prints it with its facts.
 * `pnpm exec tsx scripts/fuzz.ts --minutes N` runs the same property with random seeds for longer.
 */
import fc from 'fast-check';
import { afterAll, beforeAll, expect, test } from 'vitest';
import { openGpu, type Gpu } from '@vixen/runtime';
import { differentialProperty, type FuzzStats } from './differential.js';

// About 0.2 s per program on llvmpipe with 2 cores: 800 programs take ~75-150 s, leaving room to shrink.
const SEED = 20240531;
const RUNS = 800;

let gpu: Gpu;
beforeAll(async () => {
  gpu = await openGpu();
});
afterAll(() => gpu?.dispose());

test(`GPU agrees with the reference interpreter on ${RUNS} random programs`, { timeout: 600_000 }, async () => {
  const stats: FuzzStats = { programs: 0 };
  await fc.assert(differentialProperty(gpu, stats), { seed: SEED, numRuns: RUNS, endOnFailure: false });
  expect(stats.programs).toBe(RUNS);
});
