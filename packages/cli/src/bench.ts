/** `vixen bench operators`: the operator benchmark of @vixen/runtime, as a table and optionally JSON. */
import { existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Command, Option } from 'commander';
import { z } from 'zod';
import { compilerPasses, openGpu, parseByteSize, type Gpu, type StoreReadPlan } from '@vixen/runtime';
import { BENCH_OPERATORS, benchCompile, benchEndToEnd, benchGraphs, benchLoad, compileSsbQuery, compileTpchQuery, END_TO_END_FORMATS, formatEndToEndReport, formatLoadReport, ssbQuerySql, ssbSchema, tpchQuerySql, tpchSchema, type EndToEndQuery, benchOperators, benchSsb, benchTpch, dbgenParallel, defaultBenchSizes, examplesDir, formatBenchReport, formatCompileReport, formatGraphBenchReport, formatDevicePeak, formatMemoryAfterQuery, formatSlowRunCauses, formatSsbReport, formatTimedRuns, formatTpchReport, GRAPH_KINDS, GRAPH_WORKLOADS, LOOP_DEFAULTS, SSB_QUERIES, ssbgenParallel, TPCH_QUERIES, type TblBenchOptions } from '@vixen/bench';
import { checkPassOptions, VixenError, type RelationDecl } from '@vixen/queryplan';
import { BENCH_DESCRIPTION, PARSE_MODES, parseOption, parseOptions, writeJsonReport } from './options.js';
import { formatProfile } from './report.js';

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

const listSchema = z.string().transform((s) => s.split(',').map((x) => x.trim()).filter((x) => x.length > 0));

/** A store read plan of --store-reads: `SIZExN`, bytes per read (e.g. 16MiB) and reads in flight. */
function storeReadPlan(text: string): StoreReadPlan {
  const m = /^(.+)x(\d+)$/.exec(text);
  if (!m || Number(m[2]) < 1) throw new VixenError({ severity: 'error', message: `option --store-reads: expected bytes per read x reads in flight, e.g. 16MiBx8, got ${text}` });
  return { pieceBytes: parseByteSize(m[1]!, 'option --store-reads'), inFlight: Number(m[2]) };
}

const benchOptionsSchema = z.object({
  sizes: sizesSchema.optional(),
  operators: listSchema
    .pipe(z.array(z.enum(BENCH_OPERATORS)).min(1))
    .optional(),
  selectivities: listSchema
    .transform((xs) => xs.map(Number))
    .pipe(z.array(z.number().gt(0).max(1)).min(1))
    .optional(),
  groups: listSchema
    .transform((xs) => xs.map(Number))
    .pipe(z.array(z.number().int().min(1).max(2 ** 24)).min(1))
    .optional(),
  json: z.string().min(1).optional(),
  runs: z.coerce.number().int().min(1).default(5),
  warmup: z.coerce.number().int().min(0).default(2),
  backend: z.enum(['auto', 'vulkan', 'opengles']).default('auto'),
  subgroups: z.boolean().default(true),
});

/** Options every `.tbl` query bench (tpch, ssb) takes; each adds its own `--queries` list. */
const tblBenchOptions = {
  sf: z.coerce.number().positive(),
  data: z.string().min(1).optional(),
  queriesDir: z.string().min(1).optional(),
  json: z.string().min(1).optional(),
  runs: z.coerce.number().int().min(1).default(3),
  warmup: z.coerce.number().int().min(0).default(1),
  seed: z.coerce.number().int().default(1),
  maxResidentMemory: z.string().min(1).optional(),
  maxDeviceMemory: z.string().min(1).optional(),
  backend: z.enum(['auto', 'vulkan', 'opengles']).default('auto'),
  profile: z.boolean().default(false),
  endToEnd: z.boolean().default(false),
  formats: listSchema.pipe(z.array(z.enum(END_TO_END_FORMATS, { error: `formats are ${END_TO_END_FORMATS.join(', ')}` })).min(1)).default([...END_TO_END_FORMATS]),
  parse: z.enum(PARSE_MODES).default('auto'),
  project: z.enum(PARSE_MODES).default('auto'),
  perQueryLoads: z.boolean().default(false),
  duckdbThreads: z.coerce.number().int().min(1).optional(),
  replay: z.boolean().default(true),
  warmMs: z.coerce.number().min(0).optional(),
  disablePass: listSchema.optional(),
};

