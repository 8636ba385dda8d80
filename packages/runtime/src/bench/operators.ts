/**
 * Operator benchmark: each kernel driver on synthetic data at sizes 2^k, next to a plain WGSL copy kernel
 * that measures what the device's memory system delivers at the same size. Timing brackets only the GPU
 * work (inputs are uploaded and the queue drained first), the figure is the median of several runs after
 * a warm-up, and each operator's bytes (input read + output written) over its time is reported as a
 * fraction of the copy bandwidth.
 */
import { generateKernelShaders, kernelConstants, type KernelShaders } from '@vixen/codegen-wgsl';
import type { KirKernel, KirVariable } from '@vixen/kernel-ir';
import type { Expr, ScalarType } from '@vixen/queryplan';
import { encodeValue, StringDictionary } from '../encoding.js';
import { internals, type Gpu } from '../gpu/device.js';
import { runKernel } from '../gpu/kernels.js';
import { releaseRelation, uploadRelation, type DeviceRelation } from '../gpu/relations.js';

export interface BenchOptions {
  /** log2 of the row counts; default 20..22 on a software adapter, 20..26 on a GPU. */
  sizes?: readonly number[];
  /** Timed runs per measurement (the median is reported); default 5. */
  runs?: number;
  /** Untimed runs first (pipeline compilation, pool warm-up); default 2. */
  warmup?: number;
  /** Called with each result as it is measured (progress). */
  onResult?: (r: BenchResult) => void;
}

export interface BenchResult {
  /** 'copy', 'mapFilter', 'sort', 'unique', 'mergeJoin' or 'difference'. */
  operator: string;
  /** The case: selectivity, key width, ... */
  variant: string;
  log2n: number;
  /** Input rows (left rows for binary operators). */
  rows: number;
  /** Rows of the result. */
  outputRows: number;
  medianMs: number;
  timesMs: number[];
  /** Items per second: rows, keys, or probe (left) rows. */
  throughput: number;
  unit: string;
  /** Bytes read from inputs plus bytes written as output, once each. */
  bytes: number;
  gbPerSecond: number;
  /** gbPerSecond over the copy kernel's at the same size. */
  copyRatio: number;
}

export interface BenchReport {
  adapter: string;
  backend: string;
  software: boolean;
  workgroupSize: number;
  runs: number;
  warmup: number;
  date: string;
  results: BenchResult[];
}

export function defaultBenchSizes(gpu: Gpu): number[] {
  const top = gpu.software ? 22 : 26;
  return Array.from({ length: top - 19 }, (_, k) => 20 + k);
}

