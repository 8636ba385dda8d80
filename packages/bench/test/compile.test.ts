/** `vixen bench compile`: a load's passes compiled in three rounds on the real device, each round made distinct. */
import { afterAll, beforeAll, expect, test } from 'vitest';
import { openGpu, type Gpu } from '@vixen/runtime';
import { internals } from '@vixen/runtime/gpu';
import { benchCompile, formatCompileReport } from '../src/compile.js';

let gpu: Gpu;
beforeAll(async () => {
  gpu = await openGpu();
});
afterAll(() => gpu?.dispose());

test("compiles a load's passes one at a time, all at once and synchronously", async () => {
  const before = internals(gpu).device;
  const report = await benchCompile(gpu);
  const names = report.passes.map((p) => p.pass);
  expect(names).toEqual(expect.arrayContaining(['parseCount', 'parseRows', 'parseIntern', 'parseStrings', 'radixCount', 'radixSweep', 'radixSweepRows', 'rowsOrder', 'select']));
  expect(names).not.toContain('sortTiles');
  expect(report.perPass.map((p) => p.pass)).toEqual(names);
  for (const p of report.perPass) {
    expect(p.awaitedMs).toBeGreaterThan(0);
    expect(p.syncMs).toBeGreaterThan(0);
  }
  expect(report.oneAtATimeMs).toBeGreaterThanOrEqual(Math.max(...report.perPass.map((p) => p.awaitedMs)));
  expect(formatCompileReport(report)).toMatch(/compiles at a time/);
  // The device stays usable, and the probe's pipelines are none of the runtime's.
  expect(internals(gpu).device).toBe(before);
  expect(internals(gpu).compiled.pipelines).toBe(0);
}, 120_000);
