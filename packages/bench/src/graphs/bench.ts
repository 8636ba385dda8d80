/**
 * Graph benchmark: the recursive programs of examples/graphs on a generated graph, each timed on the device and
 * next to DuckDB evaluating the same fixpoint as a recursive CTE on the same edges: UNION (set semantics), or for
 * the lattice programs (cc, sssp, bfs, widest) `USING KEY` (DuckDB >= 1.3), whose rows replace those of their key
 * and whose recursive step reads the rows changed in the last iteration, as Vixen's semi-naive loop does.
 * Vixen's figure is the evaluation (nothing read back: the tuple counts are host-known row counts); DuckDB's is
 * the query alone, its tables loaded beforehand. Both must derive the same number of tuples and, for the lattice
 * programs, the same sum of values (read back from one more, untimed, run).
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { VixenError } from '@vixen/queryplan';
import { compile, DeviceFault, formatWork, type Program, type RunWork } from '@vixen/runtime';
import type { Gpu } from '@vixen/runtime/gpu';
import type { ColumnFacts } from '@vixen/io';
import { binaryTree, chain, comb, cycle, grid, rmatInWorkers, uniformRandom } from './generators.js';
import { edgeWeights, symmetricInWorkers, type Graph } from './graph.js';
import { componentsOnHost, distancesOnHost } from './host-answers.js';
import { alignedTable, GPU_WARM_MS, median, si, warmUp } from '../operators.js';
import type { ExecuteStats } from '@vixen/runtime';
import type { DuckDBIntegerVector } from '@duckdb/node-api';
import { openDuckDb, type DuckDb } from '../duckdb.js';
import { examplesDir } from '../examples-dir.js';

/** Rows a relation held at the end of the run. */
const rowsOf = (stats: ExecuteStats, relation: string): number => stats.relationRows.find((r) => r.name === relation)?.rows ?? 0;

export const GRAPH_WORKLOADS = ['tc', 'tc-nonlinear', 'reach', 'reach-avoid', 'sg', 'cc', 'sssp', 'bfs', 'widest', 'chain', 'comb-avoid', 'grid', 'count-up'] as const;
export type GraphWorkload = (typeof GRAPH_WORKLOADS)[number];

export const GRAPH_KINDS = ['rmat', 'chain', 'cycle', 'grid', 'tree', 'uniform'] as const;

/** The graph to run on; each kind reads the fields it needs. */
export interface GraphSpec {
  kind: (typeof GRAPH_KINDS)[number];
  /** rmat: 2^scale nodes, edgeFactor * 2^scale edges drawn. */
  scale?: number;
  edgeFactor?: number;
  /** rmat: quadrant probabilities (default Graph500's a = 0.57, b = c = 0.19). */
  a?: number;
  b?: number;
  c?: number;
  /** chain, cycle, uniform. */
  nodes?: number;
  /** uniform. */
  edges?: number;
  /** grid. */
  width?: number;
  height?: number;
  /** tree. */
  depth?: number;
  seed?: number;
}

interface WorkloadDef {
  file: string;
  /**
   * Facts of the program from the graph (`source` is the source of reach, sssp, bfs and widest; `countTo` count-up's
   * bound), as int32 columns: Program.run takes them without a row object per edge, DuckDB's appender in chunks.
   */
  facts(g: Graph, source: number, countTo: number): Record<string, Facts>;
  /**
   * The workload's own graph, made from the options instead of --graph (the loop workloads: many iterations of
   * small deltas), and its description.
   */
  graph?(o: GraphBenchOptions): { graph: Graph; description: string };
  /** Relations whose row counts are compared with DuckDB's, in the order the SQL returns their counts. */
  checked: string[];
  /** Relations whose last column's sum is compared with DuckDB's, returned by the SQL after the counts. */
  sums?: string[];
  /** One row: the count of each checked relation. Tables: edge(x, y) or edge(x, y, w) as `facts` gives, source(x), unless `tables` says. */
  sql: string;
  /** The SQL's tables and their columns, one per facts relation. */
  tables?: Record<string, string[]>;
  /** The program reads the graph made undirected. */
  undirected?: boolean;
  /** The checked figures (`checked`, then `<relation> sum` of `sums`) computed on the host from the same facts. */
  host?(g: Graph, source: number, facts: Record<string, Facts>): Record<string, number>;
}

