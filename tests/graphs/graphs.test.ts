/**
 * The graph workloads of examples/graphs on real WebGPU: every program on several generated graphs must agree
 * with the reference interpreter, and the answers must match what graph theory says independently of the engine.
 */
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { openGpu, type Gpu, type Program, type RunResult } from '@vixen/runtime';
import { kirSuccessors } from '@vixen/kernel-ir';
import type { Row } from '@vixen/queryplan';
import { loadGraphExample as load } from '../helpers/graph-examples.js';
import {
  andersenFacts,
  binaryTree,
  weightedEdgeRows,
  chain,
  cspaFacts,
  cycle,
  edgeRows,
  grid,
  rmat,
  symmetric,
  writeEdgeTsv,
  type Graph,
} from '@vixen/bench';


let gpu: Gpu;
beforeAll(async () => {
  gpu = await openGpu();
});
afterAll(() => gpu?.dispose());

type Facts = Record<string, Row[]>;

/** Runs on the GPU and on the interpreter; the relations must be identical (both come back sorted). */
async function runChecked(p: Program, facts: Facts): Promise<RunResult> {
  const result = await p.run({ gpu, facts });
  const oracle = await p.interpret({ facts });
  expect([...result.relations.keys()].sort()).toEqual([...oracle.keys()].sort());
  for (const [name, rows] of oracle) expect(result.relations.get(name), name).toEqual(rows);
  return result;
}

/** A cycle plus a self-loop on node 0. */
function cycleWithSelfLoop(n: number): Graph {
  const g = cycle(n);
  return { nodes: n, src: Int32Array.from([...g.src, 0]), dst: Int32Array.from([...g.dst, 0]) };
}

const GRAPHS: Record<string, Graph> = {
  'chain(30)': chain(30),
  'cycle(16)+self-loop': cycleWithSelfLoop(16),
  'grid(6,5)': grid(6, 5),
  'tree(depth 5)': binaryTree(5),
  'rmat(scale 6, ef 3)': rmat({ scale: 6, edgeFactor: 3, seed: 7 }),
};

const pairSet = (rows: readonly Row[] | undefined): Set<string> => new Set((rows ?? []).map((r) => r.join(',')));

/** Transitive closure by breadth-first search from every node: the engine-independent answer. */
function closure(g: Graph): Set<string> {
  const adj: number[][] = Array.from({ length: g.nodes }, () => []);
  for (let i = 0; i < g.src.length; i++) adj[g.src[i]!]!.push(g.dst[i]!);
  const out = new Set<string>();
  for (let s = 0; s < g.nodes; s++) {
    const seen = new Set<number>();
    const queue = [...adj[s]!];
    while (queue.length > 0) {
      const v = queue.pop()!;
      if (seen.has(v)) continue;
      seen.add(v);
      out.add(`${s},${v}`);
      queue.push(...adj[v]!);
    }
  }
  return out;
}

/**
 * Fixpoint loop iterations of a run with one recursive loop: blocks on a CFG cycle run once per iteration, the
 * others once per run, so blockSteps = acyclic blocks + iterations * loop blocks.
 */
function loopIterations(p: Program, stats: RunResult['stats']): number {
  const blocks = new Map(p.kir.blocks.map((b) => [b.label, b]));
  const reaches = (from: string, to: string): boolean => {
    const seen = new Set<string>();
    const stack = kirSuccessors(blocks.get(from)!.terminator);
    while (stack.length > 0) {
      const l = stack.pop()!;
      if (l === to) return true;
      if (seen.has(l)) continue;
      seen.add(l);
      stack.push(...kirSuccessors(blocks.get(l)!.terminator));
    }
    return false;
  };
  const inLoop = p.kir.blocks.filter((b) => reaches(b.label, b.label)).length;
  expect(inLoop).toBeGreaterThan(0);
  const iterations = (stats.blockSteps - (p.kir.blocks.length - inLoop)) / inLoop;
  expect(Number.isInteger(iterations)).toBe(true);
  return iterations;
}

