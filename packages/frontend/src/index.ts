/**
 * The Vixen front end: LogiQL source files -> AST -> checks -> query plan.
 * All problems come back as located diagnostics; a plan is produced only when there are no errors.
 * Soufflé files (`.dl`) are parsed by their own parser into the same AST and take the same path from there.
 */
import { errorAt, listPasses, qpPipeline, runPipeline, VixenError, type Diagnostic, type PassOptions, type QpProgram } from '@vixen/queryplan';
import { resolveOrders } from './check/order.js';
import { checkSafety } from './check/safety.js';
import { resolve } from './check/resolve.js';
import { checkTypes } from './check/types.js';
import { unstratifiedCycles, stratify, withoutLatticeChecks } from './lower/stratify.js';
import { rulesPipeline } from './lower/rules-pipeline.js';
import { toPlan } from './lower/to-plan.js';
import { isSouffleFile, loadSouffle, souffleOutputs, type SouffleIo } from './souffle/index.js';
import { loadProgram, type SourceFile } from './syntax/load.js';

export type * from './syntax/ast.js';
export type * from './check/program.js';
export { parse } from './syntax/parse.js';
export { layoutWidth, parseSouffle, type PrintLayout, type RecordLayouts, type SouffleInput, type SouffleIo, type SouffleOutput } from './souffle/index.js';
export type * from './souffle/ast.js';
export { stratify, type Stratum } from './lower/stratify.js';
export { rulesPipeline } from './lower/rules-pipeline.js';
export type { SourceFile };

/** `logiql` for `.logic` source, `souffle` for Soufflé `.dl` programs. */
export type Dialect = 'logiql' | 'souffle';

export interface FrontendOptions {
  /** Reads an `include`d file (path already resolved against the including file); undefined if missing. */
  readFile?: (path: string) => string | undefined;
  /** The dialect of every given file; by default `.dl` files are Soufflé and all others LogiQL. */
  dialect?: Dialect;
  /** The only relations a run will read back (default: every derived relation); the others become temporaries. */
  outputs?: readonly string[];
  /** Debugging switches for the QP passes (names of other stages' passes are theirs to check). */
  passes?: PassOptions<QpProgram>;
}

export interface FrontendResult {
  plan?: QpProgram;
  diagnostics: Diagnostic[];
  /** Every file read, by path, for rendering diagnostics. */
  sources: Map<string, string>;
  /** The IO directives of a Soufflé program (absent when no file is Soufflé). */
  souffleIo?: SouffleIo;
}

export function compileLogic(files: SourceFile[], options: FrontendOptions = {}): FrontendResult {
  const diagnostics: Diagnostic[] = [];
  const souffleFile = (f: SourceFile): boolean => (options.dialect ? options.dialect === 'souffle' : isSouffleFile(f.path));
  const loaded = loadProgram(files.filter((f) => !souffleFile(f)), options.readFile, diagnostics);
  const souffleFiles = files.filter(souffleFile);
  const souffle = loadSouffle(souffleFiles, options.readFile, diagnostics);
  const souffleIo = souffleFiles.length > 0 ? { souffleIo: souffle.io } : {};
  const sources = new Map([...loaded.sources, ...souffle.sources]);
  const resolved = checkSafety(resolve([...loaded.files, ...souffle.files], diagnostics, sources), diagnostics);
  const checked = checkTypes(resolved, diagnostics);
  const strata = stratify(checked);
  diagnostics.push(...unstratifiedCycles(strata));
  const orders = resolveOrders(checked, diagnostics, strata);
  const sorted = sortDiagnostics(diagnostics, [...sources.keys()]);
  if (sorted.some((d) => d.severity === 'error')) return { diagnostics: sorted, sources };
  let plan: QpProgram;
  try {
    const ctx = { ...(options.outputs ? { outputs: options.outputs } : {}), seeded: Object.keys(souffle.io.inputs) };
    const external = [...Object.keys(souffle.io.inputs), ...Object.keys(souffle.io.outputs), ...Object.keys(orders)];
    const unprinted = listPasses(rulesPipeline).find((e) => options.passes?.printAfter?.includes(e.name));
    // The checked rules have no printer: the plan the QP pipeline starts from shows what such a pass did.
    if (unprinted) throw new VixenError(errorAt(`pass ${unprinted.name} rewrites rules, which have no printer; print the plan after restrict-outputs to see its effect`));
    const scope = { ...(options.outputs ? { outputs: options.outputs } : {}), external };
    const pushed = runPipeline(rulesPipeline, checked, scope, options.passes?.disable ? { disable: options.passes.disable } : {});
    const lowered = withoutLatticeChecks(pushed, pushed === checked ? strata : stratify(pushed));
    plan = runPipeline(qpPipeline, souffleOutputs(toPlan(lowered.program, lowered.strata, orders), souffle), ctx, options.passes);
  } catch (e) {
    // Outputs the program lacks (restrict-outputs), bad pass options.
    if (!(e instanceof VixenError)) throw e;
    return { diagnostics: [...sorted, ...e.diagnostics], sources };
  }
  return { plan, diagnostics: sorted, sources, ...souffleIo };
}

/** Source order: by file (in reading order), then position; diagnostics without a place last. */
function sortDiagnostics(list: Diagnostic[], files: string[]): Diagnostic[] {
  const key = (d: Diagnostic): [number, number] =>
    d.span ? [files.indexOf(d.span.file), d.span.start.offset] : [files.length, 0];
  return [...list].sort((a, b) => {
    const [fa, oa] = key(a);
    const [fb, ob] = key(b);
    return fa - fb || oa - ob;
  });
}
