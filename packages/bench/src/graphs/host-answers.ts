/**
 * The lattice workloads' answers computed on the host from the same typed arrays, as the figures the bench compares
 * (row count and value sum): a check that needs no DuckDB run to finish (at R-MAT scale 22 its recursive CTE takes
 * minutes). Connected components by union-find, shortest paths and BFS levels by Dial's bucket queue (the bench's
 * weights are small positive integers).
 */
import type { Graph } from './graph.js';

/** cc.logic's `component`: per node of an edge, the least node id connected to it. */
export function componentsOnHost(g: Graph): { rows: number; sum: number } {
  const parent = Int32Array.from({ length: g.nodes }, (_, i) => i);
  const find = (v: number): number => {
    while (parent[v] !== v) {
      parent[v] = parent[parent[v]!]!;
      v = parent[v]!;
    }
    return v;
  };
  const seen = new Uint8Array(g.nodes);
  for (let i = 0; i < g.src.length; i++) {
    const [x, y] = [g.src[i]!, g.dst[i]!];
    seen[x] = seen[y] = 1;
    const [a, b] = [find(x), find(y)];
    // The smaller id is the root: each root is its component's least node.
    if (a < b) parent[b] = a;
    else if (b < a) parent[a] = b;
  }
  let rows = 0;
  let sum = 0;
  for (let v = 0; v < g.nodes; v++) {
    if (seen[v] === 0) continue;
    rows++;
    sum += find(v);
  }
  return { rows, sum };
}

/**
 * sssp.logic's `dist` (bfs.logic's `level` with every weight 1): the least total weight of a path from `source` to
 * each node it reaches, the source included at 0. Weights must be positive integers.
 */
export function distancesOnHost(g: Graph, source: number, weights?: Int32Array): { rows: number; sum: number } {
  // Edges by source (CSR), in one counting pass.
  const start = new Int32Array(g.nodes + 1);
  for (let i = 0; i < g.src.length; i++) start[g.src[i]! + 1]!++;
  for (let v = 0; v < g.nodes; v++) start[v + 1]! += start[v]!;
  const fill = start.slice(0, g.nodes);
  const [to, weight] = [new Int32Array(g.src.length), new Int32Array(g.src.length)];
  let most = 1;
  for (let i = 0; i < g.src.length; i++) {
    const at = fill[g.src[i]!]!++;
    to[at] = g.dst[i]!;
    weight[at] = weights?.[i] ?? 1;
    most = Math.max(most, weight[at]!);
  }
  const dist = new Float64Array(g.nodes).fill(Infinity);
  if (source < 0 || source >= g.nodes) return { rows: 0, sum: 0 };
  // Dial's algorithm: bucket d % (most + 1) holds the nodes at distance d; stale entries are skipped.
  const buckets: number[][] = Array.from({ length: most + 1 }, () => []);
  dist[source] = 0;
  buckets[0]!.push(source);
  let pending = 1;
  let rows = 0;
  let sum = 0;
  for (let d = 0; pending > 0; d++) {
    const bucket = buckets[d % (most + 1)]!;
    while (bucket.length > 0) {
      const v = bucket.pop()!;
      pending--;
      if (dist[v] !== d) continue;
      rows++;
      sum += d;
      for (let e = start[v]!; e < start[v + 1]!; e++) {
        const u = to[e]!;
        const nd = d + weight[e]!;
        if (nd < dist[u]!) {
          dist[u] = nd;
          buckets[nd % (most + 1)]!.push(u);
          pending++;
        }
      }
    }
  }
  return { rows, sum };
}
