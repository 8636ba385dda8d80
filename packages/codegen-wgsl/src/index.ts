/**
 * WGSL skeletons instantiated per KIR kernel. Each kernel becomes a few passes (see passes.ts for the
 * binding contract with the host drivers in @vixen/runtime). Generated code is device-independent:
 * the workgroup size is an `override`, sizes and constants come from a uniform buffer.
 */
import { builtinTable, predicateOperands, printExpr, rowWords, wordsOf } from '@vixen/queryplan';
import type { BuiltinFn, Expr, ScalarType, Value } from '@vixen/queryplan';
import type { KirKernel, KirProgram, KirVariable, VarId } from '@vixen/kernel-ir';
import { aggregateShaders } from './kernels/aggregate.js';
import { differenceShaders } from './kernels/difference.js';
import { mapFilterShaders } from './kernels/mapFilter.js';
import { mergeShaders } from './kernels/merge.js';
import { hashJoinLayout, hashJoinShaders } from './kernels/hashJoin.js';
import { mergeJoinShaders } from './kernels/mergeJoin.js';
import { pipelineShaders } from './kernels/pipeline.js';
import { sortShaders } from './kernels/sort.js';
import { hashedUniqueShaders, uniqueShaders } from './kernels/unique.js';
import { SCAN_ADD, SCAN_WRAPPED, scanBlock } from './scan.js';
import { SUBGROUP_VARIANT, withArithHelpers } from './wgsl.js';

export { PASS_LAYOUTS, TABLES_GROUP, type BindingKind, type PassName } from './passes.js';
export { SUBGROUP_VARIANT, uniformVec4s } from './wgsl.js';
export { RADIX_BITS, radixItems, sortKeyWords } from './kernels/sort.js';
export { COMPACT_ITEMS, SELECT_STATE_HEAD, SELECT_UNORDERED } from './kernels/compaction.js';
export { rangeSelectShaders } from './kernels/rangeSelect.js';
export { isProjection } from './kernels/project.js';
export { AGG_ITEMS, aggregateStateWords } from './kernels/aggregate.js';
export { HASH_ITEMS, JOIN_PAIRS, hashBuildShaders, hashProbeShaders, joinSlotWords, type HashKeyLayout, type JoinOutputWord } from './kernels/hash.js';
export { hashJoinLayout, swapHashJoin, type HashJoinLayout } from './kernels/hashJoin.js';
export { GROUP_ITEMS, groupRowWords, groupSlotWords, hashAggregateShaders, type HashAggregate } from './kernels/hashAggregate.js';
export { MERGE_TILE } from './kernels/merge.js';
export { aggregateSlotWords, groupSlotLayout, pipelineBuildLayouts, pipelineBuildPass, pipelineParamsAt } from './kernels/pipeline.js';

/** Pass name -> WGSL module source. */
export type KernelShaders = Record<string, string>;

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
function constantLayout(kernel: KirKernel): { offsets: Map<Expr, number>; words: number } {
  const offsets = tableLayout(kernel).slots;
  let words = 0;
  for (const c of kernelConstants(kernel)) {
    offsets.set(c, words);
    words += wordsOf(c.type);
  }
  return { offsets, words };
}

const scanShaders: KernelShaders = { scanBlock: scanBlock(false), [`scanBlock${SUBGROUP_VARIANT}`]: scanBlock(true), scanAdd: SCAN_ADD };

export interface ShaderOptions {
  /** A pipeline's lookup order (pipelineShaders); default: its probes' order. */
  lookupOrder?: readonly number[];
}

export function generateKernelShaders(kernel: KirKernel, variables: readonly KirVariable[], options: ShaderOptions = {}): KernelShaders {
  const shaders = kernelSkeletons(kernel, variables, options);
  return Object.fromEntries(Object.entries(shaders).map(([pass, src]) => [pass, withArithHelpers(src)]));
}

function kernelSkeletons(kernel: KirKernel, variables: readonly KirVariable[], options: ShaderOptions): KernelShaders {
  const types = (id: VarId): ScalarType[] => {
    const v = variables.find((x) => x.id === id);
    if (!v) throw new Error(`internal: kernel ${kernel.id} uses unknown variable ${id}`);
    return v.columns;
  };
  const { offsets, words } = constantLayout(kernel);
  switch (kernel.kind) {
    case 'mapFilter': {
      const projected = rowWords(kernel.project.map((e) => e.type));
      if (projected !== rowWords(types(kernel.output))) throw new Error(`internal: mapFilter ${kernel.id} projects ${projected} words`);
      return mapFilterShaders(types(kernel.input), kernel.filter, kernel.project, offsets, words);
    }
    case 'sort':
      return { ...sortShaders(types(kernel.input), kernel.keys), ...scanShaders };
    case 'unique':
      return (kernel.hashed ? hashedUniqueShaders : uniqueShaders)(types(kernel.input));
    case 'mergeJoin':
      return {
        ...mergeJoinShaders(types(kernel.left), types(kernel.right), kernel.leftKeys, kernel.rightKeys, kernel.filter, kernel.project, offsets, words),
        ...scanShaders,
        scanWrapped: SCAN_WRAPPED,
      };
    case 'hashJoin':
      return hashJoinShaders(hashJoinLayout(kernel, types(kernel.build), types(kernel.probe)));
    case 'pipeline':
      return pipelineShaders(kernel, types(kernel.input), kernel.probes.map((pr) => types(pr.build)), offsets, words, options.lookupOrder);
    case 'difference':
      return differenceShaders(types(kernel.left));
    case 'merge':
      return mergeShaders(types(kernel.left), kernel.keys);
    case 'concat':
    case 'copy':
      // Pure buffer copies on the host queue.
      return {};
    case 'limit':
      // Runs on the host.
      return {};
    case 'aggregate':
      return { ...aggregateShaders(types(kernel.input), kernel.groupBy, kernel.aggregates), ...scanShaders };
  }
}

/** Shaders of every kernel; index = kernel id. */
export function generateProgramShaders(program: KirProgram): KernelShaders[] {
  return program.kernels.map((k) => generateKernelShaders(k, program.variables));
}
