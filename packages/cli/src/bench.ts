/** `vixen bench operators`: the operator benchmark of @vixen/runtime, as a table and optionally JSON. */
import { writeFileSync } from 'node:fs';
import { Command, Option } from 'commander';
import { z } from 'zod';
import {
  benchGraphs,
  benchOperators,
  defaultBenchSizes,
  formatBenchReport,
  formatGraphBenchReport,
  GRAPH_KINDS,
  GRAPH_WORKLOADS,
  openGpu,
} from '@vixen/runtime';
import { VixenError } from '@vixen/queryplan';

/** `A..B` (inclusive) or a comma-separated list of log2 sizes, each in 1..31. */
const sizesSchema = z
  .string()
  .regex(/^\s*\d+\s*(\.\.\s*\d+\s*|(,\s*\d+\s*)*)$/, 'expected A..B or a comma-separated list, e.g. 20..26')
  .transform((s) => {
    const range = s.split('..').map((x) => Number(x.trim()));
    if (range.length === 2) return Array.from({ length: Math.max(0, range[1]! - range[0]! + 1) }, (_, k) => range[0]! + k);
    return s.split(',').map((x) => Number(x.trim()));
  })
  .refine((xs) => xs.length > 0 && xs.every((x) => x >= 1 && x <= 31), 'sizes must be a non-empty range within 1..31');

const benchOptionsSchema = z.object({
  sizes: sizesSchema.optional(),
  json: z.string().min(1).optional(),
  runs: z.coerce.number().int().min(1).default(5),
  warmup: z.coerce.number().int().min(0).default(2),
  backend: z.enum(['auto', 'vulkan', 'opengles']).default('auto'),
});

const count = z.coerce.number().int().min(1).optional();

const graphBenchOptionsSchema = z.object({
  workload: z
    .string()
    .default('tc,reach,sg,cc')
    .transform((s) => s.split(',').map((w) => w.trim()))
    .pipe(z.array(z.enum(GRAPH_WORKLOADS)).min(1)),
  graph: z.enum(GRAPH_KINDS).default('rmat'),
  scale: z.coerce.number().int().min(1).max(26).default(10),
  edgeFactor: z.coerce.number().int().min(1).max(1024).default(4),
  seed: z.coerce.number().int().min(0).default(1),
  nodes: count,
  edges: count,
  width: count,
  height: count,
  depth: z.coerce.number().int().min(0).max(25).optional(),
  source: z.coerce.number().int().min(0).default(0),
  duckdb: z.boolean().default(true),
  maxIterations: count,
  programs: z.string().min(1).optional(),
  json: z.string().min(1).optional(),
  backend: z.enum(['auto', 'vulkan', 'opengles']).default('auto'),
});

/** Option errors name the flag as typed (`--edge-factor`). */
function optionError(error: z.ZodError): VixenError {
  const flag = (path: readonly PropertyKey[]): string => path.map(String).join('.').replace(/[A-Z]/g, (c) => `-${c.toLowerCase()}`);
  return new VixenError({ severity: 'error', message: error.issues.map((i) => `option --${flag(i.path)}: ${i.message}`).join('; ') });
}

