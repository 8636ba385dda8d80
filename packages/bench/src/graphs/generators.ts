/** Deterministic graph makers for the graph workloads: regular shapes, uniform random graphs and R-MAT. */
import { VixenError } from '@vixen/queryplan';
import { checkInt, distinctEdgesInWorkers, filterEdges, MAX_NODES, randomPairs, type EdgeFilter, type Graph } from './graph.js';
import { Rng } from './prng.js';
import { defineTask, runAllInWorkers } from '@vixen/io';

function fromPairs(nodes: number, m: number, edge: (i: number) => readonly [number, number]): Graph {
  const src = new Int32Array(m);
  const dst = new Int32Array(m);
  for (let i = 0; i < m; i++) [src[i], dst[i]] = edge(i);
  return { nodes, src, dst };
}

/** 0 -> 1 -> ... -> n-1: n-1 edges, diameter n-1. */
export function chain(n: number): Graph {
  checkInt('chain length', n, 0, MAX_NODES);
  return fromPairs(n, Math.max(0, n - 1), (i) => [i, i + 1]);
}

/** A chain 0 -> 1 -> ... -> n-1 with a tooth i -> n + i off every node: 2n - 1 edges, 2n nodes. */
export function comb(n: number): Graph {
  checkInt('comb length', n, 1, MAX_NODES / 2);
  return fromPairs(2 * n, 2 * n - 1, (i) => (i < n - 1 ? [i, i + 1] : [i - (n - 1), i + 1]));
}

/** 0 -> 1 -> ... -> n-1 -> 0: n edges; cycle(1) is a single self-loop. */
export function cycle(n: number): Graph {
  checkInt('cycle length', n, 1, MAX_NODES);
  return fromPairs(n, n, (i) => [i, (i + 1) % n]);
}

/** A w x h grid, node (x, y) = y * w + x, with edges to the right and downward neighbours (a DAG). */
export function grid(w: number, h: number): Graph {
  checkInt('grid width', w, 1, MAX_NODES);
  checkInt('grid height', h, 1, MAX_NODES);
  if (w * h > MAX_NODES) throw new VixenError({ severity: 'error', message: `grid ${w}x${h} has more than ${MAX_NODES} nodes` });
  const pairs: [number, number][] = [];
  for (let y = 0; y < h; y++) {
    for (let x = 0; x < w; x++) {
      const v = y * w + x;
      if (x + 1 < w) pairs.push([v, v + 1]);
      if (y + 1 < h) pairs.push([v, v + w]);
    }
  }
  return fromPairs(w * h, pairs.length, (i) => pairs[i]!);
}

/**
 * Complete binary tree with `depth` levels below the root (depth 0 is a single node): 2^(depth+1) - 1 nodes,
 * heap numbered (node i has children 2i+1 and 2i+2), edges from parent to child.
 */
export function binaryTree(depth: number): Graph {
  checkInt('tree depth', depth, 0, 25);
  const nodes = 2 ** (depth + 1) - 1;
  // Edge i reaches child i + 1, whose parent is i >> 1.
  return fromPairs(nodes, nodes - 1, (i) => [i >> 1, i + 1]);
}

export interface UniformOptions extends EdgeFilter {
  seed?: number;
}

/** n nodes and exactly m edges drawn uniformly (Erdős–Rényi G(n, m)); by default no self-loops or duplicates. */
export function uniformRandom(n: number, m: number, options: UniformOptions = {}): Graph {
  checkInt('node count', n, 0, MAX_NODES);
  checkInt('edge count', m, 0, 2 ** 30);
  return randomPairs(new Rng(options.seed ?? 1), 'uniform random graph', n, m, n, 0, n, options);
}

export interface RmatOptions extends EdgeFilter {
  /** 2^scale nodes. */
  scale: number;
  /** edgeFactor * 2^scale edges (rounded) are drawn, before self-loops and duplicates are dropped; below 1 for
   * sparse graphs whose closures stay small. */
  edgeFactor: number;
  /** Quadrant probabilities; the defaults are Graph500's 0.57, 0.19, 0.19 and d = 1 - a - b - c. */
  a?: number;
  b?: number;
  c?: number;
  d?: number;
  seed?: number;
  /**
   * Edges drawn from one random stream (default RMAT_PART_EDGES): part p of the edges has a stream of its own, seeded
   * from `seed` and p (part 0 from `seed` alone), so the parts can be drawn on worker threads and the graph does not
   * depend on how many there are.
   */
  partEdges?: number;
}

/** Edges of one R-MAT random stream: small graphs are one part. */
export const RMAT_PART_EDGES = 1 << 21;

/** What one part of an R-MAT graph needs: structured-cloned to a worker. */
interface RmatPart {
  scale: number;
  a: number;
  b: number;
  c: number;
  seed: number;
  count: number;
}

