/** `vixen bench graphs` end to end: Vixen and DuckDB on the same small graphs must derive the same tuples. */
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, test } from 'vitest';
import { cli } from '../helpers/cli.js';
import { benchGraphs, type GraphBenchReport } from '@vixen/bench';
import { openGpu } from '@vixen/runtime';

describe('vixen bench graphs', () => {
  test('a 5 x 4 grid: every workload agrees with DuckDB (lattice ones on their values too); iterations and tuple counts follow the grid', { timeout: 120_000 }, async () => {
    const json = join(mkdtempSync(join(tmpdir(), 'vixen-bench-')), 'report.json');
    const r = await cli('bench', 'graphs', '--graph', 'grid', '--width', '5', '--height', '4', '--workload', 'tc,tc-nonlinear,reach,reach-avoid,sg,cc,sssp,bfs,widest', '--json', json);
    expect(r.err).not.toMatch(/error/i);
    expect(r.code).toBe(0);
    expect(r.out).toMatch(/workload\s+graph\s+iterations\s+in-kernel\s+batches\s+us\/iter\s+dispatches\/iter\s+tuples/);
    const report = JSON.parse(readFileSync(json, 'utf8')) as GraphBenchReport;
    expect(report.graph).toMatchObject({ kind: 'grid', nodes: 20, edges: 4 * 4 + 5 * 3 });
    const by = new Map(report.results.map((x) => [x.workload, x]));
    expect([...by.keys()]).toEqual(['tc', 'tc-nonlinear', 'reach', 'reach-avoid', 'sg', 'cc', 'sssp', 'bfs', 'widest']);
    for (const x of report.results) {
      expect(x.duckdb?.agrees, x.workload).toBe(true);
      expect(x.milliseconds).toBeGreaterThan(0);
      expect(x.tuplesPerSecond).toBeCloseTo(x.tuples / (x.milliseconds / 1000));
    }
    // (x, y) reaches (x', y') iff x' >= x and y' >= y, minus the pairs of a node with itself.
    expect(by.get('tc')!.checked.path).toBe(15 * 10 - 20);
    expect(by.get('tc')!.iterations).toBe(4 + 3);
    expect(by.get('reach')!.checked.reach).toBe(20);
    // Every fourth node blocked cuts some off (the count is DuckDB's, checked above).
    expect(by.get('reach-avoid')!.checked.reach).toBeGreaterThan(1);
    expect(by.get('reach-avoid')!.checked.reach).toBeLessThan(20);
    // Undirected grid: one component of 20 nodes, all labelled 0, one row per node.
    expect(by.get('cc')!.checked).toEqual({ component: 20, 'component sum': 0 });
    expect(by.get('cc')!.iterations).toBe(4 + 3 + 1);
    // Edges go right and down from node 0 at a corner: node (i, j) is i + j edges away; every node is reached.
    expect(by.get('bfs')!.checked).toEqual({ level: 20, 'level sum': 4 * (0 + 1 + 2 + 3 + 4) + 5 * (0 + 1 + 2 + 3) });
    expect(by.get('bfs')!.iterations).toBe(4 + 3 + 1);
    expect(by.get('sssp')!.checked.dist).toBe(20);
    // The host's union-find and bucket queue agree on every lattice workload it knows.
    for (const w of ['cc', 'sssp', 'bfs']) expect(by.get(w as 'cc')!.host, w).toMatchObject({ agrees: true, checked: by.get(w as 'cc')!.checked });
    expect(by.get('widest')!.checked.width).toBe(20);
  });

  test('under a device memory budget workloads spill and agree, or stop with the budget error while the others run', { timeout: 120_000 }, async () => {
    const dir = mkdtempSync(join(tmpdir(), 'vixen-bench-'));
    const grid = ['bench', 'graphs', '--graph', 'grid', '--width', '5', '--height', '4', '--workload', 'tc,cc'];
    const spilled = await cli(...grid, '--max-device-memory', '6KiB', '--json', join(dir, 'spilled.json'));
    expect(spilled.code).toBe(0);
    const report = JSON.parse(readFileSync(join(dir, 'spilled.json'), 'utf8')) as GraphBenchReport;
    expect(report.stopped).toEqual([]);
    for (const x of report.results) {
      expect(x.duckdb?.agrees, x.workload).toBe(true);
      expect(x.peakDeviceBytes, x.workload).toBeLessThanOrEqual(6 * 1024);
    }
    expect(report.results.some((x) => x.spilledBytes > 0)).toBe(true);
    // Neither fits 512 bytes (cc's loop, which joins only its delta with the edges, fits 2 KiB): both are reported
    // stopped, and the exit status says so.
    const stopped = await cli(...grid, '--max-device-memory', '512B', '--json', join(dir, 'stopped.json'));
    expect(stopped.code).toBe(1);
    expect(stopped.out).toMatch(/^stopped: tc: device memory limit exceeded: .* rule tc\.logic:\d+: .*; the limit is 512 bytes/m);
    expect(stopped.out).toMatch(/^stopped: cc: device memory limit exceeded: .* rule cc\.logic:\d+: .*; the limit is 512 bytes/m);
    expect(stopped.err).toMatch(/error: stopped: tc, cc \(the reasons are above\)/);
    expect(stopped.err).not.toMatch(/Dawn|Invalid Buffer|\n\s+at /);
  });

  test('a workload that loses the device is reported stopped, and the workloads after run on a new one', { timeout: 120_000 }, async () => {
    const first = await openGpu();
    const report = await benchGraphs(first, {
      graph: { kind: 'grid', width: 5, height: 4 },
      workloads: ['tc', 'reach', 'cc'],
      duckdb: false,
      // The device goes once tc is measured: reach meets it lost.
      onResult: (r) => void (r.workload === 'tc' && first.device.destroy()),
      reopen: () => openGpu(),
    });
    expect(report.stopped.map((s) => s.workload)).toEqual(['reach']);
    expect(report.stopped[0]!.message).toMatch(/^the GPU device was closed/);
    expect(report.results.map((r) => [r.workload, r.checked])).toEqual([
      ['tc', { path: 15 * 10 - 20 }],
      ['cc', { component: 20, 'component sum': 0 }],
    ]);
    first.dispose();
  });

  test('the loop workloads: reach along a chain, a comb with blocked teeth and a long grid, count-up; per-iteration cost and loop figures', { timeout: 120_000 }, async () => {
    const json = join(mkdtempSync(join(tmpdir(), 'vixen-bench-')), 'report.json');
    const r = await cli('bench', 'graphs', '--workload', 'chain,comb-avoid,grid,count-up', '--chain-nodes', '40', '--grid-width', '30', '--grid-height', '3', '--count-to', '20', '--json', json);
    expect(r.err).not.toMatch(/error/i);
    expect(r.code).toBe(0);
    const report = JSON.parse(readFileSync(json, 'utf8')) as GraphBenchReport;
    const by = new Map(report.results.map((x) => [x.workload, x]));
    for (const x of report.results) {
      expect(x.duckdb?.agrees, x.workload).toBe(true);
      expect(x.batches, x.workload).toBeGreaterThanOrEqual(1);
      expect(x.batches, x.workload).toBeLessThanOrEqual(x.iterations);
      expect(x.dispatchesPerIteration, x.workload).toBeGreaterThan(0);
      expect(x.microsecondsPerIteration, x.workload).toBeCloseTo((x.milliseconds * 1000) / x.iterations);
      // The last timed run's device work besides its compute passes: each host sync is a readback.
      expect(x.lastRun.work.readbacks, x.workload).toBeGreaterThanOrEqual(x.hostSyncs);
      expect(x.lastRun.waitMilliseconds, x.workload).toBeLessThanOrEqual(x.lastRun.milliseconds + x.loadMilliseconds + 1);
      expect(r.out).toMatch(new RegExp(`${x.workload}, last timed run: [\\d.]+ ms, [\\d.]+ of them waiting for the device, [\\d.]+ in Dawn's \\d+ submissions; device work outside compute passes: \\d+ copies`));
    }
    // One iteration per node along the chain (the last finds nothing new), one per anti-diagonal of the grid.
    expect(by.get('chain')).toMatchObject({ graph: 'chain of 40 nodes', iterations: 40, checked: { reach: 40 } });
    expect(by.get('grid')).toMatchObject({ graph: '30 x 3 grid', iterations: 30 + 3 - 1, checked: { reach: 90 } });
    // The 40 chain nodes and the 20 teeth not blocked (the last node's is, so the iterations are the chain's).
    expect(by.get('comb-avoid')).toMatchObject({ graph: 'comb of 40 teeth', iterations: 40, checked: { reach: 60 } });
    // a = 0..20 and b = 1..20, one new tuple every iteration.
    expect(by.get('count-up')).toMatchObject({ checked: { a: 21, b: 20 }, iterations: 2 * 20 + 1 });
    expect(r.out).toMatch(/per-iteration cost of a one-tuple delta: [\d.]+ us \(reach along a chain of 40 nodes\)/);
    // One-tuple deltas run inside the small-loop kernel, all but the general path's first few and last.
    for (const w of ['chain', 'comb-avoid', 'count-up'] as const) expect(by.get(w)!.inKernel, w).toBeGreaterThan(by.get(w)!.iterations - 10);
    // Without loop control's batches and the small-loop kernel every exit test is the host's: one batch per
    // iteration, more host syncs.
    const json2 = join(mkdtempSync(join(tmpdir(), 'vixen-bench-')), 'report.json');
    const off = await cli('bench', 'graphs', '--workload', 'chain', '--chain-nodes', '40', '--no-duckdb', '--no-loop-batches', '--no-small-loops', '--json', json2);
    expect(off.code).toBe(0);
    const unbatched = (JSON.parse(readFileSync(json2, 'utf8')) as GraphBenchReport).results[0]!;
    expect(unbatched).toMatchObject({ iterations: 40, inKernel: 0, batches: 40, checked: { reach: 40 } });
    expect(unbatched.hostSyncs).toBeGreaterThan(by.get('chain')!.hostSyncs);
  });

  test('R-MAT made on the worker pool; set-up timed apart; DuckDB past --duckdb-timeout is reported stopped, not failed', { timeout: 120_000 }, async () => {
    const json = join(mkdtempSync(join(tmpdir(), 'vixen-bench-')), 'report.json');
    const r = await cli('bench', 'graphs', '--workload', 'tc,cc', '--scale', '9', '--edge-factor', '4', '--duckdb-timeout', '0.001', '--json', json);
    expect(r.code).toBe(0);
    const report = JSON.parse(readFileSync(json, 'utf8')) as GraphBenchReport;
    expect(report.setup.graphMilliseconds).toBeGreaterThan(0);
    expect(report.setup.undirectedMilliseconds).toBeGreaterThan(0);
    expect(r.out).toMatch(/^set-up \(host\): graph [\d.]+ s, symmetric view [\d.]+ s, facts columns [\d.]+ s$/m);
    const tc = report.results.find((x) => x.workload === 'tc')!;
    // A 1 ms limit: DuckDB's transitive closure of 512 nodes takes longer.
    expect(tc.duckdb).toMatchObject({ stopped: true, agrees: false, checked: {} });
    expect(tc.duckdb!.milliseconds).toBeGreaterThanOrEqual(0.5);
    expect(tc.checked.path).toBeGreaterThan(10_000);
    expect(r.out).toMatch(/^tc .* >= [\d.]+ +>= [\d.]+x +stopped /m);
  });

  test('a bad option is a user error naming the option', async () => {
    const r = await cli('bench', 'graphs', '--workload', 'tc,nope');
    expect(r.code).toBe(1);
    expect(r.err).toMatch(/option --workload/);
  });
});