/** The `bench` command with its `operators` and `graphs` sub-commands; `out` gets the table, `err` progress. */
export function benchCommand(out: (s: string) => void, err: (s: string) => void): Command {
  const bench = new Command('bench').description('benchmark the GPU operators');
  bench
    .command('operators')
    .description('time copy, mapFilter, sort, unique, mergeJoin and difference at sizes 2^A..2^B against copy bandwidth')
    .option('--sizes <range>', 'log2 row counts, A..B or a list (default 20..22 on a software adapter, 20..26 on a GPU)')
    .option('--json <file>', 'also write the report as JSON')
    .option('--runs <n>', 'timed runs per measurement (median reported)', '5')
    .option('--warmup <n>', 'untimed runs first', '2')
    .addOption(new Option('--backend <backend>', 'WebGPU backend').choices(['auto', 'vulkan', 'opengles']).default('auto'))
    .action(async (raw: unknown) => {
      const r = benchOptionsSchema.safeParse(raw);
      if (!r.success) {
        throw new VixenError({ severity: 'error', message: r.error.issues.map((i) => `option --${i.path.join('.')}: ${i.message}`).join('; ') });
      }
      const opts = r.data;
      const gpu = await openGpu({ backend: opts.backend });
      try {
        const sizes = opts.sizes ?? defaultBenchSizes(gpu);
        err(`adapter: ${gpu.adapterName}; sizes 2^${sizes.join(', 2^')}\n`);
        const report = await benchOperators(gpu, {
          sizes,
          runs: opts.runs,
          warmup: opts.warmup,
          onResult: (x) => err(`  ${x.operator} ${x.variant} 2^${x.log2n}: ${x.medianMs.toFixed(3)} ms\n`),
        });
        out(formatBenchReport(report) + '\n');
        if (opts.json !== undefined) {
          writeFileSync(opts.json, JSON.stringify(report, null, 2) + '\n');
          err(`wrote ${opts.json}\n`);
        }
      } finally {
        gpu.dispose();
      }
    });
  bench
    .command('graphs')
    .description('run the examples/graphs workloads on a generated graph; iterations, tuples, time, tuples/s and DuckDB on the same problem')
    .option('--workload <list>', `comma-separated workloads: ${GRAPH_WORKLOADS.join(', ')}`, 'tc,reach,sg,cc')
    .addOption(new Option('--graph <kind>', 'graph maker').choices([...GRAPH_KINDS]).default('rmat'))
    .option('--scale <n>', 'R-MAT: 2^n nodes', '10')
    .option('--edge-factor <n>', 'R-MAT: edges drawn per node (self-loops and duplicates are dropped)', '4')
    .option('--seed <n>', 'seed of the random graph makers', '1')
    .option('--nodes <n>', 'chain, cycle, uniform: node count')
    .option('--edges <n>', 'uniform: edge count')
    .option('--width <n>', 'grid width')
    .option('--height <n>', 'grid height')
    .option('--depth <n>', 'tree depth')
    .option('--source <n>', 'reach: source node', '0')
    .option('--no-duckdb', 'do not run DuckDB')
    .option('--max-iterations <n>', 'fail when a fixpoint loop needs more than n iterations')
    .option('--programs <dir>', 'directory of the workload programs (default: examples/graphs)')
    .option('--json <file>', 'also write the report as JSON')
    .addOption(new Option('--backend <backend>', 'WebGPU backend').choices(['auto', 'vulkan', 'opengles']).default('auto'))
    .action(async (raw: unknown) => {
      const r = graphBenchOptionsSchema.safeParse(raw);
      if (!r.success) throw optionError(r.error);
      const o = r.data;
      const defined = <T extends object>(x: T): T => Object.fromEntries(Object.entries(x).filter(([, v]) => v !== undefined)) as T;
      const graph = defined({
        kind: o.graph,
        scale: o.scale,
        edgeFactor: o.edgeFactor,
        seed: o.seed,
        nodes: o.nodes,
        edges: o.edges,
        width: o.width,
        height: o.height,
        depth: o.depth,
      });
      const gpu = await openGpu({ backend: o.backend });
      try {
        err(`adapter: ${gpu.adapterName}\n`);
        const report = await benchGraphs(gpu, {
          workloads: o.workload,
          graph,
          source: o.source,
          duckdb: o.duckdb,
          ...(o.maxIterations !== undefined ? { maxIterations: o.maxIterations } : {}),
          ...(o.programs !== undefined ? { programsDir: o.programs } : {}),
          onResult: (x) =>
            err(`  ${x.workload}: ${x.iterations} iterations, ${x.tuples} tuples, ${x.milliseconds.toFixed(1)} ms` +
              (x.duckdb ? `; DuckDB ${x.duckdb.milliseconds.toFixed(1)} ms` : '') + '\n'),
        });
        out(formatGraphBenchReport(report) + '\n');
        if (o.json !== undefined) {
          writeFileSync(o.json, JSON.stringify(report, null, 2) + '\n');
          err(`wrote ${o.json}\n`);
        }
        const disagree = report.results.filter((x) => x.duckdb && !x.duckdb.agrees).map((x) => x.workload);
        if (disagree.length > 0) throw new VixenError({ severity: 'error', message: `DuckDB derives different tuple counts for ${disagree.join(', ')}` });
      } finally {
        gpu.dispose();
      }
    });
  return bench;
}
