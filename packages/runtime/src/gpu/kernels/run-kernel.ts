/**
 * Host drivers: run one KIR kernel's passes on the device, one file per kernel family beside this dispatch. Where
 * the output is bounded by an input (all but mergeJoin) its row count stays pending on the device
 * (DeviceRelation.pending); passes read pending sizes from device words, and only kernels that must size something
 * exactly sync with the host (syncCounts), resolving every pending count in the same round trip. Relations past
 * one binding, and results that would pass one, run through gpu/chunks.ts.
 */
import { rowWords, wordsOf, type Expr, type ScalarType } from '@vixen/queryplan';
import { generateKernelShaders, hashJoinLayout, isProjection, joinWritesPerOutputRow, kernelConstants, kernelTables, sortKeyWords, swapHashJoin, swapPipeline, type KernelShaders } from '@vixen/codegen-wgsl';
import { kernelInputs, type KirKernel, type KirVariable, type VarId } from '@vixen/kernel-ir';
import { aggregateRows } from '../aggregate.js';
import { mergesPastBinding, pipelinePastBinding, releaseUnshared, runChunked, sortedAlready } from '../chunks.js';
import { internals, type Gpu, type GpuImpl } from '../device.js';
import { hashJoinRows } from '../hash.js';
import { limitOnDevice, limitRows } from '../limit.js';
import { launchIsEmpty, pipelineAggregateRows, pipelineRows, sameGroups } from '../pipeline.js';
import { madeUpShaders, Recorder, type Bound } from '../recorder.js';
import { bound, DeviceLimitError, exactCount, ResultLimitError, sizeOf, type DeviceRelation } from '../relations.js';
import { concatenate } from './concat.js';
import { orderedLookups } from './lookup-order.js';
import { mergeRows } from './merge.js';
import { compact, rightRun } from './merge-join.js';
import { project } from './project.js';
import { select } from './select.js';
import { sortRows } from './sort.js';
import { hashedUnique } from './unique.js';

/**
 * WGSL of hash joins run with build and probe swapped, by kernel: a fixpoint may swap at every iteration, and
 * regenerating the text each time also made the pipeline cache hash it anew.
 */
const swappedShaders = new WeakMap<KirKernel, KernelShaders>();

type PipelineKernel = Extract<KirKernel, { kind: 'pipeline' }>;

/** Aggregating pipelines run with their scanned and build sides exchanged, with their passes, by kernel (null: never). */
const swappedPipelines = new WeakMap<KirKernel, { kernel: PipelineKernel; shaders: KernelShaders } | null>();

/** The share of its rows a filter is taken to keep where a pipeline's build side is chosen (before it runs). */
const FILTER_KEEPS = 0.25;

/**
 * The aggregating pipeline to run instead of `kernel` on `a` and `b`, scanning `b` and building on `a` (swapPipeline),
 * where `a` would keep at most half the rows `b` does by FILTER_KEEPS: a smaller table, built once and looked up from
 * cache. TPC-H Q4 scanned 15M orders for the 4% in its quarter and built a table of the 13.75M orders with late lines.
 */
function swappedPipeline(g: GpuImpl, kernel: PipelineKernel, [a, b]: readonly DeviceRelation[], variables: readonly KirVariable[]): { kernel: PipelineKernel; shaders: KernelShaders } | undefined {
  const probe = kernel.probes[0];
  if (!kernel.aggregate || kernel.probes.length !== 1 || !a || !b || a.chunks || kernelTables(kernel).length > 0) return undefined;
  // By bounds where a sync settled a pending count: a run that syncs must choose as the runs that guess do.
  const kept = (rel: DeviceRelation, filtered: boolean): number => (rel.bound ?? rel.count) * (filtered ? FILTER_KEEPS : 1);
  if (kept(a, kernel.filter.length > 0) > kept(b, (probe?.buildFilter?.length ?? 0) > 0) / 2) return undefined;
  let swapped = swappedPipelines.get(kernel);
  if (swapped === undefined) {
    const columns = (id: VarId): ScalarType[] => variables.find((v) => v.id === id)!.columns;
    const k = swapPipeline(kernel, columns(kernel.input), columns(probe!.build));
    swapped = k ? { kernel: k, shaders: generateKernelShaders(k, variables) } : null;
    swappedPipelines.set(kernel, swapped);
    if (k) {
      swappedPipelines.set(k, null);
      sameGroups(k, kernel);
    }
  }
  return swapped && !pipelinePastBinding(g, swapped.kernel, [b, a], variables) ? swapped : undefined;
}

