/**
 * Operator benchmark: each kernel driver on synthetic data at sizes 2^k, next to a plain WGSL copy kernel
 * that measures what the device's memory system delivers at the same size. Timing brackets a call and the GPU
 * work it queues, as it does the copy's (inputs are uploaded and the queue drained first; a row count the
 * operator leaves on the device is read after the bracket), the figure is the median of several runs after
 * a warm-up, and each operator's bytes (input read + output written) over its time is reported as a
 * fraction of the copy bandwidth.
 */
import { generateKernelShaders, kernelConstants, sortKeyWords, type JoinOutputWord, type KernelShaders } from '@vixen/codegen-wgsl';
import type { KirKernel, KirVariable } from '@vixen/kernel-ir';
import { rowWords, wordsOf, type Aggregate, type Expr, type ScalarType } from '@vixen/queryplan';
import { asciiCount, asciiEnd, ByteStringSort, compareBytes, encodeValue, StringDictionary, type ByteSorter } from '@vixen/io';
import { Gen } from './tpch/dbgen.js';
import { buildHashTable, DeviceByteStringSort, DeviceFault, type DeviceRelation, downloadRelation, exactRows, type Gpu, hashGroupBy, internals, limitOnDevice, probeHashTable, releaseHashTable, releaseRelation, runKernel, settle, sortRows, type SortPath, uploadRelation } from '@vixen/runtime/gpu';

export interface BenchOptions {
  /** log2 of the row counts; default 20..22 on a software adapter, 20..26 on a GPU. */
  sizes?: readonly number[];
  /** Timed runs per measurement (the median is reported); default 5. */
  runs?: number;
  /** Untimed runs first (pipeline compilation, pool warm-up; on a GPU, repeated for at least 2 s); default 2. */
  warmup?: number;
  /** Only these operators (BenchResult.operator names; copy always runs); default all. */
  operators?: readonly string[];
  /** Kept shares of mapFilter, each in (0, 1]; default 0.01, 0.5, 1. */
  selectivities?: readonly number[];
  /** Group counts of groupBy; default min(2^16, n / 16) and 16. */
  groups?: readonly number[];
  /** Called with each result as it is measured (progress). */
  onResult?: (r: BenchResult) => void;
  /** Called for each case too large for the device. */
  onSkip?: (s: BenchReport['skipped'][number]) => void;
}

export interface BenchResult {
  /** One of BENCH_OPERATORS, or 'copy'. */
  operator: string;
  /** The case: selectivity, key width, ... */
  variant: string;
  log2n: number;
  /** Input rows (left rows for binary operators, build rows for hashBuild, probe rows for hashProbe). */
  rows: number;
  /** Rows of the result. */
  outputRows: number;
  /** Median milliseconds from the call until the device has done the work it queued (the copy's bracket). */
  medianMs: number;
  timesMs: number[];
  /**
   * Median milliseconds of reading back the output's row count where the operator left it on the device (as the
   * runtime does, for the next kernel to read there): a host round trip, after the bracket of medianMs.
   */
  countReadMs?: number;
  /**
   * Median milliseconds the compute passes of up to 5 more runs took on the device (timestamp queries; absent where
   * the adapter has none): what medianMs spends beyond it is host work, buffer clears and round trips.
   */
  deviceMs?: number;
  /** Items per second: rows, keys, or probe (left) rows. */
  throughput: number;
  unit: string;
  /** Bytes read from inputs plus bytes written as output, once each. */
  bytes: number;
  gbPerSecond: number;
  /** gbPerSecond over the copy kernel's at the same size. */
  copyRatio: number;
  /**
   * The bytes over deviceMs, over the copy kernel's GB/s: how near the operator's kernels come to the copy
   * without the host work of a call (the copy's time is that of many copies in one submission, so it has almost none).
   */
  deviceCopyRatio?: number;
}

export interface BenchReport {
  adapter: string;
  backend: string;
  software: boolean;
  /** Passes ran their subgroup variants. */
  subgroups: boolean;
  workgroupSize: number;
  runs: number;
  warmup: number;
  date: string;
  /**
   * Median microseconds of one host round trip: submit a 4-byte copy and map it for reading. Every row count a
   * fixpoint iteration reads back costs at least this much.
   */
  roundTripMicros: number;
  results: BenchResult[];
  /** Cases that did not fit this device (a buffer past maxStorageBufferBindingSize, or out of memory). */
  skipped: Array<{ operator: string; variant: string; log2n: number; reason: string }>;
}

export function defaultBenchSizes(gpu: Gpu): number[] {
  const top = gpu.cpuAdapter ? 22 : 26;
  return Array.from({ length: top - 19 }, (_, k) => 20 + k);
}

export const median = (xs: readonly number[]): number => {
  const s = [...xs].sort((a, b) => a - b);
  const m = s.length >> 1;
  return s.length % 2 === 1 ? s[m]! : (s[m - 1]! + s[m]!) / 2;
};

/** Times `body` (GPU work only: the queue is drained before and after); returns milliseconds. */
async function timed(gpu: Gpu, body: () => Promise<void>): Promise<number> {
  await gpu.device.queue.onSubmittedWorkDone();
  const t0 = performance.now();
  await body();
  await gpu.device.queue.onSubmittedWorkDone();
  return performance.now() - t0;
}

/**
 * Milliseconds of warm-up a GPU case gets at least (with warmup > 0): the device idles while the host makes and
 * uploads a case's data, and an idle GPU lowers its clocks. On the lent H100 (nvidia-smi beside the bench) the SM
 * clock was back at 345-615 MHz through cases with 250 ms of warm-up, and the same cases ran up to 3x slower and
 * varied run to run; after 2 s of warm-up they ran at 1980 MHz, and two runs agreed within 2% in device time and
 * 15% in wall time.
 */
export const GPU_WARM_MS = 2000;

/** Runs `run` (which returns its milliseconds) untimed `warmup` times and, with warmup > 0, for at least `minMs`. */
export async function warmUp(warmup: number, minMs: number, run: () => Promise<number>): Promise<void> {
  let spent = 0;
  for (let k = 0; k < warmup || (warmup > 0 && spent < minMs && k < 10000); k++) spent += await run();
}

/**
 * Copies for DEVICE_WARM_MS before anything is timed: measured on the H100, the first cases after a fresh
 * device start ran up to 3x slower than the same cases seconds later, whatever their own warm-up.
 */
const DEVICE_WARM_MS = 3000;

async function warmDevice(gpu: Gpu): Promise<void> {
  const start = performance.now();
  while (performance.now() - start < DEVICE_WARM_MS) await benchCopy(gpu, 2 ** 26, 500, 0);
}

/** Times of `runs` runs of `body` after the warm-up; `after` runs untimed after each. */
async function measure(gpu: Gpu, runs: number, warmup: number, body: () => Promise<void>, after?: () => Promise<void>): Promise<number[]> {
  const once = async (): Promise<number> => {
    const ms = await timed(gpu, body);
    await after?.();
    return ms;
  };
  await warmUp(warmup, gpu.cpuAdapter ? 0 : GPU_WARM_MS, once);
  const times: number[] = [];
  for (let k = 0; k < runs; k++) times.push(await once());
  return times;
}

/**
 * Median device milliseconds of the compute passes of `runs` more runs of `body` (`after` untimed after each),
 * where the adapter has timestamp queries. Several runs, since one can land on a slow one: on the H100 the 65,536
 * group hash group-by's runs alternate between about 4.3 and 9.3 ms.
 */
