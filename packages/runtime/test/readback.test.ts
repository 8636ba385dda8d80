import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openGpu, type Gpu } from '../src/index.js';
import { internals } from '../src/gpu/device.js';
import { readWords, uploadRelation } from '../src/gpu/relations.js';

let gpu: Gpu;
beforeAll(async () => {
  gpu = await openGpu();
});
afterAll(() => gpu.dispose());

describe('readWords', () => {
  it.each([
    [10_000, 256],
    [10_000, 40_000],
    [10_001, 1024],
    [1, 256],
  ])('reads %i words back in chunks of %i bytes', async (words, chunk) => {
    const data = Uint32Array.from({ length: words }, (_, i) => (i * 2654435761) >>> 0);
    const rel = uploadRelation(gpu, data, 1);
    const back = await readWords(internals(gpu), rel.buffer!, 0, words, chunk);
    expect(back).toEqual(data);
    const tail = await readWords(internals(gpu), rel.buffer!, 4 * (words - 1), 1, chunk);
    expect(tail[0]).toBe(data[words - 1]);
  });
});
