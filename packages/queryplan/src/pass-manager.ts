/**
 * The pass manager of both IRs (the QP pipeline here, the kernel-IR one in kernel-ir): a pipeline is data
 * (passes in sequence, repeated until unchanged, or run when an option holds), so it can be listed; each pass has
 * a name, so a run can skip optional passes, print the IR after some, and validate the IR after every pass,
 * naming the pass that broke it (on in tests, off by default: it costs a validation per pass).
 */
import { errorAt, VixenError, type Diagnostic } from './diagnostics.js';

/** One transformation of `IR`; `Ctx` holds the compile options passes read (one object for a whole pipeline). */
export interface Pass<IR, Ctx = unknown> {
  /** kebab-case, the name of the file that defines the pass. */
  readonly name: string;
  /** Whether results are wrong, or the IR invalid, without it: such a pass cannot be disabled. */
  readonly required: boolean;
  /** Returns `ir` itself when it changes nothing: fixpoints stop on that. */
  run(ir: IR, ctx: Ctx): IR;
}

export type Step<IR, Ctx> =
  | { readonly kind: 'pass'; readonly pass: Pass<IR, Ctx> }
  | { readonly kind: 'sequence'; readonly steps: readonly Step<IR, Ctx>[] }
  /** `body` again until a round changes nothing; `maxRounds` bounds passes that keep rewriting (the last result is kept). */
  | { readonly kind: 'fixpoint'; readonly body: Step<IR, Ctx>; readonly maxRounds: number }
  /** `body` only where `holds` (e.g. an optimization an option switches off); `condition` says so in listings. */
  | { readonly kind: 'when'; readonly condition: string; readonly holds: (ctx: Ctx) => boolean; readonly body: Step<IR, Ctx> };

type StepOrPass<IR, Ctx> = Step<IR, Ctx> | Pass<IR, Ctx>;

const asStep = <IR, Ctx>(s: StepOrPass<IR, Ctx>): Step<IR, Ctx> => ('run' in s ? { kind: 'pass', pass: s } : s);

export function sequence<IR, Ctx>(...steps: StepOrPass<IR, Ctx>[]): Step<IR, Ctx> {
  return { kind: 'sequence', steps: steps.map(asStep) };
}

export function fixpoint<IR, Ctx>(body: StepOrPass<IR, Ctx>, maxRounds = 100): Step<IR, Ctx> {
  return { kind: 'fixpoint', body: asStep(body), maxRounds };
}

export function when<IR, Ctx>(condition: string, holds: (ctx: Ctx) => boolean, body: StepOrPass<IR, Ctx>): Step<IR, Ctx> {
  return { kind: 'when', condition, holds, body: asStep(body) };
}

export interface Pipeline<IR, Ctx> {
  /** The IR's name in listings and messages ('QP', 'KIR'). */
  readonly stage: string;
  readonly steps: Step<IR, Ctx>;
  /** The IR's problems (none when valid), checked after every pass that changed it when validation is on. */
  readonly validate: (ir: IR) => readonly Diagnostic[];
}

/** Debugging switches of a pipeline run, by pass name. A name the pipeline lacks is left to the other stages' pipelines. */
export interface PassOptions<IR> {
  /** Optional passes to skip, every occurrence; disabling a required one is an error. */
  disable?: readonly string[];
  /** Passes after every run of which `onPrint` gets the IR. */
  printAfter?: readonly string[];
  onPrint?: (pass: string, ir: IR) => void;
  /** Validate the IR after every pass; default: when the environment sets VIXEN_VALIDATE_PASSES=1 (vitest.config.ts does). */
  validate?: boolean;
}

/** One occurrence of a pass in a pipeline, in the order they run. */
export interface PassEntry {
  stage: string;
  name: string;
  required: boolean;
  /** The steps around it, outermost first: `fixpoint #n` (numbered in the pipeline), `when <condition>`. */
  within: string[];
}

