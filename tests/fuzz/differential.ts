/**
 * The differential property shared by the fixed-seed test and scripts/fuzz.ts: a generated program must
 * compile, and its GPU run, the reference interpreter and the independent oracle must agree on every relation.
 */
import fc from 'fast-check';
import { compile, RunLimitError, type Gpu, type JoinStrategy } from '@vixen/runtime';
import { renderDiagnostics, VixenError, type Row, type Value } from '@vixen/queryplan';
import { evaluate } from './oracle.js';
import { latticeProgramArb } from './generate-lattice.js';
import { programArb, relationNames, renderApiFacts, renderProgram, rowKey, type GenOptions, type GenProgram } from './generate.js';

export class Mismatch extends Error {
  override name = 'Mismatch';
}

function showRow(r: readonly Value[]): string {
  return `(${r.map((v) => (typeof v === 'bigint' ? `${v}n` : JSON.stringify(v))).join(', ')})`;
}

/** Rows of `a` not in `b`, at most a few. */
function missing(a: readonly Row[], b: readonly Row[]): string {
  const keys = new Set(b.map(rowKey));
  const out = a.filter((r) => !keys.has(rowKey(r)));
  return out.length === 0 ? '-' : out.slice(0, 8).map(showRow).join(' ') + (out.length > 8 ? ` ... (${out.length})` : '');
}

function diff(name: string, what: string, want: readonly Row[], got: readonly Row[]): string | undefined {
  const same = want.length === got.length && want.every((r, i) => rowKey(r) === rowKey(got[i]!));
  if (same) return undefined;
  return `${name}: ${what}: ${want.length} rows expected, ${got.length} found; missing ${missing(want, got)}; extra ${missing(got, want)}`;
}

export function describeProgram(p: GenProgram): string {
  const api = renderApiFacts(p);
  return `--- program ---\n${renderProgram(p)}--- API facts ---\n${api === '' ? '(none)' : api}\n`;
}

/**
 * Runs under a part of their unbudgeted device memory peak (checkProgram's `budget`): how they went. `divisor`: the
 * budget is the peak over it, at least `least` bytes (default: half, no least).
 */
export interface BudgetStats {
  divisor?: number;
  least?: number;
  /** Runs that gave the answers, and of those, runs that spilled relations to host memory. */
  answered: number;
  spilled: number;
  /** Launches run in partitions (partitioned.ts) by the runs that gave the answers. */
  partitioned?: number;
  /** Runs stopped by the budget error: one kernel's own relations need more. */
  refused: number;
}

/**
 * Throws a Mismatch describing the program when anything disagrees or fails; otherwise returns the most fixpoint
 * iterations one loop of the GPU run took, and the iterations its loops ran inside the small-loop kernel. With `budget`, the program also runs under half the device memory its
 * relations peaked at, and must give the same answers or stop with the budget error.
 */
