/**
 * Host round trips of a fixpoint: row counts stay pending on the device where a kernel bounds them, sorts plan
 * without reading key masks back (but large ones on a CPU adapter), and each sync resolves every pending count. Linear transitive closure took
 * 5 syncs per iteration with sort + merge joins (4 with hash joins) when every compacting kernel read its total
 * back; now the join's total and the loop's empty test remain. Results must equal the reference interpreter.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { compile, openGpu, type Gpu } from '@vixen/runtime';
import { chain, edgeRows, rmat, type Graph } from '../src/graphs/index.js';

let gpu: Gpu;
beforeAll(async () => {
  gpu = await openGpu();
});
afterAll(() => gpu?.dispose());

const source = `edge(x, y) -> int32(x), int32(y).
path(x, y) <- edge(x, y).
path(x, z) <- path(x, y), edge(y, z).`;

const graphs: Record<string, Graph> = {
  'chain(120)': chain(120),
  'rmat(scale 6, ef 4)': rmat({ scale: 6, edgeFactor: 4, seed: 5 }),
};

describe('host syncs of linear transitive closure', () => {
  for (const joinStrategy of ['sort-merge', 'hash', 'auto'] as const) {
    for (const [name, g] of Object.entries(graphs)) {
      it(`${joinStrategy}, ${name}: at most 3 per iteration (2 with merge joins on a chain), same result as the interpreter`, async () => {
        const p = compile(source, { filename: 'tc.logic', joinStrategy });
        const facts = { edge: edgeRows(g) };
        const run = await p.run({ gpu, facts });
        const oracle = await p.interpret({ facts });
        expect(run.relations.get('path')).toEqual(oracle.get('path'));
        const iterations = run.stats.loops.reduce((n, l) => n + l.iterations, 0);
        expect(iterations).toBeGreaterThan(2);
        const syncs = run.stats.hostSyncs;
        expect(syncs).toBeGreaterThan(0);
        // Each sync waits for the device; those waits are part of the run's time.
        expect(run.stats.waitMilliseconds).toBeGreaterThan(0);
        expect(run.stats.waitMilliseconds).toBeLessThanOrEqual(run.stats.milliseconds);
        // Handing submissions to Dawn is host work, apart from the waits.
        expect(run.stats.submissions).toBeGreaterThan(0);
        expect(run.stats.dispatches).toBeGreaterThan(0);
        expect(run.stats.submitMilliseconds).toBeGreaterThan(0);
        expect(run.stats.submitMilliseconds + run.stats.waitMilliseconds).toBeLessThanOrEqual(run.stats.milliseconds);
        // Per iteration: the join's output total and the empty test of the delta; a hash probe runs again (one
        // more sync) when repeated build keys overflow its first output buffer. Plus loading and the end.
        expect(syncs).toBeLessThanOrEqual(3 * iterations + 2);
        // Sorts here are small enough to plan on the device on any adapter (a CPU adapter reads the key mask of
        // large sorts back): then merge joins take 2 per iteration.
        if (joinStrategy !== 'hash' && name.startsWith('chain')) expect(syncs).toBeLessThanOrEqual(2 * iterations + 2);
      });
    }
  }
});

it('a merge whose bounds would pass one binding reads the true counts (complete digraph on 30 nodes)', async () => {
  // The first iteration joins 25,230 rows (201,840 bytes) that dedup to 30 new ones; the merge's bound, path's 870
  // rows plus that, passes a 202,000-byte binding although the 900 true rows (7.2 KB) fit.
  const small = await openGpu({ maxStorageBufferBindingSize: 202_000 });
  try {
    const edge: number[][] = [];
    for (let x = 0; x < 30; x++) for (let y = 0; y < 30; y++) if (x !== y) edge.push([x, y]);
    const p = compile(source, { filename: 'tc.logic', joinStrategy: 'sort-merge' });
    const run = await p.run({ gpu: small, facts: { edge } });
    expect(run.relations.get('path')).toEqual((await p.interpret({ facts: { edge } })).get('path'));
    expect(run.relations.get('path')!.length).toBe(900);
  } finally {
    small.dispose();
  }
});
