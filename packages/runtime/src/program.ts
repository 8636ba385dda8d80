/**
 * The programmatic API: compile LogiQL source into a Program (QP, KIR and WGSL), run it on WebGPU,
 * run the reference interpreter on the same plan, and save/load the compiled form.
 */
import { compileLogic, rulesPipeline, type Dialect, type SourceFile, type SouffleIo } from '@vixen/frontend';
import { generateProgramShaders, type KernelShaders } from '@vixen/codegen-wgsl';
import { kirPipeline, planToKernels, printKir, validateKir, type JoinStrategy, type KirProgram } from '@vixen/kernel-ir';
import {
  checkOutputNames,
  checkPassOptions,
  collectViolations,
  locateFacts,
  interpret,
  listPasses,
  printPlan,
  qpPipeline,
  validatePlan,
  VixenError,
  type Diagnostic,
  type PassEntry,
  type PassOptions,
  type QpProgram,
  type RelationDecl,
  type Row,
  type ScalarType,
  type SourceTexts,
  type Violation,
} from '@vixen/queryplan';
import { executeKir, type ExecuteOptions, type ExecuteStats, type ResidentRelations } from './executor.js';
import { parseByteSize } from './limits.js';
import { checkCompileArgs, checkRunOptions } from './api-options.js';
import { addInlineFacts, type FactSources } from '@vixen/io';
// Node's files and Dawn, or a browser page's rows and navigator.gpu (package.json `imports`).
import { loadExternalFacts, locateFileFacts, openDefaultGpu, readIncludedFile, readProgramFile } from '#host';
import type { EncodedFacts } from '@vixen/io';
import type { Gpu, GpuOptions } from './gpu/device.js';
import type { ParseMode } from './parse-mode.js';
import { parseProgramFile, serializeProgram, type ProgramFile } from './program-file.js';
import { ResultTable } from './result-table.js';

export interface CompileOptions {
  /** Name used in diagnostics when `source` is a string. */
  filename?: string;
  /** Reads `include`d files; defaults to the file system. */
  readFile?: (path: string) => string | undefined;
  /** Forces the source dialect; by default `.dl` files are Soufflé and all others LogiQL. */
  dialect?: Dialect;
  /** How equi-joins run: sort + merge join, hash join, or (default) hash outside fixpoint loops where it saves sorts. */
  joinStrategy?: JoinStrategy;
  /** Fuse chains of kernels into one (default true); off, the other kernel-IR optimizations still run. */
  fusion?: boolean;
  /**
   * The only relations runs will read back (default: every derived relation, or Soufflé's `.output` ones). The
   * others become temporaries the compiler may free early, leave unsorted or skip.
   */
  outputs?: readonly string[];
  /** Receives the front end's warnings (a `.pragma` ignored, a relation always empty); errors throw instead. */
  onWarnings?: (warnings: readonly Diagnostic[], sources: SourceTexts) => void;
  /** Debugging the compiler's passes (`vixen plan --print-after/--disable-pass`), by the names compilerPasses() lists. */
  passes?: CompilePassOptions;
}

export interface CompilePassOptions {
  /** Optional passes to skip; an unknown or required pass is a VixenError. */
  disable?: readonly string[];
  /** Passes after every run of which `onPrint` gets the IR. */
  printAfter?: readonly string[];
  /** The IR after a pass of `printAfter`, as printPlan (QP) or printKir (KIR) writes it. */
  onPrint?: (pass: string, text: string) => void;
  /** Validate the IR after every pass, naming a pass that breaks it (default: when VIXEN_VALIDATE_PASSES=1). */
  validate?: boolean;
}

/** Every pass of the compiler in the order they run: the QP pipeline's, then the KIR pipeline's. */
export function compilerPasses(): PassEntry[] {
  return [...listPasses(rulesPipeline), ...listPasses(qpPipeline), ...listPasses(kirPipeline)];
}

/** The pass switches for one stage, its IR printed by `print`. */
function stagePasses<IR>({ onPrint, ...rest }: CompilePassOptions, print: (ir: IR) => string): PassOptions<IR> {
  return { ...rest, ...(onPrint ? { onPrint: (pass: string, ir: IR) => onPrint(pass, print(ir)) } : {}) };
}