describe('transitive closure (tc.logic, tc-nonlinear.logic)', () => {
  const linear = load('tc');
  const nonlinear = load('tc-nonlinear');
  for (const [name, g] of Object.entries(GRAPHS)) {
    test(`${name}: GPU = interpreter = BFS, linear = non-linear`, async () => {
      const facts = { edge: edgeRows(g) };
      const a = await runChecked(linear, facts);
      const b = await runChecked(nonlinear, facts);
      expect(b.relations.get('path')).toEqual(a.relations.get('path'));
      expect(pairSet(a.relations.get('path'))).toEqual(closure(g));
    });
  }

  test('sizes: chain n(n-1)/2, cycle n*n, grid and tree by counting', async () => {
    const size = async (g: Graph): Promise<number> => (await runChecked(linear, { edge: edgeRows(g) })).relations.get('path')!.length;
    for (const n of [1, 2, 17]) expect(await size(chain(n))).toBe((n * (n - 1)) / 2);
    for (const n of [1, 5, 13]) expect(await size(cycle(n))).toBe(n * n);
    expect(await size(cycleWithSelfLoop(9))).toBe(81);
    // (x, y) reaches (x', y') iff x' >= x and y' >= y, minus the pairs of a node with itself.
    const [w, h] = [5, 4];
    expect(await size(grid(w, h))).toBe(((w * (w + 1)) / 2) * ((h * (h + 1)) / 2) - w * h);
    // Each node at depth l has l ancestors.
    const d = 4;
    expect(await size(binaryTree(d))).toBe(Array.from({ length: d + 1 }, (_, l) => 2 ** l * l).reduce((x, y) => x + y));
  });

  test('semi-naive iterations: n-1 for linear TC of chain(n), ceil(log2(n-1)) + 1 for non-linear', async () => {
    for (const n of [3, 10, 24]) {
      const facts = { edge: edgeRows(chain(n)) };
      const lin = await linear.run({ gpu, facts });
      expect(loopIterations(linear, lin.stats)).toBe(n - 1);
      const non = await nonlinear.run({ gpu, facts });
      expect(loopIterations(nonlinear, non.stats)).toBe(Math.ceil(Math.log2(n - 1)) + 1);
    }
  });

  test('semi-naive iterations of linear TC on a grid: its longest shortest path, (w-1) + (h-1)', async () => {
    for (const [w, h] of [[4, 3], [7, 5], [1, 9]] as const) {
      const run = await linear.run({ gpu, facts: { edge: edgeRows(grid(w, h)) }, outputs: [] });
      expect(run.stats.loops.map((l) => l.iterations)).toEqual([w - 1 + h - 1]);
    }
  });

  test('loop control reads back only counts: at most two words (a row count or a 2-word key mask) per launch', async () => {
    for (const n of [40, 120]) {
      const run = await linear.run({ gpu, facts: { edge: edgeRows(chain(n)) }, outputs: [] });
      expect(run.stats.relationRows.find((r) => r.name === 'path')?.rows).toBe((n * (n - 1)) / 2);
      expect(run.stats.readbackBytes).toBeGreaterThan(0);
      expect(run.stats.readbackBytes).toBeLessThanOrEqual(8 * run.stats.launches);
    }
  });

  test('reads edge.tsv written by writeEdgeTsv from a facts directory', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'vixen-graphs-'));
    const g = rmat({ scale: 5, edgeFactor: 2, seed: 3 });
    await writeEdgeTsv(dir, g);
    const fromDir = await linear.run({ gpu, factsDir: dir });
    expect(pairSet(fromDir.relations.get('path'))).toEqual(closure(g));
  });
});

describe('reachability (reach.logic)', () => {
  const p = load('reach');
  const reached = async (g: Graph, sources: number[]): Promise<number[]> =>
    (await runChecked(p, { edge: edgeRows(g), source: sources.map((s) => [s]) })).relations.get('reach')!.map((r) => r[0] as number);
  const range = (lo: number, hi: number): number[] => Array.from({ length: hi - lo }, (_, i) => lo + i);

  for (const [name, g] of Object.entries(GRAPHS)) {
    test(`${name}: GPU = interpreter = BFS from node 0`, async () => {
      const expected = [0, ...[...closure(g)].filter((k) => k.startsWith('0,')).map((k) => Number(k.split(',')[1]))];
      expect(await reached(g, [0])).toEqual([...new Set(expected)].sort((x, y) => x - y));
    });
  }

  test('chain from k reaches k..n-1; a cycle reaches everything', async () => {
    expect(await reached(chain(20), [7])).toEqual(range(7, 20));
    expect(await reached(cycle(11), [5])).toEqual(range(0, 11));
  });

  test('tree: exactly the subtree below the source', async () => {
    const depth = 5;
    const tree = binaryTree(depth);
    // Heap numbering: the subtree of s holds, on each level k below it, the 2^k ids starting at (s+1)*2^k - 1.
    const subtree = (s: number, levels: number): number[] =>
      Array.from({ length: levels + 1 }, (_, k) => range((s + 1) * 2 ** k - 1, (s + 2) * 2 ** k - 1)).flat().sort((x, y) => x - y);
    expect(await reached(tree, [0])).toEqual(range(0, tree.nodes));
    expect(await reached(tree, [1])).toEqual(subtree(1, depth - 1));
    expect(await reached(tree, [5])).toEqual(subtree(5, depth - 2));
    expect(await reached(tree, [tree.nodes - 1])).toEqual([tree.nodes - 1]);
    // Several sources: the union of their subtrees.
    expect(await reached(tree, [3, 6])).toEqual([...subtree(3, depth - 2), ...subtree(6, depth - 2)].sort((x, y) => x - y));
  });
});

