import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openGpu, type Gpu } from '../src/index.js';
import { BufferPool } from '../src/gpu/pool.js';

let gpu: Gpu;
beforeAll(async () => {
  gpu = await openGpu();
});
afterAll(() => gpu.dispose());

describe('BufferPool', () => {
  const usage = () => GPUBufferUsage.STORAGE | GPUBufferUsage.COPY_DST;

  it('reuses a released buffer of the same size class, or one up to twice as large', () => {
    const pool = new BufferPool(gpu.device, gpu.limits.maxBufferSize, 1 << 20);
    const a = pool.acquire(1000, usage());
    pool.release(a);
    expect(pool.acquire(900, usage())).toBe(a);
    pool.release(a);
    // 1024 bytes serve a request of 400 (class 512), but not one of 300 (class 384: less than half of 1024).
    expect(pool.acquire(400, usage())).toBe(a);
    pool.release(a);
    expect(pool.acquire(300, usage())).not.toBe(a);
    pool.dispose();
  });

  it('evicts the longest-pooled buffers beyond its byte budget', () => {
    const pool = new BufferPool(gpu.device, gpu.limits.maxBufferSize, 2048);
    const [a, b, c] = [pool.acquire(1024, usage()), pool.acquire(1024, usage()), pool.acquire(1024, usage())];
    pool.release(a);
    pool.release(b);
    pool.release(c); // over budget: a goes
    const again = new Set([pool.acquire(1024, usage()), pool.acquire(1024, usage())]);
    expect(again).toEqual(new Set([b, c]));
    expect(pool.acquire(1024, usage())).not.toBe(a);
    pool.dispose();
  });
  it('counts storage buffers handed out, not free or mapped ones, and the most at once', () => {
    const pool = new BufferPool(gpu.device, gpu.limits.maxBufferSize, 1 << 20);
    const a = pool.acquire(1000, usage());
    const b = pool.acquire(300, usage());
    pool.acquire(4096, GPUBufferUsage.MAP_READ | GPUBufferUsage.COPY_DST);
    expect(pool.inUseBytes).toBe(a.size + b.size);
    pool.release(a);
    expect(pool.inUseBytes).toBe(b.size);
    expect(pool.peakInUseBytes).toBe(a.size + b.size);
    // Reused from the free list: handed out again, counted again.
    expect(pool.acquire(900, usage())).toBe(a);
    expect(pool.inUseBytes).toBe(a.size + b.size);
    pool.dispose();
  });
});