/** One kernel on inputs in one buffer each: the dispatch over KIR kernel kinds. */
async function run(
  g: GpuImpl,
  kernel: KirKernel,
  shaders: KernelShaders,
  inputs: DeviceRelation[],
  constWords: Uint32Array,
  variables: readonly KirVariable[],
  tables: Bound | undefined,
): Promise<DeviceRelation> {
  const columns = (id: VarId): ScalarType[] => {
    const v = variables.find((x) => x.id === id);
    if (!v) throw new Error(`internal: kernel ${kernel.id} uses unknown variable ${id}`);
    return v.columns;
  };
  const outWidth = rowWords(columns(kernel.output));
  const empty: DeviceRelation = { buffer: null, count: 0, width: outWidth };
  const [a, b] = inputs as [DeviceRelation, DeviceRelation];
  switch (kernel.kind) {
    case 'mapFilter':
    case 'unique': {
      if (a.count === 0) return empty;
      if (kernel.kind === 'mapFilter' && isProjection(columns(kernel.input), kernel.filter, outWidth)) return project(g, shaders, a, outWidth, constWords, tables);
      if (kernel.kind === 'unique' && a.canonical) return a;
      if (kernel.kind === 'unique' && a.count === 1 && !a.chunks) return atMostOneRow(a);
      if (kernel.kind === 'unique' && kernel.hashed) return hashedUnique(g, shaders, a, outWidth);
      const out = await select(g, shaders, {
        pass: 'select',
        inputs: [bound(a)],
        rows: a.count,
        sizes: [sizeOf(a)],
        constants: constWords,
        outWidth,
        ...(tables ? { tables } : {}),
        unordered: kernel.kind === 'mapFilter' && kernel.unordered === true,
      });
      return kernel.kind === 'unique' ? { ...out, canonical: true } : out;
    }
    case 'difference':
      if (a.count === 0) return empty;
      if (b.count === 0) return concatenate(g, [a], outWidth);
      return select(g, shaders, {
        pass: 'selectAbsent',
        inputs: [bound(a), bound(b)],
        rows: a.count,
        sizes: [sizeOf(a), sizeOf(b)],
        constants: constWords,
        outWidth,
      });
    case 'mergeJoin': {
      if (a.count === 0 || b.count === 0) return empty;
      const run = await rightRun(g, shaders, b);
      return compact(g, shaders, {
        count: { pass: 'joinCount', inputs: [bound(a), bound(b)] },
        write: { pass: 'joinWrite', inputs: [bound(a), bound(b)] },
        rows: a.count,
        sizes: [sizeOf(a), sizeOf(b)],
        right: b.count,
        constants: constWords,
        outWidth,
        ...(tables ? { tables } : {}),
        ...(run !== undefined ? { rightRun: run } : {}),
        perOutputRow: joinWritesPerOutputRow(kernel.filter),
      });
    }
    case 'hashJoin': {
      if (a.count === 0 || b.count === 0) return empty;
      // Sizes are known only now (bounds, for pending counts): build on the smaller side (a smaller table, and the probe's first pass has
      // room for one match per row of the larger side). The swapped passes are generated once per kernel.
      const swap = b.count < a.count;
      const k = swap ? swapHashJoin(kernel) : kernel;
      const [build, probe] = swap ? [b, a] : [a, b];
      const layout = hashJoinLayout(k, columns(k.build), columns(k.probe));
      let passes = shaders;
      if (swap) {
        passes = swappedShaders.get(kernel) ?? generateKernelShaders(k, variables);
        swappedShaders.set(kernel, passes);
      }
      return hashJoinRows(g, { relation: build, keyWords: layout.build.keyWords }, { relation: probe, keyWords: layout.probe.keyWords }, layout.output, passes);
    }
    case 'pipeline': {
      const swapped = swappedPipeline(g, kernel, inputs, variables);
      if (swapped) return run(g, swapped.kernel, swapped.shaders, [b, a], constantsFor(swapped.kernel, kernel, constWords), variables, tables);
      const buildTypes = kernel.probes.map((pr) => columns(pr.build));
      // One recorder for the launch: its count copies, builds and probe or aggregation passes go out together.
      const steps = new Recorder(g, {});
      const builds = inputs.slice(1);
      const launch = { ...orderedLookups(g, kernel, shaders, builds, variables, !launchIsEmpty(kernel, a, builds), steps), constWords, tables };
      const rec = steps.using(launch.shaders);
      const out = kernel.aggregate
        ? await pipelineAggregateRows(g, kernel, launch, rec, inputs, kernel.project.map((e) => e.type), buildTypes, outWidth)
        : await pipelineRows(g, kernel, launch, rec, inputs, buildTypes, outWidth);
      // What a launch without rows to build or probe recorded (its counts' clear) still goes out.
      await rec.submit();
      return out;
    }
    case 'sort': {
      if (sortedAlready(a, kernel.keys)) return a;
      if (a.count === 1 && !a.chunks) return atMostOneRow(a);
      return sortRows(g, shaders, a, sortKeyWords(columns(kernel.input), kernel.keys));
    }
    case 'concat':
      // A union into an empty relation (every rule's first run) keeps the other side's rows and form.
      if (a.count === 0 && b.canonical) return b;
      if (b.count === 0 && a.canonical) return a;
      return concatenate(g, [a, b], outWidth);
    case 'merge':
      return mergeRows(g, shaders, a, b, outWidth);
    case 'copy':
      // Kernels never write their inputs, so the copy shares the rows (the executor counts a buffer's holders): a
      // fixpoint's delta := new rows cost 8.7 ms an iteration of 1.3 GB on the H200 as a copy.
      return a.width === outWidth ? a : concatenate(g, [a], outWidth);
    case 'limit': {
      if (a.count === 0 || kernel.count === 0) return empty;
      const types = columns(kernel.input);
      if (shaders.topkHist !== undefined) return limitOnDevice(g, shaders, a, types, kernel.keys, kernel.count);
      await exactCount(g, a);
      if (a.count <= kernel.count) return concatenate(g, [a], outWidth);
      return limitRows(g, a, types, kernel.keys, kernel.count);
    }
    case 'aggregate': {
      const types = columns(kernel.input);
      const argTypes = kernel.aggregates.map((x) => (x.column === undefined ? undefined : types[x.column]));
      return aggregateRows(g, shaders, a, kernel.aggregates, argTypes, outWidth, `kernel ${kernel.id}`);
    }
  }
}

