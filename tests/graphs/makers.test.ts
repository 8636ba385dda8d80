/** Graph makers, the PRNG and the make-graph script: determinism by seed, sizes, id ranges, option errors. */
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, test } from 'vitest';
import { VixenError } from '@vixen/queryplan';
import {
  andersenFacts,
  binaryTree,
  chain,
  componentsOnHost,
  cspaFacts,
  distancesOnHost,
  cycle,
  distinctEdgesInWorkers,
  edgeRows,
  edgeWeight,
  filterEdges,
  grid,
  Rng,
  rmat,
  rmatInWorkers,
  symmetric,
  symmetricInWorkers,
  uniformRandom,
  type Graph,
} from '@vixen/bench';
import { makeGraph } from '../../examples/graphs/make-graph.js';

function expectValid(g: Graph): void {
  expect(g.src.length).toBe(g.dst.length);
  for (let i = 0; i < g.src.length; i++) {
    expect(g.src[i]! >= 0 && g.src[i]! < g.nodes && g.dst[i]! >= 0 && g.dst[i]! < g.nodes).toBe(true);
  }
}

const keys = (g: Graph): string[] => edgeRows(g).map((r) => r.join(','));
const selfLoops = (g: Graph): number => edgeRows(g).filter(([s, d]) => s === d).length;
const distinct = (g: Graph): number => new Set(keys(g)).size;

describe('Rng', () => {
  test('same seed, same stream; different seeds differ; seed 0 works', () => {
    const draw = (seed: number): number[] => {
      const r = new Rng(seed);
      return Array.from({ length: 8 }, () => r.nextU32());
    };
    expect(draw(42)).toEqual(draw(42));
    expect(draw(42)).not.toEqual(draw(43));
    expect(new Set(draw(0)).size).toBe(8);
  });

  test('nextInt covers [0, bound) evenly; nextFloat lies in [0, 1) with mean near 1/2', () => {
    const r = new Rng(9);
    const counts = new Array(6).fill(0);
    for (let i = 0; i < 60_000; i++) counts[r.nextInt(6)]++;
    for (const c of counts) expect(Math.abs(c - 10_000)).toBeLessThan(500);
    let sum = 0;
    for (let i = 0; i < 10_000; i++) {
      const f = r.nextFloat();
      expect(f >= 0 && f < 1).toBe(true);
      sum += f;
    }
    expect(Math.abs(sum / 10_000 - 0.5)).toBeLessThan(0.02);
  });
});

describe('regular graphs', () => {
  test('chain, cycle, grid, tree: node and edge counts, ids in range', () => {
    const cases: Array<[Graph, number, number]> = [
      [chain(0), 0, 0],
      [chain(1), 1, 0],
      [chain(10), 10, 9],
      [cycle(1), 1, 1],
      [cycle(10), 10, 10],
      [grid(1, 1), 1, 0],
      [grid(4, 3), 12, 3 * 3 + 4 * 2],
      [binaryTree(0), 1, 0],
      [binaryTree(4), 31, 30],
    ];
    for (const [g, nodes, edges] of cases) {
      expect(g.nodes).toBe(nodes);
      expect(g.src.length).toBe(edges);
      expectValid(g);
      expect(distinct(g)).toBe(edges);
    }
  });

  test('shapes: chain and cycle successors, grid neighbours, heap-numbered tree', () => {
    expect(edgeRows(chain(4))).toEqual([[0, 1], [1, 2], [2, 3]]);
    expect(edgeRows(cycle(3))).toEqual([[0, 1], [1, 2], [2, 0]]);
    expect(edgeRows(cycle(1))).toEqual([[0, 0]]);
    expect(edgeRows(grid(2, 2)).sort()).toEqual([[0, 1], [0, 2], [1, 3], [2, 3]]);
    expect(edgeRows(binaryTree(2))).toEqual([[0, 1], [0, 2], [1, 3], [1, 4], [2, 5], [2, 6]]);
  });

  test('bad sizes are VixenErrors', () => {
    expect(() => chain(-1)).toThrow(VixenError);
    expect(() => cycle(0)).toThrow(/cycle length must be an integer/);
    expect(() => grid(2.5, 2)).toThrow(VixenError);
    expect(() => binaryTree(40)).toThrow(/tree depth/);
  });
});

