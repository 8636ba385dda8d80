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
