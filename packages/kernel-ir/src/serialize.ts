/**
 * JSON form of kernel IR, for compiled program files. The JSON mirrors the IR node for node, except that
 * int64 and decimal values (JS bigint; a decimal scaled by 10^4) are written as decimal strings, float32 values
 * that JSON cannot hold (NaN, infinities) as strings too; the column or constant type next to them says
 * how to read them back. `parseKir` checks every node with zod, then runs `validateKir`.
 */
import { z } from 'zod';
import { AGGREGATE_FNS, ARITH_OPS, BUILTINS, errorAt, SCALAR_TYPES, VixenError, type Expr, type Row, type ScalarType, type Value } from '@vixen/queryplan';
import type { AggregateFn, ArithOp, BuiltinFn, Predicate } from '@vixen/queryplan';
import type { KirProgram } from './ir.js';
import { validateKir, valueHasType } from './validate.js';

/** Converts to plain JSON data: bigint -> decimal string, non-finite numbers -> string, absent optional fields dropped. */
export function serializeKir(p: KirProgram): unknown {
  return JSON.parse(
    JSON.stringify(p, (_key, v: unknown) =>
      typeof v === 'bigint' || (typeof v === 'number' && !Number.isFinite(v)) ? String(v) : v,
    ),
  );
}

const bigintString = (type: 'int64' | 'decimal') =>
  z
    .string()
    .regex(/^-?\d+$/, `expected an ${type} as a decimal string`)
    .transform((s) => BigInt(s))
    .refine((n) => valueHasType(n, type), `${type} out of range`);

const float32Value = z
  .union([z.number(), z.enum(['NaN', 'Infinity', '-Infinity']).transform(Number)])
  .refine((n) => valueHasType(n, 'float32'), 'not a float32 value');

/** How a JSON value of each scalar type reads back. */
const valueSchemas: { [T in ScalarType]: z.ZodType<Value> } = {
  int32: z.int32(),
  int64: bigintString('int64'),
  uint32: z.int().refine((n) => valueHasType(n, 'uint32'), 'uint32 out of range'),
  float32: float32Value,
  decimal: bigintString('decimal'),
  string: z.string(),
  boolean: z.boolean(),
  date: z.int32(),
};

const scalarType = z.enum(SCALAR_TYPES as [ScalarType, ...ScalarType[]]);
const index = z.int().nonnegative();
const varId = index;

const aggregate = z.strictObject({ fn: z.enum(AGGREGATE_FNS as [AggregateFn, ...AggregateFn[]]), column: index.optional(), type: scalarType });

const position = z.strictObject({ line: z.int(), column: z.int(), offset: z.int() });
const span = z.strictObject({ file: z.string(), start: position, end: position });

const columns = z.array(z.strictObject({ name: z.string(), type: scalarType }));

const relationDecl = z.strictObject({
  name: z.string(),
  columns,
  kind: z.enum(['edb', 'idb', 'temp']),
  output: z.boolean(),
  span: span.optional(),
  pruned: z.strictObject({ sourceColumns: columns, loadColumns: z.array(index) }).optional(),
  deviceColumns: z.array(index).optional(),
  keys: z.array(z.strictObject({ columns: z.array(index), text: z.string(), span: span.optional() })).optional(),
});

const constOf = <T extends ScalarType>(type: T) =>
  z.strictObject({ kind: z.literal('const'), type: z.literal(type), value: valueSchemas[type] });

const constant = z.discriminatedUnion('type', [
  constOf('int32'),
  constOf('int64'),
  constOf('uint32'),
  constOf('float32'),
  constOf('decimal'),
  constOf('string'),
  constOf('boolean'),
  constOf('date'),
]);

const expr: z.ZodType<Expr> = z.discriminatedUnion('kind', [
  z.strictObject({ kind: z.literal('col'), index, type: scalarType }),
  constant,
  z.strictObject({
    kind: z.literal('binary'),
    op: z.enum(ARITH_OPS as [ArithOp, ...ArithOp[]]),
    left: z.lazy(() => expr),
    right: z.lazy(() => expr),
    type: scalarType,
  }),
  z.strictObject({
    kind: z.literal('call'),
    fn: z.enum(Object.keys(BUILTINS) as [BuiltinFn, ...BuiltinFn[]]),
    args: z.array(z.lazy(() => expr)),
    type: scalarType,
  }),
]) as z.ZodType<Expr>;

const predicate: z.ZodType<Predicate> = z.discriminatedUnion('kind', [
  z.strictObject({
    kind: z.literal('compare'),
    op: z.enum(['=', '!=', '<', '<=', '>', '>=']),
    left: expr,
    right: expr,
  }),
  z.strictObject({ kind: z.literal('any'), alternatives: z.array(z.array(z.lazy(() => predicate)).min(1)).min(2) }),
]);

const origin = z.strictObject({ block: z.string(), command: index }).optional();
const rules = z.array(z.strictObject({ file: z.string(), line: index, text: z.string() })).optional();