export function listPasses<IR, Ctx>(pipeline: Pipeline<IR, Ctx>): PassEntry[] {
  const out: PassEntry[] = [];
  let fixpoints = 0;
  const walk = (s: Step<IR, Ctx>, within: string[]): void => {
    switch (s.kind) {
      case 'pass':
        out.push({ stage: pipeline.stage, name: s.pass.name, required: s.pass.required, within });
        return;
      case 'sequence':
        for (const t of s.steps) walk(t, within);
        return;
      case 'fixpoint':
        walk(s.body, [...within, `fixpoint #${++fixpoints}`]);
        return;
      case 'when':
        walk(s.body, [...within, `when ${s.condition}`]);
        return;
    }
  };
  walk(pipeline.steps, []);
  return out;
}

/** Throws a VixenError for a disabled pass that is required. */
function checkDisabled(entries: readonly PassEntry[], disable: readonly string[]): void {
  const required = [...new Set(entries.filter((e) => e.required && disable.includes(e.name)).map((e) => e.name))];
  if (required.length > 0) {
    const [what, verb] = required.length > 1 ? ['passes', 'are'] : ['pass', 'is'];
    throw new VixenError(errorAt(`${what} ${required.join(', ')} ${verb} required for correct results and cannot be disabled`));
  }
}

/**
 * Checks the pass names of `options` against the passes of every stage (`listPasses` of each pipeline): an
 * unknown name, or a required pass disabled, is a VixenError. The API checks this before running any pipeline.
 */
export function checkPassOptions(options: Pick<PassOptions<unknown>, 'disable' | 'printAfter'>, passes: readonly PassEntry[]): void {
  const known = [...new Set(passes.map((e) => e.name))];
  const unknown = [...new Set([...(options.disable ?? []), ...(options.printAfter ?? [])].filter((n) => !known.includes(n)))];
  if (unknown.length > 0) throw new VixenError(errorAt(`unknown pass${unknown.length > 1 ? 'es' : ''} ${unknown.join(', ')} (known: ${known.join(', ')})`));
  checkDisabled(passes, options.disable ?? []);
}

/** Whether pipelines validate after every pass when the caller does not say. */
function validateByDefault(): boolean {
  // `process` is absent where no Node runs (a browser build).
  return typeof process !== 'undefined' && process.env.VIXEN_VALIDATE_PASSES === '1';
}

/** `ir` after the passes of `pipeline`, each given `ctx`, with the switches of `options`. */
export function runPipeline<IR, Ctx>(pipeline: Pipeline<IR, Ctx>, ir: IR, ctx: Ctx, options: PassOptions<IR> = {}): IR {
  const disabled = new Set(options.disable ?? []);
  checkDisabled(listPasses(pipeline), [...disabled]);
  const printAfter = new Set(options.printAfter ?? []);
  const { onPrint } = options;
  if (printAfter.size > 0 && !onPrint) throw new VixenError(errorAt('printAfter needs onPrint, which receives the IR'));
  const validate = options.validate ?? validateByDefault();
  /** Throws an internal error naming what left the IR invalid: a compiler bug, not the user's. */
  const check = (current: IR, after: string): void => {
    const errors = pipeline.validate(current).filter((d) => d.severity === 'error');
    if (errors.length > 0) throw new Error(`internal compiler error: invalid ${pipeline.stage} ${after}:\n${errors.map((d) => d.message).join('\n')}`);
  };
  if (validate) check(ir, 'given to the pass pipeline');
  const exec = (s: Step<IR, Ctx>, current: IR): IR => {
    switch (s.kind) {
      case 'pass': {
        if (disabled.has(s.pass.name)) return current;
        const next = s.pass.run(current, ctx);
        if (validate && next !== current) check(next, `after pass ${s.pass.name}`);
        if (onPrint && printAfter.has(s.pass.name)) onPrint(s.pass.name, next);
        return next;
      }
      case 'sequence':
        return s.steps.reduce((acc, t) => exec(t, acc), current);
      case 'fixpoint': {
        for (let round = 0; round < s.maxRounds; round++) {
          const next = exec(s.body, current);
          if (next === current) break;
          current = next;
        }
        return current;
      }
      case 'when':
        return s.holds(ctx) ? exec(s.body, current) : current;
    }
  };
  return exec(pipeline.steps, ir);
}
