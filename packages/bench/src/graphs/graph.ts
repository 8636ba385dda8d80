/** The edge-list form every graph maker returns, and the few operations shared by the makers. */
import { VixenError } from '@vixen/queryplan';
import type { Rng } from './prng.js';
import { defineTask, runAllInWorkers, workerCount } from '@vixen/io';

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

/** The weight (`edgeWeight`) of each edge, in edge order. */
export function edgeWeights(g: Graph, maxWeight?: number): Int32Array {
  const w = new Int32Array(g.src.length);
  for (let i = 0; i < w.length; i++) w[i] = edgeWeight(g.src[i]!, g.dst[i]!, maxWeight);
  return w;
}

/** Rows (x, y, weight) of the graph's edges, weights from `edgeWeight`. */
export function weightedEdgeRows(g: Graph, maxWeight?: number): [number, number, number][] {
  const w = edgeWeights(g, maxWeight);
  const rows: [number, number, number][] = new Array(g.src.length);
  for (let i = 0; i < g.src.length; i++) rows[i] = [g.src[i]!, g.dst[i]!, w[i]!];
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

/** symmetric's graph, sorted on the worker pool (graphs of 10^8 edges). */
export const symmetricInWorkers = (g: Graph): Promise<Graph> => distinctEdgesInWorkers(g.nodes, [g], { both: true, selfLoops: true });

/** Removes self-loops and/or duplicates as asked; dropping duplicates sorts the edges by (src, dst). */
export function filterEdges(g: Graph, filter: EdgeFilter): Graph {
  const keepLoops = filter.selfLoops ?? false;
  if (filter.duplicates ?? false) {
    if (keepLoops) return g;
    const keep: number[] = [];
    for (let i = 0; i < g.src.length; i++) if (g.src[i] !== g.dst[i]) keep.push(i);
    return { nodes: g.nodes, src: Int32Array.from(keep, (i) => g.src[i]!), dst: Int32Array.from(keep, (i) => g.dst[i]!) };
  }
  const [one] = bucketEdges(g.nodes, [g], { selfLoops: keepLoops }, 1);
  return { nodes: g.nodes, ...sortDistinctEdges(one!) };
}

/** Edges without a node count: a piece of a graph, or a bucket of one. */
export interface EdgeList {
  src: Int32Array;
  dst: Int32Array;
}

/**
 * The distinct edges of `pieces` (each edge also reversed when `both`), sorted by (src, dst), self-loops dropped
 * unless `selfLoops`: the edges are split into ranges of src of about equal edge counts (R-MAT's low node ids have
 * most edges), and each range is sorted on a worker, so the ranges put back in order are sorted.
 */
export async function distinctEdgesInWorkers(
  nodes: number,
  pieces: readonly EdgeList[],
  options: { both?: boolean; selfLoops?: boolean; /** Edges a bucket holds at least (default 2^20; tests). */ bucketEdges?: number },
): Promise<Graph> {
  const total = pieces.reduce((n, p) => n + p.src.length, 0) * (options.both ? 2 : 1);
  const buckets = Math.max(1, Math.min(4 * workerCount(), Math.ceil(total / (options.bucketEdges ?? 2 ** 20))));
  const sorted = await runAllInWorkers(sortDistinctEdgesTask, bucketEdges(nodes, pieces, options, buckets));
  const m = sorted.reduce((n, b) => n + b.src.length, 0);
  const [src, dst] = [new Int32Array(m), new Int32Array(m)];
  let at = 0;
  for (const b of sorted) {
    src.set(b.src, at);
    dst.set(b.dst, at);
    at += b.src.length;
  }
  return { nodes, src, dst };
}

/**
 * The edges of `pieces` (and their reverses when `both`; no self-loops unless `selfLoops`) in `count` buckets by
 * ranges of src holding about equal numbers of edges: a histogram of src, then one pass that copies each edge to
 * its bucket.
 */
function bucketEdges(nodes: number, pieces: readonly EdgeList[], options: { both?: boolean; selfLoops?: boolean }, count: number): EdgeList[] {
  const keep = options.selfLoops ?? false;
  const both = options.both ?? false;
  // bucketOf[v]: the range node v falls in; sizes[b]: its edges. One bucket needs no histogram (nor its node array).
  const bucketOf = new Uint16Array(count > 1 ? nodes : 0);
  const sizes = new Float64Array(count);
  const degree = new Int32Array(count > 1 ? nodes : 0);
  let total = 0;
  for (const { src, dst } of pieces) {
    for (let i = 0; i < src.length; i++) {
      if (!keep && src[i] === dst[i]) continue;
      total += both ? 2 : 1;
      if (count === 1) continue;
      degree[src[i]!]!++;
      if (both) degree[dst[i]!]!++;
    }
  }
  if (count === 1) sizes[0] = total;
  for (let v = 0, b = 0, seen = 0; v < degree.length; v++) {
    while (b < count - 1 && seen >= ((b + 1) * total) / count) b++;
    bucketOf[v] = b;
    sizes[b]! += degree[v]!;
    seen += degree[v]!;
  }
  const out = Array.from(sizes, (n) => ({ src: new Int32Array(n), dst: new Int32Array(n) }));
  const fill = new Float64Array(count);
  const put = (s: number, d: number): void => {
    const b = count === 1 ? 0 : bucketOf[s]!;
    const at = fill[b]!++;
    out[b]!.src[at] = s;
    out[b]!.dst[at] = d;
  };
  for (const { src, dst } of pieces) {
    for (let i = 0; i < src.length; i++) {
      const [s, d] = [src[i]!, dst[i]!];
      if (!keep && s === d) continue;
      put(s, d);
      if (both) put(d, s);
    }
  }
  return out;
}

/**
 * A bucket's edges sorted by (src, dst), duplicates dropped: two stable counting-sort passes over the node ids
 * (dst, then src) where the ids span few more values than there are edges, else a sort of packed keys.
 */
function sortDistinctEdges({ src, dst }: EdgeList): EdgeList {
  const n = src.length;
  if (n === 0) return { src, dst };
  const range = (a: Int32Array): [number, number] => {
    let [lo, hi] = [a[0]!, a[0]!];
    for (let i = 1; i < n; i++) {
      if (a[i]! < lo) lo = a[i]!;
      else if (a[i]! > hi) hi = a[i]!;
    }
    return [lo, hi - lo + 1];
  };
  const [srcLo, srcSpan] = range(src);
  const [dstLo, dstSpan] = range(dst);
  let s: Int32Array;
  let d: Int32Array;
  if (Math.max(srcSpan, dstSpan) <= 4 * n + 1024) {
    // One stable pass by `key`, carrying `other` along.
    const pass = (key: Int32Array, lo: number, span: number, other: Int32Array): [Int32Array, Int32Array] => {
      const start = new Int32Array(span + 1);
      for (let i = 0; i < n; i++) start[key[i]! - lo + 1]!++;
      for (let v = 0; v < span; v++) start[v + 1]! += start[v]!;
      const [k, o] = [new Int32Array(n), new Int32Array(n)];
      for (let i = 0; i < n; i++) {
        const at = start[key[i]! - lo]!++;
        k[at] = key[i]!;
        o[at] = other[i]!;
      }
      return [k, o];
    };
    const [byDst, carried] = pass(dst, dstLo, dstSpan, src);
    [s, d] = pass(carried, srcLo, srcSpan, byDst);
  } else {
    // (src - srcLo) * dstSpan + (dst - dstLo) < 2^53: node ids are below MAX_NODES.
    const keys = new Float64Array(n);
    for (let i = 0; i < n; i++) keys[i] = (src[i]! - srcLo) * dstSpan + (dst[i]! - dstLo);
    keys.sort();
    [s, d] = [new Int32Array(n), new Int32Array(n)];
    for (let i = 0; i < n; i++) {
      s[i] = Math.floor(keys[i]! / dstSpan) + srcLo;
      d[i] = (keys[i]! % dstSpan) + dstLo;
    }
  }
  let out = 0;
  for (let i = 0; i < n; i++) {
    if (out > 0 && s[i] === s[out - 1] && d[i] === d[out - 1]) continue;
    s[out] = s[i]!;
    d[out++] = d[i]!;
  }
  return { src: s.slice(0, out), dst: d.slice(0, out) };
}

/** sortDistinctEdges on a worker thread. */
export const sortDistinctEdgesTask = defineTask('bench/sort-distinct-edges', import.meta.url, sortDistinctEdges);

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