async function deviceTime(gpu: Gpu, runs: number, body: () => Promise<void>, after: () => Promise<void>): Promise<{ deviceMs?: number }> {
  const g = internals(gpu);
  if (gpu.cpuAdapter || !g.startTiming()) return {};
  try {
    const times: number[] = [];
    for (let k = 0; k < runs; k++) {
      await body();
      times.push((await g.timer!.collect()).nanoseconds / 1e6);
      await after();
    }
    return { deviceMs: median(times) };
  } finally {
    g.stopTiming();
  }
}

/** mulberry32: seeded, so every run sorts the same data. */
function rng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return (t ^ (t >>> 14)) >>> 0;
  };
}

/** Row-major words of `n` rows of `width` words, word k of row i = f(i, k). */
function table(n: number, width: number, f: (i: number, k: number) => number): Uint32Array {
  const words = new Uint32Array(n * width);
  for (let i = 0; i < n; i++) for (let k = 0; k < width; k++) words[i * width + k] = f(i, k);
  return words;
}

const COPY_WGSL = `
@group(0) @binding(0) var<storage, read> src: array<vec4<u32>>;
@group(0) @binding(1) var<storage, read_write> dst: array<vec4<u32>>;
override WG: u32 = 256u;
@compute @workgroup_size(WG)
fn main(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
  let i = gid.x + gid.y * nwg.x * WG;
  if (i < arrayLength(&src)) { dst[i] = src[i]; }
}
`;

/**
 * The bandwidth reference: one vec4 per thread from one buffer to another, repeated in one submission so that
 * at least `movedBytes` move (a single small dispatch would measure submission latency); returns ms per copy.
 */
async function benchCopy(gpu: Gpu, words: number, runs: number, warmup: number, movedBytes = 2 ** 30): Promise<number[]> {
  const g = internals(gpu);
  const { device } = gpu;
  const wg = g.limits.workgroupSize;
  const pipeline = await device.createComputePipelineAsync({
    layout: 'auto',
    compute: { module: device.createShaderModule({ code: COPY_WGSL }), entryPoint: 'main', constants: { WG: wg } },
  });
  const usage = GPUBufferUsage.STORAGE | GPUBufferUsage.COPY_DST;
  const bytes = Math.ceil(words / 4) * 16;
  const src = device.createBuffer({ size: bytes, usage });
  const dst = device.createBuffer({ size: bytes, usage });
  device.queue.writeBuffer(src, 0, new Uint32Array(bytes / 4).fill(7));
  // Past one binding (2^29 words and more) the copy runs per segment of at most one binding.
  const most = Math.floor(g.limits.maxStorageBufferBindingSize / 256) * 256;
  const segments = Array.from({ length: Math.ceil(bytes / most) }, (_, k) => {
    const range = { offset: k * most, size: Math.min(most, bytes - k * most) };
    const group = device.createBindGroup({
      layout: pipeline.getBindGroupLayout(0),
      entries: [
        { binding: 0, resource: { buffer: src, ...range } },
        { binding: 1, resource: { buffer: dst, ...range } },
      ],
    });
    const groups = Math.ceil(range.size / 16 / wg);
    const x = Math.min(groups, g.limits.maxComputeWorkgroupsPerDimension);
    return { group, x, y: Math.ceil(groups / x) };
  });
  const reps = Math.max(1, Math.min(64, Math.ceil(movedBytes / (2 * bytes))));
  try {
    const times = await measure(gpu, runs, warmup, async () => {
      const encoder = device.createCommandEncoder();
      for (let k = 0; k < reps; k++) {
        const pass = encoder.beginComputePass();
        pass.setPipeline(pipeline);
        for (const { group, x, y } of segments) {
          pass.setBindGroup(0, group);
          pass.dispatchWorkgroups(x, y);
        }
        pass.end();
      }
      device.queue.submit([encoder.finish()]);
    });
    return times.map((t) => t / reps);
  } finally {
    src.destroy();
    dst.destroy();
  }
}

/** GB/s of a copy of `words` words in `ms`: the bytes read plus the bytes written. */
const copyGbPerSecond = (words: number, ms: number): number => (8 * words) / ms / 1e6;

/**
 * The device's copy bandwidth in GB/s (copyGbPerSecond), the reference of the query benches: the median of `runs`
 * copies of the most words up to 2^28 that one binding holds, each timed submission moving at least 8 GiB so that
 * its host round trip counts for little; on a CPU adapter, where only the figure's presence matters, one copy of
 * 2^20 words per submission.
 */
export async function copyBandwidth(gpu: Gpu, runs = 10): Promise<number> {
  const { maxStorageBufferBindingSize, maxBufferSize } = internals(gpu).limits;
  const fits = 2 ** Math.floor(Math.log2(Math.min(maxStorageBufferBindingSize, maxBufferSize) / 4));
  const words = Math.min(gpu.cpuAdapter ? 2 ** 20 : 2 ** 28, fits);
  return copyGbPerSecond(words, median(await benchCopy(gpu, words, runs, 1, gpu.cpuAdapter ? 0 : 2 ** 33)));
}

/** Median time of a submit + 4-byte readback (what every host-side row count costs), in microseconds. */
async function benchRoundTrip(gpu: Gpu, runs: number): Promise<number> {
  const { device } = gpu;
  const src = device.createBuffer({ size: 4, usage: GPUBufferUsage.COPY_SRC | GPUBufferUsage.COPY_DST });
  const dst = device.createBuffer({ size: 4, usage: GPUBufferUsage.COPY_DST | GPUBufferUsage.MAP_READ });
  try {
    const times: number[] = [];
    for (let k = 0; k < runs + 10; k++) {
      const t0 = performance.now();
      const encoder = device.createCommandEncoder();
      encoder.copyBufferToBuffer(src, 0, dst, 0, 4);
      device.queue.submit([encoder.finish()]);
      await dst.mapAsync(GPUMapMode.READ);
      dst.unmap();
      if (k >= 10) times.push((performance.now() - t0) * 1e3);
    }
    return median(times);
  } finally {
    src.destroy();
    dst.destroy();
  }
}

/** The timed body on the uploaded inputs, after untimed preparation (a built hash table, say). */
interface Prepared {
  body: () => Promise<DeviceRelation>;
  dispose(): void;
}

interface OperatorCase {
  operator: string;
  variant: string;
  unit: string;
  /**
   * `canonical`: the rows are sorted by all words and distinct, as a unique's output is and a fixpoint's new rows
   * are when a difference removes the known ones from them (past one binding that difference runs per key range).
   */
  inputs: Array<{ words: Uint32Array; width: number; canonical?: true }>;
  /** Input words the timed body reads, when not all inputs (a probe reads the probe side, not the build side). */
  readWords?: number;
  /** Items the throughput counts; default n (the rows of the first input). */
  items?: number;
  /** What is wrong with the output's words (checked once, untimed), if anything. */
  check?: (words: Uint32Array) => string | undefined;
  /** The case runs no compute pass (the workers' string sort): no runs for device time. */
  hostOnly?: true;
  prepare(gpu: Gpu, rels: DeviceRelation[]): Promise<Prepared>;
}

/** Operator names the bench can run (besides copy). */
export const BENCH_OPERATORS = ['mapFilter', 'project', 'sort', 'unique', 'topK', 'mergeJoin', 'merge', 'difference', 'hashBuild', 'hashProbe', 'groupBy', 'sortedGroupBy', 'stringSort'] as const;

const col = (index: number, type: ScalarType): Expr => ({ kind: 'col', index, type });
const I2: ScalarType[] = ['int32', 'int32'];

