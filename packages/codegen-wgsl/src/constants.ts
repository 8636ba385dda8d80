/**
 * A kernel's constants and string tables: the host encodes them (the params uniform, the tables buffer) in the
 * order given here, and the generated WGSL reads them at the offsets constantLayout gives.
 */
import { builtinTable, predicateOperands, printExpr, wordsOf } from '@vixen/queryplan';
import type { BuiltinFn, Expr, Value } from '@vixen/queryplan';
import type { KirKernel } from '@vixen/kernel-ir';

type ConstExpr = Extract<Expr, { kind: 'const' }>;

/** Constants inside `e`, left to right; a table built-in's constant arguments are in its table instead. */
function constantsOf(e: Expr): ConstExpr[] {
  switch (e.kind) {
    case 'col':
      return [];
    case 'const':
      return [e];
    case 'binary':
      return [...constantsOf(e.left), ...constantsOf(e.right)];
    case 'call':
      return (builtinTable(e.fn) ? e.args.slice(0, 1) : e.args).flatMap(constantsOf);
  }
}

type CallExpr = Extract<Expr, { kind: 'call' }>;

/** Table built-in calls inside `e`, inner ones first. */
function tableCallsOf(e: Expr): CallExpr[] {
  switch (e.kind) {
    case 'col':
    case 'const':
      return [];
    case 'binary':
      return [...tableCallsOf(e.left), ...tableCallsOf(e.right)];
    case 'call':
      return [...e.args.flatMap(tableCallsOf), ...(builtinTable(e.fn) ? [e] : [])];
  }
}

/**
 * A table a kernel reads: `fn` tabulated over every dictionary id with constant arguments `args` (those after
 * the string). The host lays a kernel's tables out in one buffer: word k = the word offset of table k, then the
 * tables, each one bit (`bits`) or one word (`words`) per dictionary id.
 */
export interface TableSpec {
  fn: BuiltinFn;
  args: Value[];
}

/** A table call's constant arguments (those after the string); front ends reject others, so one here is a bug. */
function tableArgs(call: CallExpr): Value[] {
  return call.args.slice(1).map((a) => {
    if (a.kind !== 'const') throw new Error(`internal: ${call.fn} with a non-constant argument ${printExpr(a)}`);
    return a.value;
  });
}

/**
 * Expressions a kernel evaluates, in constant-layout order: filter (then check) operands, projections, then probe
 * keys, then build filter operands.
 */
function kernelExprs(kernel: KirKernel): Expr[] {
  switch (kernel.kind) {
    case 'mapFilter':
    case 'mergeJoin':
      return [...kernel.filter.flatMap(predicateOperands), ...kernel.project];
    case 'pipeline':
      return [
        ...[...kernel.filter, ...kernel.check].flatMap(predicateOperands),
        ...kernel.project,
        ...kernel.probes.flatMap((pr) => pr.probeKeys),
        ...kernel.probes.flatMap((pr) => (pr.buildFilter ?? []).flatMap(predicateOperands)),
      ];
    case 'sort':
    case 'unique':
    case 'hashJoin':
    case 'difference':
    case 'concat':
    case 'merge':
    case 'copy':
    case 'aggregate':
    case 'limit':
      return [];
  }
}

/** The kernel's tables (calls with equal functions and constants share one) and each call's table index. */
function tableLayout(kernel: KirKernel): { tables: TableSpec[]; slots: Map<Expr, number> } {
  const exprs = kernelExprs(kernel);
  const keys: string[] = [];
  const tables: TableSpec[] = [];
  const slots = new Map<Expr, number>();
  for (const call of exprs.flatMap(tableCallsOf)) {
    const args = tableArgs(call);
    const key = JSON.stringify([call.fn, ...args.map(String)]);
    let k = keys.indexOf(key);
    if (k < 0) {
      k = keys.push(key) - 1;
      tables.push({ fn: call.fn, args });
    }
    slots.set(call, k);
  }
  return { tables, slots };
}

// Kernels are not changed once built (passes make new ones), and a run asks for these of every kernel.
const tablesByKernel = new WeakMap<KirKernel, readonly TableSpec[]>();
const constantsByKernel = new WeakMap<KirKernel, readonly ConstExpr[]>();

/** The tables a kernel reads, in the order its WGSL indexes them. */
export function kernelTables(kernel: KirKernel): readonly TableSpec[] {
  let tables = tablesByKernel.get(kernel);
  if (!tables) tablesByKernel.set(kernel, (tables = tableLayout(kernel).tables));
  return tables;
}

/**
 * Constant expressions of a kernel in the order their encoded words appear in the params array: filter
 * operands (pipelines: then check operands), projections, then (pipelines) probe keys and build filter operands,
 * each expression's constants left to right.
 */
export function kernelConstants(kernel: KirKernel): readonly ConstExpr[] {
  let constants = constantsByKernel.get(kernel);
  if (!constants) constantsByKernel.set(kernel, (constants = kernelExprs(kernel).flatMap(constantsOf)));
  return constants;
}

/**
 * Word offset of each constant (by object identity) and the total number of constant words; the same map
 * gives each table built-in call its table index (see exprWords).
 * An object occurring twice reads its later slot; both slots hold the same encoded value.
 */
export function constantLayout(kernel: KirKernel): { offsets: Map<Expr, number>; words: number } {
  const offsets = tableLayout(kernel).slots;
  let words = 0;
  for (const c of kernelConstants(kernel)) {
    offsets.set(c, words);
    words += wordsOf(c.type);
  }
  return { offsets, words };
}