describe('same generation (sg.logic)', () => {
  const p = load('sg');
  for (const [name, g] of Object.entries(GRAPHS)) {
    test(`${name}: GPU = interpreter`, async () => {
      await runChecked(p, { edge: edgeRows(g) });
    });
  }

  test('chain: empty; tree: exactly the distinct pairs on one level', async () => {
    expect((await runChecked(p, { edge: edgeRows(chain(12)) })).relations.get('sg')).toEqual([]);
    const depth = 4;
    const sg = (await runChecked(p, { edge: edgeRows(binaryTree(depth)) })).relations.get('sg')!;
    const level = (v: number): number => Math.floor(Math.log2(v + 1));
    expect(sg.every(([x, y]) => x !== y && level(x as number) === level(y as number))).toBe(true);
    expect(sg.length).toBe(Array.from({ length: depth }, (_, i) => 4 ** (i + 1) - 2 ** (i + 1)).reduce((x, y) => x + y));
  });
});

const rowsOf = (facts: Record<string, Graph>): Facts =>
  Object.fromEntries(Object.entries(facts).map(([name, g]) => [name, edgeRows(g)]));

describe('Andersen points-to (andersen.logic)', () => {
  const p = load('andersen');
  for (const [variables, seed] of [[24, 1], [60, 2], [80, 5]] as const) {
    test(`${variables} variables, seed ${seed}: GPU = interpreter; pointsTo covers addressOf and targets only objects`, async () => {
      const facts = andersenFacts({ variables, seed });
      const pointsTo = (await runChecked(p, rowsOf({ ...facts }))).relations.get('pointsTo')!;
      const pts = pairSet(pointsTo);
      for (const row of edgeRows(facts.addressOf)) expect(pts.has(row.join(','))).toBe(true);
      // Every derivation of pointsTo(_, o) starts from addressOf(_, o), whose o is an object id.
      expect(pointsTo.every(([, o]) => (o as number) >= variables)).toBe(true);
    });
  }

  test('hand-written program: p = &a; r = &b; q = p; *q = r; s = *p', async () => {
    // ids: p 0, q 1, r 2, s 3; objects a 10, b 11.
    const facts = { addressOf: [[0, 10], [2, 11]], assign: [[1, 0]], store: [[1, 2]], load: [[3, 0]] };
    const r = await runChecked(p, facts);
    expect(r.relations.get('pointsTo')).toEqual([[0, 10], [1, 10], [2, 11], [3, 11], [10, 11]]);
  });
});

describe('CSPA (cspa.logic): mutual recursion through joins only', () => {
  const p = load('cspa');
  for (const [variables, seed] of [[20, 1], [40, 3]] as const) {
    test(`${variables} variables, seed ${seed}: GPU = interpreter; aliases are symmetric, valueFlow reflexive`, async () => {
      const facts = cspaFacts({ variables, seed });
      const r = await runChecked(p, rowsOf({ ...facts }));
      for (const rel of ['memoryAlias', 'valueAlias']) {
        const set = pairSet(r.relations.get(rel));
        expect(set.size).toBeGreaterThan(0);
        for (const key of set) expect(set.has(key.split(',').reverse().join(',')), `${rel}(${key}) reversed`).toBe(true);
      }
      const flow = pairSet(r.relations.get('valueFlow'));
      for (const [x, y] of edgeRows(facts.assign)) {
        expect(flow.has(`${x},${x}`) && flow.has(`${y},${y}`) && flow.has(`${x},${y}`)).toBe(true);
      }
    });
  }
});

/** Component of every node that has an edge, as the smallest node id in it: union-find, engine-independent. */
function minLabels(g: Graph): Row[] {
  const parent = Array.from({ length: g.nodes }, (_, i) => i);
  const find = (x: number): number => {
    while (parent[x] !== x) x = parent[x] = parent[parent[x]!]!;
    return x;
  };
  for (let i = 0; i < g.src.length; i++) {
    const [a, b] = [find(g.src[i]!), find(g.dst[i]!)];
    // The smaller root wins, so every root is its component's minimum.
    if (a !== b) parent[Math.max(a, b)] = Math.min(a, b);
  }
  const nodes = new Set([...g.src, ...g.dst]);
  return [...nodes].sort((x, y) => x - y).map((x) => [x, find(x)]);
}

