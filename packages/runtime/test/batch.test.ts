/**
 * Deferred submission (CommandBatch) on a real WebGPU device: commands recorded but not yet submitted must see
 * the buffers as they were when recorded although the pool hands the buffers out again meanwhile (queue writes
 * run at once, ahead of unsubmitted commands; destroying a buffer unsubmitted commands use is an error), and
 * uniform words filled from device words must see the writes of the steps before their dispatch (whether hoisted
 * or shared between dispatches with the same uniform words). Copies and clears move around dispatches they do not
 * conflict with so that the dispatches share a compute pass, and an arena holding a submission's uniforms already is
 * not written again.
 */
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { generateKernelShaders } from '@vixen/codegen-wgsl';
import type { KirKernel, KirVariable } from '@vixen/kernel-ir';
import { compile } from '../src/index.js';
import { downloadRelation, openGpu, releaseRelation, uploadRelation, type Gpu } from '../src/gpu/index.js';
import { internals } from '../src/gpu/device.js';
import { BufferPool } from '../src/gpu/pool.js';
import { Recorder } from '../src/gpu/recorder.js';
import { allocRelation, bound, readWords } from '../src/gpu/relations.js';
import { rng } from './gpu-fixtures.js';

let gpu: Gpu;
beforeAll(async () => {
  gpu = await openGpu();
});
afterAll(() => gpu?.dispose());
/** Tests that defer submission end it here, whatever happened. */
let deferring = false;
afterEach(() => {
  if (deferring) internals(gpu).batch.endDeferring();
  deferring = false;
});

function deferSubmission(): void {
  internals(gpu).batch.beginDeferring();
  deferring = true;
}

describe('deferred submission', () => {
  it('a buffer released before the deferred submit of a copy reading it is not overwritten ahead of the copy', async () => {
    const g = internals(gpu);
    deferSubmission();
    const a = uploadRelation(gpu, Uint32Array.from([1, 2, 3, 4]), 1);
    const out = allocRelation(g, 4, 1);
    const rec = new Recorder(g, {});
    rec.copy(a.buffer!, 0, out.buffer!, 0, 16);
    await rec.submit();
    releaseRelation(gpu, a);
    // The pool hands the same buffer out again at once; its upload must wait for the copy's submission.
    const b = uploadRelation(gpu, Uint32Array.from([9, 9, 9, 9]), 1);
    expect(b.buffer).toBe(a.buffer);
    expect(Array.from(await downloadRelation(gpu, out))).toEqual([1, 2, 3, 4]);
    expect(Array.from(await downloadRelation(gpu, b))).toEqual([9, 9, 9, 9]);
    releaseRelation(gpu, b);
    releaseRelation(gpu, out);
  });

  it('a buffer the pool evicts while recorded commands use it is destroyed only after their submission', async () => {
    const g = internals(gpu);
    // No budget: every released buffer is evicted.
    const pool = new BufferPool(gpu.device, gpu.limits.maxBufferSize, 0);
    const usage = GPUBufferUsage.STORAGE | GPUBufferUsage.COPY_SRC | GPUBufferUsage.COPY_DST;
    const src = pool.acquire(16, usage);
    const dst = pool.acquire(16, usage);
    gpu.device.queue.writeBuffer(src, 0, Uint32Array.from([5, 6, 7, 8]));
    gpu.device.pushErrorScope('validation');
    pool.holdDestroys();
    const encoder = gpu.device.createCommandEncoder();
    encoder.copyBufferToBuffer(src, 0, dst, 0, 16);
    pool.release(src);
    gpu.device.queue.submit([encoder.finish()]);
    pool.destroysReleased();
    expect(await gpu.device.popErrorScope()).toBeNull();
    expect(Array.from(await readWords(g, dst, 0, 4))).toEqual([5, 6, 7, 8]);
    pool.release(dst);
    pool.dispose();
  });

  it('uniform words filled from device words see the writes of earlier steps (copies and dispatches)', async () => {
    const g = internals(gpu);
    deferSubmission();
    const variables: KirVariable[] = [0, 1].map((id) => ({ id, name: `v${id}`, columns: ['int32'] }));
    // A sorted aggregate's passes include the block scan used below (the onesweep sort has none).
    const aggregate: KirKernel = { kind: 'aggregate', id: 0, input: 0, output: 1, groupBy: [0], aggregates: [] };
    const shaders = generateKernelShaders(aggregate, variables);
    const ones = (): ReturnType<typeof uploadRelation> => uploadRelation(gpu, new Uint32Array(8).fill(1), 1);
    const [d, e, f] = [ones(), ones(), ones()];
    const count = uploadRelation(gpu, Uint32Array.from([8]), 1);
    const three = uploadRelation(gpu, Uint32Array.from([3]), 1);
    const sums = uploadRelation(gpu, Uint32Array.from([5]), 1);
    const rec = new Recorder(g, shaders);
    // n from the count word (8): d's block total, 8, lands in sums[0].
    rec.dispatch('scanBlock', [bound(d), bound(sums)], [{ buffer: count.buffer!, offset: 0 }], 8);
    // n from sums[0], which the dispatch above writes: 8 (not the 5 it held before).
    rec.dispatch('scanBlock', [bound(f), rec.scratch(1)], [{ buffer: sums.buffer!, offset: 0 }], 8);
    // n from the count word after a copy overwrote it with 3.
    rec.copy(three.buffer!, 0, count.buffer!, 0, 4);
    rec.dispatch('scanBlock', [bound(e), rec.scratch(1)], [{ buffer: count.buffer!, offset: 0 }], 8);
    await rec.submit();
    expect(Array.from(await downloadRelation(gpu, d))).toEqual([0, 1, 2, 3, 4, 5, 6, 7]);
    expect(Array.from(await downloadRelation(gpu, f))).toEqual([0, 1, 2, 3, 4, 5, 6, 7]);
    expect(Array.from(await downloadRelation(gpu, e))).toEqual([0, 1, 2, 1, 1, 1, 1, 1]);
    for (const r of [d, e, f, count, three, sums]) releaseRelation(gpu, r);
  });
});