describe('uniform random graphs', () => {
  test('exactly m distinct non-loop edges by default, deterministic by seed', () => {
    const g = uniformRandom(50, 300, { seed: 4 });
    expect(g.nodes).toBe(50);
    expect(g.src.length).toBe(300);
    expectValid(g);
    expect(distinct(g)).toBe(300);
    expect(selfLoops(g)).toBe(0);
    expect(keys(uniformRandom(50, 300, { seed: 4 }))).toEqual(keys(g));
    expect(keys(uniformRandom(50, 300, { seed: 5 }))).not.toEqual(keys(g));
  });

  test('a complete graph can be drawn; one edge more cannot', () => {
    expect(distinct(uniformRandom(6, 30, { seed: 1 }))).toBe(30);
    expect(distinct(uniformRandom(6, 36, { seed: 1, selfLoops: true }))).toBe(36);
    expect(() => uniformRandom(6, 31)).toThrow(/at most 30/);
  });

  test('keeping duplicates and self-loops draws m edges as they come', () => {
    const g = uniformRandom(3, 100, { seed: 2, duplicates: true, selfLoops: true });
    expect(g.src.length).toBe(100);
    expect(selfLoops(g)).toBeGreaterThan(0);
    expect(distinct(g)).toBeLessThanOrEqual(9);
  });
});

describe('R-MAT', () => {
  test('deterministic by seed; ids below 2^scale; no loops or duplicates by default', () => {
    const g = rmat({ scale: 8, edgeFactor: 8, seed: 11 });
    expect(g.nodes).toBe(256);
    expectValid(g);
    expect(g.src.length).toBeLessThanOrEqual(8 * 256);
    expect(g.src.length).toBeGreaterThan(256);
    expect(distinct(g)).toBe(g.src.length);
    expect(selfLoops(g)).toBe(0);
    expect(keys(rmat({ scale: 8, edgeFactor: 8, seed: 11 }))).toEqual(keys(g));
    expect(keys(rmat({ scale: 8, edgeFactor: 8, seed: 12 }))).not.toEqual(keys(g));
  });

  test('keeping loops and duplicates gives exactly edgeFactor * 2^scale edges', () => {
    const g = rmat({ scale: 6, edgeFactor: 5, seed: 1, selfLoops: true, duplicates: true });
    expect(g.src.length).toBe(5 * 64);
    expectValid(g);
    // Dropping afterwards is the same as dropping while generating.
    expect(keys(filterEdges(g, {}))).toEqual(keys(rmat({ scale: 6, edgeFactor: 5, seed: 1 })));
  });

  test('skewed degrees with Graph500 probabilities; uniform with a = b = c = d', () => {
    const outDegree0 = (g: Graph): number => edgeRows(g).filter(([s]) => s === 0).length;
    const skewed = rmat({ scale: 10, edgeFactor: 8, seed: 1, duplicates: true, selfLoops: true });
    // Node 0 expects m * (a + b)^scale = 8192 * 0.76^10 ~ 527 out-edges against an average of 8.
    expect(outDegree0(skewed)).toBeGreaterThan(300);
    const flat = rmat({ scale: 10, edgeFactor: 8, seed: 1, a: 0.25, b: 0.25, c: 0.25, duplicates: true, selfLoops: true });
    expect(outDegree0(flat)).toBeLessThan(30);
  });

  test('bad probabilities and sizes are VixenErrors', () => {
    expect(() => rmat({ scale: 4, edgeFactor: 2, a: 0.9 })).toThrow(/a \+ b \+ c must be at most 1/);
    expect(() => rmat({ scale: 4, edgeFactor: 2, a: 0.5, b: 0.2, c: 0.2, d: 0.2 })).toThrow(/sum to 1/);
    expect(() => rmat({ scale: 4, edgeFactor: 2, a: -0.1 })).toThrow(VixenError);
    expect(() => rmat({ scale: 27, edgeFactor: 1 })).toThrow(/scale/);
  });
});

