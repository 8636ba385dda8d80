/**
 * The device's hash partitions (kernels/select.ts selectHashed, codegen-wgsl hash-select.ts), which partitioned.ts
 * splits join sides with: every row in exactly one partition, in input order, rows of one key together whatever
 * their other words, and another seed another split.
 */
import { afterAll, beforeAll, expect, it } from 'vitest';
import { openGpu, type Gpu } from '../src/index.js';
import { internals } from '../src/gpu/device.js';
import { selectHashed } from '../src/gpu/kernels/select.js';
import { downloadRelation, releaseRelation, settle, uploadRelation } from '../src/gpu/relations.js';

let gpu: Gpu;
beforeAll(async () => {
  gpu = await openGpu();
});
afterAll(() => gpu.dispose());

/** Rows (key, other, key2) of 500 rows: 37 keys over word 0 and 2, word 1 distinct. */
const rows = Array.from({ length: 500 }, (_, i) => [(i * 7) % 37, i, ((i * 7) % 37) * 3]);

async function split(parts: number, seed: number): Promise<number[][][]> {
  const g = internals(gpu);
  const rel = uploadRelation(gpu, new Uint32Array(rows.flat()), 3);
  const out: number[][][] = [];
  for (let p = 0; p < parts; p++) {
    const part = await selectHashed(g, rel, [0, 2], parts, p, seed);
    const words = await downloadRelation(gpu, part);
    const count = settle(part).count;
    out.push(Array.from({ length: count }, (_, r) => [...words.subarray(r * 3, r * 3 + 3)]));
    releaseRelation(gpu, part);
  }
  releaseRelation(gpu, rel);
  return out;
}

it('splits rows by a hash of their key words, each key in one partition, rows in input order', async () => {
  const parts = await split(5, 0);
  // Every row once, and in each partition in input order (word 1 rises).
  expect(parts.flat().map((r) => r[1]).sort((a, b) => a! - b!)).toEqual(rows.map((r) => r[1]));
  for (const p of parts) expect(p.map((r) => r[1])).toEqual([...p.map((r) => r[1]!)].sort((a, b) => a - b));
  const partOf = new Map<number, number>();
  parts.forEach((p, i) =>
    p.forEach(([key]) => {
      expect(partOf.get(key!) ?? i, `key ${key}`).toBe(i);
      partOf.set(key!, i);
    }),
  );
  // 37 keys spread over the 5 partitions.
  expect(parts.filter((p) => p.length > 0).length).toBe(5);
  // Another seed, another split of the keys.
  const again = await split(5, 1);
  expect(again.map((p) => p.length)).not.toEqual(parts.map((p) => p.length));
});