export interface RunOptions extends FactSources {
  /** Relations to return (default: the program's output relations). */
  outputs?: readonly string[];
  /** Reuse an open device (tests, benchmarks); otherwise one is opened and closed for this run. */
  gpu?: Gpu;
  backend?: GpuOptions['backend'];
  /** Most iterations one run of a fixpoint loop may take; one more fails with a RunLimitError (partial stats). */
  maxIterations?: number;
  /** Most tuples any one base or derived relation may hold; more fails with a RunLimitError (partial stats). */
  maxTuples?: number;
  /**
   * Wall-clock limit in seconds from the call of `run` (facts loading included), checked between kernel launches;
   * past it the run fails with a RunLimitError (partial stats) once the launch in flight has finished.
   */
  timeout?: number;
  /** Device memory limit for the variables' buffers: bytes, or text like `64MiB` (see parseByteSize). */
  maxDeviceMemory?: number | string;
  /** Device-accurate per-kernel times in `stats` (waits for the device after every kernel). */
  profile?: boolean;
  /** Where facts files are parsed: `host`, `device` (the host takes what the device gives up) or `auto` (default). */
  parse?: ParseMode;
  /** Called after every fixpoint iteration. */
  onProgress?: ExecuteOptions['onProgress'];
  /** Loop control may run several fixpoint iterations per host decision (default true; false to measure without). */
  loopBatches?: boolean;
  /** Small-delta loops may run many iterations in one dispatch (default true; false to measure without). */
  smallLoops?: boolean;
  /**
   * Read back only the output relations' row counts (RunResult.counts), none of their rows: `tables` and
   * `relations` are then empty. A count needs no rows (`vixen run --format count`: 7.5 GiB less to read for TC of
   * a graph of 40,000 nodes).
   */
  countsOnly?: boolean;
  /**
   * A Database's run may replay the device work recorded from the program's last run on the same resident relations
   * instead of planning its kernels (default true; false: never recorded nor replayed). See replay.ts.
   */
  replay?: boolean;
}

/** What a run gives back: the output relations and the constraints they violate. */
export interface RunOutput {
  /** Output relations; large ones are decoded row by row as they are iterated. */
  tables: Map<string, ResultTable>;
  /** Output relations, rows in their output order (`order P by ... limit N`, else sorted by their columns). Built
   * from `tables` on first use: prefer `tables` for relations of millions of rows. */
  readonly relations: Map<string, Row[]>;
  /** Integrity constraints and functional dependencies the result violates (empty when all hold). */
  violations: Violation[];
}

export interface RunResult extends RunOutput {
  adapter: string;
  stats: ExecuteStats;
  /** Rows of each output relation (after an `order ... limit N`'s limit), read back or not (countsOnly). */
  counts: Map<string, number>;
}

/** Internal invariant checks: a failure here is a compiler bug, reported as such. */
function assertValid(stage: string, diagnostics: Diagnostic[]): void {
  if (diagnostics.length > 0) {
    throw new Error(`internal compiler error: invalid ${stage}:\n${diagnostics.map((d) => d.message).join('\n')}`);
  }
}

/** The executor options a run asks for, checked (bad limits are user errors). */
export function runLimits(options: RunOptions, startedAt: number): ExecuteOptions {
  checkRunOptions(options, 'run');
  const { maxIterations, maxTuples, timeout, maxDeviceMemory, profile, onProgress, loopBatches, smallLoops, replay } = options;
  return {
    ...(maxIterations !== undefined ? { maxIterations } : {}),
    ...(maxTuples !== undefined ? { maxTuples } : {}),
    ...(timeout !== undefined ? { timeoutMs: timeout * 1000, startedAt } : {}),
    ...(maxDeviceMemory !== undefined ? { maxDeviceMemory: parseByteSize(maxDeviceMemory, 'maxDeviceMemory') } : {}),
    ...(profile !== undefined ? { profile } : {}),
    ...(onProgress ? { onProgress } : {}),
    ...(loopBatches !== undefined ? { loopBatches } : {}),
    ...(smallLoops !== undefined ? { smallLoops } : {}),
    ...(replay !== undefined ? { replay } : {}),
  };
}