describe('connected components (cc.logic): min-label propagation as a lattice predicate', () => {
  const p = load('cc');
  const undirected: Record<string, Graph> = {
    ...Object.fromEntries(Object.entries(GRAPHS).map(([name, g]) => [name, symmetric(g)])),
    // Several components, isolated edges and a self-loop.
    'two chains + edge + self-loop': symmetric({
      nodes: 20,
      src: Int32Array.from([3, 4, 5, 10, 11, 12, 13, 17, 19]),
      dst: Int32Array.from([4, 5, 6, 11, 12, 13, 14, 18, 19]),
    }),
    'rmat(scale 7, ef 1)': symmetric(rmat({ scale: 7, edgeFactor: 1, seed: 11 })),
  };
  for (const [name, g] of Object.entries(undirected)) {
    test(`${name}: GPU = interpreter = union-find`, async () => {
      const r = await runChecked(p, { edge: edgeRows(g) });
      expect(r.relations.get('component')).toEqual(minLabels(g));
    });
  }

  test('iterations: longest shortest path + 1 (labels travel one edge per iteration, then one finds nothing)', async () => {
    const iterations = async (g: Graph): Promise<number[]> =>
      (await p.run({ gpu, facts: { edge: edgeRows(symmetric(g)) }, outputs: ['component'] })).stats.loops.map((l) => l.iterations);
    for (const n of [2, 9, 30]) expect(await iterations(chain(n))).toEqual([n]);
    for (const [w, h] of [[5, 4], [8, 2]] as const) expect(await iterations(grid(w, h))).toEqual([w - 1 + h - 1 + 1]);
    // A cycle of n nodes, undirected: diameter floor(n / 2).
    expect(await iterations(cycle(11))).toEqual([6]);
  });
});

/** Bellman-Ford from `sources` over (x, y, w) rows: the least path weight of every reached node. */
function bellmanFord(nodes: number, edges: readonly (readonly number[])[], sources: number[], combine: 'sum' | 'bottleneck'): Row[] {
  const best = new Map<number, number>(sources.map((s) => [s, combine === 'sum' ? 0 : 2147483647]));
  for (let changed = true; changed; ) {
    changed = false;
    for (const [x, y, w] of edges) {
      const at = best.get(x!);
      if (at === undefined) continue;
      const via = combine === 'sum' ? at + w! : Math.min(at, w!);
      const old = best.get(y!);
      if (old === undefined || (combine === 'sum' ? via < old : via > old)) {
        best.set(y!, via);
        changed = true;
      }
    }
  }
  return [...best].sort((a, b) => a[0] - b[0]).map(([k, v]) => [k, v]);
}

describe('shortest paths (sssp.logic), BFS levels (bfs.logic), widest paths (widest.logic): lattice predicates', () => {
  const sssp = load('sssp');
  const bfs = load('bfs');
  const widest = load('widest');
  for (const [name, g] of Object.entries(GRAPHS)) {
    test(`${name}: GPU = interpreter = Bellman-Ford and BFS`, async () => {
      const edge = weightedEdgeRows(g);
      const source = [[0]];
      expect((await runChecked(sssp, { edge, source })).relations.get('dist')).toEqual(bellmanFord(g.nodes, edge, [0], 'sum'));
      const unit = edgeRows(g).map(([x, y]) => [x, y, 1]);
      expect((await runChecked(bfs, { edge: edgeRows(g), source })).relations.get('level')).toEqual(bellmanFord(g.nodes, unit, [0], 'sum'));
      expect((await runChecked(widest, { edge, source })).relations.get('width')).toEqual(bellmanFord(g.nodes, edge, [0], 'bottleneck'));
    });
  }

  test('negative weights without a negative cycle; ties; several sources; unreachable nodes', async () => {
    // 0 -> 1 (5), 0 -> 2 (2), 2 -> 1 (-4): 1 is nearer through the negative edge; 3 ties through 1 and 2.
    const edge = [[0, 1, 5], [0, 2, 2], [2, 1, -4], [1, 3, 3], [2, 3, -1], [4, 5, 1], [3, 6, -10], [6, 0, 20]];
    const r = await runChecked(sssp, { edge, source: [[0]] });
    expect(r.relations.get('dist')).toEqual(bellmanFord(7, edge, [0], 'sum'));
    expect(r.relations.get('dist')).toEqual([[0, 0], [1, -2], [2, 2], [3, 1], [6, -9]]);
    const two = await runChecked(sssp, { edge, source: [[0], [4]] });
    expect(two.relations.get('dist')).toEqual(bellmanFord(7, edge, [0, 4], 'sum'));
  });

  test('a negative cycle lowers distances forever: the iteration limit stops it', async () => {
    const edge = [[0, 1, 1], [1, 2, -3], [2, 1, 1]];
    await expect(sssp.run({ gpu, facts: { edge, source: [[0]] }, maxIterations: 50 })).rejects.toThrow(/50 iterations|more than 50/);
  });
});