function variables(...columns: ScalarType[][]): KirVariable[] {
  return columns.map((c, id) => ({ id, name: `v${id}`, columns: c }));
}

/** A case timing one KIR kernel through runKernel. */
function kernelCase(
  operator: string,
  variant: string,
  unit: string,
  kernel: KirKernel,
  vars: KirVariable[],
  inputs: OperatorCase['inputs'],
  constants = new Uint32Array(0),
): OperatorCase {
  const shaders: KernelShaders = generateKernelShaders(kernel, vars);
  if (kernelConstants(kernel).length > 0 && constants.length === 0) throw new Error(`internal: bench case ${operator} lacks constants`);
  return { operator, variant, unit, inputs, prepare: async (gpu, rels) => ({ body: () => runKernel(gpu, kernel, shaders, rels, constants, vars), dispose: () => undefined }) };
}

/**
 * Input words up to which a case's output is checked: past them the readback and the check would take longer than
 * the case (2^26 two-word rows run the same passes as larger ones).
 */
const CHECKED_WORDS = 2 ** 27;

/**
 * Rows up to which the sort cases also run each sort the runtime picks from (rank and merge, radix) on its own (the
 * rows fit one binding: past one, only the runtime's sort partitions them), and a five-column case.
 */
const SORT_PATH_ROWS = 2 ** 18;

/**
 * What is wrong with `got` as `input` (rows of `width` words) sorted by the key words at `keyWords`: rows out of key
 * order, or another multiset of rows (compared by a sum of row hashes).
 */
function sortError(input: Uint32Array, got: Uint32Array, width: number, keyWords: readonly number[]): string | undefined {
  if (got.length !== input.length) return `${got.length / width} rows, not ${input.length / width}`;
  const hash = (w: Uint32Array, i: number): number => {
    let h = 0x811c9dc5;
    for (let k = 0; k < width; k++) h = Math.imul(h ^ w[i * width + k]!, 0x01000193);
    return h >>> 0;
  };
  let sumIn = 0;
  let sumOut = 0;
  for (let i = 0; i < input.length / width; i++) {
    sumIn = (sumIn + hash(input, i)) >>> 0;
    sumOut = (sumOut + hash(got, i)) >>> 0;
    if (i === 0) continue;
    let c = 0;
    for (let k = 0; k < keyWords.length && c === 0; k++) c = Math.sign(got[i * width + keyWords[k]!]! - got[(i - 1) * width + keyWords[k]!]!);
    if (c < 0) return `row ${i} has a smaller key than row ${i - 1}`;
  }
  return sumIn === sumOut ? undefined : 'its rows are not the input rows';
}

/** Distinct u32 keys: i times an odd constant is a bijection mod 2^32, so no two i share a key. */
const distinctKey = (i: number): number => Math.imul(i, 0x9e3779b1) >>> 0;