const tpchOptionsSchema = z.object({
  ...tblBenchOptions,
  queries: z
    .string()
    .regex(/^\s*\d+(\s*,\s*\d+)*\s*$/, 'expected a comma-separated list of query numbers, e.g. 1,6')
    .transform((s) => s.split(',').map((x) => Number(x.trim())))
    .refine((qs) => qs.every((q) => q >= 1 && q <= 22), 'query numbers are 1..22')
    .optional(),
});

const ssbOptionsSchema = z.object({
  ...tblBenchOptions,
  queries: listSchema.pipe(z.array(z.enum(SSB_QUERIES, { error: `query names are ${SSB_QUERIES.join(', ')}` })).min(1)).optional(),
});

/** The options of `tpch` and `ssb` (tblBenchOptions), with their own help for --queries and --runs. */
function addTblBenchOptions(command: Command, examples: string, queriesHelp: string, runsHelp: string): Command {
  return command
    .requiredOption('--sf <n>', 'scale factor')
    .option('--data <dir>', 'folder of .tbl files; one without any is generated into and kept, for later runs (default: generate SF n data into a temporary folder)')
    .option('--queries <list>', queriesHelp)
    .option('--queries-dir <dir>', `folder with schema.logic, q*.logic and sql/q*.sql (default: examples/${examples})`)
    .option('--json <file>', 'also write the report as JSON')
    .option('--runs <n>', runsHelp, '3')
    .option('--warmup <n>', 'untimed runs first', '1')
    .option('--warm-ms <ms>', 'untimed runs for at least this long per engine and query (default: 2000 on a GPU, 0 on a CPU adapter)')
    .option('--seed <n>', 'generator seed', '1')
    .option('--max-resident-memory <size>', 'most device memory resident tables keep between queries, e.g. 40GiB (default: half the device memory budget)')
    .option('--max-device-memory <size>', "device memory budget of the device and each run (as run's), as if the device had that much: idle resident tables are evicted, tables past it stay in host memory, kernels run in partitions")
    .option('--profile', 'after the timed runs, profile one more run of each query and print it on stderr (as run --profile)', false)
    .option('--no-replay', "plan every run's kernels: no run replays the device work recorded from the query's last run")
    .option('--end-to-end', 'from files to answers instead: each query in a fresh Database, against DuckDB loading the same files', false)
    .option('--formats <list>', `with --end-to-end: the inputs, of ${END_TO_END_FORMATS.join(', ')}`, END_TO_END_FORMATS.join(','))
    .option('--per-query-loads', "each query's first run loads the columns it reads, instead of each table loaded once first with the columns all the queries read", false)
    .option('--duckdb-threads <n>', "DuckDB's threads (default: DuckDB's choice, every core)")
    .option('--disable-pass <names>', 'compile the queries without these optional passes (comma-separated, as plan --disable-pass): an A/B of one build')
    .addOption(parseOption())
    .addOption(
      new Option('--project <where>', "a query's column sets that earlier queries' resident tables hold: made of those on the device, read from the host, or auto (the device on a GPU)")
        .choices(PARSE_MODES)
        .default('auto'),
    )
    .addOption(new Option('--backend <backend>', 'WebGPU backend').choices(['auto', 'vulkan', 'opengles']).default('auto'));
}

interface TblBenchSuite<R> {
  /** As messages say it (TPC-H). */
  name: string;
  /** Its folder under examples/. */
  examples: string;
  /** Writes the `.tbl` files into `out`; a line saying what it made. */
  generate: (out: string) => string | Promise<string>;
  /** Runs the bench with the options every suite takes from the command line. */
  bench: (gpu: Gpu, common: Omit<TblBenchOptions<never>, 'onQuery'>) => Promise<R>;
  format: (report: R) => string;
  /** The schema and the chosen queries, for --end-to-end. */
  endToEnd: (queriesDir: string) => { schema: RelationDecl[]; queries: EndToEndQuery[] };
}