const TC_SQL = `WITH RECURSIVE path(x, y) AS (
  SELECT x, y FROM edge
  UNION
  SELECT path.x, edge.y FROM path JOIN edge ON path.y = edge.x)
SELECT count(*) FROM path`;

const REACH_SQL = `WITH RECURSIVE reach(x) AS (
  SELECT x FROM source
  UNION
  SELECT edge.y FROM reach JOIN edge ON reach.x = edge.x)
SELECT count(*) FROM reach`;

const REACH_AVOID_SQL = `WITH RECURSIVE reach(x) AS (
  SELECT x FROM source
  UNION
  SELECT edge.y FROM reach JOIN edge ON reach.x = edge.x WHERE NOT EXISTS (SELECT 1 FROM blocked WHERE blocked.x = edge.y))
SELECT count(*) FROM reach`;

/** A relation's facts as int32 columns. */
type Facts = ColumnFacts & { columns: Int32Array[] };
const one = (v: number): Facts => ({ columns: [Int32Array.of(v)] });
const edges = (g: Graph): Facts => ({ columns: [g.src, g.dst] });
const weighted = (g: Graph): Facts => ({ columns: [g.src, g.dst, edgeWeights(g)] });
const reachFacts = (g: Graph, source: number): Record<string, Facts> => ({ edge: edges(g), source: one(source) });
/** reachFacts and the nodes `blocked` picks (the source never). */
const avoidFacts = (g: Graph, source: number, blocked: (node: number) => boolean): Record<string, Facts> => {
  const nodes = Array.from({ length: g.nodes }, (_, v) => v).filter((v) => v !== source && blocked(v));
  return { ...reachFacts(g, source), blocked: { columns: [Int32Array.from(nodes)] } };
};
const AVOID_TABLES = { edge: ['x', 'y'], source: ['x'], blocked: ['x'] };

/** Nodes of the `chain` workload's chain, and the `grid` workload's grid, unless given. */
export const LOOP_DEFAULTS = { chainNodes: 3000, gridWidth: 1000, gridHeight: 10, countTo: 1000 } as const;

