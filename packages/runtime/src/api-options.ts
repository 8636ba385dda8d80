/**
 * zod guards for the arguments of `compile` and the options of `Program.run`/`interpret`: API callers (JavaScript included) get a clear error
 * naming the option instead of a failure deep in the run. Unknown keys pass, so adding an option never breaks
 * callers that spread extra fields.
 */
import { z } from 'zod';
import { VixenError } from '@vixen/queryplan';
import { JOIN_STRATEGIES } from '@vixen/kernel-ir';
import { PARSE_MODES } from './parse-mode.js';

const callback = () => z.custom<(...args: never[]) => unknown>((v) => typeof v === 'function', 'expected a function');
const positiveInteger = z.number().refine((n) => Number.isSafeInteger(n) && n > 0, 'expected a positive whole number');

/**
 * A relation's facts: an array of rows, each an array, checked by one plain loop (zod's nested array schema walks
 * every value: about 100 ms per million rows, inside a run's time), or `{ columns }`, arrays (typed or plain) of one
 * length. Values are checked per column type when facts are loaded (facts/rows.ts), with row or column in the message.
 */
const factRelation = z.custom<unknown>().superRefine((given, ctx) => {
  if (Array.isArray(given)) {
    const i = given.findIndex((row) => !Array.isArray(row));
    if (i >= 0) ctx.addIssue({ code: 'custom', path: [i], message: `expected array, received ${typeof given[i]}` });
    return;
  }
  const columns: unknown = typeof given === 'object' && given !== null ? (given as { columns?: unknown }).columns : undefined;
  if (!Array.isArray(columns)) {
    ctx.addIssue({ code: 'custom', message: 'expected an array of rows or { columns: [...] }, one array per column' });
    return;
  }
  const isColumn = (c: unknown): c is ArrayLike<unknown> => Array.isArray(c) || (ArrayBuffer.isView(c) && !(c instanceof DataView));
  columns.forEach((c: unknown, i) => {
    if (!isColumn(c)) ctx.addIssue({ code: 'custom', path: ['columns', i], message: `expected an array or a typed array, received ${typeof c}` });
    else if (isColumn(columns[0]) && c.length !== columns[0].length) {
      ctx.addIssue({ code: 'custom', path: ['columns', i], message: `expected ${columns[0].length} values (as columns.0), found ${c.length}` });
    }
  });
});

const runOptionsSchema = z.object({
  facts: z.record(z.string(), factRelation).optional(),
  factsDir: z.string().min(1).optional(),
  outputs: z.array(z.string()).optional(),
  gpu: z.object({ device: z.unknown() }).loose().optional(),
  backend: z.enum(['auto', 'vulkan', 'opengles']).optional(),
  maxIterations: positiveInteger.optional(),
  maxTuples: positiveInteger.optional(),
  timeout: z.number().refine((n) => Number.isFinite(n) && n > 0, 'expected a positive number of seconds').optional(),
  // Sizes are parsed (and their errors worded) by parseByteSize.
  maxDeviceMemory: z.union([z.number(), z.string()]).optional(),
  profile: z.boolean().optional(),
  parse: z.enum(PARSE_MODES).optional(),
  onProgress: callback().optional(),
  onLoadProgress: callback().optional(),
  loopBatches: z.boolean().optional(),
  smallLoops: z.boolean().optional(),
  replay: z.boolean().optional(),
});

const databaseOptionsSchema = z.object({
  maxResidentBytes: z.number().nonnegative().optional(),
  hostCache: z.boolean().optional(),
  parse: z.enum(PARSE_MODES).optional(),
  project: z.enum(PARSE_MODES).optional(),
  storeReads: z.object({ pieceBytes: z.number().int().min(4), inFlight: z.number().int().min(1) }).strict().optional(),
  facts: runOptionsSchema.shape.facts,
  reopen: callback().optional(),
});

const compileArgsSchema = z.object({
  source: z.union([z.string(), z.array(z.object({ path: z.string(), text: z.string() }))], {
    error: 'expected source text or an array of { path, text } files',
  }),
  options: z
    .object({
      filename: z.string().optional(),
      readFile: callback().optional(),
      onWarnings: callback().optional(),
      joinStrategy: z.enum(JOIN_STRATEGIES).optional(),
      fusion: z.boolean().optional(),
      outputs: z.array(z.string().min(1)).optional(),
      // Pass names are checked against the pipelines (checkPassOptions), with the known ones in the message.
      passes: z
        .object({
          disable: z.array(z.string()).optional(),
          printAfter: z.array(z.string()).optional(),
          onPrint: callback().optional(),
          validate: z.boolean().optional(),
        })
        .optional(),
    })
    .optional(),
});

const issueText = (path: readonly PropertyKey[], message: string): string => `${path.map(String).join('.') || '(options)'}: ${message}`;

function fail(what: string, issues: readonly string[]): never {
  throw new VixenError({ severity: 'error', message: `invalid ${what}: ${issues.join('; ')}` });
}

/** Throws a VixenError naming every bad field (with its path) unless `value` fits `schema`. */
function check(schema: z.ZodType, value: unknown, what: string): void {
  const r = schema.safeParse(value);
  if (!r.success) fail(what, r.error.issues.map((i) => issueText(i.path, i.message)));
}

export function checkDatabaseOptions(options: unknown): void {
  check(databaseOptionsSchema, options, 'Database options');
}

export function checkCompileArgs(source: unknown, options: unknown): void {
  check(compileArgsSchema, { source, options }, 'compile arguments');
}

/**
 * `what` names the call in the message (run, interpret). The fields given are parsed one by one, each by its
 * schema: a run checks its options every time, and parsing the whole object schema took 16 us of a resident SSB
 * Q1.1 run's host time (bundled, llvmpipe host), most of it on the fields left out.
 */
export function checkRunOptions(options: unknown, what: string): void {
  if (typeof options !== 'object' || options === null || Array.isArray(options)) {
    check(runOptionsSchema, options, `${what} options`);
    return;
  }
  const shape: Record<string, z.ZodType> = runOptionsSchema.shape;
  const issues: string[] = [];
  for (const [key, value] of Object.entries(options)) {
    const r = Object.hasOwn(shape, key) ? shape[key]!.safeParse(value) : undefined;
    if (r && !r.success) issues.push(...r.error.issues.map((i) => issueText([key, ...i.path], i.message)));
  }
  if (issues.length > 0) fail(`${what} options`, issues);
}
