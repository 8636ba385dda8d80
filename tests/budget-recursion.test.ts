/**
 * Recursive programs under a device memory budget far below their relations (partitioned.ts): the semi-naive loop's
 * unique, difference and merge run on the device in key ranges of their sorted inputs, in several steps, none on the
 * host, and the answers are the run's without a budget.
 */
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { compile, compileFile, openGpu, type ExecuteStats, type Gpu } from '@vixen/runtime';

const graphs = join(import.meta.dirname, '..', 'examples', 'graphs');

let gpu: Gpu;
beforeAll(async () => {
  gpu = await openGpu();
});
afterAll(() => gpu?.dispose());

/** `edges` distinct random edges over `nodes` nodes, no self-loops (a fixed LCG: the same graph every run). */
function uniform(nodes: number, edges: number, seed: number): number[][] {
  let state = seed;
  const next = (): number => ((state = (Math.imul(state, 1103515245) + 12345) >>> 0) >>> 16) % nodes;
  const seen = new Set<number>();
  const out: number[][] = [];
  while (out.length < edges) {
    const [x, y] = [next(), next()];
    if (x === y || seen.has(x * nodes + y)) continue;
    seen.add(x * nodes + y);
    out.push([x, y]);
  }
  return out;
}

/** Parent to child edges of a complete binary tree of `depth` levels (node i's children 2i + 1 and 2i + 2). */
const tree = (depth: number): number[][] => Array.from({ length: 2 ** (depth - 1) - 1 }, (_, i) => [[i, 2 * i + 1], [i, 2 * i + 2]]).flat();

const kinds = (s: ExecuteStats) => new Map(s.partitionedKinds.map((k) => [k.kind, k]));

describe('recursive programs under a small budget run their sorted operators on the device in steps', () => {
  // `scratchBound`: the storage peak, scratch included, is within the budget but for least-size buffers of steps of a
  // few rows (which run whatever they need) and a kind's first launch past them. Not yet where a join keeps one side
  // whole through steps of a few rows of the other (non-linear closure: about 1.6 times the budget).
  const cases: Array<{ name: string; program: string; edge: number[][]; output: string; budget: number; partitioned: readonly string[]; scratchBound: boolean }> = [
    { name: 'transitive closure', program: 'tc.logic', edge: uniform(120, 240, 7), output: 'path', budget: 32 * 1024, partitioned: ['unique', 'difference', 'merge'], scratchBound: true },
    { name: 'non-linear transitive closure', program: 'tc-nonlinear.logic', edge: uniform(100, 160, 3), output: 'path', budget: 32 * 1024, partitioned: ['difference', 'merge'], scratchBound: false },
    { name: 'same generation', program: 'sg.logic', edge: tree(7), output: 'sg', budget: 16 * 1024, partitioned: ['difference', 'merge'], scratchBound: true },
  ];
  for (const c of cases) {
    test(c.name, async () => {
      const program = compileFile(join(graphs, c.program));
      const facts = { edge: c.edge };
      const free = await program.run({ gpu, facts });
      const rows = free.relations.get(c.output)!;
      // Far past the budget: the loop's relations cannot share it.
      expect(rows.length * 8).toBeGreaterThan(c.budget / 2);
      const run = await program.run({ gpu, facts, maxDeviceMemory: c.budget });
      expect(run.relations.get(c.output)).toEqual(rows);
      expect(run.stats.peakDeviceBytes).toBeLessThanOrEqual(c.budget);
      // Kernels' scratch counted too (ExecuteStats.peakStorageBytes).
      expect(run.stats.peakStorageBytes).toBeGreaterThanOrEqual(run.stats.peakDeviceBytes);
      if (c.scratchBound) expect(run.stats.peakStorageBytes).toBeLessThanOrEqual(c.budget + 2 * 1024);
      const by = kinds(run.stats);
      for (const kind of c.partitioned) {
        const k = by.get(kind as ExecuteStats['partitionedKinds'][number]['kind']);
        expect(k, kind).toBeDefined();
        // Several steps a launch, and no work left to the host.
        expect(k!.steps, kind).toBeGreaterThan(k!.launches);
        expect(k!.onHost, kind).toBe(0);
      }
      // Nothing else done on the host either (sorts included), but copies: host rows handed on as they are.
      for (const k of run.stats.partitionedKinds) if (k.kind !== 'copy' && k.kind !== 'concat') expect(k.onHost, k.kind).toBe(0);
    });
  }
});

test('an input that every step reads is uploaded once, not at every step', async () => {
  const program = compile(`
big(x, y) -> int32(x), int32(y).
small(y, z) -> int32(y), int32(z).
out(x, z) <- big(x, y), small(y, z), z > 2.
`);
  // 2,000 rows of big (16 KB) stream against 40 rows of small (320 bytes) under 6 KiB.
  const facts = { big: Array.from({ length: 2000 }, (_, i) => [i, i % 40]), small: Array.from({ length: 40 }, (_, i) => [i, i % 5]) };
  const free = await program.run({ gpu, facts });
  const run = await program.run({ gpu, facts, maxDeviceMemory: 6 * 1024 });
  expect(run.relations.get('out')).toEqual(free.relations.get('out'));
  expect(run.stats.peakDeviceBytes).toBeLessThanOrEqual(6 * 1024);
  // The join streams big's rows in several steps, each with all of small: uploaded once, big's rows and small's.
  const join = kinds(run.stats).get('pipeline')!;
  expect(join.steps).toBeGreaterThanOrEqual(4);
  expect(join.uploadBytes).toBe(2000 * 8 + 40 * 8);
});