export function compile(source: string | SourceFile[], options: CompileOptions = {}): Program {
  checkCompileArgs(source, options);
  const passes = options.passes ?? {};
  checkPassOptions(passes, compilerPasses());
  const files = typeof source === 'string' ? [{ path: options.filename ?? '<input>', text: source }] : source;
  const front = compileLogic(files, {
    readFile: options.readFile ?? readIncludedFile,
    ...(options.dialect ? { dialect: options.dialect } : {}),
    ...(options.outputs ? { outputs: options.outputs } : {}),
    passes: stagePasses(passes, printPlan),
  });
  const errors = front.diagnostics.filter((d) => d.severity === 'error');
  if (!front.plan || errors.length > 0) throw new VixenError(errors, front.sources);
  const warnings = front.diagnostics.filter((d) => d.severity !== 'error');
  if (warnings.length > 0) options.onWarnings?.(warnings, front.sources);
  assertValid('query plan', validatePlan(front.plan));
  const kir = planToKernels(front.plan, {
    ...(options.joinStrategy ? { joinStrategy: options.joinStrategy } : {}),
    ...(options.fusion !== undefined ? { fusion: options.fusion } : {}),
    // Soufflé `.input` relations may also have rules: their rows come from files, so they never start empty.
    seeded: Object.keys(front.souffleIo?.inputs ?? {}),
    passes: stagePasses(passes, printKir),
  });
  assertValid('kernel IR', validateKir(kir));
  return new Program(kir, generateProgramShaders(kir), front.plan, front.souffleIo);
}

/** Compiles a `.logic` or `.dl` file from disk (includes resolve relative to it). */
export function compileFile(path: string, options: Pick<CompileOptions, 'dialect' | 'joinStrategy' | 'fusion' | 'outputs' | 'onWarnings' | 'passes'> = {}): Program {
  return compile([{ path, text: readProgramFile(path) }], options);
}

export class Program {
  constructor(
    readonly kir: KirProgram,
    readonly shaders: readonly KernelShaders[],
    /** Absent for programs loaded from a compiled file (they carry no front-end output). */
    readonly plan?: QpProgram,
    /** A Soufflé program's `.input`/`.output` directives: which files it reads and writes, and how. */
    readonly souffleIo?: SouffleIo,
  ) {}

  get relations(): readonly RelationDecl[] {
    return this.kir.relations;
  }

  /** Names of the relations a run returns when none are asked for. */
  get outputNames(): string[] {
    return this.kir.relations.filter((r) => r.output).map((r) => r.name);
  }

  /**
   * Base relations a run with `sources` would start empty: no inline facts, no API rows and no facts directory (with
   * one, a missing file is an error). A Soufflé program reads its `.input` relations from files in any case.
   */
  relationsWithoutFacts(sources: FactSources = {}): string[] {
    if (this.souffleIo || sources.factsDir !== undefined) return [];
    const given = (name: string) => (this.kir.facts[name]?.length ?? 0) > 0 || sources.facts?.[name] !== undefined;
    return this.kir.relations.filter((r) => r.kind === 'edb' && !given(r.name)).map((r) => r.name);
  }

  checkOutputs(outputs: readonly string[] | undefined): readonly string[] {
    const wanted = outputs ?? this.outputNames;
    checkOutputNames(this.kir.relations, wanted);
    // A narrowed base relation holds only the columns rules read; its full contents are its facts.
    const partial = this.kir.relations.filter((r) => (r.pruned || r.deviceColumns) && wanted.includes(r.name));
    if (partial.length > 0) {
      const r = partial[0]!;
      const read = r.deviceColumns ? r.deviceColumns.map((c) => r.columns[c]!) : r.columns;
      throw new VixenError({
        severity: 'error',
        message:
          `cannot return base relation ${r.name}: the program reads only its column${read.length > 1 ? 's' : ''} ` +
          `${read.map((c) => c.name).join(', ')}, so only those are kept (its full contents are its facts)`,
      });
    }
    return wanted;
  }

  /**
   * Runs the compiled kernels on WebGPU. `hostLoadMilliseconds`: reading the facts files (or store) on the host,
   * before the run (the stats' load is encoding, uploading and sorting them).
   */
  async run(options: RunOptions = {}): Promise<RunResult & { hostLoadMilliseconds: number }> {
    const startedAt = performance.now();
    const limits = runLimits(options, startedAt);
    const outputs = this.checkOutputs(options.outputs);
    // The device is open first: it may parse the facts files.
    const gpu = options.gpu ?? (await openDefaultGpu(options.backend ? { backend: options.backend } : {}));
    let result: RunResult & { hostLoadMilliseconds: number };
    try {
      const loadStart = performance.now();
      const device = { gpu, parse: options.parse ?? 'auto' };
      const external = await loadExternalFacts(this.kir.relations, this.kir.facts, options, this.souffleIo?.inputs, device);
      const initial = addInlineFacts(external, this.kir.relations, this.kir.facts);
      const hostLoadMilliseconds = performance.now() - loadStart;
      result = Object.assign(await this.execute(gpu, initial, outputs, limits, undefined, options.countsOnly), { hostLoadMilliseconds });
    } finally {
      if (!options.gpu) gpu.dispose();
    }
    return Object.assign(result, { violations: await this.placeFileFacts(result.violations, options) });
  }