/** The benchmarked cases at n rows; data are seeded and, where the kernel requires, in canonical order. */
function cases(n: number, selectivities: readonly number[], groupCounts: readonly number[] | undefined, want: (operator: string) => boolean): OperatorCase[] {
  const r = rng(n);
  const out: OperatorCase[] = [];
  if (want('mapFilter')) {
    // `a < t` with a uniform in [0, 2^20) keeps a t / 2^20 share, in input order: over int32 values (the shape of
    // the issue's target), and over (a, b) rows projected to (b, a).
    const values = table(n, 1, () => r() >>> 12);
    const pairs = table(n, 2, (i, k) => (k === 0 ? values[i]! : i));
    for (const share of selectivities) {
      const threshold: Expr = { kind: 'const', type: 'int32', value: Math.round(share * 2 ** 20) };
      const constants = new Uint32Array(1);
      encodeValue('int32', threshold.value, new StringDictionary([]), constants, 0);
      const filter: KirKernel & { kind: 'mapFilter' } = { kind: 'mapFilter', id: 0, input: 0, output: 1, filter: [{ kind: 'compare', op: '<', left: col(0, 'int32'), right: threshold }], project: [col(0, 'int32')] };
      const pct = `${+(100 * share).toFixed(2)}%`;
      out.push(kernelCase('mapFilter', `${pct} of int32 values`, 'rows/s', filter, variables(['int32'], ['int32']), [{ words: values, width: 1 }], constants));
      // As where only a sort by all columns reads the rows (kernel-ir unordered-selects): any order across tiles.
      const unordered = { ...filter, unordered: true as const };
      out.push(kernelCase('mapFilter', `${pct} of int32 values, any order`, 'rows/s', unordered, variables(['int32'], ['int32']), [{ words: values, width: 1 }], constants));
      const project: KirKernel = { ...filter, project: [col(1, 'int32'), col(0, 'int32')] };
      out.push(kernelCase('mapFilter', `${pct} of (int32, int32), swapped`, 'rows/s', project, variables(I2, I2), [{ words: pairs, width: 2 }], constants));
    }
  }
  if (want('project')) {
    // A mapFilter without a filter (a projection pass: every row kept, no scan): (a, b) rows to (b, a).
    const project: KirKernel = { kind: 'mapFilter', id: 0, input: 0, output: 1, filter: [], project: [col(1, 'int32'), col(0, 'int32')] };
    out.push(kernelCase('project', '(int32, int32) swapped, every row', 'rows/s', project, variables(I2, I2), [{ words: table(n, 2, (i, k) => (k === 0 ? i : r())), width: 2 }]));
  }
  if (want('sort')) {
    // Each output is checked once: the bench is where the GPU's passes (look-back waits, subgroup variants) run.
    const sortCase = (variant: string, unit: string, types: ScalarType[], keys: number[], words: Uint32Array, path: SortPath): OperatorCase => {
      const kernel: KirKernel = { kind: 'sort', id: 0, input: 0, output: 1, keys };
      const vars = variables(types, types);
      const keyWords = sortKeyWords(types, keys);
      const base = kernelCase('sort', path === 'auto' ? variant : `${variant}, ${path} sort`, unit, kernel, vars, [{ words, width: rowWords(types) }]);
      const check = (got: Uint32Array): string | undefined => sortError(words, got, rowWords(types), keyWords);
      if (path === 'auto') return { ...base, check };
      // The runtime's choice by row count set aside: each sort at the same sizes, to place the switch between them.
      const shaders = generateKernelShaders(kernel, vars);
      return { ...base, check, prepare: async (gpu, [rel]) => ({ body: () => sortRows(internals(gpu), shaders, rel!, keyWords, path), dispose: () => undefined }) };
    };
    const inputs: Array<[string, string, ScalarType[], number[], Uint32Array]> = [
      ['int32 keys, random', 'keys/s', ['int32'], [0], table(n, 1, () => r())],
      ['int32 key + int32 payload, random', 'pairs/s', I2, [0], table(n, 2, (i, k) => (k === 0 ? r() : i))],
      ['int64 keys, random', 'keys/s', ['int64'], [0], table(n, 2, () => r())],
      // 96-bit keys (an int64 then an int32, a few values of the first): index pairs, a digit pass per window of each word.
      ['int64 + int32 keys (96 bits), random', 'keys/s', ['int64', 'int32'], [0, 1], table(n, 3, (_, k) => (k === 1 ? r() & 3 : r()))],
    ];
    // As TPC-H Q12's unions sort their rows: five int32 columns, all of them the key (few values in the first).
    if (n <= SORT_PATH_ROWS) inputs.push(['5 int32 columns, all keys', 'rows/s', Array<ScalarType>(5).fill('int32'), [0, 1, 2, 3, 4], table(n, 5, (_, k) => (k === 0 ? r() & 7 : r()))]);
    const paths: SortPath[] = n <= SORT_PATH_ROWS ? ['auto', 'rank', 'radix'] : ['auto'];
    for (const path of paths) for (const [variant, unit, types, keys, words] of inputs) out.push(sortCase(variant, unit, types, keys, words, path));
  }
  if (want('unique')) {
    const kernel: KirKernel = { kind: 'unique', id: 0, input: 0, output: 1 };
    out.push(kernelCase('unique', 'int32 pairs, each row twice', 'rows/s', kernel, variables(I2, I2), [{ words: table(n, 2, (i, k) => (k === 0 ? i >>> 1 : 0)), width: 2 }]));
  }
  if (want('topK')) {
    // As TPC-H Q10's and Q3's results: the first k rows by a decimal descending (a constant high word, 2^16 values
    // of the low one: ties), rows of (int32 key i, decimal, string, date), distinct by i; ties go by all columns
    // ascending, so by i. k = 20 and 1,000 take the rounds of tiles, 4,096 the radix select over all rows; k = 20
    // by the radix select too, as before the tiles (same run, same rows).
    const types: ScalarType[] = ['int32', 'decimal', 'string', 'date'];
    const words = table(n, 5, (i, k) => (k === 0 ? i : k === 1 ? r() >>> 16 : k === 2 ? 0 : r() & 0xffff));
    const keys = [{ column: 1, descending: true }];
    for (const [k, path] of [[20, 'auto'], [20, 'radix'], [1000, 'auto'], [4096, 'auto']] as const) {
      const kernel: KirKernel = { kind: 'limit', id: 0, input: 0, output: 1, keys, count: k };
      const vars = variables(types, types);
      const shaders = generateKernelShaders(kernel, vars);
      out.push({
        ...kernelCase('topK', `first ${k} by decimal desc, rows of 5 words${path === 'auto' ? '' : `, ${path} select`}`, 'rows/s', kernel, vars, [{ words, width: 5 }]),
        prepare: async (gpu, [rel]) => ({ body: () => limitOnDevice(internals(gpu), shaders, rel!, types, keys, k, path), dispose: () => undefined }),
        // The kept rows in canonical order: the k first by (value desc, i), sorted by i.
        check: (got) => {
          const want = Array.from({ length: n }, (_, i) => i)
            .sort((a, b) => words[5 * b + 1]! - words[5 * a + 1]! || a - b)
            .slice(0, k)
            .sort((a, b) => a - b);
          if (got.length !== 5 * want.length) return `${got.length / 5} rows, not ${want.length}`;
          const bad = want.findIndex((i, j) => got[5 * j] !== i);
          return bad < 0 ? undefined : `row ${bad} is row ${got[5 * bad]} of the input, not ${want[bad]}`;
        },
      });
    }
  }
  if (want('mergeJoin')) {
    // Left keys 0..n-1, right keys the even numbers: every other probe finds one match.
    const kernel: KirKernel = { kind: 'mergeJoin', id: 0, left: 0, right: 1, output: 2, leftKeys: [0], rightKeys: [0], filter: [], project: [col(0, 'int32'), col(1, 'int32'), col(3, 'int32')] };
    out.push({
      ...kernelCase('mergeJoin', 'int32 key, 50% of probes match once', 'probe rows/s', kernel, variables(I2, I2, ['int32', 'int32', 'int32']), [
        { words: table(n, 2, (i, k) => (k === 0 ? i : i & 7)), width: 2 },
        { words: table(n, 2, (i, k) => (k === 0 ? 2 * i : i & 3)), width: 2 },
      ]),
      // Left row 2k meets right row k: (2k, 2k & 7, k & 3), in left order.
      check: (got) => {
        const rows = Math.ceil(n / 2);
        if (got.length !== 3 * rows) return `${got.length / 3} rows, not ${rows}`;
        for (let k = 0; k < rows; k++) {
          if (got[3 * k] !== 2 * k || got[3 * k + 1] !== ((2 * k) & 7) || got[3 * k + 2] !== (k & 3)) return `row ${k} is (${got.subarray(3 * k, 3 * k + 3).join(', ')})`;
        }
        return undefined;
      },
    });
  }
  if (want('difference')) {
    const kernel: KirKernel = { kind: 'difference', id: 0, left: 0, right: 1, output: 2 };
    out.push({
      ...kernelCase('difference', 'int32 pairs, 50% removed', 'rows/s', kernel, variables(I2, I2, I2), [
        { words: table(n, 2, (i, k) => (k === 0 ? i : 0)), width: 2, canonical: true },
        { words: table(n, 2, (i, k) => (k === 0 ? 2 * i : 0)), width: 2 },
      ]),
      // The odd keys are kept: (2k + 1, 0), in order.
      check: (got) => {
        const rows = n >>> 1;
        if (got.length !== 2 * rows) return `${got.length / 2} rows, not ${rows}`;
        for (let k = 0; k < rows; k++) if (got[2 * k] !== 2 * k + 1 || got[2 * k + 1] !== 0) return `row ${k} is (${got[2 * k]}, ${got[2 * k + 1]})`;
        return undefined;
      },
    });
  }
  if (want('merge')) {
    // The semi-naive union: a sorted relation of n rows and a disjoint sorted delta, as large (keys 2i and 2i+1)
    // and as a fixpoint's late iterations see it (n / 64 rows spread over the whole key range).
    const kernel: KirKernel = { kind: 'merge', id: 0, left: 0, right: 1, output: 2, keys: [0, 1] };
    const small = Math.max(1, n >>> 6);
    // Rows (key, 0) with the keys of both sides in order.
    const mergeCase = (variant: string, right: number, rightKey: (i: number) => number): OperatorCase => ({
      ...kernelCase('merge', variant, 'left rows/s', kernel, variables(I2, I2, I2), [
        { words: table(n, 2, (i, k) => (k === 0 ? 2 * i : 0)), width: 2 },
        { words: table(right, 2, (i, k) => (k === 0 ? rightKey(i) : 0)), width: 2 },
      ]),
      check: (got) => {
        if (got.length !== 2 * (n + right)) return `${got.length / 2} rows, not ${n + right}`;
        for (let i = 0, j = 0; i + j < n + right; ) {
          const key = j === right || (i < n && 2 * i < rightKey(j)) ? 2 * i++ : rightKey(j++);
          if (got[2 * (i + j - 1)] !== key || got[2 * (i + j - 1) + 1] !== 0) return `row ${i + j - 1} has key ${got[2 * (i + j - 1)]}, not ${key}`;
        }
        return undefined;
      },
    });
    out.push(mergeCase('int32 pairs, n + n rows', n, (i) => 2 * i + 1), mergeCase('int32 pairs, n + n/64 rows', small, (i) => 128 * i + 1));
  }
  // Hash join: build n / 4 distinct int32 keys (with a payload), probe n rows of which half find their key.
  const nb = Math.max(1, n >>> 2);
  const buildSide = (): { words: Uint32Array; width: number } => ({ words: table(nb, 2, (i, k) => (k === 0 ? distinctKey(i) : i)), width: 2 });
  const key0 = [0];
  if (want('hashBuild')) {
    out.push({
      operator: 'hashBuild',
      variant: `${nb} distinct int32 keys (n / 4)`,
      unit: 'build rows/s',
      inputs: [buildSide()],
      items: nb,
      prepare: async (gpu, [b]) => ({
        body: async () => {
          releaseHashTable(gpu, await buildHashTable(gpu, { relation: b!, keyWords: key0 }));
          return { buffer: null, count: 0, width: 0 };
        },
        dispose: () => undefined,
      }),
    });
  }
  if (want('hashProbe')) {
    const probe = table(n, 2, (i, k) => (k === 0 ? distinctKey(r() % (2 * nb)) : i));
    // The payloads of both sides, not row indices: a probe side larger than one binding runs per chunk, whose
    // indices would count from each chunk's start.
    const payloads: JoinOutputWord[] = [{ from: 'probe', word: 1 }, { from: 'build', word: 1 }];
    out.push({
      operator: 'hashProbe',
      variant: `int32 key into ${nb} distinct keys, 50% match once, both payloads`,
      unit: 'probes/s',
      inputs: [buildSide(), { words: probe, width: 2 }],
      readWords: 2 * n,
      prepare: async (gpu, [b, p]) => {
        const built = await buildHashTable(gpu, { relation: b!, keyWords: key0 });
        return { body: () => probeHashTable(gpu, built, { relation: p!, keyWords: key0 }, payloads), dispose: () => releaseHashTable(gpu, built) };
      },
    });
  }
  if (want('groupBy')) {
    // Many groups (up to 2^16, the target case) and few (where every row of a tile hits the same few slots).
    // Each as the hash group-by kernel, and as the aggregating pipeline queries compile their group-bys to.
    const pipeline: KirKernel = {
      kind: 'pipeline',
      id: 0,
      input: 0,
      output: 1,
      filter: [],
      probes: [],
      check: [],
      project: [col(0, 'int32'), col(1, 'int32')],
      aggregate: { groupBy: [0], aggregates: [{ fn: 'count', type: 'int32' }, { fn: 'sum', column: 1, type: 'int32' }, { fn: 'max', column: 1, type: 'int32' }] },
      fused: [0],
    };
    for (const groups of groupCounts ?? [Math.min(2 ** 16, Math.max(1, n >>> 4)), 16]) {
      const inputs = [{ words: table(n, 2, (i, k) => (k === 0 ? distinctKey(distinctKey(i) % groups) : r() >>> 16)), width: 2 }];
      out.push({
        operator: 'groupBy',
        variant: `int32 key, ${groups} groups: count, sum64, max of int32`,
        unit: 'rows/s',
        inputs,
        prepare: async (gpu, [rel]) => ({
          body: () => hashGroupBy(gpu, { relation: rel!, keyWords: key0 }, [{ fn: 'count' }, { fn: 'sum', word: 1, type: 'int32' }, { fn: 'max', word: 1 }]),
          dispose: () => undefined,
        }),
      });
      out.push(kernelCase('groupBy', `int32 key, ${groups} groups: count, sum, max of int32 (pipeline)`, 'rows/s', pipeline, variables(I2, ['int32', 'int32', 'int32', 'int32']), inputs));
    }
    out.push(...q1GroupBys(n, r), q4GroupBy(n, r), q13GroupBy(n, q13Rows(n, r)));
  }
  if (want('sortedGroupBy')) out.push(sortedGroupBy(n, r));
  if (want('stringSort')) out.push(...stringSorts(n, r));
  return out;
}

