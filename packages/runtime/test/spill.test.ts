/**
 * Spilling relations larger than one storage binding (gpu/chunks.ts): under a budget below its peak, a relation of
 * several chunks goes to host memory and is read from there, and the answers are the reference interpreter's.
 */
import { afterAll, beforeAll, expect, it } from 'vitest';
import { compile, openGpu, type Gpu } from '../src/index.js';

const program = compile(`
edge(x, y) -> int32(x), int32(y).
pairs(x, y) <- edge(x, _), edge(y, _), x < y.
path(x, y) <- edge(x, y), x < 24.
path(x, z) <- path(x, y), edge(y, z), z < 24.
both(x, y) <- pairs(x, y), path(x, y).
`);
// 4 KiB bindings: the 1,770 pairs of 60 nodes (14 KiB) are four chunks; the closure runs on the first 24 nodes,
// large enough that its loop needs pairs' room (the pairs join alone makes 20 KiB at once, so the budget stays above).
let small: Gpu;
beforeAll(async () => {
  small = await openGpu({ maxStorageBufferBindingSize: 4096 });
});
afterAll(() => small.dispose());

it('spills and reloads chunked relations under a budget and answers as the reference', async () => {
  const facts = { edge: Array.from({ length: 60 }, (_, i) => [i, i + 1]) };
  const free = await program.run({ gpu: small, facts });
  // Budgets from about 46% to 49% of the peak spill pairs during the loop (above, the loop's rows go instead; below,
  // the pairs join does not fit): half the peak was at that window's edge, where 1 KiB more of a join's scratch
  // (merge join starts) took it past.
  const budget = Math.floor(free.stats.peakDeviceBytes * 0.47);
  const run = await program.run({ gpu: small, facts, maxDeviceMemory: budget });
  expect(run.stats.peakDeviceBytes).toBeLessThanOrEqual(budget);
  // pairs, four chunks, went to host memory: its sort's input, output and scratch do not fit the budget beside each
  // other, so executor.ts ran it in partitions (key ranges sorted on the device), and both's join read it so too.
  expect(run.stats.spilledBytes).toBeGreaterThanOrEqual(1770 * 8);
  expect(run.stats.partitionedLaunches).toBeGreaterThanOrEqual(2);
  expect(run.stats.reloadedBytes).toBeGreaterThan(0);
  const reference = await program.interpret({ facts });
  for (const name of ['pairs', 'path', 'both']) expect(run.relations.get(name), name).toEqual(reference.get(name));
  expect(reference.get('pairs')!.length).toBe(1770);
});