/**
 * What the `tpch` and `ssb` commands share: the queries folder, data generated into a temporary folder unless
 * --data names one, the device, the report as a table and optionally JSON.
 */
async function runTblBench<R>(
  opts: z.infer<z.ZodObject<typeof tblBenchOptions>>,
  suite: TblBenchSuite<R>,
  out: (s: string) => void,
  err: (s: string) => void,
): Promise<void> {
  const queriesDir = opts.queriesDir ?? examplesDir(suite.examples);
  if (!existsSync(join(queriesDir, 'schema.logic'))) {
    throw new VixenError({ severity: 'error', message: `no schema.logic in ${queriesDir}; give the ${suite.name} queries folder with --queries-dir` });
  }
  const maxResidentBytes =
    opts.maxResidentMemory === undefined ? undefined : parseByteSize(opts.maxResidentMemory, 'option --max-resident-memory');
  const maxDeviceMemory = opts.maxDeviceMemory === undefined ? undefined : parseByteSize(opts.maxDeviceMemory, 'option --max-device-memory');
  // Before any data or device: a misspelt pass is the user's error, not 22 failed queries.
  if (opts.disablePass) checkPassOptions({ disable: opts.disablePass }, compilerPasses());
  // A --data folder without .tbl files is generated into and kept: an A/B of two bundles on the device then reads one
  // generation (TPC-H SF 10: 30 s a run) instead of making its own.
  const keep = opts.data !== undefined && !hasTblFiles(opts.data);
  if (keep) mkdirSync(opts.data!, { recursive: true });
  const generated = opts.data === undefined ? mkdtempSync(join(tmpdir(), `vixen-${suite.examples}-`)) : keep ? opts.data : undefined;
  const gpu = await openGpu({ backend: opts.backend, ...(maxDeviceMemory !== undefined ? { maxDeviceMemory } : {}) });
  try {
    if (generated !== undefined) err(await suite.generate(generated));
    err(`adapter: ${gpu.adapterName}\n`);
    if (opts.endToEnd) {
      const work = mkdtempSync(join(tmpdir(), `vixen-${suite.examples}-e2e-`));
      try {
        const report = await benchEndToEnd(gpu, {
          sf: opts.sf,
          dataDir: opts.data ?? generated!,
          workDir: work,
          ...suite.endToEnd(queriesDir),
          formats: opts.formats,
          onStep: (line) => err(`  ${line}\n`),
        });
        out(formatEndToEndReport(suite.name, report) + '\n');
        if (opts.json !== undefined) writeJsonReport(opts.json, report, err);
      } finally {
        rmSync(work, { recursive: true, force: true });
      }
      return;
    }
    const report = await suite.bench(gpu, {
      sf: opts.sf,
      dataDir: opts.data ?? generated!,
      queriesDir,
      runs: opts.runs,
      warmup: opts.warmup,
      ...(maxResidentBytes !== undefined ? { maxResidentBytes } : {}),
      ...(maxDeviceMemory !== undefined ? { maxDeviceMemory } : {}),
      parse: opts.parse,
      project: opts.project,
      perQueryLoads: opts.perQueryLoads,
      // A lost device fails its query; the next go on on a new one.
      reopen: () => openGpu({ backend: opts.backend }),
      ...(opts.duckdbThreads !== undefined ? { duckdbThreads: opts.duckdbThreads } : {}),
      onTableLoad: (t) =>
        err(
          `  ${t.name}: loaded in ${t.ms.toFixed(1)} ms (read ${t.readMs.toFixed(1)} ms; ${formatDevicePeak(t.peakDeviceBytes, 0, t.peakMappedBytes)}), ` +
            `duckdb ${t.duckdbMs.toFixed(1)} ms${t.resident ? '' : `; not resident: ${t.message ?? ''}`}` +
            `${t.memoryAtFailure ? `; at its failure: ${formatMemoryAfterQuery(t.memoryAtFailure)}` : ''}\n`,
        ),
      onTablesTogetherFailure: (message) => err(`  one run loading every table failed (${message}); each table loads in a run of its own\n`),
      replay: opts.replay,
      ...(opts.warmMs !== undefined ? { warmMs: opts.warmMs } : {}),
      ...(opts.disablePass ? { disablePasses: opts.disablePass } : {}),
      ...(opts.profile ? { onProfile: (query, stats, program) => err(`profile of ${query}:\n${formatProfile(stats, program.plan)}\n`) } : {}),
    });
    out(suite.format(report) + '\n');
    if (opts.json !== undefined) writeJsonReport(opts.json, report, err);
  } finally {
    gpu.dispose();
    if (generated !== undefined && !keep) rmSync(generated, { recursive: true, force: true });
  }
}