/** Lists a stringSort case's strings come in, as a device parse's chunks of one file give them. */
const STRING_SORT_LISTS = 16;

/**
 * The dictionary's sort of distinct byte strings (a device parse's or Parquet's): n TPC-H-comment-like strings (cut
 * from a text pool of the spec's grammar, 10-80 bytes, as dbgen's comments are), in STRING_SORT_LISTS lists, sorted
 * on the device (runtime gpu/string-sort.ts) and by the worker pool's sample sort (io ByteStringSort), host arrays
 * in and out. The device's answer is checked against the workers' once, untimed.
 */
function stringSorts(n: number, r: () => number): OperatorCase[] {
  const gen = new Gen(n);
  const pool = Buffer.from(Array.from({ length: 512 }, () => gen.text(4096, 4096)).join(''), 'latin1');
  const lengths = Array.from({ length: n }, () => 10 + (r() % 71));
  const starts = new Uint32Array(n + 1);
  for (let i = 0; i < n; i++) starts[i + 1] = starts[i]! + lengths[i]!;
  const bytes = new Uint8Array(starts[n]!);
  for (let i = 0; i < n; i++) {
    const at = r() % (pool.length - lengths[i]!);
    for (let k = 0; k < lengths[i]!; k++) bytes[starts[i]! + k] = pool[at + k]!;
  }
  const lists = Array.from({ length: STRING_SORT_LISTS }, (_, l) => {
    const [lo, hi] = [Math.floor((l * n) / STRING_SORT_LISTS), Math.floor(((l + 1) * n) / STRING_SORT_LISTS)];
    return { bytes: bytes.subarray(starts[lo], starts[hi]), starts: starts.slice(lo, hi + 1).map((s) => s - starts[lo]!) };
  });
  const sortWith = async (sort: ByteSorter): Promise<Awaited<ReturnType<ByteSorter['finish']>>> => {
    for (const l of lists) sort.add(l.bytes, l.starts);
    return sort.finish();
  };
  const none: DeviceRelation = { buffer: null, count: 0, width: 1 };
  // The device's case is checked against the workers'; the workers' runs no compute pass.
  const sortCase = (variant: string, sorter: (gpu: Gpu) => ByteSorter, onDevice: boolean): OperatorCase => ({
    ...(onDevice ? {} : { hostOnly: true as const }),
    operator: 'stringSort',
    variant: `comment-like strings, ${variant}`,
    unit: 'strings/s',
    inputs: [],
    readWords: bytes.length / 4,
    items: n,
    prepare: async (gpu) => {
      if (onDevice) {
        const [got, want] = [await sortWith(sorter(gpu)), await sortWith(new ByteStringSort())];
        const same = (a: ArrayLike<number>, b: ArrayLike<number>): boolean => a.length === b.length && Array.prototype.every.call(a, (x: number, i: number) => x === b[i]);
        const [x, y] = [got.sorted, want.sorted];
        const sameStrings = asciiCount(x) === asciiCount(y) && Array.from({ length: asciiCount(x) }, (_, i) => compareBytes(x.bytes, x.starts[i]!, asciiEnd(x, i), y.bytes, y.starts[i]!, asciiEnd(y, i))).every((c) => c === 0);
        if (!sameStrings || !got.ranks.every((rank, l) => same(rank, want.ranks[l]!))) {
          throw new Error(`bench stringSort (${variant}) gave another order than the workers' sort`);
        }
      }
      return { body: async () => (await sortWith(sorter(gpu)), none), dispose: () => undefined };
    },
  });
  return [sortCase('device sort', (gpu) => new DeviceByteStringSort(gpu, 0), true), sortCase('worker sort', () => new ByteStringSort(), false)];
}

/**
 * The sorted group-by (KIR `aggregate`) in TPC-H Q18's shape: rows (order key, quantity) in key order, groups of 1-7
 * rows (4 on average, as lineitems per order), the decimal sum of each group's quantities (1-50); checked against
 * the sums made on the host.
 */