export async function checkProgram(gpu: Gpu, p: GenProgram, joinStrategy: JoinStrategy = 'auto', budget?: BudgetStats): Promise<{ iterations: number; inKernel: number }> {
  const source = renderProgram(p);
  let outputs = relationNames(p);
  const fail = (why: string): never => {
    throw new Mismatch(`${why}\n(compiled with joinStrategy '${joinStrategy}')\n${describeProgram(p)}`);
  };
  let program;
  try {
    program = compile(source, { filename: 'fuzz.logic', joinStrategy });
  } catch (e) {
    fail(e instanceof VixenError ? `valid program rejected:\n${renderDiagnostics(e.diagnostics, e.sources)}` : `compile crashed: ${String(e)}`);
  }
  // Base relations narrowed by pruneColumns or the kernel IR cannot be read back (only their read columns are kept).
  const partial = new Set(program!.relations.filter((r) => r.pruned || r.deviceColumns).map((r) => r.name));
  outputs = outputs.filter((n) => !partial.has(n));
  const options = { facts: p.apiFacts, outputs };
  const oracle = evaluate(p);
  let reference: Map<string, Row[]>;
  try {
    reference = await program!.interpret(options);
  } catch (e) {
    return fail(`reference interpreter failed: ${e instanceof Error ? e.stack : String(e)}`);
  }
  let onGpu: Map<string, Row[]>;
  let peak: number;
  let iterations = 0;
  let inKernel = 0;
  try {
    const run = await program!.run({ ...options, gpu });
    onGpu = run.relations;
    peak = run.stats.peakDeviceBytes;
    iterations = Math.max(0, ...run.stats.loops.map((l) => l.iterations));
    inKernel = run.stats.loops.reduce((n, l) => n + l.inKernel, 0);
  } catch (e) {
    return fail(`GPU run failed: ${e instanceof Error ? e.stack : String(e)}`);
  }
  if (budget && peak > 0) {
    try {
      const limit = Math.max(Math.floor(peak / (budget.divisor ?? 2)), budget.least ?? 0);
      const run = await program!.run({ ...options, gpu, maxDeviceMemory: limit });
      budget.answered++;
      if (run.stats.spills > 0) budget.spilled++;
      budget.partitioned = (budget.partitioned ?? 0) + run.stats.partitionedLaunches;
      for (const name of outputs) {
        const d = diff(name, `GPU under a ${limit}-byte budget vs reference interpreter`, reference.get(name)!, run.relations.get(name)!);
        if (d) fail(d);
      }
    } catch (e) {
      if (e instanceof RunLimitError && /^device memory limit exceeded: /.test(e.message)) budget.refused++;
      else return fail(`GPU run under a budget failed: ${e instanceof Error ? e.stack : String(e)}`);
    }
  }
  const problems: string[] = [];
  for (const name of outputs) {
    const want = oracle.get(name)!;
    const ref = reference.get(name);
    const got = onGpu.get(name);
    if (!ref || !got) {
      problems.push(`${name}: missing from ${!ref ? 'reference' : 'GPU'} result`);
      continue;
    }
    const d1 = diff(name, 'GPU vs reference interpreter', ref, got);
    const d2 = diff(name, 'reference interpreter vs independent oracle', want, ref);
    if (d1) problems.push(d1);
    if (d2) problems.push(d2);
  }
  if (problems.length > 0) fail(problems.join('\n'));
  return { iterations, inKernel };
}

export interface FuzzStats {
  /** Programs checked, shrinking steps included. */
  programs: number;
  /** Of which: programs with a fixpoint loop of at least LONG_LOOP iterations. */
  longLoops?: number;
  /** Of which: programs whose loops ran iterations inside the small-loop kernel. */
  inKernel?: number;
}

/** Iterations from which FuzzStats counts a loop as long. */
export const LONG_LOOP = 100;

/**
 * The property; `stats` counts programs and `onProgram` sees each before it runs (for verbose logs). `lattice`:
 * programs recursing through min or max (generate-lattice.ts) instead of the foundation subset.
 */
export function differentialProperty(
  gpu: Gpu,
  stats: FuzzStats,
  options?: { generator?: GenOptions; lattice?: boolean; onProgram?: (p: GenProgram) => void; budget?: BudgetStats },
): fc.IAsyncPropertyWithHooks<[GenProgram, JoinStrategy]> {
  // Each program runs with one join lowering, so every lowering meets every kind of program.
  const strategy = fc.constantFrom<JoinStrategy>('auto', 'hash', 'sort-merge');
  const programs = options?.lattice ? latticeProgramArb() : programArb(options?.generator);
  return fc.asyncProperty(programs, strategy, async (p, joinStrategy) => {
    stats.programs++;
    options?.onProgram?.(p);
    const { iterations, inKernel } = await checkProgram(gpu, p, joinStrategy, options?.budget);
    if (iterations >= LONG_LOOP) stats.longLoops = (stats.longLoops ?? 0) + 1;
    if (inKernel > 0) stats.inKernel = (stats.inKernel ?? 0) + 1;
  });
}