/**
 * `rel` itself, marked canonical: at most one row (a count of 1, or pending with room for 1 — a fixpoint's one-tuple
 * delta) is sorted and duplicate-free, so sort and unique pass it through (as they do a canonical input) instead of
 * a dispatch each.
 */
function atMostOneRow(rel: DeviceRelation): DeviceRelation {
  rel.canonical = true;
  return rel;
}

/**
 * Runs one kernel. `inputs` in kernelInputs(kernel) order; `constWords` = the kernel's constants
 * encoded in kernelConstants() order (int32 1 word, int64 2 words lo,hi, string 1 word); `tables` = the
 * kernel's string built-in tables (kernelTables(), laid out as TableSpec says), when it has any.
 */
export async function runKernel(
  gpu: Gpu,
  kernel: KirKernel,
  shaders: KernelShaders,
  inputs: DeviceRelation[],
  constWords: Uint32Array,
  variables: readonly KirVariable[],
  tables?: Bound,
): Promise<DeviceRelation> {
  const g = internals(gpu);
  if (inputs.length !== kernelInputs(kernel).length) throw new Error(`internal: ${kernel.kind} kernel ${kernel.id} given ${inputs.length} inputs`);
  return g.scoped(`${kernel.kind} kernel ${kernel.id}`, () => runUnscoped(g, kernel, shaders, inputs, constWords, variables, tables));
}

/** runKernel inside the caller's scope (scopes are serialized: a kernel run from another's must not open one). */
async function runUnscoped(
  g: GpuImpl,
  kernel: KirKernel,
  shaders: KernelShaders,
  inputs: DeviceRelation[],
  constWords: Uint32Array,
  variables: readonly KirVariable[],
  tables: Bound | undefined,
): Promise<DeviceRelation> {
  if (kernel.kind === 'pipeline' && kernel.aggregate) {
    // Build sides whose tables pass one binding: the rows are written in parts (runChunked) and sorted.
    if (pipelinePastBinding(g, kernel, inputs, variables)) return sortedGroups(g, kernel, inputs, constWords, variables, tables);
    try {
      // Chunks of the scanned relation go into one table (runChunked makes the build sides whole).
      if (!inputs.some((r) => r.chunks)) return await run(g, kernel, shaders, inputs, constWords, variables, tables);
      return await runChunked(g, kernel, inputs, variables, (k, ins, vars = variables) => run(g, k, shaders, ins, constWords, vars, tables));
    } catch (e) {
      if (!(e instanceof ResultLimitError)) throw e;
      return sortedGroups(g, kernel, inputs, constWords, variables, tables);
    }
  }
  let past: ResultLimitError | undefined;
  if (!inputs.some((r) => r.chunks) && !mergesPastBinding(g, kernel, inputs, variables) && !pipelinePastBinding(g, kernel, inputs, variables)) {
    try {
      return await run(g, kernel, shaders, inputs, constWords, variables, tables);
    } catch (e) {
      // A join whose result passes one binding runs again on parts of its row-wise side.
      if (!(e instanceof ResultLimitError)) throw e;
      past = e;
    }
  }
  // Relations larger than one binding: per chunk, or whole (gpu/chunks.ts); its own kernels get their own passes.
  return runChunked(
    g,
    kernel,
    inputs,
    variables,
    (k, ins, vars = variables) =>
      k === kernel ? run(g, k, shaders, ins, constWords, vars, tables) : run(g, k, chunkShaders(k, vars), ins, constantsFor(k, kernel, constWords), vars, tables),
    past,
  );
}