function sortedGroupBy(n: number, r: () => number): OperatorCase {
  const types: ScalarType[] = ['int32', 'decimal'];
  const words = new Uint32Array(n * 3);
  for (let i = 0, key = 0; i < n; key++) {
    for (let end = Math.min(n, i + 1 + Math.floor((r() / 2 ** 32) * 7)); i < end; i++) {
      words[3 * i] = key;
      words[3 * i + 1] = (1 + Math.floor((r() / 2 ** 32) * 50)) * 10000;
    }
  }
  const kernel: KirKernel = { kind: 'aggregate', id: 0, input: 0, output: 1, groupBy: [0], aggregates: [{ fn: 'sum', column: 1, type: 'decimal' }] };
  const check = (got: Uint32Array): string | undefined => {
    let g = 0;
    for (let i = 0; i < n; g++) {
      let sum = 0;
      const key = words[3 * i]!;
      for (; i < n && words[3 * i] === key; i++) sum += words[3 * i + 1]!;
      if (3 * g + 2 >= got.length) return `${got.length / 3} groups, fewer than the input's`;
      if (got[3 * g] !== key || got[3 * g + 1] !== sum % 2 ** 32 || got[3 * g + 2] !== Math.floor(sum / 2 ** 32)) return `group ${g} is (${got.subarray(3 * g, 3 * g + 3).join(', ')}), not key ${key} sum ${sum}`;
    }
    return got.length === 3 * g ? undefined : `${got.length / 3} groups, not ${g}`;
  };
  return { ...kernelCase('sortedGroupBy', 'int32 key, groups of 1-7 rows: decimal sum (TPC-H Q18)', 'rows/s', kernel, variables(types, types), [{ words, width: 3 }]), check };
}

/**
 * TPC-H Q1's aggregation as the fused pipeline it compiles to, without its filter: rows (flag, quantity, price,
 * discount, tax) with Q1's shares of 4 groups (49%, 25%, 25%, 0.7%) and value ranges; sums and averages of decimals
 * and of products of them, and a count, per group. Then the same with the discount and the tax in place of the
 * products: what the products cost.
 */
function q1GroupBys(n: number, r: () => number): OperatorCase[] {
  const types: ScalarType[] = ['int32', 'decimal', 'decimal', 'decimal', 'decimal'];
  // Scaled by 10^4: quantities 1-50, prices 900.00-104,949.50, discounts 0.00-0.10, taxes 0.00-0.08 (high words 0).
  const W = rowWords(types);
  const words = new Uint32Array(n * W);
  const below = (k: number): number => Math.floor((r() / 2 ** 32) * k);
  for (let i = 0; i < n; i++) {
    const x = r() / 2 ** 32;
    words[i * W] = x < 0.0066 ? 3 : x < 0.2566 ? 1 : x < 0.5066 ? 2 : 0;
    words[i * W + 1] = (1 + below(50)) * 10000;
    words[i * W + 3] = 9_000_000 + below(10_404_951) * 100;
    words[i * W + 5] = below(11) * 100;
    words[i * W + 7] = below(9) * 100;
  }
  const dec = (v: Expr, w: Expr, op: '*' | '-' | '+'): Expr => ({ kind: 'binary', op, left: v, right: w, type: 'decimal' });
  const num = (value: bigint): Expr => ({ kind: 'const', type: 'decimal', value });
  const [flag, q, p, d, t] = types.map((type, k) => col(k, type)) as [Expr, Expr, Expr, Expr, Expr];
  const one = num(10000n);
  const aggregates: Aggregate[] = [
    ...[1, 2, 3, 4].map((column): Aggregate => ({ fn: 'sum', column, type: 'decimal' })),
    ...[1, 2, 5].map((column): Aggregate => ({ fn: 'avg', column, type: 'decimal' })),
    { fn: 'count', type: 'int32' },
  ];
  const outTypes: ScalarType[] = ['int32', ...aggregates.map((a) => a.type)];
  const S = 10000n;
  const variants = [
    {
      variant: 'decimal sums and averages of 4 columns and 2 products, count',
      project: [flag, q, p, dec(p, dec(one, d, '-'), '*'), dec(dec(dec(p, num(1000000n), '*'), dec(one, d, '-'), '*'), dec(one, t, '+'), '*'), d],
      // Every value and product is positive (truncation is the floor).
      summed: (pi: bigint, di: bigint, ti: bigint): [bigint, bigint] => [(pi * (S - di)) / S, (((((pi * 1000000n) / S) * (S - di)) / S) * (S + ti)) / S],
    },
    { variant: 'decimal sums and averages of 4 columns, count, no products', project: [flag, q, p, d, t, d], summed: (_: bigint, di: bigint, ti: bigint): [bigint, bigint] => [di, ti] },
  ];
  return variants.map(({ variant, project, summed }) => {
    const kernel: KirKernel = { kind: 'pipeline', id: 0, input: 0, output: 1, filter: [], probes: [], check: [], project, aggregate: { groupBy: [0], aggregates }, fused: [0] };
    const constants = encodedConstants(kernel);
    // The exact answer in bigints.
    const check = (got: Uint32Array): string | undefined => {
      const want = new Map<number, bigint[]>();
      for (let i = 0; i < n; i++) {
        const [qi, pi, di, ti] = [1, 3, 5, 7].map((k) => BigInt(words[i * W + k]!)) as [bigint, bigint, bigint, bigint];
        const acc = want.get(words[i * W]!) ?? [0n, 0n, 0n, 0n, 0n, 0n];
        [qi, pi, ...summed(pi, di, ti), di, 1n].forEach((v, k) => (acc[k] = acc[k]! + v));
        want.set(words[i * W]!, acc);
      }
      if (got.length !== want.size * 16) return `${got.length / 16} groups, not ${want.size}`;
      for (let g = 0; g < want.size; g++) {
        const row = got.subarray(g * 16, g * 16 + 16);
        const acc = want.get(row[0]!);
        if (!acc) return `a group of key ${row[0]} that no row has`;
        const [sq, sp, s3, s4, sd, count] = acc as [bigint, bigint, bigint, bigint, bigint, bigint];
        const expected = [sq, sp, s3, s4, sq / count, sp / count, sd / count];
        const at = (k: number): bigint => BigInt(row[1 + 2 * k]!) | (BigInt(row[2 + 2 * k]!) << 32n);
        const k = expected.findIndex((v, j) => at(j) !== v);
        if (k >= 0) return `group ${row[0]}: aggregate ${k} is ${at(k)}, not ${expected[k]}`;
        if (BigInt(row[15]!) !== count) return `group ${row[0]}: count ${row[15]}, not ${count}`;
      }
      return undefined;
    };
    const name = `int32 key, 4 groups as TPC-H Q1: ${variant} (pipeline)`;
    return { ...kernelCase('groupBy', name, 'rows/s', kernel, variables(types, outTypes), [{ words, width: W }], constants), check };
  });
}

/** A kernel's constants, encoded as runKernel takes them. */
function encodedConstants(kernel: KirKernel): Uint32Array<ArrayBuffer> {
  const constants = new Uint32Array(kernelConstants(kernel).reduce((w, c) => w + wordsOf(c.type), 0));
  kernelConstants(kernel).reduce((at, c) => encodeValue(c.type, c.value, new StringDictionary([]), constants, at), 0);
  return constants;
}

/** Per-key counts of `keys` (a group count check). */
function countsOf(keys: Iterable<number>): Map<number, number> {
  const counts = new Map<number, number>();
  for (const k of keys) counts.set(k, (counts.get(k) ?? 0) + 1);
  return counts;
}

/** What is wrong with `got` (rows of key, count) as the counts `want`. */
function countsError(got: Uint32Array, want: ReadonlyMap<number, number>): string | undefined {
  if (got.length !== 2 * want.size) return `${got.length / 2} groups, not ${want.size}`;
  for (let g = 0; g < want.size; g++) {
    if (want.get(got[2 * g]!) !== got[2 * g + 1]) return `group ${got[2 * g]}: count ${got[2 * g + 1]}, not ${want.get(got[2 * g]!) ?? 0}`;
  }
  return undefined;
}

