/**
 * Fixed-seed differential fuzzing: random well-typed programs run on real WebGPU must agree with the
 * reference interpreter (and an independent naive evaluator) on every relation. On a mismatch fast-check
 * shrinks the program and the failure message prints it with its facts.
 * `pnpm exec tsx scripts/fuzz.ts --minutes N` runs the same property with random seeds for longer.
 */
import fc from 'fast-check';
import { afterAll, beforeAll, expect, test } from 'vitest';
import { openGpu, type Gpu } from '@vixen/runtime';
import { differentialProperty, type BudgetStats, type FuzzStats } from './differential.js';
import { LONG_LOOP_OPTIONS } from './generate.js';

// About 0.1-0.2 s per program on llvmpipe with 2 cores once Mesa's shader cache holds the programs' kernels:
// 4 seeds x 500 programs take ~3-6 min. With a cold cache (a fresh machine) every kernel is compiled first: a seed
// took 459-567 s on the 2-core development machine, so each seed's test gets 20 minutes, room to shrink too.
const SEEDS = [20240531, 1556904355, 2094069654, 77];
const RUNS = 500;

let gpu: Gpu;
beforeAll(async () => {
  gpu = await openGpu();
});
afterAll(() => gpu?.dispose());

// Programs recursing through min or max: fewer, as each runs a loop of more kernels.
const LATTICE_SEEDS = [39, 20261128];
const LATTICE_RUNS = 150;

test.each(LATTICE_SEEDS)(`GPU agrees with both oracles on ${LATTICE_RUNS} random min/max-recursive programs (seed %i)`, { timeout: 1_200_000 }, async (seed) => {
  const stats: FuzzStats = { programs: 0 };
  await fc.assert(differentialProperty(gpu, stats, { lattice: true }), { seed, numRuns: LATTICE_RUNS, endOnFailure: false });
  expect(stats.programs).toBe(LATTICE_RUNS);
});

test.each(SEEDS)(`GPU agrees with the reference interpreter on ${RUNS} random programs (seed %i)`, { timeout: 1_200_000 }, async (seed) => {
  const stats: FuzzStats = { programs: 0 };
  await fc.assert(differentialProperty(gpu, stats), { seed, numRuns: RUNS, endOnFailure: false });
  expect(stats.programs).toBe(RUNS);
});

test('random programs under half their device memory give the same answers, spilling to host memory', { timeout: 1_200_000 }, async () => {
  const budget: BudgetStats = { answered: 0, spilled: 0, refused: 0 };
  await fc.assert(differentialProperty(gpu, { programs: 0 }, { budget }), { seed: 38, numRuns: 30, endOnFailure: false });
  // Most programs hold several relations at once, so half their peak is reached by spilling the idle ones.
  expect(budget.answered).toBeGreaterThan(budget.refused);
  expect(budget.spilled).toBeGreaterThan(budget.answered / 2);
});

test('random programs under an eighth of their device memory (at least 1 KiB) give the same answers, in partitions', { timeout: 1_200_000 }, async () => {
  const budget: BudgetStats = { divisor: 8, least: 1024, answered: 0, spilled: 0, refused: 0 };
  await fc.assert(differentialProperty(gpu, { programs: 0 }, { budget }), { seed: 39, numRuns: 30, endOnFailure: false });
  expect(budget.answered).toBeGreaterThan(budget.refused);
  expect(budget.partitioned).toBeGreaterThan(0);
});

// Long thin loops (base relations that are chains of up to 200 links): loop control's batches against the interpreter.
test('GPU agrees with the reference interpreter on long thin loops (seed 44)', { timeout: 1_200_000 }, async () => {
  const stats: FuzzStats = { programs: 0 };
  await fc.assert(differentialProperty(gpu, stats, { generator: LONG_LOOP_OPTIONS }), { seed: 44, numRuns: 10, endOnFailure: false });
  expect(stats.programs).toBe(10);
  // The generator does make long loops: some programs iterate along a long chain.
  expect(stats.longLoops).toBeGreaterThan(0);
  // And some of those run inside the small-loop kernel, handing back to the general path.
  expect(stats.inKernel).toBeGreaterThan(0);
});
