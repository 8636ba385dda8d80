/**
 * JSON form of kernel IR, for compiled program files. The JSON mirrors the IR node for node, except that
 * int64 values (JS bigint) are written as decimal strings; the column or constant type next to them says
 * how to read them back. `parseKir` checks every node with zod, then runs `validateKir`.
 */
import { z } from 'zod';
import { errorAt, VixenError, type Row, type ScalarType, type Value } from '@vixen/queryplan';
import type { KirProgram } from './ir.js';
import { validateKir, valueHasType } from './validate.js';

/** Converts to plain JSON data: bigint -> decimal string, absent optional fields dropped. */
export function serializeKir(p: KirProgram): unknown {
  return JSON.parse(JSON.stringify(p, (_key, v: unknown) => (typeof v === 'bigint' ? v.toString() : v)));
}

const int64String = z
  .string()
  .regex(/^-?\d+$/, 'expected an int64 as a decimal string')
  .transform((s) => BigInt(s))
  .refine((n) => valueHasType(n, 'int64'), 'int64 out of range');

/** How a JSON value of each scalar type reads back. */
const valueSchemas: { [T in ScalarType]: z.ZodType<Value> } = {
  int32: z.int32(),
  int64: int64String,
  string: z.string(),
};

const scalarType = z.enum(['int32', 'int64', 'string']);
const index = z.int().nonnegative();
const varId = index;

const position = z.strictObject({ line: z.int(), column: z.int(), offset: z.int() });
const span = z.strictObject({ file: z.string(), start: position, end: position });

const relationDecl = z.strictObject({
  name: z.string(),
  columns: z.array(z.strictObject({ name: z.string(), type: scalarType })),
  kind: z.enum(['edb', 'idb', 'temp']),
  output: z.boolean(),
  span: span.optional(),
});

const expr = z.discriminatedUnion('kind', [
  z.strictObject({ kind: z.literal('col'), index, type: scalarType }),
  z.discriminatedUnion('type', [
    z.strictObject({ kind: z.literal('const'), type: z.literal('int32'), value: valueSchemas.int32 }),
    z.strictObject({ kind: z.literal('const'), type: z.literal('int64'), value: valueSchemas.int64 }),
    z.strictObject({ kind: z.literal('const'), type: z.literal('string'), value: valueSchemas.string }),
  ]),
]);

const predicate = z.strictObject({
  kind: z.literal('compare'),
  op: z.enum(['=', '!=', '<', '<=', '>', '>=']),
  left: expr,
  right: expr,
});

const kernel = z.discriminatedUnion('kind', [
  z.strictObject({
    kind: z.literal('mapFilter'),
    id: index,
    input: varId,
    output: varId,
    filter: z.array(predicate),
    project: z.array(expr),
  }),
  z.strictObject({ kind: z.literal('sort'), id: index, input: varId, output: varId, keys: z.array(index) }),
  z.strictObject({ kind: z.literal('unique'), id: index, input: varId, output: varId }),
  z.strictObject({
    kind: z.literal('mergeJoin'),
    id: index,
    left: varId,
    right: varId,
    output: varId,
    leftKeys: z.array(index),
    rightKeys: z.array(index),
    filter: z.array(predicate),
    project: z.array(expr),
  }),
  z.strictObject({ kind: z.literal('difference'), id: index, left: varId, right: varId, output: varId }),
  z.strictObject({ kind: z.literal('concat'), id: index, left: varId, right: varId, output: varId }),
  z.strictObject({ kind: z.literal('copy'), id: index, input: varId, output: varId }),
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
    facts: z.record(z.string(), z.array(z.array(z.union([z.number(), z.string()])))),
    variables: z.array(variable),
    kernels: z.array(kernel),
    blocks: z.array(block),
    entry: z.string(),
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
