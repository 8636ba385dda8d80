import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { compile, openGpu, type Gpu } from '../src/index.js';
import { internals } from '../src/gpu/device.js';

let gpu: Gpu;
beforeAll(async () => {
  gpu = await openGpu();
});
afterAll(() => gpu.dispose());

const program = `
  edge(x, y) -> int32(x), int32(y).
  edge(1, 2). edge(2, 3). edge(3, 4).
  path(x, y) <- edge(x, y).
  path(x, z) <- path(x, y), edge(y, z).
`;

describe('profile timing', () => {
  it('says which clock its kernel times come from', async () => {
    const { stats } = await compile(program).run({ gpu, profile: true });
    expect(stats.profiled).toBe(true);
    expect(stats.timestamps).toBe(gpu.device.features.has('timestamp-query'));
    expect(stats.kernels.filter((k) => k.launches > 0).every((k) => k.milliseconds >= 0)).toBe(true);
  });

  // Only GPU adapters offer timestamp queries (Dawn's OpenGL ES backend on llvmpipe does not).
  it.runIf(process.env.VIXEN_EXPECT_TIMESTAMPS === '1')('times passes with timestamp queries on a GPU', async () => {
    const g = internals(gpu);
    expect(g.startTiming()).toBe(true);
    const { stats } = await compile(program).run({ gpu, profile: true });
    const timed = stats.kernels.filter((k) => k.launches > 0);
    expect(timed.reduce((n, k) => n + k.milliseconds, 0)).toBeGreaterThan(0);
    g.stopTiming();
  });
});