const kernel = z.discriminatedUnion('kind', [
  z.strictObject({
    kind: z.literal('mapFilter'),
    id: index,
    origin,
    rules,
    input: varId,
    output: varId,
    filter: z.array(predicate),
    project: z.array(expr),
    fused: z.array(index).optional(),
    unordered: z.literal(true).optional(),
  }),
  z.strictObject({ kind: z.literal('sort'), id: index, origin, rules, input: varId, output: varId, keys: z.array(index) }),
  z.strictObject({ kind: z.literal('unique'), id: index, origin, rules, input: varId, output: varId, hashed: z.literal(true).optional() }),
  z.strictObject({
    kind: z.literal('mergeJoin'),
    id: index,
    origin,
    rules,
    left: varId,
    right: varId,
    output: varId,
    leftKeys: z.array(index),
    rightKeys: z.array(index),
    filter: z.array(predicate),
    project: z.array(expr),
  }),
  z.strictObject({
    kind: z.literal('hashJoin'),
    id: index,
    origin,
    rules,
    build: varId,
    probe: varId,
    output: varId,
    buildKeys: z.array(index),
    probeKeys: z.array(index),
    project: z.array(z.strictObject({ side: z.enum(['build', 'probe']), column: index })),
  }),
  z.strictObject({
    kind: z.literal('pipeline'),
    id: index,
    origin,
    rules,
    input: varId,
    output: varId,
    filter: z.array(predicate),
    probes: z.array(z.strictObject({ build: varId, buildKeys: z.array(index), probeKeys: z.array(expr), buildFilter: z.array(predicate).optional(), negated: z.literal(true).optional() })),
    check: z.array(predicate),
    project: z.array(expr),
    aggregate: z.strictObject({ groupBy: z.array(index), aggregates: z.array(aggregate) }).optional(),
    fused: z.array(index),
  }),
  z.strictObject({ kind: z.literal('difference'), id: index, origin, rules, left: varId, right: varId, output: varId }),
  z.strictObject({ kind: z.literal('concat'), id: index, origin, rules, left: varId, right: varId, output: varId }),
  z.strictObject({ kind: z.literal('merge'), id: index, origin, rules, left: varId, right: varId, output: varId, keys: z.array(index) }),
  z.strictObject({ kind: z.literal('copy'), id: index, origin, rules, input: varId, output: varId }),
  z.strictObject({
    kind: z.literal('limit'),
    id: index,
    origin,
    rules,
    input: varId,
    output: varId,
    keys: z.array(z.strictObject({ column: index, descending: z.boolean() })),
    count: index,
  }),
  z.strictObject({
    kind: z.literal('aggregate'),
    id: index,
    origin,
    rules,
    input: varId,
    output: varId,
    groupBy: z.array(index),
    aggregates: z.array(aggregate),
  }),
]);

const command = z.discriminatedUnion('kind', [
  z.strictObject({ kind: z.literal('launch'), kernel: index }),
  z.strictObject({ kind: z.literal('free'), vars: z.array(varId) }),
  z.strictObject({ kind: z.literal('clear'), var: varId }),
]);

const terminator = z.discriminatedUnion('kind', [
  z.strictObject({ kind: z.literal('jump'), target: z.string() }),
  z.strictObject({
    kind: z.literal('branch'),
    condition: z.strictObject({ kind: z.literal('empty'), vars: z.array(varId) }),
    ifTrue: z.string(),
    ifFalse: z.string(),
  }),
  z.strictObject({ kind: z.literal('halt') }),
]);

const block = z.strictObject({ label: z.string(), commands: z.array(command), terminator });

const variable = z.strictObject({
  id: varId,
  name: z.string(),
  columns: z.array(scalarType),
  relation: z.string().optional(),
});

/** The whole program. Fact values are read by their relation's column types, so they are checked last. */
export const kirProgramSchema: z.ZodType<KirProgram> = z
  .strictObject({
    relations: z.array(relationDecl),
    relationVars: z.record(z.string(), varId),
    facts: z.record(z.string(), z.array(z.array(z.union([z.number(), z.string(), z.boolean()])))),
    variables: z.array(variable),
    kernels: z.array(kernel),
    blocks: z.array(block),
    entry: z.string(),
    orders: z
      .record(z.string(), z.strictObject({ keys: z.array(z.strictObject({ column: index, descending: z.boolean() })), limit: index.optional() }))
      .optional(),
    constraints: z
      .array(z.strictObject({ kind: z.enum(['functional', 'constraint']), relation: z.string(), text: z.string(), keys: index.optional(), span: span.optional() }))
      .optional(),
    emptyOnEntry: z.array(z.string()).optional(),
  })
  .transform((p, ctx): KirProgram => {
    const columns = new Map(p.relations.map((r) => [r.name, r.columns.map((c) => c.type)]));
    const facts: Record<string, Row[]> = {};
    for (const [name, rows] of Object.entries(p.facts)) {
      const types = columns.get(name);
      // Rows that do not fit a relation stay as they are: validateKir reports them.
      facts[name] = rows.map((row, i) =>
        !types || row.length !== types.length
          ? row
          : row.map((v, j) => {
              const parsed = valueSchemas[types[j]!].safeParse(v);
              if (parsed.success) return parsed.data;
              for (const issue of parsed.error.issues) {
                ctx.issues.push({ code: 'custom', message: issue.message, input: v, path: ['facts', name, i, j, ...issue.path] });
              }
              return v;
            }),
      );
    }
    return { ...p, facts };
  });

function issuePath(path: readonly PropertyKey[]): string {
  return path.length === 0 ? '(root)' : path.map(String).join('.');
}

/** Reads a serialized program back; throws a VixenError listing every problem, each with its JSON path. */
export function parseKir(json: unknown): KirProgram {
  const parsed = kirProgramSchema.safeParse(json);
  if (!parsed.success) {
    throw new VixenError(parsed.error.issues.map((i) => errorAt(`${issuePath(i.path)}: ${i.message}`)));
  }
  const problems = validateKir(parsed.data);
  if (problems.length > 0) throw new VixenError(problems);
  return parsed.data;
}