/**
 * Scanned rows of the Q4-shaped case at most, as SF 10's 15M orders: at 2^26 the swapped build's buffer (its table
 * sized for every scanned row, whose kept ones are counted on the device) passes a 2 GiB binding, and the pipeline
 * builds on the semi-join keys instead (10.5 ms on the H200).
 */
const Q4_ROWS = 2 ** 24;

/**
 * TPC-H Q4's aggregation as the pipeline it compiles to: rows (order key, date, priority) kept by a quarter's dates
 * (3.8% of them, as Q4's 3 months of 79) and by a semi-join with the distinct order keys of late lines (92% of the
 * orders, in key order as a unique leaves them), counted by priority (5 groups).
 */
function q4GroupBy(size: number, r: () => number): OperatorCase {
  const n = Math.min(size, Q4_ROWS);
  // Plain loops: at 2^26 rows per-word closures took seconds.
  const rows = new Uint32Array(3 * n);
  const lateKeys = new Uint32Array(n);
  let lates = 0;
  for (let i = 0; i < n; i++) {
    rows[3 * i] = i;
    rows[3 * i + 1] = Math.floor((r() / 2 ** 32) * 2406);
    rows[3 * i + 2] = Math.floor((r() / 2 ** 32) * 5);
    if (r() / 2 ** 32 < 0.92) lateKeys[lates++] = i;
  }
  const late = lateKeys.slice(0, lates);
  const date = (value: number): Expr => ({ kind: 'const', type: 'int32', value });
  const [from, to] = [1000, 1092];
  const kernel: KirKernel = {
    kind: 'pipeline',
    id: 0,
    input: 0,
    output: 2,
    filter: [
      { kind: 'compare', op: '>=', left: col(1, 'int32'), right: date(from) },
      { kind: 'compare', op: '<', left: col(1, 'int32'), right: date(to) },
    ],
    probes: [{ build: 1, buildKeys: [0], probeKeys: [col(0, 'int32')] }],
    check: [],
    project: [col(2, 'int32')],
    aggregate: { groupBy: [0], aggregates: [{ fn: 'count', type: 'int32' }] },
    fused: [0],
  };
  const isLate = new Uint8Array(n);
  for (const o of late) isLate[o] = 1;
  const check = (got: Uint32Array): string | undefined => {
    const kept = function* (): Generator<number> {
      for (let i = 0; i < n; i++) if (rows[3 * i + 1]! >= from && rows[3 * i + 1]! < to && isLate[i]) yield rows[3 * i + 2]!;
    };
    return countsError(got, countsOf(kept()));
  };
  const vars = variables(['int32', 'int32', 'int32'], ['int32'], I2);
  const inputs: OperatorCase['inputs'] = [
    { words: rows, width: 3 },
    { words: late, width: 1, canonical: true },
  ];
  const variant = `int32 key, 5 groups as TPC-H Q4: 3.8% of ${n < size ? `2^${Math.log2(n)} ` : ''}rows by date, semi-join into 0.92n keys, count (pipeline)`;
  return { ...kernelCase('groupBy', variant, 'rows/s', kernel, vars, inputs, encodedConstants(kernel)), items: n, check };
}

const q13Groups = (n: number): number => Math.max(1, Math.min(2 ** 20, n >>> 4));

/** Rows (order key, customer, flag) as q13GroupBy describes them. */
function q13Rows(n: number, r: () => number): Uint32Array<ArrayBuffer> {
  const groups = q13Groups(n);
  const rows = new Uint32Array(3 * n);
  for (let i = 0; i < n; i++) {
    rows[3 * i] = i;
    rows[3 * i + 1] = distinctKey(r() % groups);
    rows[3 * i + 2] = r() % 100;
  }
  return rows;
}

/**
 * TPC-H Q13's first aggregation as the pipeline it compiles to: rows (order key, customer, flag) without the 1% of
 * orders whose flag marks them (an anti-join with the same rows, filtered: Q13's special requests), counted by
 * customer (n / 16 groups in no order, at most 2^20: Q13 at SF 10 counts 15M orders into 1M customers).
 */
function q13GroupBy(n: number, rows: Uint32Array<ArrayBuffer>): OperatorCase {
  const groups = q13Groups(n);
  const special: Expr = { kind: 'const', type: 'int32', value: 1 };
  const kernel: KirKernel = {
    kind: 'pipeline',
    id: 0,
    input: 0,
    output: 2,
    filter: [],
    probes: [{ build: 1, buildKeys: [0], probeKeys: [col(0, 'int32')], buildFilter: [{ kind: 'compare', op: '<', left: col(2, 'int32'), right: special }], negated: true }],
    check: [],
    project: [col(1, 'int32')],
    aggregate: { groupBy: [0], aggregates: [{ fn: 'count', type: 'int32' }] },
    fused: [0],
  };
  const check = (got: Uint32Array): string | undefined => {
    const kept = function* (): Generator<number> {
      for (let i = 0; i < n; i++) if (rows[3 * i + 2]! >= 1) yield rows[3 * i + 1]!;
    };
    return countsError(got, countsOf(kept()));
  };
  const I3: ScalarType[] = ['int32', 'int32', 'int32'];
  const inputs = [
    { words: rows, width: 3 },
    { words: rows, width: 3 },
  ];
  return { ...kernelCase('groupBy', `int32 key, ${groups} groups as TPC-H Q13: anti-join with 1% of the rows, count (pipeline)`, 'rows/s', kernel, variables(I3, I3, I2), inputs, encodedConstants(kernel)), check };
}

/**
 * cases() one operator at a time: at 2^28 rows and more, making every case's data before the first case ran took
 * longer than the cases (tens of GB and over a minute of host time before the first result).
 */
function* casesByOperator(n: number, selectivities: readonly number[], groupCounts: readonly number[] | undefined, want: (operator: string) => boolean): Generator<OperatorCase> {
  for (const op of BENCH_OPERATORS) if (want(op)) yield* cases(n, selectivities, groupCounts, (o) => o === op);
}

async function benchCase(
  gpu: Gpu,
  c: OperatorCase,
  runs: number,
  warmup: number,
): Promise<{ times: number[]; deviceMs?: number; countReadMs?: number; outputRows: number; outputWidth: number }> {
  const rels: DeviceRelation[] = [];
  let outputRows = 0;
  let outputWidth = 0;
  let prepared: Prepared | null = null;
  let out: DeviceRelation | null = null;
  const countReads: number[] = [];
  // An output may keep an input's buffers (a merge past one binding keeps the chunks it adds no rows to).
  const releaseOwn = (result: DeviceRelation): void => {
    const inputs = new Set(rels.flatMap((r) => (r.chunks ?? [r]).map((c) => c.buffer)));
    for (const part of result.chunks ?? [result]) if (part.buffer && !inputs.has(part.buffer)) releaseRelation(gpu, part);
  };
  try {
    for (const i of c.inputs) rels.push(Object.assign(uploadRelation(gpu, i.words, i.width), i.canonical ? { canonical: true } : {}));
    prepared = await c.prepare(gpu, rels);
    const body = prepared.body;
    const call = async (): Promise<void> => {
      out = await body();
    };
    // The output's rows (a count left on the device is read here, timed on its own), then its buffers released.
    const finish = async (): Promise<void> => {
      const result = out;
      if (!result) return;
      out = null;
      const pending = settle(result).pending !== undefined;
      const t0 = performance.now();
      outputRows = await exactRows(gpu, result);
      if (pending) countReads.push(performance.now() - t0);
      outputWidth = result.width;
      releaseOwn(result);
    };
    const words = c.inputs.reduce((s, i) => s + i.words.length, 0);
    // The first two outputs: a call may take another path than the one before it (a merge join reads its first
    // total back, then sizes its output by the longest run of right keys, as the timed calls do).
    for (let k = 0; k < 2 && c.check && words <= CHECKED_WORDS; k++) {
      await call();
      const wrong = out ? c.check(await downloadRelation(gpu, out)) : 'no output';
      if (wrong !== undefined) throw new Error(`bench ${c.operator} (${c.variant}) gave a wrong output: ${wrong}`);
      await finish();
    }
    const times = await measure(gpu, runs, warmup, call, finish);
    const device = c.hostOnly ? {} : await deviceTime(gpu, Math.min(runs, 5), call, finish);
    return { times, ...device, ...(countReads.length > 0 ? { countReadMs: median(countReads) } : {}), outputRows, outputWidth };
  } finally {
    if (out) releaseOwn(out);
    prepared?.dispose();
    for (const r of rels) releaseRelation(gpu, r);
  }
}

