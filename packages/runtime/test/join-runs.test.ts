/**
 * The merge join's bound on its output (kernels/merge-join.ts rightRun, codegen joinRuns): the longest run of equal
 * right keys, found on the device the second time a join meets a right relation, against a host count; and a join
 * sized by it equals the one sized by its total read back.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { generateKernelShaders } from '@vixen/codegen-wgsl';
import type { KirKernel, KirVariable } from '@vixen/kernel-ir';
import { downloadRelation, openGpu, releaseRelation, runKernel, uploadRelation, type Gpu } from '../src/gpu/index.js';
import { internals } from '../src/gpu/device.js';
import { rightRun } from '../src/gpu/kernels/merge-join.js';

let gpu: Gpu;
beforeAll(async () => {
  gpu = await openGpu();
});
afterAll(() => gpu?.dispose());

const vars: KirVariable[] = [
  { id: 0, name: 'l', columns: ['int32'] },
  { id: 1, name: 'r', columns: ['int32', 'int32'] },
  { id: 2, name: 'o', columns: ['int32', 'int32'] },
];
const join = (rightKeys: number[]): KirKernel => ({
  kind: 'mergeJoin',
  id: 0,
  left: 0,
  right: 1,
  output: 2,
  leftKeys: rightKeys.map(() => 0),
  rightKeys,
  filter: [],
  project: [
    { kind: 'col', index: 0, type: 'int32' },
    { kind: 'col', index: 2, type: 'int32' },
  ],
});

/** Rows (key, i) sorted by key: `runs[k]` rows of key k. */
function sortedRight(runs: number[]): Uint32Array {
  const words: number[] = [];
  runs.forEach((n, k) => {
    for (let i = 0; i < n; i++) words.push(k, words.length / 2);
  });
  return Uint32Array.from(words);
}

describe('rightRun', () => {
  it.each([[[1]], [[1, 3, 2]], [[5, 1, 1, 7]], [[2, 2, 2, 2, 2, 2, 2, 2, 300]], [Array.from({ length: 2000 }, (_, k) => 1 + (k % 9))]])(
    'is undefined on the first join, then the longest run of equal keys (runs %j)',
    async (runs) => {
      const g = internals(gpu);
      const shaders = generateKernelShaders(join([0]), vars);
      const right = uploadRelation(gpu, sortedRight(runs), 2);
      expect(await rightRun(g, shaders, right)).toBeUndefined();
      expect(await rightRun(g, shaders, right)).toBe(Math.max(...runs));
      // Found once: the third join reads no count back.
      const syncs = g.hostSyncs;
      expect(await rightRun(g, shaders, right)).toBe(Math.max(...runs));
      expect(g.hostSyncs).toBe(syncs);
      // No key: one run of every row.
      const product = generateKernelShaders(join([]), vars);
      expect(await rightRun(g, product, right)).toBeUndefined();
      expect(await rightRun(g, product, right)).toBe(runs.reduce((n, r) => n + r, 0));
      releaseRelation(gpu, right);
    },
  );

  it('a join sized by the bound keeps its count pending and has the rows of one sized by its total', async () => {
    const runs = [3, 1, 4, 1, 5];
    const kernel = join([0]);
    const shaders = generateKernelShaders(kernel, vars);
    const right = uploadRelation(gpu, sortedRight(runs), 2);
    const left = uploadRelation(gpu, Uint32Array.from([0, 2, 4]), 1);
    const outs = [];
    for (let k = 0; k < 3; k++) outs.push(await runKernel(gpu, kernel, shaders, [left, right], new Uint32Array(0), vars));
    // The first two launches read their totals (the second also finds the run), the third is bounded: 3 rows x 5.
    expect(outs[0]!.pending).toBeUndefined();
    expect(outs[2]!.pending).toBeDefined();
    expect(outs[2]!.count).toBe(3 * 5);
    const [first, bounded] = [await downloadRelation(gpu, outs[0]!), await downloadRelation(gpu, outs[2]!)];
    expect(Array.from(bounded)).toEqual(Array.from(first));
    expect(first.length / 2).toBe(3 + 4 + 5);
    for (const r of [left, right, ...outs]) releaseRelation(gpu, r);
  });
});