const WORKLOADS: Record<GraphWorkload, WorkloadDef> = {
  tc: { file: 'tc.logic', facts: (g) => ({ edge: edges(g) }), checked: ['path'], sql: TC_SQL },
  // DuckDB allows one recursive reference: it runs the linear form, which has the same answer.
  'tc-nonlinear': { file: 'tc-nonlinear.logic', facts: (g) => ({ edge: edges(g) }), checked: ['path'], sql: TC_SQL },
  reach: { file: 'reach.logic', facts: reachFacts, checked: ['reach'], sql: REACH_SQL },
  // Reach along a chain from its first node: one iteration per node, each with a one-tuple delta.
  chain: {
    file: 'reach.logic',
    graph: (o) => {
      const n = o.chainNodes ?? LOOP_DEFAULTS.chainNodes;
      return { graph: chain(n), description: `chain of ${n} nodes` };
    },
    facts: (g) => reachFacts(g, 0),
    checked: ['reach'],
    sql: REACH_SQL,
  },
  // Reach avoiding every fourth node (negation inside the recursion).
  'reach-avoid': { file: 'reach-avoid.logic', facts: (g, source) => avoidFacts(g, source, (v) => v % 4 === 3), checked: ['reach'], tables: AVOID_TABLES, sql: REACH_AVOID_SQL },
  // Reach along a chain whose every node has a tooth, every other tooth blocked: one iteration per chain node, each
  // delta a chain node and a tooth, each probing the blocked teeth (a loop of small deltas with a negation).
  'comb-avoid': {
    file: 'reach-avoid.logic',
    graph: (o) => {
      const n = o.chainNodes ?? LOOP_DEFAULTS.chainNodes;
      return { graph: comb(n), description: `comb of ${n} teeth` };
    },
    facts: (g) => avoidFacts(g, 0, (v) => v >= g.nodes / 2 && v % 2 === 1),
    checked: ['reach'],
    tables: AVOID_TABLES,
    sql: REACH_AVOID_SQL,
  },
  // Reach over a long, narrow grid from its corner: width + height - 1 iterations, deltas of up to height nodes.
  grid: {
    file: 'reach.logic',
    graph: (o) => {
      const [w, h] = [o.gridWidth ?? LOOP_DEFAULTS.gridWidth, o.gridHeight ?? LOOP_DEFAULTS.gridHeight];
      return { graph: grid(w, h), description: `${w} x ${h} grid` };
    },
    facts: (g) => reachFacts(g, 0),
    checked: ['reach'],
    sql: REACH_SQL,
  },
  // Counting to a bound one tuple an iteration (two iterations a step); no graph. DuckDB allows one recursive
  // reference, so its CTE counts a alone (b is a without the start).
  'count-up': {
    file: 'count-up.logic',
    graph: (o) => ({ graph: chain(0), description: `counting to ${o.countTo ?? LOOP_DEFAULTS.countTo}` }),
    facts: (_g, _source, countTo) => ({ start: one(0), bound: one(countTo), c: one(1), d: one(1) }),
    checked: ['a', 'b'],
    tables: { start: ['x'], bound: ['n'], c: ['x'], d: ['x'] },
    sql: `WITH RECURSIVE a(x) AS (
  SELECT x FROM start
  UNION
  SELECT a.x + 1 FROM a JOIN bound ON a.x < bound.n WHERE EXISTS (SELECT 1 FROM c JOIN d ON c.x = d.x))
SELECT count(*), count(*) FILTER (WHERE x > (SELECT min(x) FROM start)) FROM a`,
  },
  sg: {
    file: 'sg.logic',
    facts: (g) => ({ edge: edges(g) }),
    checked: ['sg'],
    sql: `WITH RECURSIVE sg(x, y) AS (
  SELECT e1.y, e2.y FROM edge e1 JOIN edge e2 ON e1.x = e2.x WHERE e1.y <> e2.y
  UNION
  SELECT e1.y, e2.y FROM sg JOIN edge e1 ON e1.x = sg.x JOIN edge e2 ON e2.x = sg.y)
SELECT count(*) FROM sg`,
  },
  cc: {
    file: 'cc.logic',
    facts: (g) => ({ edge: edges(g) }),
    undirected: true,
    checked: ['component'],
    sums: ['component'],
    host: (g) => {
      const { rows, sum } = componentsOnHost(g);
      return { component: rows, 'component sum': sum };
    },
    sql: latticeSql('component', `SELECT x, x FROM (SELECT x FROM edge UNION SELECT y FROM edge)`, 'min', 'min(component.v)'),
  },
  sssp: {
    file: 'sssp.logic',
    facts: (g, source) => ({ edge: weighted(g), source: one(source) }),
    checked: ['dist'],
    sums: ['dist'],
    host: (g, source, facts) => {
      const { rows, sum } = distancesOnHost(g, source, facts.edge!.columns[2]);
      return { dist: rows, 'dist sum': sum };
    },
    sql: latticeSql('dist', 'SELECT x, 0 FROM source', 'min', 'min(dist.v + edge.w)'),
  },
  bfs: {
    file: 'bfs.logic',
    facts: (g, source) => ({ edge: edges(g), source: one(source) }),
    checked: ['level'],
    sums: ['level'],
    host: (g, source) => {
      const { rows, sum } = distancesOnHost(g, source);
      return { level: rows, 'level sum': sum };
    },
    sql: latticeSql('level', 'SELECT x, 0 FROM source', 'min', 'min(level.v + 1)'),
  },
  widest: {
    file: 'widest.logic',
    facts: (g, source) => ({ edge: weighted(g), source: one(source) }),
    checked: ['width'],
    sums: ['width'],
    sql: latticeSql('width', 'SELECT x, 2147483647 FROM source', 'max', 'max(least(width.v, edge.w))'),
  },
};

/**
 * A lattice program as a recursive CTE `name(x, v) USING KEY (x)`: each step offers, per node reached from the rows
 * changed in the last iteration, the best `value` over its in-edges, kept only where it beats the node's value so
 * far (`recurring.name`, the whole table; a node without one takes it); the row replaces the node's row.
 * Returns the table's row count and value sum.
 */
function latticeSql(name: string, init: string, kind: 'min' | 'max', value: string): string {
  const better = kind === 'min' ? '<' : '>';
  return `WITH RECURSIVE ${name}(x, v) USING KEY (x) AS (
  ${init}
  UNION
  (SELECT edge.y, ${value} FROM ${name} JOIN edge ON ${name}.x = edge.x
   LEFT JOIN recurring.${name} AS known ON known.x = edge.y
   GROUP BY edge.y, known.v
   HAVING known.v IS NULL OR ${value} ${better} known.v))
SELECT count(*), sum(v)::BIGINT FROM ${name}`;
}