/** Whether `dir` holds any .tbl file. */
const hasTblFiles = (dir: string): boolean => existsSync(dir) && readdirSync(dir).some((f) => f.endsWith('.tbl'));

/** The TPC-H suite's name, folder, data (dbgen at the options' scale and seed) and end-to-end queries, for `tpch` and `load`. */
function tpchData(opts: { sf: number; seed: number; queries?: readonly number[] | undefined }): Pick<TblBenchSuite<unknown>, 'name' | 'examples' | 'generate' | 'endToEnd'> {
  return {
    name: 'TPC-H',
    examples: 'tpch',
    generate: async (dir) => {
      const g = await dbgenParallel({ sf: opts.sf, out: dir, seed: opts.seed });
      return `generated SF ${opts.sf} (${g.rows.lineitem} lineitems) in ${(g.ms / 1000).toFixed(1)} s\n`;
    },
    endToEnd: (dir) => ({
      schema: tpchSchema(dir),
      queries: (opts.queries ?? TPCH_QUERIES).map((q) => ({ label: `Q${q}`, compile: () => compileTpchQuery(dir, q), sql: tpchQuerySql(dir, q) })),
    }),
  };
}

const count = z.coerce.number().int().min(1).optional();

const graphBenchOptionsSchema = z.object({
  workload: z
    .string()
    .default('tc,reach,sg,cc')
    .transform((s) => s.split(',').map((w) => w.trim()))
    .pipe(z.array(z.enum(GRAPH_WORKLOADS)).min(1)),
  graph: z.enum(GRAPH_KINDS).default('rmat'),
  scale: z.coerce.number().int().min(1).max(26).default(10),
  edgeFactor: z.coerce.number().positive().max(1024).default(4),
  a: z.coerce.number().min(0).max(1).optional(),
  b: z.coerce.number().min(0).max(1).optional(),
  c: z.coerce.number().min(0).max(1).optional(),
  seed: z.coerce.number().int().min(0).default(1),
  nodes: count,
  edges: count,
  width: count,
  height: count,
  depth: z.coerce.number().int().min(0).max(25).optional(),
  source: z.coerce.number().int().min(0).default(0),
  chainNodes: count,
  gridWidth: count,
  gridHeight: count,
  countTo: z.coerce.number().int().min(0).max(2 ** 31 - 2).optional(),
  duckdb: z.boolean().default(true),
  duckdbTimeout: z.coerce.number().positive().optional(),
  loopBatches: z.boolean().default(true),
  smallLoops: z.boolean().default(true),
  maxIterations: count,
  maxDeviceMemory: z.string().min(1).optional(),
  timeout: z.coerce.number().positive().optional(),
  programs: z.string().min(1).optional(),
  runs: z.coerce.number().int().min(1).default(1),
  warmup: z.coerce.number().int().min(0).default(1),
  profile: z.boolean().default(false),
  json: z.string().min(1).optional(),
  backend: z.enum(['auto', 'vulkan', 'opengles']).default('auto'),
});