/**
 * `constWords` (`from`'s constants, encoded) laid out for `k`, a kernel gpu/chunks.ts made up of `from`'s expressions
 * (a pipeline's negated probe run apart reads only some of them). Its string tables must be `from`'s, in order.
 */
function constantsFor(k: KirKernel, from: KirKernel, constWords: Uint32Array): Uint32Array {
  const wanted = kernelConstants(k);
  if (wanted.length === 0) return constWords;
  const tables = kernelTables(k);
  if (tables.length > 0 && JSON.stringify(tables) !== JSON.stringify(kernelTables(from))) {
    throw new DeviceLimitError(`${from.kind} kernel ${from.id}: a negated probe with string built-ins past one binding`);
  }
  const at = new Map<Expr, number>();
  let words = 0;
  for (const c of kernelConstants(from)) {
    at.set(c, words);
    words += wordsOf(c.type);
  }
  return Uint32Array.from(
    wanted.flatMap((c) => {
      const o = at.get(c);
      if (o === undefined) throw new Error(`internal: ${k.kind} kernel ${k.id} reads a constant ${from.kind} kernel ${from.id} lacks`);
      return [...constWords.subarray(o, o + wordsOf(c.type))];
    }),
  );
}

/** The kernels an aggregating pipeline runs instead when its groups outgrow a table (sortedGroups), by kernel. */
const sortedPlans = new WeakMap<KirKernel, { kernels: KirKernel[]; variables: KirVariable[] }>();

/**
 * An aggregating pipeline whose groups do not fit the largest group table: its rows written (chunked past one
 * binding), sorted by the group columns and reduced by key, as the kernels it replaced would have.
 */
async function sortedGroups(
  g: GpuImpl,
  kernel: Extract<KirKernel, { kind: 'pipeline' }>,
  inputs: DeviceRelation[],
  constWords: Uint32Array,
  variables: readonly KirVariable[],
  tables: Bound | undefined,
): Promise<DeviceRelation> {
  let plan = sortedPlans.get(kernel);
  if (!plan) {
    const [rows, sorted] = [1, 2].map((k) => Math.max(...variables.map((v) => v.id)) + k) as [VarId, VarId];
    const columns = kernel.project.map((e) => e.type);
    const { aggregate, ...plain } = kernel;
    // Without probes the rows are a mapFilter's (the same constants, in the same order: check is empty).
    const rowsKernel: KirKernel =
      kernel.probes.length === 0 && kernel.check.length === 0
        ? { kind: 'mapFilter', id: kernel.id, input: kernel.input, output: rows, filter: kernel.filter, project: kernel.project }
        : { ...plain, output: rows };
    const kernels: KirKernel[] = [
      rowsKernel,
      { kind: 'sort', id: kernel.id, input: rows, output: sorted, keys: aggregate!.groupBy },
      { kind: 'aggregate', id: kernel.id, input: sorted, output: kernel.output, groupBy: aggregate!.groupBy, aggregates: aggregate!.aggregates },
    ];
    plan = { kernels, variables: [...variables, { id: rows, name: `%k${kernel.id}$rows`, columns }, { id: sorted, name: `%k${kernel.id}$sorted`, columns }] };
    sortedPlans.set(kernel, plan);
  }
  const [rowsKernel, sortKernel, aggregateKernel] = plan.kernels as [KirKernel, KirKernel, KirKernel];
  const vars = plan.variables;
  const rows = await runUnscoped(g, rowsKernel, chunkShaders(rowsKernel, vars), inputs, constWords, vars, tables);
  const sorted = await runUnscoped(g, sortKernel, chunkShaders(sortKernel, vars), [rows], new Uint32Array(0), vars, undefined);
  releaseUnshared(g, rows, sorted);
  const out = await runUnscoped(g, aggregateKernel, chunkShaders(aggregateKernel, vars), [sorted], new Uint32Array(0), vars, undefined);
  releaseUnshared(g, sorted, out);
  return out;
}

/**
 * WGSL of the kernels gpu/chunks.ts makes up (per-chunk and combining aggregates, copies), by kernel; then by what
 * the kernel is (madeUpShaders): gpu/chunks.ts makes some of them up anew in every run (a copy, a sort before a
 * unique), and generating their passes again took TPC-H Q19 0.25 ms of host time a run.
 */
const chunkPasses = new WeakMap<KirKernel, KernelShaders>();

function chunkShaders(kernel: KirKernel, variables: readonly KirVariable[]): KernelShaders {
  let passes = chunkPasses.get(kernel);
  if (!passes) chunkPasses.set(kernel, (passes = madeUpShaders(kernel, variables)));
  return passes;
}