import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { compile, openGpu, type Gpu } from '../src/index.js';
import { internals } from '../src/gpu/device.js';
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
  it('hands out the oldest free buffer of a class, so a repeated run gets the buffers of the run before it', () => {
    const pool = new BufferPool(gpu.device, gpu.limits.maxBufferSize, 1 << 20);
    const first = [pool.acquire(1024, usage()), pool.acquire(1024, usage()), pool.acquire(1024, usage())];
    // Released in another order than taken, as a run's scratch and relations are.
    for (const i of [1, 2, 0]) pool.release(first[i]!);
    // By identity (toEqual would find any two buffers of one size and usage equal).
    const which = (buffers: GPUBuffer[]) => buffers.map((b) => first.indexOf(b));
    const second = [pool.acquire(1024, usage()), pool.acquire(1024, usage()), pool.acquire(1024, usage())];
    expect(which(second)).toEqual([0, 1, 2]);
    for (const i of [2, 0, 1]) pool.release(second[i]!);
    expect(which([pool.acquire(1024, usage()), pool.acquire(1024, usage())])).toEqual([0, 1]);
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

describe('BufferPool claims (replay records)', () => {
  const usage = () => GPUBufferUsage.STORAGE | GPUBufferUsage.COPY_DST;

  it('counts every buffer it creates, mapped ones too, and keeps creations within its budget: free buffers go first, then what relievers release', () => {
    const pool = new BufferPool(gpu.device, gpu.limits.maxBufferSize, 1 << 20);
    pool.budget = 8192;
    const [a, b] = [pool.acquire(2048, usage()), pool.acquire(2048, usage())];
    const mapped = pool.createMapped(1024);
    expect([pool.allocatedBytes, pool.peakAllocatedBytes]).toEqual([5120, 5120]);
    pool.release(a);
    // Free in the pool, still allocated.
    expect(pool.allocatedBytes).toBe(5120);
    // 4096 more pass the budget: the free buffer goes.
    const c = pool.acquire(4096, GPUBufferUsage.STORAGE);
    expect([pool.allocatedBytes, pool.freeBytes, pool.relieved.buffers]).toEqual([7168, 0, 1]);
    // Past the budget with no free buffer, a reliever gives back what it holds (here b), which the pool frees.
    const asked: number[] = [];
    pool.relievers.add((bytes) => {
      asked.push(bytes);
      pool.release(b);
      return b.size;
    });
    pool.acquire(2048, GPUBufferUsage.STORAGE);
    expect(asked).toEqual([1024]);
    expect([pool.allocatedBytes, pool.peakAllocatedBytes]).toEqual([7168, 7168]);
    expect([pool.mappedBytes, pool.peakMappedBytes]).toEqual([1024, 1024]);
    pool.destroyMapped(mapped);
    expect([pool.mappedBytes, pool.peakMappedBytes]).toEqual([0, 1024]);
    // Free buffers are kept within half of what the buffers in use leave of the budget: 16 KiB keeps c.
    pool.budget = 16384;
    pool.release(c);
    expect([pool.allocatedBytes, pool.freeBytes]).toEqual([6144, 4096]);
    // Down to 5000 bytes: the free buffer of 4096 goes, leaving the buffer acquired last.
    pool.trimTo(5000);
    expect(pool.allocatedBytes).toBe(2048);
    pool.dispose();
  });

  it('counts free buffers destroyed while commands are recorded as room: relievers are not asked for what they gave', () => {
    const pool = new BufferPool(gpu.device, gpu.limits.maxBufferSize, 1 << 20);
    pool.budget = 32768;
    // In use: half the budget, so up to 8 KiB of free buffers are kept.
    const held = pool.acquire(16384, usage());
    const free = [pool.acquire(4096, usage()), pool.acquire(4096, usage())];
    for (const b of free) pool.release(b);
    expect([pool.allocatedBytes, pool.freeBytes]).toEqual([24576, 8192]);
    const asked: number[] = [];
    pool.relievers.add((bytes) => {
      asked.push(bytes);
      return 0;
    });
    // Commands are recorded: destroyed buffers are kept until the submission, yet their memory is room.
    pool.holdDestroys();
    const big = pool.acquire(16384, GPUBufferUsage.STORAGE);
    expect(asked).toEqual([]);
    expect([pool.freeBytes, pool.liveBytes, pool.allocatedBytes]).toEqual([0, 32768, 40960]);
    pool.destroysReleased();
    expect(pool.allocatedBytes).toBe(32768);
    // Past the budget with no free buffer left, the relievers are asked for the rest only.
    pool.holdDestroys();
    pool.release(held);
    pool.acquire(24576, GPUBufferUsage.STORAGE);
    expect(asked).toEqual([8192]);
    pool.destroysReleased();
    pool.release(big);
    pool.dispose();
  });

  it('keeps fewer free buffers as the buffers in use take more of its budget', () => {
    const pool = new BufferPool(gpu.device, gpu.limits.maxBufferSize, 1 << 20);
    pool.budget = 1 << 16;
    const resident = pool.acquire(40960, usage());
    const scratch = [pool.acquire(8192, usage()), pool.acquire(8192, usage())];
    for (const b of scratch) pool.release(b);
    // Half of what the resident buffer leaves (12 KiB): one of the two free buffers is kept.
    expect(pool.freeBytes).toBe(8192);
    // With nothing in use, half the budget: both are kept.
    pool.release(resident);
    for (const b of [pool.acquire(8192, usage()), pool.acquire(8192, usage())]) pool.release(b);
    expect(pool.freeBytes).toBe(16384);
    pool.dispose();
  });

  it('keeps a claimed free buffer out of the pool, in use, until the claim ends', () => {
    const pool = new BufferPool(gpu.device, gpu.limits.maxBufferSize, 1 << 20);
    const a = pool.acquire(1024, usage());
    pool.release(a);
    expect([pool.claim(a), pool.inUseBytes, pool.freeBytes]).toEqual(['own', a.size, 0]);
    const b = pool.acquire(1024, usage());
    expect(b).not.toBe(a);
    pool.trim();
    pool.unclaim(a);
    expect([pool.inUseBytes, pool.freeBytes]).toEqual([b.size, a.size]);
    expect(pool.acquire(1024, usage())).toBe(a);
    pool.dispose();
  });

  it('keeps a claimed buffer its holder releases out of the pool until every claim ends', () => {
    const pool = new BufferPool(gpu.device, gpu.limits.maxBufferSize, 1 << 20);
    const a = pool.acquire(1024, usage());
    expect([pool.claim(a), pool.claim(a)]).toEqual(['shared', 'shared']);
    pool.release(a);
    expect(() => pool.release(a)).toThrow(/released twice/);
    pool.unclaim(a);
    // Still claimed once: in use, not free.
    expect([pool.inUseBytes, pool.freeBytes]).toEqual([a.size, 0]);
    const b = pool.acquire(1024, usage());
    expect(b).not.toBe(a);
    pool.release(b);
    pool.unclaim(a);
    expect([pool.inUseBytes, pool.freeBytes]).toEqual([0, a.size + b.size]);
    // The older of the two free buffers comes first.
    expect(pool.acquire(1024, usage())).toBe(a);
    pool.dispose();
  });

  it('refuses a claim of a buffer it destroyed', () => {
    const pool = new BufferPool(gpu.device, gpu.limits.maxBufferSize, 1 << 20);
    const a = pool.acquire(1024, usage());
    pool.release(a);
    pool.trim();
    expect(pool.claim(a)).toBe(false);
    pool.dispose();
  });
});

describe('bind groups of repeated runs', () => {
  it('a run like the one before it creates none, and rows that changed between runs give their own answers', async () => {
    // A join and an aggregate over rows given per run: the same sizes each run, so the same pooled buffers and
    // cached bind groups, with other contents.
    const program = compile(`e(x, y) -> int32(x), int32(y).
p(x, z) <- e(x, y), e(y, z).
n[x] = c <- agg<<c = count()>> e(x, _).`);
    const facts = (k: number) => ({ e: Array.from({ length: 200 }, (_, i) => [i % 50, (i * k + 1) % 50]) });
    const check = async (k: number): Promise<void> => {
      const run = await program.run({ gpu, facts: facts(k), outputs: ['p', 'n'] });
      const oracle = await program.interpret({ facts: facts(k) });
      expect(run.relations.get('p')).toEqual(oracle.get('p'));
      expect(run.relations.get('n')).toEqual(oracle.get('n'));
    };
    const groups = internals(gpu).bindGroups;
    await check(3);
    await check(7);
    await check(3);
    const before = groups.size;
    await check(7);
    await check(3);
    expect(groups.size).toBe(before);
  });
});