describe('helpers', () => {
  test('symmetric adds reversed edges once; filterEdges drops loops and repeats', () => {
    const g: Graph = { nodes: 3, src: Int32Array.from([0, 1, 2, 1]), dst: Int32Array.from([1, 0, 2, 0]) };
    expect(edgeRows(symmetric(g))).toEqual([[0, 1], [1, 0], [2, 2]]);
    expect(edgeRows(filterEdges(g, {}))).toEqual([[0, 1], [1, 0]]);
    expect(edgeRows(filterEdges(g, { selfLoops: true }))).toEqual([[0, 1], [1, 0], [2, 2]]);
    expect(edgeRows(filterEdges(g, { duplicates: true }))).toEqual([[0, 1], [1, 0], [1, 0]]);
  });

  test('filterEdges sorts by (src, dst) whether node ids span few or many values', () => {
    const pairs = Array.from({ length: 300 }, (_, i) => [(i * 37) % 23, (i * 11) % 19] as const);
    const expected = [...new Set(pairs.map(([s, d]) => s * 100 + d))].sort((a, b) => a - b).map((k) => [Math.floor(k / 100), k % 100]);
    const dense: Graph = { nodes: 23, src: Int32Array.from(pairs, (p) => p[0]), dst: Int32Array.from(pairs, (p) => p[1]) };
    expect(edgeRows(filterEdges(dense, { selfLoops: true }))).toEqual(expected);
    // 2^26 nodes for 300 edges: the packed-key sort, with the same answer.
    const sparse: Graph = { ...dense, nodes: 2 ** 26, src: dense.src.map((v) => v * 2 ** 20), dst: dense.dst.map((v) => v * 3000) };
    expect(edgeRows(filterEdges(sparse, { selfLoops: true }))).toEqual(expected.map(([s, d]) => [s! * 2 ** 20, d! * 3000]));
  });

  test('on the worker pool, R-MAT and the symmetric view are the edges the one-thread makers give', async () => {
    // Parts of 700 edges: several random streams, and buckets by src.
    const options = { scale: 9, edgeFactor: 8, seed: 4, partEdges: 700 };
    const g = rmat(options);
    expect(g.src.length).toBeGreaterThan(2000);
    const inWorkers = await rmatInWorkers(options);
    expect(keys(inWorkers)).toEqual(keys(g));
    expect(keys(await symmetricInWorkers(g))).toEqual(keys(symmetric(g)));
    // Buckets of at least 300 edges: several ranges of src, each sorted on a worker, put back in order.
    const bucketed = await distinctEdgesInWorkers(g.nodes, [g, { src: g.dst, dst: g.src }], { bucketEdges: 300 });
    expect(keys(bucketed)).toEqual(keys(symmetric(g)));
    expect(keys(await distinctEdgesInWorkers(g.nodes, [g], { both: true, bucketEdges: 300 }))).toEqual(keys(symmetric(g)));
    const loops = { ...options, selfLoops: true };
    expect(keys(await rmatInWorkers(loops))).toEqual(keys(rmat(loops)));
    expect(selfLoops(rmat(loops))).toBeGreaterThan(0);
    // One part: the stream of `seed` alone, as before parts existed.
    expect(keys(rmat({ scale: 9, edgeFactor: 8, seed: 4 }))).not.toEqual(keys(g));
  });
});

describe('host answers of the lattice workloads', () => {
  test('components by union-find: the least id per node; distances by a bucket queue from the source', () => {
    // 5 - 3 - 4 and 1 - 2 (both directions), 0 alone: components {3, 4, 5} -> 3 and {1, 2} -> 1; 0 is in no edge.
    const g = symmetric({ nodes: 7, src: Int32Array.from([5, 3, 2]), dst: Int32Array.from([3, 4, 1]) });
    expect(componentsOnHost(g)).toEqual({ rows: 5, sum: 3 * 3 + 1 * 2 });
    // 0 -> 1 (5), 0 -> 2 (1), 2 -> 1 (1), 1 -> 3 (2); 4 unreachable.
    const w: Graph = { nodes: 5, src: Int32Array.from([0, 0, 2, 1]), dst: Int32Array.from([1, 2, 1, 3]) };
    expect(distancesOnHost(w, 0, Int32Array.from([5, 1, 1, 2]))).toEqual({ rows: 4, sum: 0 + 2 + 1 + 4 });
    expect(distancesOnHost(w, 0)).toEqual({ rows: 4, sum: 0 + 1 + 1 + 2 });
    expect(distancesOnHost(w, 4)).toEqual({ rows: 1, sum: 0 });
  });
});