  /** Violations whose rows came from facts files, with the files' lines (the error path only reads them again). */
  private placeFileFacts(violations: Violation[], sources: FactSources): Promise<Violation[]> | Violation[] {
    if (violations.length === 0 || sources.factsDir === undefined || this.souffleIo) return violations;
    return locateFileFacts(violations, this.kir.relations, sources.factsDir);
  }

  /**
   * Runs on facts already encoded, with `outputs` and `limits` already checked (`checkOutputs`, `runLimits`);
   * Database.run passes its resident relations. `countsOnly`: the outputs' rows are not read back (RunOptions).
   */
  async execute(gpu: Gpu, initial: EncodedFacts, outputs: readonly string[], limits: ExecuteOptions, resident?: ResidentRelations, countsOnly = false): Promise<RunResult> {
    // Constraint relations are read back too: they hold the violations.
    const checks = (this.kir.constraints ?? []).map((c) => c.relation);
    const shown = countsOnly ? [] : outputs;
    const options = { outputs: [...new Set([...shown, ...checks])], ...limits, ...(resident ? { resident } : {}) };
    const read = await executeKir(gpu, this.kir, this.shaders, initial, options);
    // The run resolves every relation's count at its end (ExecuteStats.relationRows), rows read back or not.
    const rows = new Map(read.stats.relationRows.map((r) => [r.name, r.rows]));
    const counts = new Map(outputs.map((n) => [n, Math.min(rows.get(n) ?? 0, this.kir.orders?.[n]?.limit ?? Infinity)]));
    return Object.assign(this.finish(shown, read.relations), { adapter: gpu.adapterName, stats: read.stats, counts });
  }

  /** Runs the plan on the plain reference interpreter (the test oracle); needs a program compiled from source. */
  async interpret(options: Omit<RunOptions, 'gpu' | 'backend'> = {}): Promise<Map<string, Row[]>> {
    return (await this.interpretChecked(options)).relations;
  }

  /** `interpret` plus the violated constraints, as `run` reports them. */
  async interpretChecked(options: Omit<RunOptions, 'gpu' | 'backend'> = {}): Promise<RunOutput> {
    if (!this.plan) throw new VixenError({ severity: 'error', message: 'a compiled program file carries no query plan to interpret' });
    checkRunOptions(options, 'interpret');
    // The interpreter cannot stop midway; better an error than a limit that silently does nothing.
    const limits = (['maxIterations', 'maxTuples', 'timeout', 'maxDeviceMemory'] as const).filter((k) => options[k] !== undefined);
    if (limits.length > 0) {
      throw new VixenError({ severity: 'error', message: `the reference interpreter does not enforce run limits (${limits.join(', ')})` });
    }
    const outputs = this.checkOutputs(options.outputs);
    const external = await loadExternalFacts(this.kir.relations, this.kir.facts, options, this.souffleIo?.inputs);
    const all = interpret(this.plan, Object.fromEntries(external.toRows()));
    const tables = new Map([...all].map(([name, rows]) => [name, ResultTable.fromRows(this.columnTypes(name), rows, this.kir.orders?.[name])]));
    const output = this.finish(outputs, tables);
    return Object.assign(output, { violations: await this.placeFileFacts(output.violations, options) });
  }

  private columnTypes(relation: string): ScalarType[] {
    return this.kir.relations.find((r) => r.name === relation)?.columns.map((c) => c.type) ?? [];
  }

  /** The output relations among `all`, and the violations among the constraint relations. */
  private finish(outputs: readonly string[], all: ReadonlyMap<string, ResultTable>): RunOutput {
    const tables = new Map(outputs.map((n) => [n, all.get(n) ?? ResultTable.fromRows(this.columnTypes(n), [])]));
    const constraintRows = new Map((this.kir.constraints ?? []).map((c) => [c.relation, all.get(c.relation)?.rows() ?? []]));
    let relations: Map<string, Row[]> | undefined;
    return {
      tables,
      get relations() {
        return (relations ??= new Map([...tables].map(([n, t]) => [n, t.rows()])));
      },
      violations: locateFacts(collectViolations(this.kir.constraints, constraintRows), this.plan),
    };
  }

  toJSON(): ProgramFile {
    return serializeProgram(this.kir, this.shaders, this.souffleIo);
  }

  static fromJSON(json: unknown, file = '<program>'): Program {
    const { kir, shaders, souffleIo } = parseProgramFile(json, file);
    return new Program(kir, shaders, undefined, souffleIo);
  }
}