export interface GraphBenchOptions {
  workloads: readonly GraphWorkload[];
  graph: GraphSpec;
  /** Directory of the workload programs (default: examples/graphs of this repository). */
  programsDir?: string;
  /** Source node of `reach` (default 0). */
  source?: number;
  /** Nodes of the `chain` workload's chain (LOOP_DEFAULTS otherwise). */
  chainNodes?: number;
  /** Width and height of the `grid` workload's grid. */
  gridWidth?: number;
  gridHeight?: number;
  /** The bound `count-up` counts to. */
  countTo?: number;
  /** Also time DuckDB (default true). */
  duckdb?: boolean;
  /** Seconds DuckDB's query may take: past them it is interrupted and reported as stopped (at least that long). */
  duckdbTimeout?: number;
  /** false: runs without loop control's batches (RunOptions.loopBatches), for comparison. */
  loopBatches?: boolean;
  /** false: runs without the small-loop kernel (RunOptions.smallLoops), for comparison. */
  smallLoops?: boolean;
  maxIterations?: number;
  /** Device memory budget of each run (RunOptions.maxDeviceMemory; default: the device's memory less a margin). */
  maxDeviceMemory?: number;
  /** Wall-clock limit of each run in seconds (RunOptions.timeout): a workload past it is stopped, the next runs. */
  timeout?: number;
  /** Timed runs of each workload on the device (the median is reported); default 1. DuckDB runs once. */
  runs?: number;
  /**
   * Untimed runs of each workload on its own facts first (default 1; on a GPU, repeated for at least GPU_WARM_MS):
   * the first run compiles the pipelines that only larger inputs use (radix sort passes, the small-loop kernel)
   * and grows the buffer pool.
   */
  warmup?: number;
  /** When given, one more run of each workload with a device profile after the timed ones, handed here. */
  onProfile?: (workload: GraphWorkload, stats: ExecuteStats, program: Program) => void;
  /** Called with the set-up's times once the graph is made (progress). */
  onSetup?: (setup: GraphBenchSetup) => void;
  /** Called with each result as it is measured (progress). */
  onResult?: (r: GraphBenchResult) => void;
  /** Called with each workload a user error stopped (progress). */
  onStopped?: (s: GraphBenchStopped) => void;
  /**
   * Opens a new device where a workload lost or failed the bench's (DeviceFault.failsDevice): the workloads after
   * run there (a device opened so is disposed at the end).
   */
  reopen?: () => Promise<Gpu>;
}

/** A workload that a run limit, the device memory budget or a device fault stopped: the bench goes on. */
export interface GraphBenchStopped {
  workload: GraphWorkload;
  /** The error's message (VixenError: never raw device text). */
  message: string;
}

export interface GraphBenchResult {
  workload: GraphWorkload;
  /** The graph it ran on (the workload's own, or --graph's). */
  graph: string;
  nodes: number;
  edges: number;
  /** Fixpoint iterations over all loops of the run. */
  iterations: number;
  /** Of those, the ones run inside the small-loop kernel (LoopStats.inKernel). */
  inKernel: number;
  /** Host round trips of the run (ExecuteStats.hostSyncs). */
  hostSyncs: number;
  /** Exit tests of the loops decided on the host (LoopStats.batches): batches of iterations. */
  batches: number;
  /** Compute dispatches of the loops per iteration. */
  dispatchesPerIteration: number;
  /** Evaluation time over the iterations: on `chain`, the per-iteration cost of a one-tuple delta. */
  microsecondsPerIteration: number;
  /** GPU buffers the run created (ExecuteStats.buffersCreated): pool misses. */
  buffersCreated: number;
  /**
   * Of the last timed run: its copies, clears, created bytes and readbacks (ExecuteStats.work), its evaluation time,
   * the part of it the host waited for the device and the part Dawn took handing its submissions over (where it
   * records their native commands): what the kernels' compute passes leave out.
   */
  lastRun: { work: RunWork; milliseconds: number; waitMilliseconds: number; submitMilliseconds: number; submissions: number };
  /** Rows of all derived (idb) relations at the end. */
  tuples: number;
  /** Row counts of the relations compared with DuckDB, and `<relation> sum`: a lattice relation's value sum. */
  checked: Record<string, number>;
  /**
   * Median over the timed runs of evaluation time: the run's time less loading its facts (checking, encoding,
   * uploading and sorting the edges), as DuckDB's time is its query's on tables loaded beforehand.
   */
  milliseconds: number;
  /** Evaluation milliseconds of each timed run. */
  runsMs: number[];
  /** Median of the rest of each run's wall time: the facts handed to Program.run made device relations. */
  loadMilliseconds: number;
  tuplesPerSecond: number;
  peakDeviceBytes: number;
  /** Bytes spilled to host memory to keep within the device memory budget (ExecuteStats.spilledBytes). */
  spilledBytes: number;
  /** Steps of kernels run in partitions to keep within it (ExecuteStats.partitions), and storage buffers' peak, scratch included. */
  partitionSteps: number;
  peakStorageBytes: number;
  /** Host time making the workload's facts columns from the graph (edge weights). */
  factsMilliseconds: number;
  /** The lattice workloads' figures computed on the host (host-answers.ts): a check that needs no DuckDB. */
  host?: {
    milliseconds: number;
    checked: Record<string, number>;
    /** Every figure equals Vixen's. */
    agrees: boolean;
  };
  duckdb?: {
    /** Its query's time; when `stopped`, the time limit it was stopped at (it would take at least this long). */
    milliseconds: number;
    /** The query passed duckdbTimeout and was interrupted: no answer to compare. */
    stopped: boolean;
    /** Host time loading its tables (not part of `milliseconds`). */
    loadMilliseconds: number;
    checked: Record<string, number>;
    /** DuckDB's time over Vixen's (a lower bound when `stopped`). */
    ratio: number;
    /** Every checked relation has the same row count in both (false when stopped). */
    agrees: boolean;
  };
}