describe('points-to inputs', () => {
  test('andersen: counts, id spaces (objects after variables), determinism', () => {
    const f = andersenFacts({ variables: 40, objects: 10, seed: 3 });
    expect(f.addressOf.src.length).toBe(40);
    expect(f.assign.src.length).toBe(40);
    expect(f.load.src.length).toBe(10);
    expect(f.store.src.length).toBe(10);
    for (const g of Object.values(f)) {
      expect(g.nodes).toBe(50);
      expectValid(g);
      expect(distinct(g)).toBe(g.src.length);
    }
    expect(edgeRows(f.addressOf).every(([p, o]) => p < 40 && o >= 40)).toBe(true);
    for (const g of [f.assign, f.load, f.store]) expect(edgeRows(g).every(([p, q]) => p < 40 && q < 40 && p !== q)).toBe(true);
    expect(andersenFacts({ variables: 40, objects: 10, seed: 3 })).toEqual(f);
  });

  test('cspa: counts and ranges', () => {
    const f = cspaFacts({ variables: 30, assign: 50, dereference: 20, seed: 2 });
    expect(f.assign.src.length).toBe(50);
    expect(f.dereference.src.length).toBe(20);
    for (const g of Object.values(f)) expectValid(g);
    expect(() => cspaFacts({ variables: 3, assign: 7 })).toThrow(/at most 6/);
  });
});

describe('make-graph.ts', () => {
  const tmp = (): string => mkdtempSync(join(tmpdir(), 'vixen-make-graph-'));
  const lines = (path: string): string[] => readFileSync(path, 'utf8').trimEnd().split('\n');

  test('--kind rmat writes the same edges as rmat(), tab separated', async () => {
    const dir = tmp();
    const files = await makeGraph(['--kind', 'rmat', '--scale', '6', '--edge-factor', '4', '--seed', '9', '--out', dir]);
    expect(files).toEqual([join(dir, 'edge.tsv')]);
    expect(lines(files[0]!)).toEqual(edgeRows(rmat({ scale: 6, edgeFactor: 4, seed: 9 })).map((r) => r.join('\t')));
  });

  test('--symmetric, --source and --weighted', async () => {
    const dir = tmp();
    await makeGraph(['--kind', 'chain', '--nodes', '3', '--symmetric', '--source', '2', '--out', dir]);
    expect(lines(join(dir, 'edge.tsv'))).toEqual(['0\t1', '1\t0', '1\t2', '2\t1']);
    expect(lines(join(dir, 'source.tsv'))).toEqual(['2']);
    // --weighted: a third column, the same weight both ways, in 1..64.
    await makeGraph(['--kind', 'chain', '--nodes', '3', '--symmetric', '--weighted', '--out', dir]);
    const pairs = [[0, 1], [1, 0], [1, 2], [2, 1]] as const;
    expect(lines(join(dir, 'edge.tsv'))).toEqual(pairs.map(([x, y]) => `${x}\t${y}\t${edgeWeight(x, y)}`));
    expect(edgeWeight(1, 2)).toBe(edgeWeight(2, 1));
    expect(pairs.every(([x, y]) => edgeWeight(x, y) >= 1 && edgeWeight(x, y) <= 64)).toBe(true);
  });

  test('--kind andersen and cspa write their relations', async () => {
    const a = tmp();
    const files = await makeGraph(['--kind', 'andersen', '--variables', '20', '--out', a]);
    expect(files.map((f) => f.slice(a.length + 1)).sort()).toEqual(['addressOf.tsv', 'assign.tsv', 'load.tsv', 'store.tsv']);
    const c = tmp();
    const cfiles = await makeGraph(['--kind', 'cspa', '--variables', '20', '--seed', '4', '--out', c]);
    expect(cfiles.map((f) => f.slice(c.length + 1)).sort()).toEqual(['assign.tsv', 'dereference.tsv']);
    expect(lines(join(c, 'assign.tsv'))).toEqual(edgeRows(cspaFacts({ variables: 20, seed: 4 }).assign).map((r) => r.join('\t')));
  });

  test('bad arguments are VixenErrors naming the problem', async () => {
    const dir = tmp();
    await expect(makeGraph(['--kind', 'rmat', '--scale', '4', '--out', dir])).rejects.toThrow(/--edge-factor is required/);
    await expect(makeGraph(['--kind', 'nope', '--out', dir])).rejects.toThrow(/unknown --kind 'nope'/);
    await expect(makeGraph(['--kind', 'chain', '--nodes', 'ten', '--out', dir])).rejects.toThrow(/--nodes expects a number/);
    await expect(makeGraph(['--kind', 'chain', '--nodes', '4'])).rejects.toThrow(/--out DIR is required/);
    await expect(makeGraph(['--kind', 'chain', '--nodes', '4', '--source', '4', '--out', dir])).rejects.toThrow(/--source must be/);
    await expect(makeGraph(['--bogus', '--out', dir])).rejects.toThrow(VixenError);
  });
});