const median = (xs: readonly number[]): number => {
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

async function measure(gpu: Gpu, runs: number, warmup: number, body: () => Promise<void>): Promise<number[]> {
  for (let k = 0; k < warmup; k++) await timed(gpu, body);
  const times: number[] = [];
  for (let k = 0; k < runs; k++) times.push(await timed(gpu, body));
  return times;
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
 * at least ~1 GiB moves (a single small dispatch would measure submission latency); returns ms per copy.
 */
async function benchCopy(gpu: Gpu, words: number, runs: number, warmup: number): Promise<number[]> {
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
  const group = device.createBindGroup({
    layout: pipeline.getBindGroupLayout(0),
    entries: [
      { binding: 0, resource: { buffer: src } },
      { binding: 1, resource: { buffer: dst } },
    ],
  });
  const groups = Math.ceil(bytes / 16 / wg);
  const x = Math.min(groups, g.limits.maxComputeWorkgroupsPerDimension);
  const reps = Math.max(1, Math.min(64, Math.ceil(2 ** 30 / (2 * bytes))));
  try {
    const times = await measure(gpu, runs, warmup, async () => {
      const encoder = device.createCommandEncoder();
      for (let k = 0; k < reps; k++) {
        const pass = encoder.beginComputePass();
        pass.setPipeline(pipeline);
        pass.setBindGroup(0, group);
        pass.dispatchWorkgroups(x, Math.ceil(groups / x));
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

interface OperatorCase {
  operator: string;
  variant: string;
  unit: string;
  kernel: KirKernel;
  variables: KirVariable[];
  inputs: Array<{ words: Uint32Array; width: number }>;
  constants?: Uint32Array;
}

const col = (index: number, type: ScalarType): Expr => ({ kind: 'col', index, type });
const I2: ScalarType[] = ['int32', 'int32'];

function variables(...columns: ScalarType[][]): KirVariable[] {
  return columns.map((c, id) => ({ id, name: `v${id}`, columns: c }));
}

/** The benchmarked cases at n rows; data are seeded and, where the kernel requires, in canonical order. */
function cases(n: number): OperatorCase[] {
  const r = rng(n);
  const out: OperatorCase[] = [];
  // mapFilter over (a, b) with a uniform in [0, 2^20): `a < t` keeps a t / 2^20 share, in input order.
  const filterInput = table(n, 2, (i, k) => (k === 0 ? r() >>> 12 : i));
  for (const [variant, share] of [['1%', 0.01], ['50%', 0.5], ['100%', 1]] as const) {
    const threshold: Expr = { kind: 'const', type: 'int32', value: Math.round(share * 2 ** 20) };
    const constants = new Uint32Array(1);
    encodeValue('int32', threshold.value, new StringDictionary([]), constants, 0);
    out.push({
      operator: 'mapFilter',
      variant: `${variant} of (int32, int32)`,
      unit: 'rows/s',
      kernel: { kind: 'mapFilter', id: 0, input: 0, output: 1, filter: [{ kind: 'compare', op: '<', left: col(0, 'int32'), right: threshold }], project: [col(1, 'int32'), col(0, 'int32')] },
      variables: variables(I2, I2),
      inputs: [{ words: filterInput, width: 2 }],
      constants,
    });
  }
  out.push({
    operator: 'sort',
    variant: 'int32 keys, random',
    unit: 'keys/s',
    kernel: { kind: 'sort', id: 0, input: 0, output: 1, keys: [0] },
    variables: variables(['int32'], ['int32']),
    inputs: [{ words: table(n, 1, () => r()), width: 1 }],
  });
  out.push({
    operator: 'sort',
    variant: 'int64 keys, random',
    unit: 'keys/s',
    kernel: { kind: 'sort', id: 0, input: 0, output: 1, keys: [0] },
    variables: variables(['int64'], ['int64']),
    inputs: [{ words: table(n, 2, () => r()), width: 2 }],
  });
  out.push({
    operator: 'unique',
    variant: 'int32 pairs, each row twice',
    unit: 'rows/s',
    kernel: { kind: 'unique', id: 0, input: 0, output: 1 },
    variables: variables(I2, I2),
    inputs: [{ words: table(n, 2, (i, k) => (k === 0 ? i >>> 1 : 0)), width: 2 }],
  });
  // Left keys 0..n-1, right keys the even numbers: every other probe finds one match.
  out.push({
    operator: 'mergeJoin',
    variant: 'int32 key, 50% of probes match once',
    unit: 'probe rows/s',
    kernel: { kind: 'mergeJoin', id: 0, left: 0, right: 1, output: 2, leftKeys: [0], rightKeys: [0], filter: [], project: [col(0, 'int32'), col(1, 'int32'), col(3, 'int32')] },
    variables: variables(I2, I2, ['int32', 'int32', 'int32']),
    inputs: [
      { words: table(n, 2, (i, k) => (k === 0 ? i : i & 7)), width: 2 },
      { words: table(n, 2, (i, k) => (k === 0 ? 2 * i : i & 3)), width: 2 },
    ],
  });
  out.push({
    operator: 'difference',
    variant: 'int32 pairs, 50% removed',
    unit: 'rows/s',
    kernel: { kind: 'difference', id: 0, left: 0, right: 1, output: 2 },
    variables: variables(I2, I2, I2),
    inputs: [
      { words: table(n, 2, (i, k) => (k === 0 ? i : 0)), width: 2 },
      { words: table(n, 2, (i, k) => (k === 0 ? 2 * i : 0)), width: 2 },
    ],
  });
  return out;
}

async function benchCase(gpu: Gpu, c: OperatorCase, runs: number, warmup: number): Promise<{ times: number[]; outputRows: number; outputWidth: number }> {
  const shaders: KernelShaders = generateKernelShaders(c.kernel, c.variables);
  if (kernelConstants(c.kernel).length > 0 && !c.constants) throw new Error(`internal: bench case ${c.operator} lacks constants`);
  const rels: DeviceRelation[] = c.inputs.map((i) => uploadRelation(gpu, i.words, i.width));
  let outputRows = 0;
  let outputWidth = 0;
  try {
    const times = await measure(gpu, runs, warmup, async () => {
      const out = await runKernel(gpu, c.kernel, shaders, rels, c.constants ?? new Uint32Array(0), c.variables);
      outputRows = out.count;
      outputWidth = out.width;
      releaseRelation(gpu, out);
    });
    return { times, outputRows, outputWidth };
  } finally {
    for (const r of rels) releaseRelation(gpu, r);
  }
}

export async function benchOperators(gpu: Gpu, options: BenchOptions = {}): Promise<BenchReport> {
  const sizes = options.sizes ?? defaultBenchSizes(gpu);
  const runs = options.runs ?? 5;
  const warmup = options.warmup ?? 2;
  if (runs < 1 || warmup < 0) throw new Error('benchOperators: runs must be >= 1 and warmup >= 0');
  const results: BenchResult[] = [];
  const emit = (r: BenchResult): void => {
    results.push(r);
    options.onResult?.(r);
  };
  for (const log2n of sizes) {
    const n = 2 ** log2n;
    const copyTimes = await benchCopy(gpu, n, runs, warmup);
    const copyMs = median(copyTimes);
    const copyGbps = (8 * n) / copyMs / 1e6;
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
    for (const c of cases(n)) {
      const { times, outputRows, outputWidth } = await benchCase(gpu, c, runs, warmup);
      const ms = median(times);
      const bytes = 4 * (c.inputs.reduce((s, i) => s + i.words.length, 0) + outputRows * outputWidth);
      const gbPerSecond = bytes / ms / 1e6;
      emit({
        operator: c.operator,
        variant: c.variant,
        log2n,
        rows: n,
        outputRows,
        medianMs: ms,
        timesMs: times,
        throughput: n / (ms / 1e3),
        unit: c.unit,
        bytes,
        gbPerSecond,
        copyRatio: gbPerSecond / copyGbps,
      });
    }
  }
  return {
    adapter: gpu.adapterName,
    backend: gpu.backend,
    software: gpu.software,
    workgroupSize: gpu.limits.workgroupSize,
    runs,
    warmup,
    date: new Date().toISOString(),
    results,
  };
}

/** `x` with an SI suffix (k, M, G, T), two decimals. */
export const si = (x: number): string => {
  for (const [d, s] of [[1e12, 'T'], [1e9, 'G'], [1e6, 'M'], [1e3, 'k']] as const) if (x >= d) return `${(x / d).toFixed(2)}${s}`;
  return x.toFixed(2);
};

/** The report as an aligned text table, one row per measurement. */
export function formatBenchReport(report: BenchReport): string {
  const head = ['operator', 'case', 'n', 'ms', 'throughput', 'GB/s', 'of copy'];
  const rows = report.results.map((r) => [
    r.operator,
    r.variant,
    `2^${r.log2n}`,
    r.medianMs.toFixed(3),
    `${si(r.throughput)} ${r.unit}`,
    r.gbPerSecond.toFixed(1),
    `${(100 * r.copyRatio).toFixed(1)}%`,
  ]);
  return [
    `adapter: ${report.adapter}, workgroup size ${report.workgroupSize}, median of ${report.runs} runs after ${report.warmup} warm-up`,
    ...alignedTable(head, rows, 2),
  ].join('\n');
}

/** Header and rows as aligned lines: the first `leftColumns` columns padded on the right, the rest on the left. */
export function alignedTable(head: readonly string[], rows: readonly string[][], leftColumns: number): string[] {
  const widths = head.map((h, k) => Math.max(h.length, ...rows.map((r) => r[k]!.length)));
  const line = (cells: readonly string[]): string => cells.map((c, k) => (k >= leftColumns ? c.padStart(widths[k]!) : c.padEnd(widths[k]!))).join('  ');
  return [line(head), ...rows.map(line)];
}
