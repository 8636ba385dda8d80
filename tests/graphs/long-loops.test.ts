/**
 * Fixpoints of thousands of small iterations (issue 44) on real WebGPU: reach along a chain and over a long grid,
 * and count-up (one tuple an iteration), must equal the reference interpreter, with loop control deciding the exit
 * test on the host once per batch of iterations: a handful of host syncs, not two an iteration.
 */
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { openGpu, type Gpu, type Program, type RunResult } from '@vixen/runtime';
import type { Row } from '@vixen/queryplan';
import { chain, edgeRows, grid } from '@vixen/bench';
import { loadGraphExample as load } from '../helpers/graph-examples.js';

let gpu: Gpu;
beforeAll(async () => {
  gpu = await openGpu();
});
afterAll(() => gpu?.dispose());

async function runChecked(p: Program, facts: Record<string, Row[]>): Promise<RunResult> {
  const result = await p.run({ gpu, facts });
  const oracle = await p.interpret({ facts });
  for (const [name, rows] of oracle) expect(result.relations.get(name), name).toEqual(rows);
  return result;
}

describe('long thin loops', () => {
  test('reach along a chain of 3,000 nodes: 3,000 iterations in a handful of batches and host syncs', { timeout: 120_000 }, async () => {
    const reach = load('reach');
    const n = 3000;
    const r = await runChecked(reach, { edge: edgeRows(chain(n)), source: [[0]] });
    expect(r.relations.get('reach')!.length).toBe(n);
    const [loop] = r.stats.loops;
    expect(loop!.iterations).toBe(n);
    // Batches double up to their most: log2 of the iterations and a few more, nowhere near one per iteration.
    expect(loop!.batches).toBeLessThanOrEqual(16);
    expect(r.stats.hostSyncs).toBeLessThanOrEqual(24);
    expect(loop!.hostSyncs).toBeLessThanOrEqual(r.stats.hostSyncs);
    // The last batch may run past the stop on empty deltas; those iterations are not counted as iterations.
    expect(r.stats.blocks.find((b) => b.label === loop!.block)!.executions).toBe(n);
    console.log(`chain of ${n}: ${r.stats.milliseconds.toFixed(0)} ms, ${loop!.batches} batches, ${r.stats.hostSyncs} host syncs, overshoot ${loop!.overshoot}`);
  });

  test('reach over a 300 x 4 grid (deltas of up to 4 nodes, 302 iterations)', { timeout: 120_000 }, async () => {
    const r = await runChecked(load('reach'), { edge: edgeRows(grid(300, 4)), source: [[0]] });
    expect(r.relations.get('reach')!.length).toBe(1200);
    expect(r.stats.loops[0]!.iterations).toBe(300 + 4 - 1);
    // Join bounds double each iteration (two edges a node), so batches end when they pass loop control's small-delta
    // limit: a few iterations each, still several per host decision.
    expect(r.stats.loops[0]!.batches).toBeLessThan(302 / 3);
  });

  test('transitive closure of a chain of 60: a growing delta, batched, equals the interpreter', { timeout: 120_000 }, async () => {
    const r = await runChecked(load('tc'), { edge: edgeRows(chain(60)) });
    expect(r.relations.get('path')!.length).toBe((60 * 59) / 2);
    expect(r.stats.loops[0]!.iterations).toBe(59);
  });

  test('count-up to 500: 1,001 iterations of one tuple, a and b as the interpreter has them', { timeout: 120_000 }, async () => {
    const r = await runChecked(load('count-up'), { start: [[0]], bound: [[500]], c: [[1]], d: [[1]] });
    expect(r.relations.get('a')!.length).toBe(501);
    expect(r.relations.get('b')!.length).toBe(500);
    expect(r.stats.loops[0]!.iterations).toBe(1001);
    expect(r.stats.hostSyncs).toBeLessThanOrEqual(24);
    // Mutual recursion of a and b: all but the general path's first and last iterations inside the small-loop kernel.
    expect(r.stats.loops[0]!.inKernel).toBeGreaterThan(990);
  });

  test('with a profile, or an iteration limit inside a batch, the host decides every exit test it must', { timeout: 120_000 }, async () => {
    const reach = load('reach');
    const facts = { edge: edgeRows(chain(40)), source: [[0]] };
    const profiled = await reach.run({ gpu, facts, profile: true });
    expect(profiled.stats.loops[0]).toMatchObject({ iterations: 40, batches: 40, overshoot: 0 });
    // The limit stops the run at exactly 25 iterations, batched or not.
    await expect(reach.run({ gpu, facts, maxIterations: 25 })).rejects.toMatchObject({ stats: { loops: [expect.objectContaining({ iterations: 25 })] } });
    const within = await reach.run({ gpu, facts, maxIterations: 40 });
    expect(within.stats.loops[0]!.iterations).toBe(40);
  });
});

describe('small-delta iterations inside one dispatch', () => {
  test('a chain longer than the first log: the log grows, the kernel hands back and resumes', { timeout: 120_000 }, async () => {
    const n = 4200;
    const r = await runChecked(load('reach'), { edge: edgeRows(chain(n)), source: [[0]] });
    const [loop] = r.stats.loops;
    expect(loop!.iterations).toBe(n);
    expect(loop!.inKernel).toBeGreaterThan(n - 20);
    expect(r.stats.hostSyncs).toBeLessThanOrEqual(40);
  });

  test('a delta outgrowing the kernel mid-loop goes back to the general path, then into the kernel again', { timeout: 120_000 }, async () => {
    // A chain of 40, a fan-out to 1,500 nodes (more rows than the kernel has room for on a CPU adapter), a fan-in
    // to one node and another chain of 40.
    const fan = 1500;
    const edges: Row[] = [];
    for (let i = 0; i < 40; i++) edges.push([i, i + 1]);
    for (let k = 0; k < fan; k++) edges.push([40, 1000 + k], [1000 + k, 41]);
    for (let i = 41; i < 80; i++) edges.push([i, i + 1]);
    const r = await runChecked(load('reach'), { edge: edges, source: [[0]] });
    expect(r.relations.get('reach')!.length).toBe(81 + fan);
    const [loop] = r.stats.loops;
    expect(loop!.iterations).toBe(82);
    expect(loop!.inKernel).toBeGreaterThan(40);
    expect(loop!.inKernel).toBeLessThan(82);
  });

  test('the time limit stops a long stay in the kernel between its host syncs', { timeout: 120_000 }, async () => {
    const started = performance.now();
    const run = load('count-up').run({ gpu, facts: { start: [[0]], bound: [[1_000_000]], c: [[1]], d: [[1]] }, timeout: 1 });
    await expect(run).rejects.toThrow(/timed out after/);
    // Dispatches per sync are bounded, so the stop comes within a few seconds of the limit, not at the fixpoint.
    expect(performance.now() - started).toBeLessThan(30_000);
  });

  test('smallLoops: false runs every iteration on the general path, with the same answers', { timeout: 120_000 }, async () => {
    const p = load('count-up');
    const facts = { start: [[0]], bound: [[60]], c: [[1]], d: [[1]] };
    const off = await p.run({ gpu, facts, smallLoops: false });
    const on = await p.run({ gpu, facts });
    expect(off.stats.loops[0]!.inKernel).toBe(0);
    expect(on.stats.loops[0]!.inKernel).toBeGreaterThan(0);
    for (const name of ['a', 'b']) expect(off.relations.get(name)).toEqual(on.relations.get(name));
    expect(off.stats.loops[0]!.iterations).toBe(on.stats.loops[0]!.iterations);
  });
});
