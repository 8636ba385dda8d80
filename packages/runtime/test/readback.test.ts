import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openGpu, type Gpu } from '../src/index.js';
import { internals } from '../src/gpu/device.js';
import { allocPending, downloadRelations, readWords, releaseRelation, uploadRelation, type DeviceRelation } from '../src/gpu/relations.js';

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

describe('downloadRelations', () => {
  /** A relation with room for `capacity` rows whose count word on the device says `rows`. */
  const pendingRelation = (capacity: number, rows: number, width: number): { rel: DeviceRelation; data: Uint32Array } => {
    const g = internals(gpu);
    const rel = allocPending(g, capacity, width);
    const data = Uint32Array.from({ length: capacity * width }, (_, i) => i + 7);
    g.writeBuffer(rel.buffer!, 0, data);
    g.writeBuffer(rel.buffer!, capacity * width * 4, Uint32Array.of(rows));
    return { rel, data: data.slice(0, rows * width) };
  };

  it('reads small relations, pending counts and all, in one host round trip', async () => {
    const g = internals(gpu);
    const exact = Uint32Array.from({ length: 30 }, (_, i) => i * 3);
    const a = uploadRelation(gpu, exact, 3);
    const p = pendingRelation(100, 37, 2);
    const none = pendingRelation(50, 0, 1);
    const empty: DeviceRelation = { buffer: null, count: 0, width: 4 };
    const syncs = g.hostSyncs;
    const back = await downloadRelations(gpu, [p.rel, a, empty, none.rel]);
    expect(g.hostSyncs - syncs).toBe(1);
    expect(back).toEqual([p.data, exact, new Uint32Array(0), new Uint32Array(0)]);
    expect([p.rel.count, p.rel.pending, none.rel.count]).toEqual([37, undefined, 0]);
    for (const r of [a, p.rel, none.rel]) releaseRelation(gpu, r);
  });

  it('resolves the counts first when the room passes the speculative read (4 MiB)', async () => {
    const p = pendingRelation(2 ** 20 + 3, 5000, 1);
    const small = pendingRelation(10, 4, 3);
    const back = await downloadRelations(gpu, [small.rel, p.rel]);
    expect(back).toEqual([small.data, p.data]);
    for (const r of [small.rel, p.rel]) releaseRelation(gpu, r);
  });
});