describe('compute passes and uniform uploads', () => {
  const scanShaders = () => {
    const variables: KirVariable[] = [0, 1].map((id) => ({ id, name: `v${id}`, columns: ['int32'] }));
    return generateKernelShaders({ kind: 'aggregate', id: 0, input: 0, output: 1, groupBy: [0], aggregates: [] }, variables);
  };
  const ones = (): ReturnType<typeof uploadRelation> => uploadRelation(gpu, new Uint32Array(8).fill(1), 1);

  it('copies and clears go before or after the dispatches they do not conflict with, which then share one compute pass', async () => {
    const g = internals(gpu);
    deferSubmission();
    const [d, src, z] = [ones(), ones(), uploadRelation(gpu, new Uint32Array(8).fill(7), 1)];
    const [sums, sums2, total] = [0, 1, 2].map(() => uploadRelation(gpu, Uint32Array.from([5]), 1));
    const encoder = g.batch.commands();
    let passes = 0;
    const begin = encoder.beginComputePass.bind(encoder);
    encoder.beginComputePass = (descriptor?: GPUComputePassDescriptor) => (passes++, begin(descriptor));
    const rec = new Recorder(g, scanShaders());
    rec.dispatch('scanBlock', [bound(d), bound(sums!)], [8], 8);
    // Reads what the dispatch before wrote: must follow it.
    rec.copy(sums!.buffer!, 0, total!.buffer!, 0, 4);
    // Writes what the dispatch after reads: must precede it.
    rec.copy(src.buffer!, 0, z.buffer!, 0, 32);
    rec.dispatch('scanBlock', [bound(z), bound(sums2!)], [8], 8);
    await rec.submit();
    expect(passes).toBe(1);
    expect(Array.from(await downloadRelation(gpu, d))).toEqual([0, 1, 2, 3, 4, 5, 6, 7]);
    expect(Array.from(await downloadRelation(gpu, total!))).toEqual([8]);
    expect(Array.from(await downloadRelation(gpu, z))).toEqual([0, 1, 2, 3, 4, 5, 6, 7]);
    expect(Array.from(await downloadRelation(gpu, sums2!))).toEqual([8]);
    for (const r of [d, src, z, sums!, sums2!, total!]) releaseRelation(gpu, r);
  });

  it('an arena that holds the uniform words of a submission already is not written again, unless device words were copied into it', async () => {
    const g = internals(gpu);
    const shaders = scanShaders();
    const queue = gpu.device.queue;
    const write = queue.writeBuffer.bind(queue);
    let uniformWrites = 0;
    queue.writeBuffer = ((buffer: GPUBuffer, ...rest: unknown[]) => {
      if (buffer.usage & GPUBufferUsage.UNIFORM) uniformWrites++;
      return (write as (...a: unknown[]) => void)(buffer, ...rest);
    }) as typeof queue.writeBuffer;
    try {
      const count = uploadRelation(gpu, Uint32Array.from([3]), 1);
      /** One submission of a scan of 8 ones, n from the host (8) or from the count word (3); its scanned rows. */
      const scan = async (n: number | { buffer: GPUBuffer; offset: number }): Promise<number[]> => {
        const [d, s] = [ones(), uploadRelation(gpu, Uint32Array.from([0]), 1)];
        const rec = new Recorder(g, shaders);
        rec.dispatch('scanBlock', [bound(d), bound(s)], [n], 8);
        await rec.submit();
        const rows = Array.from(await downloadRelation(gpu, d));
        releaseRelation(gpu, d);
        releaseRelation(gpu, s);
        return rows;
      };
      const scanned = [0, 1, 2, 3, 4, 5, 6, 7];
      expect(await scan(8)).toEqual(scanned);
      const before = uniformWrites;
      expect(await scan(8)).toEqual(scanned);
      expect(uniformWrites).toBe(before);
      // The count word (3) is copied into the arena, over the host's word 0 there (0).
      expect(await scan({ buffer: count.buffer!, offset: 0 })).toEqual([0, 1, 2, 1, 1, 1, 1, 1]);
      const afterFill = uniformWrites;
      // The same host words as the submission before, which the arena no longer holds: written again.
      expect(await scan(0)).toEqual([1, 1, 1, 1, 1, 1, 1, 1]);
      expect(uniformWrites).toBe(afterFill + 1);
      releaseRelation(gpu, count);
    } finally {
      queue.writeBuffer = write;
    }
  });
});

describe('buffer reuse in fixpoints', () => {
  it('a second run of transitive closure on the same device creates no GPU buffer (the pool has them all), same answer', async () => {
    const p = compile('edge(x, y) -> int32(x), int32(y).\npath(x, y) <- edge(x, y).\npath(x, z) <- path(x, y), edge(y, z).', { filename: 'tc.logic' });
    // 256 random edges on 128 nodes.
    const r = rng(3);
    const facts = { edge: Array.from({ length: 256 }, () => [Math.floor(r() * 128), Math.floor(r() * 128)]) };
    const first = await p.run({ gpu, facts });
    const second = await p.run({ gpu, facts });
    expect(first.stats.buffersCreated).toBeGreaterThan(0);
    expect(second.stats.buffersCreated).toBe(0);
    expect(second.relations.get('path')).toEqual(first.relations.get('path'));
    expect(first.relations.get('path')).toEqual((await p.interpret({ facts })).get('path'));
  });
});