/** Host time of the set-up before any workload runs. */
export interface GraphBenchSetup {
  /** Making the graph (R-MAT: drawing the edges and dropping duplicates, on the worker pool). */
  graphMilliseconds: number;
  /** Making its symmetric view (for cc), or 0. */
  undirectedMilliseconds: number;
}

export interface GraphBenchReport {
  adapter: string;
  backend: string;
  software: boolean;
  date: string;
  graph: GraphSpec & { description: string; nodes: number; edges: number };
  setup: GraphBenchSetup;
  results: GraphBenchResult[];
  stopped: GraphBenchStopped[];
}

function need(spec: GraphSpec, field: keyof GraphSpec): number {
  const v = spec[field];
  if (typeof v !== 'number') throw new VixenError({ severity: 'error', message: `a ${spec.kind} graph needs ${field}` });
  return v;
}

/** The graph a spec describes, and a short description of it. */
export async function makeGraph(spec: GraphSpec): Promise<{ graph: Graph; description: string }> {
  const seed = spec.seed ?? 1;
  switch (spec.kind) {
    case 'rmat': {
      const [scale, edgeFactor] = [need(spec, 'scale'), need(spec, 'edgeFactor')];
      const { a, b, c } = spec;
      const skew = a === undefined && b === undefined && c === undefined ? '' : `, a ${a ?? 0.57}, b ${b ?? 0.19}, c ${c ?? 0.19}`;
      return {
        graph: await rmatInWorkers({ scale, edgeFactor, seed, ...(a !== undefined ? { a } : {}), ...(b !== undefined ? { b } : {}), ...(c !== undefined ? { c } : {}) }),
        description: `R-MAT scale ${scale}, edge factor ${edgeFactor}${skew}, seed ${seed}`,
      };
    }
    case 'chain':
      return { graph: chain(need(spec, 'nodes')), description: `chain of ${spec.nodes} nodes` };
    case 'cycle':
      return { graph: cycle(need(spec, 'nodes')), description: `cycle of ${spec.nodes} nodes` };
    case 'grid':
      return { graph: grid(need(spec, 'width'), need(spec, 'height')), description: `${spec.width} x ${spec.height} grid` };
    case 'tree':
      return { graph: binaryTree(need(spec, 'depth')), description: `binary tree of depth ${spec.depth}` };
    case 'uniform': {
      const [nodes, edges] = [need(spec, 'nodes'), need(spec, 'edges')];
      return { graph: uniformRandom(nodes, edges, { seed }), description: `uniform random graph, ${nodes} nodes, ${edges} edges, seed ${seed}` };
    }
  }
}

/** Rows a DuckDB data chunk holds by default (STANDARD_VECTOR_SIZE). */
const CHUNK_ROWS = 2048;

/**
 * `name(columns...)` as an INTEGER table, appended a data chunk at a time (10^8 rows appended value by value took
 * minutes).
 */