export async function benchOperators(gpu: Gpu, options: BenchOptions = {}): Promise<BenchReport> {
  const sizes = options.sizes ?? defaultBenchSizes(gpu);
  const runs = options.runs ?? 5;
  const warmup = options.warmup ?? 2;
  if (runs < 1 || warmup < 0) throw new Error('benchOperators: runs must be >= 1 and warmup >= 0');
  const selectivities = options.selectivities ?? [0.01, 0.5, 1];
  if (selectivities.some((x) => !(x > 0 && x <= 1))) throw new Error('benchOperators: selectivities must be in (0, 1]');
  if (options.groups?.some((x) => !(Number.isInteger(x) && x >= 1))) throw new Error('benchOperators: group counts must be positive integers');
  const only = options.operators;
  const unknown = (only ?? []).filter((o) => !(BENCH_OPERATORS as readonly string[]).includes(o));
  if (unknown.length > 0) throw new Error(`benchOperators: unknown operators ${unknown.join(', ')} (known: ${BENCH_OPERATORS.join(', ')})`);
  const want = (operator: string): boolean => only === undefined || only.includes(operator);
  const results: BenchResult[] = [];
  const skipped: BenchReport['skipped'] = [];
  const emit = (r: BenchResult): void => {
    results.push(r);
    options.onResult?.(r);
  };
  if (!gpu.cpuAdapter) await warmDevice(gpu);
  const roundTripMicros = await benchRoundTrip(gpu, 200);
  for (const log2n of sizes) {
    const n = 2 ** log2n;
    const copyTimes = await benchCopy(gpu, n, runs, warmup);
    const copyMs = median(copyTimes);
    const copyGbps = copyGbPerSecond(n, copyMs);
    emit({
      operator: 'copy',
      variant: 'vec4<u32> per thread',
      log2n,
      rows: n,
      outputRows: n,
      medianMs: copyMs,
      timesMs: copyTimes,
      throughput: n / (copyMs / 1e3),
      unit: 'words/s',
      bytes: 8 * n,
      gbPerSecond: copyGbps,
      copyRatio: 1,
    });
    for (const c of casesByOperator(n, selectivities, options.groups, want)) {
      let measured: Awaited<ReturnType<typeof benchCase>>;
      try {
        measured = await benchCase(gpu, c, runs, warmup);
      } catch (e) {
        const reason = e instanceof Error ? e.message : String(e);
        if (!/maxStorageBufferBindingSize/.test(reason) && !(e instanceof DeviceFault && e.kind === 'out-of-memory')) throw e;
        skipped.push({ operator: c.operator, variant: c.variant, log2n, reason });
        options.onSkip?.(skipped[skipped.length - 1]!);
        continue;
      }
      const { times, deviceMs, countReadMs, outputRows, outputWidth } = measured;
      const ms = median(times);
      const bytes = 4 * ((c.readWords ?? c.inputs.reduce((s, i) => s + i.words.length, 0)) + outputRows * outputWidth);
      const gbPerSecond = bytes / ms / 1e6;
      emit({
        operator: c.operator,
        variant: c.variant,
        log2n,
        rows: c.items ?? n,
        outputRows,
        medianMs: ms,
        timesMs: times,
        ...(countReadMs !== undefined ? { countReadMs } : {}),
        ...(deviceMs !== undefined ? { deviceMs } : {}),
        throughput: (c.items ?? n) / (ms / 1e3),
        unit: c.unit,
        bytes,
        gbPerSecond,
        copyRatio: gbPerSecond / copyGbps,
        ...(deviceMs !== undefined ? { deviceCopyRatio: bytes / deviceMs / 1e6 / copyGbps } : {}),
      });
    }
  }
  return {
    adapter: gpu.adapterName,
    backend: gpu.backend,
    software: gpu.cpuAdapter,
    subgroups: gpu.subgroups,
    workgroupSize: gpu.limits.workgroupSize,
    runs,
    warmup,
    date: new Date().toISOString(),
    roundTripMicros,
    results,
    skipped,
  };
}

/** `x` with an SI suffix (k, M, G, T), two decimals. */
export const si = (x: number): string => {
  for (const [d, s] of [[1e12, 'T'], [1e9, 'G'], [1e6, 'M'], [1e3, 'k']] as const) if (x >= d) return `${(x / d).toFixed(2)}${s}`;
  return x.toFixed(2);
};

/** The report as an aligned text table, one row per measurement. */
export function formatBenchReport(report: BenchReport): string {
  const head = ['operator', 'case', 'n', 'ms', 'count read ms', 'device ms', 'throughput', 'GB/s', 'of copy', 'device of copy'];
  const rows = report.results.map((r) => [
    r.operator,
    r.variant,
    `2^${r.log2n}`,
    r.medianMs.toFixed(3),
    r.countReadMs?.toFixed(3) ?? '-',
    r.deviceMs?.toFixed(3) ?? '-',
    `${si(r.throughput)} ${r.unit}`,
    r.gbPerSecond.toFixed(1),
    `${(100 * r.copyRatio).toFixed(1)}%`,
    r.deviceCopyRatio !== undefined ? `${(100 * r.deviceCopyRatio).toFixed(1)}%` : '-',
  ]);
  const skipped = report.skipped.map((x) => `skipped: ${x.operator} ${x.variant} 2^${x.log2n}: ${x.reason}`);
  return [
    `adapter: ${report.adapter}, workgroup size ${report.workgroupSize}, subgroups ${report.subgroups ? 'on' : 'off'}, median of ${report.runs} runs after ${report.warmup} warm-up${report.software ? '' : ` (for at least ${GPU_WARM_MS / 1000} s per case)`}`,
    `host round trip (submit + 4-byte readback): ${report.roundTripMicros.toFixed(1)} µs`,
    ...alignedTable(head, rows, 2),
    ...skipped,
  ].join('\n');
}

/** Header and rows as aligned lines: the first `leftColumns` columns padded on the right, the rest on the left. */
export function alignedTable(head: readonly string[], rows: readonly string[][], leftColumns: number): string[] {
  const widths = head.map((h, k) => Math.max(h.length, ...rows.map((r) => r[k]!.length)));
  const line = (cells: readonly string[]): string => cells.map((c, k) => (k >= leftColumns ? c.padStart(widths[k]!) : c.padEnd(widths[k]!))).join('  ');
  return [line(head), ...rows.map(line)];
}
