import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { open } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openGpu, type Gpu } from '../src/index.js';
import { internals } from '../src/gpu/device.js';
import { readWords, releaseRelation, uploadRelationStaged } from '../src/gpu/relations.js';
import { uploadBytes, uploadWords, type UploadPlan } from '../src/gpu/upload.js';

let gpu: Gpu;
beforeAll(async () => {
  gpu = await openGpu();
});
afterAll(() => gpu.dispose());

const words = (n: number, seed: number): Uint32Array => Uint32Array.from({ length: n }, (_, i) => (Math.imul(i + seed, 2654435761) ^ seed) >>> 0);

/** The first index where `a` and `b` differ (length counts), or -1: toEqual on 10^5 words takes seconds. */
function firstDifference(a: Uint32Array, b: Uint32Array): number {
  const n = Math.min(a.length, b.length);
  for (let i = 0; i < n; i++) if (a[i] !== b[i]) return i;
  return a.length === b.length ? -1 : n;
}

/** A device buffer of `n` words holding `fill`. */
function buffer(n: number, fill: number): GPUBuffer {
  const b = gpu.device.createBuffer({ size: 4 * n, usage: GPUBufferUsage.STORAGE | GPUBufferUsage.COPY_DST | GPUBufferUsage.COPY_SRC });
  gpu.device.queue.writeBuffer(b, 0, new Uint32Array(n).fill(fill));
  return b;
}

const PLANS: Array<[string, UploadPlan]> = [
  ['writeBuffer per piece', { method: 'write', chunkBytes: 0, inFlight: 0 }],
  ['writeBuffer in 64 KiB calls', { method: 'write', chunkBytes: 64 * 1024, inFlight: 0 }],
  // Chunks that do not divide the data, and more chunks than slots: every slot is mapped again and reused.
  ['a staging ring of 3 x 192 KiB', { method: 'staging', chunkBytes: 192 * 1024, inFlight: 3 }],
];

describe('uploadWords', () => {
  it.each(PLANS)('%s: pieces land back to back at the offset, the words around them kept', async (_, plan) => {
    const pieces = [words(300_000, 1), words(1, 2), words(0, 3), words(123_457, 4)];
    const total = pieces.reduce((n, p) => n + p.length, 0);
    const b = buffer(total + 20, 0xdeadbeef);
    await uploadWords(gpu, b, 40, pieces, plan);
    const back = await readWords(internals(gpu), b, 0, total + 20);
    const expected = new Uint32Array(total + 20).fill(0xdeadbeef);
    let at = 10;
    for (const p of pieces) {
      expected.set(p, at);
      at += p.length;
    }
    expect(firstDifference(back, expected)).toBe(-1);
    b.destroy();
  });

  it('uploads that overlap in time take turns on the staging ring', async () => {
    const plan: UploadPlan = { method: 'staging', chunkBytes: 64 * 1024, inFlight: 2 };
    const data = [words(200_000, 5), words(170_001, 6), words(90_000, 7)];
    const bufs = data.map((d) => buffer(d.length, 0));
    await Promise.all(data.map((d, i) => uploadWords(gpu, bufs[i]!, 0, [d], plan)));
    for (const [i, d] of data.entries()) expect(firstDifference(await readWords(internals(gpu), bufs[i]!, 0, d.length), d)).toBe(-1);
    for (const b of bufs) b.destroy();
  });
});

describe('uploadBytes', () => {
  it('reads a file straight into the staging buffers; a failed fill leaves the next upload working', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'vixen-upload-test-'));
    try {
      const data = words(250_000, 8);
      writeFileSync(join(dir, 'w.bin'), data);
      const plan: UploadPlan = { method: 'staging', chunkBytes: 128 * 1024, inFlight: 2 };
      const b = buffer(data.length, 0);
      const file = await open(join(dir, 'w.bin'), 'r');
      try {
        await uploadBytes(gpu, b, 0, data.byteLength, async (into, at) => void (await file.read(into, 0, into.length, at)), plan);
      } finally {
        await file.close();
      }
      expect(firstDifference(await readWords(internals(gpu), b, 0, data.length), data)).toBe(-1);
      const failing = uploadBytes(gpu, b, 0, data.byteLength, () => Promise.reject(new Error('read failed')), plan);
      await expect(failing).rejects.toThrow('read failed');
      const again = words(data.length, 9);
      await uploadWords(gpu, b, 0, [again], plan);
      expect(firstDifference(await readWords(internals(gpu), b, 0, data.length), again)).toBe(-1);
      b.destroy();
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe('uploadRelationStaged', () => {
  it('uploads a relation past one binding as chunks of whole rows', async () => {
    const small = await openGpu({ maxStorageBufferBindingSize: 256 * 1024 });
    try {
      const data = words(3 * 100_000, 10);
      const rel = await uploadRelationStaged(small, [data.subarray(0, 7), data.subarray(7)], 3);
      expect(rel.count).toBe(100_000);
      expect(rel.chunks!.length).toBeGreaterThan(1);
      const back: Uint32Array[] = [];
      for (const c of rel.chunks!) {
        expect(c.count * 3 * 4).toBeLessThanOrEqual(256 * 1024);
        back.push(await readWords(internals(small), c.buffer!, 0, c.count * 3));
      }
      expect(firstDifference(Uint32Array.from(back.flatMap((b) => [...b])), data)).toBe(-1);
      releaseRelation(small, rel);
    } finally {
      small.dispose();
    }
  });
});