async function loadTable({ connection: db, api }: DuckDb, name: string, columns: string[], data: readonly Int32Array[]): Promise<void> {
  await db.run(`CREATE OR REPLACE TABLE ${name}(${columns.map((c) => `${c} INTEGER`).join(', ')})`);
  const appender = await db.createAppender(name);
  const chunk = api.DuckDBDataChunk.create(columns.map(() => api.INTEGER), CHUNK_ROWS);
  const rows = data[0]?.length ?? 0;
  for (let first = 0; first < rows; first += CHUNK_ROWS) {
    chunk.rowCount = Math.min(CHUNK_ROWS, rows - first);
    data.forEach((column, c) => {
      const vector = chunk.getColumnVector(c) as DuckDBIntegerVector;
      for (let i = 0; i < chunk.rowCount; i++) vector.setItem(i, column[first + i]!);
      vector.flush();
    });
    appender.appendDataChunk(chunk);
  }
  appender.closeSync();
}

interface DuckDbRun {
  loadMilliseconds: number;
  milliseconds: number;
  /** Undefined when the query was stopped at the time limit. */
  counts?: number[];
}

async function runDuckDb(duck: DuckDb, def: WorkloadDef, facts: Record<string, Facts>, timeout: number | undefined): Promise<DuckDbRun> {
  const t = performance.now();
  const tables = def.tables ?? { edge: ['x', 'y', 'w'].slice(0, facts.edge?.columns.length ?? 2), source: ['x'] };
  for (const [name, columns] of Object.entries(tables)) await loadTable(duck, name, columns, facts[name]?.columns ?? columns.map(() => new Int32Array(0)));
  const loadMilliseconds = performance.now() - t;
  const db = duck.connection;
  // An interrupt before the query starts running is lost: past the limit, interrupt again until it ends, often
  // enough that a query of a few tens of milliseconds on a busy machine cannot slip between two tries.
  let again: ReturnType<typeof setInterval> | undefined;
  const stop = (): void => {
    db.interrupt();
    again ??= setInterval(() => db.interrupt(), 2);
  };
  const timer = timeout === undefined ? undefined : setTimeout(stop, timeout * 1000);
  const t0 = performance.now();
  try {
    const reader = await db.runAndReadAll(def.sql);
    return { loadMilliseconds, milliseconds: performance.now() - t0, counts: reader.getRows()[0]!.map((v) => Number(v)) };
  } catch (e) {
    if (again === undefined || !String(e).includes('Interrupted')) throw e;
    return { loadMilliseconds, milliseconds: performance.now() - t0 };
  } finally {
    clearTimeout(timer);
    clearInterval(again);
  }
}

function load(dir: string, def: WorkloadDef): Program {
  const filename = join(dir, def.file);
  let text: string;
  try {
    text = readFileSync(filename, 'utf8');
  } catch {
    throw new VixenError({ severity: 'error', message: `cannot read workload program ${filename} (see --programs)` });
  }
  return compile(text, { filename });
}

