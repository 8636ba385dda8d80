/**
 * Device memory as a budget (executor.ts makeRoom, spill.ts): every golden case under a device memory budget of half
 * the peak its relations need without one (three quarters where one kernel's own relations need more) gives the
 * reference interpreter's answers, spilling relations to host memory and uploading them again, and its relations
 * never hold more than the budget. Under an eighth of that peak (at least 1 KiB: four of the smallest buffers), kernels whose own relations do not fit run in
 * partitions (partitioned.ts), with the same answers.
 */
import { existsSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { compileFile, openGpu, RunLimitError, type Gpu, type Program, type RunOptions } from '@vixen/runtime';
import { formatValue, type Row } from '@vixen/queryplan';

const casesDir = join(import.meta.dirname, 'cases');

let gpu: Gpu;
beforeAll(async () => {
  gpu = await openGpu();
});
afterAll(() => gpu?.dispose());

/** A run under `budget`, or undefined when one kernel's own relations need more than it. */
async function underBudget(program: Program, options: RunOptions, budget: number) {
  try {
    return await program.run({ ...options, gpu, maxDeviceMemory: budget });
  } catch (e) {
    if (e instanceof RunLimitError && /device memory limit exceeded: .* (could not be spilled|more than the whole budget)/.test(e.message)) return undefined;
    throw e;
  }
}

const text = (rows: readonly Row[]) => rows.map((r) => r.map((v) => formatValue(v)).join('\t'));

/** A test per golden case: its program, facts and its relations' device memory peak without a budget. */
function eachCase(body: (c: { name: string; program: Program; sources: RunOptions; peak: number }) => Promise<void>): void {
  for (const name of readdirSync(casesDir).sort()) {
    test(name, async () => {
      const dir = join(casesDir, name);
      const program = compileFile(join(dir, 'program.logic'));
      const sources = existsSync(join(dir, 'facts')) ? { factsDir: join(dir, 'facts') } : {};
      const peak = (await program.run({ ...sources, gpu })).stats.peakDeviceBytes;
      // Nothing on the device, no budget to keep.
      if (peak > 0) await body({ name, program, sources, peak });
    });
  }
}

/** `run`'s relations are the reference interpreter's. */
async function expectReference(name: string, program: Program, sources: RunOptions, run: { relations: ReadonlyMap<string, readonly Row[]> }) {
  const reference = await program.interpret(sources);
  for (const [rel, rows] of reference) expect(text(run.relations.get(rel)!), `${name}: ${rel}`).toEqual(text(rows));
}

/** Cases that cannot spill, with their peaks (bytes), out of `spillCases`. */
const cannotSpill: [string, number][] = [];
let spillCases = 0;
let reloaded = 0;

describe('golden cases under half their device memory', () => {
  eachCase(async ({ name, program, sources, peak }) => {
    spillCases++;
    let budget = Math.floor(peak / 2);
    let run = await underBudget(program, sources, budget);
    if (!run) run = await underBudget(program, sources, (budget = Math.floor((peak * 3) / 4)));
    // A case whose one kernel reads and writes most of its peak (two 256-byte buffers of 512) cannot spill: it
    // stops with the budget error (underBudget checked its wording).
    if (!run) {
      cannotSpill.push([name, peak]);
      return;
    }
    expect(run.stats.deviceMemoryBudget).toBe(budget);
    expect(run.stats.peakDeviceBytes).toBeLessThanOrEqual(budget);
    expect(run.stats.spilledBytes).toBeGreaterThan(0);
    reloaded += run.stats.reloadedBytes;
    await expectReference(name, program, sources, run);
  });

  test('most cases spill, and spilled relations come back', () => {
    // Only those whose peak is at most three 256-byte buffers cannot (six today; idb-seed-facts and
    // tc-left-linear load their few facts canonical from the host, no sort buffers, so their peaks are 768), and
    // they stay few.
    expect(cannotSpill.filter(([, peak]) => peak > 3 * 256)).toEqual([]);
    expect(cannotSpill.length).toBeLessThanOrEqual(spillCases / 10);
    expect(reloaded).toBeGreaterThan(0);
  });
});

const tooSmall: string[] = [];
let partitionCases = 0;
let partitioned = 0;

describe('golden cases under an eighth of their device memory (at least 1 KiB), in partitions', () => {
  eachCase(async ({ name, program, sources, peak }) => {
    partitionCases++;
    const budget = Math.max(Math.floor(peak / 8), 1024);
    let run;
    try {
      run = await program.run({ ...sources, gpu, maxDeviceMemory: budget });
    } catch (e) {
      // Buffers take at least 256 bytes: where one row and its output need more than the budget, the run stops.
      if (!(e instanceof RunLimitError && /^device memory limit exceeded: .* more than the whole budget/.test(e.message))) throw e;
      tooSmall.push(name);
      return;
    }
    expect(run.stats.peakDeviceBytes).toBeLessThanOrEqual(budget);
    partitioned += run.stats.partitionedLaunches;
    await expectReference(name, program, sources, run);
  });

  test('most cases run, kernels in partitions', () => {
    // The cases' relations are a few rows (buffers of 256 bytes): a pipeline reading four relations or more needs more
    // than 1 KiB for one row (negation-constants, negation-shapes, negation-in-recursion), and a limit whose k passes
    // its rows reads and writes them all at once (order-limit-top-k-tiles). They stay few.
    expect(tooSmall.length).toBeLessThanOrEqual(partitionCases / 10);
    expect(partitioned).toBeGreaterThanOrEqual(10);
  });
});
