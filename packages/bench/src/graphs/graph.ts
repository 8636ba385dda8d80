/** The edge-list form every graph maker returns, and the few operations shared by the makers. */
import { VixenError } from '@vixen/queryplan';
import type { Rng } from './prng.js';

/** A directed graph on nodes 0..nodes-1; edge i goes from src[i] to dst[i]. */
export interface Graph {
  nodes: number;
  src: Int32Array;
  dst: Int32Array;
}

/** What to do with self-loops and repeated edges. Dropping duplicates leaves edges sorted by (src, dst). */
export interface EdgeFilter {
  /** Keep edges x -> x (default false). */
  selfLoops?: boolean;
  /** Keep repeated edges (default false). */
  duplicates?: boolean;
}

/** Rows for the `facts` option of `Program.run` / `Program.interpret` (int32 values are numbers). */
export function edgeRows(g: Graph): [number, number][] {
  const rows: [number, number][] = new Array(g.src.length);
  for (let i = 0; i < g.src.length; i++) rows[i] = [g.src[i]!, g.dst[i]!];
  return rows;
}

/**
 * The weight of edge x -> y: 1..maxWeight, a hash of the pair, so that a graph's edges keep their weights whatever
 * order they come in, and an edge and its reverse weigh the same (the symmetric view stays undirected).
 */
export function edgeWeight(x: number, y: number, maxWeight = 64): number {
  const [a, b] = x < y ? [x, y] : [y, x];
  let h = Math.imul(a, 0x9e3779b1) ^ Math.imul(b + 0x7f4a7c15, 0x85ebca6b);
  h = Math.imul(h ^ (h >>> 15), 0x2c1b3c6d);
  return 1 + ((h ^ (h >>> 13)) >>> 0) % maxWeight;
}

/** Rows (x, y, weight) of the graph's edges, weights from `edgeWeight`. */
export function weightedEdgeRows(g: Graph, maxWeight?: number): [number, number, number][] {
  const rows: [number, number, number][] = new Array(g.src.length);
  for (let i = 0; i < g.src.length; i++) rows[i] = [g.src[i]!, g.dst[i]!, edgeWeight(g.src[i]!, g.dst[i]!, maxWeight)];
  return rows;
}

/** The graph with every edge also present reversed (undirected view), duplicates removed. */
export function symmetric(g: Graph): Graph {
  const m = g.src.length;
  const src = new Int32Array(2 * m);
  const dst = new Int32Array(2 * m);
  src.set(g.src);
  src.set(g.dst, m);
  dst.set(g.dst);
  dst.set(g.src, m);
  return filterEdges({ nodes: g.nodes, src, dst }, { selfLoops: true, duplicates: false });
}

/** Removes self-loops and/or duplicates as asked; duplicates go by sorting packed (src, dst) keys. */
export function filterEdges(g: Graph, filter: EdgeFilter): Graph {
  const keepLoops = filter.selfLoops ?? false;
  if (filter.duplicates ?? false) {
    if (keepLoops) return g;
    const keep: number[] = [];
    for (let i = 0; i < g.src.length; i++) if (g.src[i] !== g.dst[i]) keep.push(i);
    return { nodes: g.nodes, src: Int32Array.from(keep, (i) => g.src[i]!), dst: Int32Array.from(keep, (i) => g.dst[i]!) };
  }
  // src * nodes + dst stays below 2^53 because node counts are capped at MAX_NODES.
  const keys = new Float64Array(g.src.length);
  let k = 0;
  for (let i = 0; i < g.src.length; i++) {
    if (keepLoops || g.src[i] !== g.dst[i]) keys[k++] = g.src[i]! * g.nodes + g.dst[i]!;
  }
  const sorted = keys.subarray(0, k).sort();
  const src = new Int32Array(k);
  const dst = new Int32Array(k);
  let out = 0;
  for (let i = 0; i < k; i++) {
    const key = sorted[i]!;
    if (i > 0 && key === sorted[i - 1]) continue;
    src[out] = Math.floor(key / g.nodes);
    dst[out] = key % g.nodes;
    out++;
  }
  return { nodes: g.nodes, src: src.slice(0, out), dst: dst.slice(0, out) };
}

/** Node ids are int32 and (src, dst) pairs must pack exactly into a double. */
export const MAX_NODES = 2 ** 26;

/** Rejects a bad generator argument as a user error. */
export function checkInt(name: string, value: number, min: number, max: number): void {
  if (!Number.isInteger(value) || value < min || value > max) {
    throw new VixenError({ severity: 'error', message: `${name} must be an integer in ${min}..${max}, got ${value}` });
  }
}

/**
 * `count` random pairs with sources in [0, srcCount) and targets in [dstBase, dstBase + dstCount), filtered as
 * asked. Without duplicates, draws again until `count` distinct pairs exist, after checking that many can.
 */
export function randomPairs(
  rng: Rng,
  what: string,
  nodes: number,
  count: number,
  srcCount: number,
  dstBase: number,
  dstCount: number,
  filter: EdgeFilter,
): Graph {
  const diagonal = Math.max(0, Math.min(srcCount, dstBase + dstCount) - dstBase);
  const room = srcCount * dstCount - (filter.selfLoops ? 0 : diagonal);
  if (count > (filter.duplicates && room > 0 ? Infinity : room)) {
    throw new VixenError({ severity: 'error', message: `${what}: cannot draw ${count} edges, at most ${room} distinct ones exist` });
  }
  let g: Graph = { nodes, src: new Int32Array(0), dst: new Int32Array(0) };
  while (g.src.length < count) {
    const have = g.src.length;
    const src = new Int32Array(count);
    const dst = new Int32Array(count);
    src.set(g.src);
    dst.set(g.dst);
    for (let i = have; i < count; i++) {
      src[i] = rng.nextInt(srcCount);
      dst[i] = dstBase + rng.nextInt(dstCount);
    }
    g = filterEdges({ nodes, src, dst }, filter);
  }
  return g;
}