export async function benchGraphs(first: Gpu, options: GraphBenchOptions): Promise<GraphBenchReport> {
  let t = performance.now();
  const { graph: directed, description } = await makeGraph(options.graph);
  const graphMilliseconds = performance.now() - t;
  t = performance.now();
  const undirected = options.workloads.some((w) => WORKLOADS[w].undirected) ? await symmetricInWorkers(directed) : directed;
  const setup = { graphMilliseconds, undirectedMilliseconds: options.workloads.some((w) => WORKLOADS[w].undirected) ? performance.now() - t : 0 };
  options.onSetup?.(setup);
  const countTo = options.countTo ?? LOOP_DEFAULTS.countTo;
  const source = options.source ?? 0;
  const dir = options.programsDir ?? examplesDir('graphs');
  const duck = options.duckdb === false ? undefined : await openDuckDb('run without DuckDB (--no-duckdb)');
  const results: GraphBenchResult[] = [];
  const stopped: GraphBenchStopped[] = [];
  /** A device opened in place of a failed one (options.reopen). */
  let opened: Gpu | undefined;
  try {
    for (const workload of options.workloads) {
      const gpu = opened ?? first;
      const def = WORKLOADS[workload];
      const own = def.graph?.(options);
      const g = own?.graph ?? (def.undirected ? undirected : directed);
      const program = load(dir, def);
      const factsStart = performance.now();
      const facts = def.facts(g, source, countTo);
      const factsMilliseconds = performance.now() - factsStart;
      const run = {
        gpu,
        outputs: [],
        ...(options.maxIterations !== undefined ? { maxIterations: options.maxIterations } : {}),
        ...(options.maxDeviceMemory !== undefined ? { maxDeviceMemory: options.maxDeviceMemory } : {}),
        ...(options.timeout !== undefined ? { timeout: options.timeout } : {}),
        ...(options.loopBatches === false ? { loopBatches: false } : {}),
        ...(options.smallLoops === false ? { smallLoops: false } : {}),
      };
      const runsMs: number[] = [];
      const loadMs: number[] = [];
      let stats: ExecuteStats | undefined;
      try {
        // A tiny graph compiled too few: R-MAT scale 18 reach then compiled 10 more pipelines in its timed run.
        await warmUp(options.warmup ?? 1, gpu.cpuAdapter ? 0 : GPU_WARM_MS, async () => (await program.run({ ...run, facts })).stats.milliseconds);
        for (let k = 0; k < (options.runs ?? 1); k++) {
          const t0 = performance.now();
          stats = (await program.run({ ...run, facts })).stats;
          const wall = performance.now() - t0;
          const evaluation = stats.milliseconds - stats.loadMilliseconds;
          runsMs.push(evaluation);
          loadMs.push(wall - evaluation);
        }
      } catch (e) {
        // A workload past the device's memory (or a limit) is a result of the bench, not the end of it.
        if (!(e instanceof VixenError)) throw e;
        const s = { workload, message: e.message };
        stopped.push(s);
        options.onStopped?.(s);
        if (e instanceof DeviceFault && e.failsDevice && options.reopen) {
          opened?.dispose();
          opened = await options.reopen();
        }
        continue;
      }
      if (stats === undefined) throw new Error('benchGraphs: runs must be >= 1');
      const milliseconds = median(runsMs);
      if (options.onProfile) options.onProfile(workload, (await program.run({ ...run, facts, profile: true })).stats, program);
      const derived = program.relations.filter((r) => r.kind === 'idb');
      const tuples = derived.reduce((n, r) => n + rowsOf(stats, r.name), 0);
      const checked = Object.fromEntries(def.checked.map((r) => [r, rowsOf(stats, r)]));
      if ((duck || def.host) && def.sums) {
        const answers = (await program.run({ ...run, facts, outputs: def.sums })).tables;
        for (const r of def.sums) {
          let sum = 0;
          for (const row of answers.get(r)!) sum += row.at(-1) as number;
          checked[`${r} sum`] = sum;
        }
      }
      const iterations = stats.loops.reduce((n, l) => n + l.iterations, 0);
      const result: GraphBenchResult = {
        workload,
        graph: own?.description ?? description,
        nodes: g.nodes,
        edges: g.src.length,
        iterations,
        inKernel: stats.loops.reduce((n, l) => n + l.inKernel, 0),
        hostSyncs: stats.hostSyncs,
        batches: stats.loops.reduce((n, l) => n + l.batches, 0),
        dispatchesPerIteration: iterations > 0 ? stats.loops.reduce((n, l) => n + l.dispatches, 0) / iterations : 0,
        microsecondsPerIteration: iterations > 0 ? (milliseconds * 1000) / iterations : 0,
        buffersCreated: stats.buffersCreated,
        lastRun: { work: stats.work, milliseconds: runsMs.at(-1)!, waitMilliseconds: stats.waitMilliseconds, submitMilliseconds: stats.submitMilliseconds, submissions: stats.submissions },
        tuples,
        checked,
        milliseconds,
        runsMs,
        loadMilliseconds: median(loadMs),
        tuplesPerSecond: tuples / (milliseconds / 1000),
        peakDeviceBytes: stats.peakDeviceBytes,
        spilledBytes: stats.spilledBytes,
        partitionSteps: stats.partitions,
        peakStorageBytes: stats.peakStorageBytes,
        factsMilliseconds,
      };
      if (def.host) {
        const t0 = performance.now();
        const theirs = def.host(g, source, facts);
        result.host = { milliseconds: performance.now() - t0, checked: theirs, agrees: Object.entries(theirs).every(([r, n]) => checked[r] === n) };
      }
      if (duck) {
        const d = await runDuckDb(duck, def, facts, options.duckdbTimeout);
        const compared = [...def.checked, ...(def.sums ?? []).map((r) => `${r} sum`)];
        const theirs = d.counts ? Object.fromEntries(compared.map((r, i) => [r, d.counts![i]!])) : {};
        result.duckdb = {
          milliseconds: d.milliseconds,
          stopped: d.counts === undefined,
          loadMilliseconds: d.loadMilliseconds,
          checked: theirs,
          ratio: d.milliseconds / milliseconds,
          agrees: d.counts !== undefined && compared.every((r) => theirs[r] === checked[r]),
        };
      }
      options.onResult?.(result);
      results.push(result);
    }
  } finally {
    duck?.close();
    opened?.dispose();
  }
  return {
    adapter: first.adapterName,
    backend: first.backend,
    software: first.software,
    date: new Date().toISOString(),
    graph: { ...options.graph, description, nodes: directed.nodes, edges: directed.src.length },
    setup,
    results,
    stopped,
  };
}