/** The `bench` command with its `operators`, `tpch`, `ssb` and `graphs` sub-commands; `out` gets the table, `err` progress. */
export function benchCommand(out: (s: string) => void, err: (s: string) => void): Command {
  const bench = new Command('bench').description(BENCH_DESCRIPTION);
  bench
    .command('operators')
    .description(`time copy and the operators (${BENCH_OPERATORS.join(', ')}) at sizes 2^A..2^B against copy bandwidth`)
    .option('--sizes <range>', 'log2 row counts, A..B or a list (default 20..22 on a software adapter, 20..26 on a GPU)')
    .option('--operators <list>', `comma-separated subset of ${BENCH_OPERATORS.join(',')} (default all; copy always runs)`)
    .option('--selectivities <list>', 'kept shares of mapFilter, comma-separated, each in (0, 1] (default 0.01,0.5,1)')
    .option('--groups <list>', 'group counts of groupBy, comma-separated, each in 1..2^24 (default n/16 up to 65536, and 16)')
    .option('--json <file>', 'also write the report as JSON')
    .option('--runs <n>', 'timed runs per measurement (median reported)', '5')
    .option('--warmup <n>', 'untimed runs first', '2')
    .option('--no-subgroups', 'run the passes without subgroup operations even where the adapter has them')
    .addOption(new Option('--backend <backend>', 'WebGPU backend').choices(['auto', 'vulkan', 'opengles']).default('auto'))
    .action(async (raw: unknown) => {
      const opts = parseOptions(benchOptionsSchema, raw);
      const gpu = await openGpu({ backend: opts.backend, subgroups: opts.subgroups });
      try {
        const sizes = opts.sizes ?? defaultBenchSizes(gpu);
        err(`adapter: ${gpu.adapterName}; sizes 2^${sizes.join(', 2^')}\n`);
        const report = await benchOperators(gpu, {
          sizes,
          runs: opts.runs,
          warmup: opts.warmup,
          ...(opts.operators ? { operators: opts.operators } : {}),
          ...(opts.selectivities ? { selectivities: opts.selectivities } : {}),
          ...(opts.groups ? { groups: opts.groups } : {}),
          onResult: (x) => err(`  ${x.operator} ${x.variant} 2^${x.log2n}: ${x.medianMs.toFixed(3)} ms\n`),
          onSkip: (x) => err(`  ${x.operator} ${x.variant} 2^${x.log2n}: skipped (${x.reason})\n`),
        });
        out(formatBenchReport(report) + '\n');
        if (opts.json !== undefined) writeJsonReport(opts.json, report, err);
      } finally {
        gpu.dispose();
      }
    });
  bench
    .command('compile')
    .description("compile a load's passes one at a time, all at once and synchronously, each round uncached: how many compiles Dawn runs at once")
    .option('--json <file>', 'also write the report as JSON')
    .addOption(new Option('--backend <backend>', 'WebGPU backend').choices(['auto', 'vulkan', 'opengles']).default('auto'))
    .action(async (raw: unknown) => {
      const opts = parseOptions(z.object({ json: z.string().optional(), backend: z.enum(['auto', 'vulkan', 'opengles']) }), raw);
      const gpu = await openGpu({ backend: opts.backend });
      try {
        const report = await benchCompile(gpu);
        out(formatCompileReport(report) + '\n');
        if (opts.json !== undefined) writeJsonReport(opts.json, report, err);
      } finally {
        gpu.dispose();
      }
    });
  const tpch = bench
    .command('tpch')
    .description('run the TPC-H queries on Vixen and on DuckDB (same data, same process) and compare times and answers');
  addTblBenchOptions(tpch, 'tpch', 'comma-separated query numbers (default: all 22)', 'timed runs per query (median reported)')
    .action(async (raw: unknown) => {
      const opts = parseOptions(tpchOptionsSchema, raw);
      await runTblBench(
        opts,
        {
          ...tpchData(opts),
          bench: (gpu, common) =>
            benchTpch(gpu, {
              ...common,
              queries: opts.queries ?? TPCH_QUERIES,
              onQuery: (q, memory) =>
                err(
                  `  Q${q.query}: ${q.status}, vixen ${q.vixenMs.toFixed(1)} ms (host ${q.vixenHostMs.toFixed(1)}, submit ${q.vixenSubmitMs.toFixed(1)}, ` +
                    `${q.dispatches} dispatches in ${q.submissions} submissions; load ${q.vixenLoadMs.toFixed(1)} ms` +
                    `${q.vixenProjected.length > 0 ? `, ${q.vixenProjected.join(', ')} projected on the device` : ''}; ` +
                    `${formatDevicePeak(q.peakDeviceBytes, q.evictions)}), duckdb ${q.duckdbMs.toFixed(1)} ms` +
                    `${formatSlowRunCauses(q.causes, q.vixenRunsMs.length)}${formatTimedRuns(q.vixenRunsMs, q.vixenRunsWaitMs, q.held, q.smClock)}; after it: ${formatMemoryAfterQuery(memory)}\n`,
                ),
            }),
          format: formatTpchReport,
        },
        out,
        err,
      );
    });
  bench
    .command('load')
    .description('load the TPC-H tables from .tbl files into device memory, parsed on the host and on the device, against DuckDB loading the same files')
    .requiredOption('--sf <n>', 'scale factor')
    .option('--data <dir>', 'folder of .tbl files (default: generate SF n data into a temporary folder)')
    .option('--queries-dir <dir>', 'folder with the TPC-H schema.logic (default: examples/tpch)')
    .option('--json <file>', 'also write the report as JSON')
    .option('--runs <n>', 'timed loads of each kind (median reported)', '3')
    .option('--warmup <n>', 'untimed loads first', '1')
    .option('--seed <n>', 'generator seed', '1')
    .option('--formats <list>', `the inputs loaded, of ${END_TO_END_FORMATS.join(', ')} (tbl: parsed on the host and on the device)`, END_TO_END_FORMATS.join(','))
    .option('--upload-bytes <size>', 'bytes of the upload rows (host -> device GB/s by method), e.g. 1GiB; 0: none (default 1GiB, 16MiB on a CPU adapter)')
    .addOption(new Option('--parse <where>', 'the .tbl loads: parsed on the host, on the device, or auto (both)').choices(PARSE_MODES).default('auto'))
    .option('--store-reads <list>', 'how the store\'s column files are read, each a store row: bytes per read x reads in flight, e.g. 32MiBx8,16MiBx16 (default: 32MiBx8)')
    .option('--store-dir <dir>', 'keep the store there: imported when the folder holds none, else read as it is (it must come from the same --data; default: a temporary folder)')
    .addOption(new Option('--backend <backend>', 'WebGPU backend').choices(['auto', 'vulkan', 'opengles']).default('auto'))
    .action(async (raw: unknown) => {
      const opts = parseOptions(z.object({ ...tblBenchOptions, uploadBytes: z.string().min(1).optional(), storeDir: z.string().min(1).optional(), storeReads: listSchema.optional() }), raw);
      const uploadBytes = opts.uploadBytes === undefined ? undefined : opts.uploadBytes === '0' ? 0 : parseByteSize(opts.uploadBytes, 'option --upload-bytes');
      await runTblBench(
        opts,
        {
          ...tpchData(opts),
          bench: (gpu, common) =>
            benchLoad(gpu, {
              ...common,
              formats: opts.formats,
              ...(opts.parse !== 'auto' ? { parse: opts.parse } : {}),
              ...(uploadBytes !== undefined ? { uploadBytes } : {}),
              ...(opts.storeDir !== undefined ? { storeDir: opts.storeDir } : {}),
              ...(opts.storeReads !== undefined ? { storeReads: opts.storeReads.map(storeReadPlan) } : {}),
              onUpload: (c) => err(`  upload ${c.method} (${c.source}): ${c.gbPerSecond.toFixed(2)} GB/s\n`),
            }),
          format: formatLoadReport,
        },
        out,
        err,
      );
    });
  const ssb = bench
    .command('ssb')
    .description('run the Star Schema Benchmark queries on Vixen (fused and unfused kernels) and on DuckDB, same data, same process');
  addTblBenchOptions(ssb, 'ssb', 'comma-separated query names, e.g. 1.1,3.4 (default: all 13)', 'timed runs per query and variant (median reported)')
    .action(async (raw: unknown) => {
      const opts = parseOptions(ssbOptionsSchema, raw);
      await runTblBench(
        opts,
        {
          name: 'SSB',
          examples: 'ssb',
          generate: async (dir) => {
            const g = await ssbgenParallel({ sf: opts.sf, out: dir, seed: opts.seed });
            return `generated SF ${opts.sf} (${g.rows.lineorder} lineorders) in ${(g.ms / 1000).toFixed(1)} s\n`;
          },
          bench: (gpu, common) =>
            benchSsb(gpu, {
              ...common,
              queries: opts.queries ?? SSB_QUERIES,
              onQuery: (q, memory) =>
                err(
                  `  Q${q.query}: ${q.status}, fused ${q.fusedMs.toFixed(1)} ms (waiting for the device ${q.fusedWaitMs.toFixed(1)}), unfused ${q.unfusedMs.toFixed(1)} ms, duckdb ${q.duckdbMs.toFixed(1)} ms; ` +
                    `${formatDevicePeak(q.peakDeviceBytes, q.evictions)}; after it: ${formatMemoryAfterQuery(memory)}\n`,
                ),
            }),
          format: formatSsbReport,
          endToEnd: (dir) => ({
            schema: ssbSchema(dir),
            queries: (opts.queries ?? SSB_QUERIES).map((q) => ({ label: `Q${q}`, compile: () => compileSsbQuery(dir, q), sql: ssbQuerySql(dir, q) })),
          }),
        },
        out,
        err,
      );
    });
  bench
    .command('graphs')
    .description('run the examples/graphs workloads on a generated graph; iterations, tuples, time, tuples/s and DuckDB on the same problem')
    .option('--workload <list>', `comma-separated workloads: ${GRAPH_WORKLOADS.join(', ')}`, 'tc,reach,sg,cc')
    .addOption(new Option('--graph <kind>', 'graph maker').choices([...GRAPH_KINDS]).default('rmat'))
    .option('--scale <n>', 'R-MAT: 2^n nodes', '10')
    .option('--edge-factor <n>', 'R-MAT: edges drawn per node (self-loops and duplicates are dropped)', '4')
    .option('--a <p>', 'R-MAT: probability of the top-left quadrant (default 0.57)')
    .option('--b <p>', 'R-MAT: top-right (default 0.19)')
    .option('--c <p>', 'R-MAT: bottom-left (default 0.19; d is the rest)')
    .option('--seed <n>', 'seed of the random graph makers', '1')
    .option('--nodes <n>', 'chain, cycle, uniform: node count')
    .option('--edges <n>', 'uniform: edge count')
    .option('--width <n>', 'grid width')
    .option('--height <n>', 'grid height')
    .option('--depth <n>', 'tree depth')
    .option('--source <n>', 'reach, sssp, bfs, widest: source node', '0')
    .option('--chain-nodes <n>', `chain and comb-avoid workloads: reach along a chain of n nodes, or a comb of n teeth (default ${LOOP_DEFAULTS.chainNodes})`)
    .option('--grid-width <n>', `grid workload: reach over a grid this wide (default ${LOOP_DEFAULTS.gridWidth})`)
    .option('--grid-height <n>', `... and this high (default ${LOOP_DEFAULTS.gridHeight})`)
    .option('--count-to <n>', `count-up workload: the bound (2n iterations of one tuple; default ${LOOP_DEFAULTS.countTo})`)
    .option('--no-duckdb', 'do not run DuckDB')
    .option('--duckdb-timeout <seconds>', "stop DuckDB's query after this long and report it as at least that (>=)")
    .option('--no-loop-batches', 'decide every fixpoint iteration on the host (to compare with loop control)')
    .option('--no-small-loops', 'run no small-delta iterations inside one dispatch (to compare with the kernel)')
    .option('--max-iterations <n>', 'fail when a fixpoint loop needs more than n iterations')
    .option('--max-device-memory <bytes>', "device memory budget of each run (as run's; default: the device's less a margin)")
    .option('--timeout <seconds>', 'stop a workload whose run takes longer (wall clock); the next workload runs')
    .option('--programs <dir>', 'directory of the workload programs (default: examples/graphs)')
    .option('--runs <n>', 'timed runs of each workload (median reported; DuckDB runs once)', '1')
    .option('--warmup <n>', 'untimed runs of each workload first (on a GPU, for at least 2 s)', '1')
    .option('--profile', 'after the timed runs, profile one more run of each workload and print it on stderr (as run --profile)', false)
    .option('--json <file>', 'also write the report as JSON')
    .addOption(new Option('--backend <backend>', 'WebGPU backend').choices(['auto', 'vulkan', 'opengles']).default('auto'))
    .action(async (raw: unknown) => {
      const o = parseOptions(graphBenchOptionsSchema, raw);
      const defined = <T extends object>(x: T): T => Object.fromEntries(Object.entries(x).filter(([, v]) => v !== undefined)) as T;
      const graph = defined({
        kind: o.graph,
        scale: o.scale,
        edgeFactor: o.edgeFactor,
        a: o.a,
        b: o.b,
        c: o.c,
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
          // A workload that loses the device stops; the next run on a new one.
          reopen: () => openGpu({ backend: o.backend }),
          graph,
          source: o.source,
          ...defined({ chainNodes: o.chainNodes, gridWidth: o.gridWidth, gridHeight: o.gridHeight, countTo: o.countTo }),
          duckdb: o.duckdb,
          ...(o.duckdbTimeout !== undefined ? { duckdbTimeout: o.duckdbTimeout } : {}),
          loopBatches: o.loopBatches,
          smallLoops: o.smallLoops,
          ...(o.maxIterations !== undefined ? { maxIterations: o.maxIterations } : {}),
          ...(o.maxDeviceMemory !== undefined ? { maxDeviceMemory: parseByteSize(o.maxDeviceMemory, 'option --max-device-memory') } : {}),
          ...(o.timeout !== undefined ? { timeout: o.timeout } : {}),
          ...(o.programs !== undefined ? { programsDir: o.programs } : {}),
          runs: o.runs,
          warmup: o.warmup,
          ...(o.profile ? { onProfile: (workload, stats, program) => err(`profile of ${workload}:\n${formatProfile(stats, program.plan)}\n`) } : {}),
          onSetup: (x) => err(`  set-up: graph ${(x.graphMilliseconds / 1000).toFixed(2)} s, symmetric view ${(x.undirectedMilliseconds / 1000).toFixed(2)} s\n`),
          onResult: (x) =>
            err(`  ${x.workload}: ${x.iterations} iterations, ${x.tuples} tuples, ${x.milliseconds.toFixed(1)} ms (load ${x.loadMilliseconds.toFixed(0)} ms)` +
              (x.duckdb
                ? x.duckdb.stopped
                  ? `; DuckDB stopped after ${(x.duckdb.milliseconds / 1000).toFixed(1)} s`
                  : `; DuckDB ${x.duckdb.milliseconds.toFixed(1)} ms, ${x.duckdb.agrees ? 'same answer' : 'DIFFERENT answer'}`
                : '') +
              (x.host ? `; host check ${x.host.agrees ? 'same answer' : 'DIFFERENT answer'}` : '') + '\n'),
          onStopped: (x) => err(`  ${x.workload}: stopped: ${x.message}\n`),
        });
        out(formatGraphBenchReport(report) + '\n');
        if (o.json !== undefined) writeJsonReport(o.json, report, err);
        const disagree = report.results.filter((x) => x.duckdb && !x.duckdb.stopped && !x.duckdb.agrees).map((x) => x.workload);
        if (disagree.length > 0) throw new VixenError({ severity: 'error', message: `DuckDB derives different tuple counts for ${disagree.join(', ')}` });
        const wrong = report.results.filter((x) => x.host && !x.host.agrees).map((x) => x.workload);
        if (wrong.length > 0) throw new VixenError({ severity: 'error', message: `the host's union-find or shortest paths give other answers for ${wrong.join(', ')}` });
        if (report.stopped.length > 0) {
          throw new VixenError({ severity: 'error', message: `stopped: ${report.stopped.map((x) => x.workload).join(', ')} (the reasons are above)` });
        }
      } finally {
        gpu.dispose();
      }
    });
  return bench;
}