/** The checked parameters of an R-MAT graph and its parts. */
function rmatParts(options: RmatOptions): { nodes: number; parts: RmatPart[] } {
  const { scale, edgeFactor } = options;
  checkInt('R-MAT scale', scale, 0, 26);
  if (!(edgeFactor >= 0 && edgeFactor <= 1024)) {
    throw new VixenError({ severity: 'error', message: `R-MAT edge factor must be a number in [0, 1024], got ${edgeFactor}` });
  }
  const a = options.a ?? 0.57;
  const b = options.b ?? 0.19;
  const c = options.c ?? 0.19;
  const d = options.d ?? 1 - a - b - c;
  for (const [name, p] of Object.entries({ a, b, c })) {
    if (!(p >= 0 && p <= 1)) throw new VixenError({ severity: 'error', message: `R-MAT probability ${name} must be in [0, 1], got ${p}` });
  }
  if (!(d >= -1e-9 && d <= 1)) {
    const why = options.d === undefined ? `a + b + c must be at most 1, got ${a + b + c}` : `probability d must be in [0, 1], got ${d}`;
    throw new VixenError({ severity: 'error', message: `R-MAT ${why}` });
  }
  if (Math.abs(a + b + c + d - 1) > 1e-9) {
    throw new VixenError({ severity: 'error', message: `R-MAT probabilities must sum to 1, got a+b+c+d = ${a + b + c + d}` });
  }
  const nodes = 2 ** scale;
  const m = Math.round(edgeFactor * nodes);
  if (m > 2 ** 28) throw new VixenError({ severity: 'error', message: `R-MAT: ${m} edges is too many to generate in memory` });
  const size = options.partEdges ?? RMAT_PART_EDGES;
  checkInt('R-MAT part size', size, 1, 2 ** 28);
  const seed = options.seed ?? 1;
  const parts: RmatPart[] = [];
  for (let first = 0, p = 0; first < m; first += size, p++) {
    parts.push({ scale, a, b, c, seed: (seed + Math.imul(p, 0x632be5ab)) >>> 0, count: Math.min(size, m - first) });
  }
  return { nodes, parts };
}

/** The edges of one part, as (src, dst) arrays. */
function rmatPart({ scale, a, b, c, seed, count }: RmatPart): { src: Int32Array; dst: Int32Array } {
  const nodes = 2 ** scale;
  const rng = new Rng(seed);
  const src = new Int32Array(count);
  const dst = new Int32Array(count);
  for (let i = 0; i < count; i++) {
    let s = 0;
    let t = 0;
    for (let bit = nodes >> 1; bit > 0; bit >>= 1) {
      const r = rng.nextFloat();
      if (r < a) continue;
      if (r < a + b) t |= bit;
      else if (r < a + b + c) s |= bit;
      else {
        s |= bit;
        t |= bit;
      }
    }
    src[i] = s;
    dst[i] = t;
  }
  return { src, dst };
}

/** One part of an R-MAT graph on a worker thread. */
export const rmatPartTask = defineTask('bench/rmat-part', import.meta.url, rmatPart);

function joinParts(nodes: number, parts: readonly { src: Int32Array; dst: Int32Array }[], options: EdgeFilter): Graph {
  if (parts.length === 1) return filterEdges({ nodes, ...parts[0]! }, options);
  const m = parts.reduce((n, p) => n + p.src.length, 0);
  const src = new Int32Array(m);
  const dst = new Int32Array(m);
  let at = 0;
  for (const p of parts) {
    src.set(p.src, at);
    dst.set(p.dst, at);
    at += p.src.length;
  }
  return filterEdges({ nodes, src, dst }, options);
}

/**
 * R-MAT / Kronecker graph (Chakrabarti et al. 2004, as in Graph500): each edge descends `scale` levels of the
 * adjacency matrix, choosing a quadrant with probabilities a (top left), b (top right), c, d. Skewed degrees,
 * small diameter. Dropping self-loops/duplicates (the default) leaves fewer than edgeFactor * 2^scale edges.
 */
export function rmat(options: RmatOptions): Graph {
  const { nodes, parts } = rmatParts(options);
  return joinParts(nodes, parts.map(rmatPart), options);
}

/** rmat's graph, its parts drawn and its edges sorted on the worker pool (benchmarks of 10^8 edges). */
export async function rmatInWorkers(options: RmatOptions): Promise<Graph> {
  const { nodes, parts } = rmatParts(options);
  const drawn = await runAllInWorkers(rmatPartTask, parts);
  return options.duplicates ? joinParts(nodes, drawn, options) : distinctEdgesInWorkers(nodes, drawn, options);
}