/** The report as an aligned text table, one row per workload. */
export function formatGraphBenchReport(report: GraphBenchReport): string {
  const head = ['workload', 'graph', 'iterations', 'in-kernel', 'batches', 'us/iter', 'dispatches/iter', 'tuples', 'ms', 'load ms', 'tuples/s', 'host syncs', 'peak MiB', 'with scratch MiB', 'spilled MiB', 'partition steps', 'DuckDB ms', 'DuckDB/Vixen', 'same answer', 'DuckDB load ms', 'host check'];
  const rows = report.results.map((r) => [
    r.workload,
    r.graph,
    String(r.iterations),
    String(r.inKernel),
    String(r.batches),
    r.microsecondsPerIteration.toFixed(1),
    r.dispatchesPerIteration.toFixed(1),
    String(r.tuples),
    r.milliseconds.toFixed(1),
    r.loadMilliseconds.toFixed(1),
    si(r.tuplesPerSecond),
    String(r.hostSyncs),
    (r.peakDeviceBytes / 2 ** 20).toFixed(1),
    (r.peakStorageBytes / 2 ** 20).toFixed(1),
    (r.spilledBytes / 2 ** 20).toFixed(1),
    String(r.partitionSteps),
    r.duckdb ? `${r.duckdb.stopped ? '>= ' : ''}${r.duckdb.milliseconds.toFixed(1)}` : '-',
    r.duckdb ? `${r.duckdb.stopped ? '>= ' : ''}${r.duckdb.ratio.toFixed(2)}x` : '-',
    r.duckdb ? (r.duckdb.stopped ? 'stopped' : r.duckdb.agrees ? 'yes' : `NO (${JSON.stringify(r.duckdb.checked)} vs ${JSON.stringify(r.checked)})`) : '-',
    r.duckdb ? r.duckdb.loadMilliseconds.toFixed(1) : '-',
    r.host ? (r.host.agrees ? 'yes' : `NO (${JSON.stringify(r.host.checked)} vs ${JSON.stringify(r.checked)})`) : '-',
  ]);
  const chainRun = report.results.find((r) => r.workload === 'chain');
  return [
    `adapter: ${report.adapter}; graph: ${report.graph.description} (${report.graph.nodes} nodes, ${report.graph.edges} edges)`,
    `set-up (host): graph ${(report.setup.graphMilliseconds / 1000).toFixed(2)} s, symmetric view ${(report.setup.undirectedMilliseconds / 1000).toFixed(2)} s, facts columns ${(report.results.reduce((n, r) => n + r.factsMilliseconds, 0) / 1000).toFixed(2)} s`,
    'ms: evaluation on the device (median of the runs after the warm-up); load ms: the edges handed to the run made device relations; DuckDB ms: its query on tables loaded beforehand (>=: stopped at --duckdb-timeout)',
    'us/iter: evaluation time over the fixpoint iterations; batches: loop exit tests decided on the host; host check: the same figures by union-find or Dial on the host',
    ...alignedTable(head, rows, 2),
    ...report.results.map(
      (r) =>
        `${r.workload}, last timed run: ${r.lastRun.milliseconds.toFixed(1)} ms, ${r.lastRun.waitMilliseconds.toFixed(1)} of them waiting for the device, ` +
        `${r.lastRun.submitMilliseconds.toFixed(1)} in Dawn's ${r.lastRun.submissions} submissions; ` +
        `device work outside compute passes: ${formatWork({ work: r.lastRun.work, buffersCreated: r.buffersCreated, hostSyncs: r.hostSyncs })}`,
    ),
    ...report.stopped.map((x) => `stopped: ${x.workload}: ${x.message}`),
    ...(chainRun ? [`per-iteration cost of a one-tuple delta: ${chainRun.microsecondsPerIteration.toFixed(1)} us (reach along a ${chainRun.graph})`] : []),
  ].join('\n');
}
