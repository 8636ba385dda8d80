/**
 * `vixen bench compile`: how the device compiles a load's compute pipelines. The passes a load of the TPC-H tables
 * runs (the text parse, string, radix sort, row order and unique passes, subgroup variants where the device has them)
 * are compiled one at a time (each awaited), all at once (createComputePipelineAsync, which Dawn runs on its worker
 * pool) and synchronously on the main thread. Each round compiles them made distinct (a return on a constant of its
 * own at the top of main) so that no cache, Dawn's or the driver's, holds them: the first round of a process measures
 * cold compiles. One-at-a-time over all-at-once wall time is how many compiles Dawn runs at once.
 */
import { randomInt } from 'node:crypto';
import { generateKernelShaders, PARSE_INTERN, PARSE_STRINGS, parseTextShaders, rowsOrderShaders, SUBGROUP_VARIANT } from '@vixen/codegen-wgsl';
import type { KirVariable } from '@vixen/kernel-ir';
import type { Gpu } from '@vixen/runtime';
import { internals } from '@vixen/runtime/gpu';
import { median } from './operators.js';

export interface CompileReport {
  adapter: string;
  /** The passes compiled in each round, and their WGSL bytes. */
  passes: Array<{ pass: string; bytes: number }>;
  /** Wall ms of each round: one at a time, all at once, synchronously. */
  oneAtATimeMs: number;
  allAtOnceMs: number;
  syncMs: number;
  /** Per pass, ms of its compile one at a time (awaited) and synchronously. */
  perPass: Array<{ pass: string; awaitedMs: number; syncMs: number }>;
}

/** TPC-H lineitem's columns: the widest rows a load sorts. */
const LINEITEM: KirVariable = {
  id: 0,
  name: 'lineitem',
  columns: ['int32', 'int32', 'int32', 'int32', 'decimal', 'decimal', 'decimal', 'decimal', 'string', 'string', 'date', 'date', 'date', 'string', 'string', 'string'],
};

/** The load's passes, as the device runs them (the subgroup variant where it has subgroups). */
function loadPasses(subgroups: boolean): Array<{ pass: string; code: string }> {
  const sets = [
    parseTextShaders(false),
    PARSE_INTERN,
    PARSE_STRINGS,
    generateKernelShaders({ kind: 'sort', id: 0, input: 0, output: 0, keys: [0, 1, 2, 3] }, [LINEITEM]),
    rowsOrderShaders(),
    generateKernelShaders({ kind: 'unique', id: 0, input: 0, output: 0 }, [LINEITEM]),
  ];
  // Not the whole-key sorts (a load radix sorts) nor the passes only a CPU adapter runs.
  const skipped = new Set(['rankSort', 'sortTiles', 'mergeRanks', 'radixTiles', 'radixTilePrefix']);
  return sets.flatMap((shaders) =>
    Object.keys(shaders)
      .filter((pass) => !pass.endsWith(SUBGROUP_VARIANT) && !skipped.has(pass))
      .map((pass) => ({ pass, code: (subgroups ? shaders[`${pass}${SUBGROUP_VARIANT}`] : undefined) ?? shaders[pass]! })),
  );
}

/** `code` made distinct by a return on `nonce` at the top of its entry point (u is every pass's uniform). */
function distinct(code: string, nonce: number): string {
  const at = code.search(/fn main\(.*\) \{\n/);
  if (at < 0) throw new Error('internal: a pass without its entry point');
  const end = code.indexOf('\n', at) + 1;
  return `${code.slice(0, end)}  if (u[0].x == ${nonce}u) { return; }\n${code.slice(end)}`;
}

export async function benchCompile(gpu: Gpu): Promise<CompileReport> {
  const g = internals(gpu);
  const { device } = g;
  const passes = loadPasses(g.subgroups);
  let nonce = randomInt(2 ** 30);
  const descriptor = (code: string): GPUComputePipelineDescriptor => ({
    layout: 'auto',
    compute: { module: device.createShaderModule({ code: distinct(code, nonce++) }), entryPoint: 'main', constants: { WG: g.limits.workgroupSize } },
  });
  device.pushErrorScope('validation');
  try {
    const awaited: number[] = [];
    const t0 = performance.now();
    for (const { code } of passes) {
      const t = performance.now();
      await device.createComputePipelineAsync(descriptor(code));
      awaited.push(performance.now() - t);
    }
    const oneAtATimeMs = performance.now() - t0;
    const t1 = performance.now();
    await Promise.all(passes.map(({ code }) => device.createComputePipelineAsync(descriptor(code))));
    const allAtOnceMs = performance.now() - t1;
    const sync: number[] = [];
    const t2 = performance.now();
    for (const { code } of passes) {
      const t = performance.now();
      device.createComputePipeline(descriptor(code));
      sync.push(performance.now() - t);
    }
    const syncMs = performance.now() - t2;
    return {
      adapter: gpu.adapterName,
      passes: passes.map(({ pass, code }) => ({ pass, bytes: code.length })),
      oneAtATimeMs,
      allAtOnceMs,
      syncMs,
      perPass: passes.map(({ pass }, i) => ({ pass, awaitedMs: awaited[i]!, syncMs: sync[i]! })),
    };
  } finally {
    const error = await device.popErrorScope();
    if (error) throw new Error(`a load pass did not compile: ${error.message}`);
  }
}

export function formatCompileReport(r: CompileReport): string {
  const kb = r.passes.reduce((n, p) => n + p.bytes, 0) / 1024;
  const awaited = r.perPass.map((p) => p.awaitedMs);
  const slowest = [...r.perPass].sort((a, b) => b.awaitedMs - a.awaitedMs).slice(0, 5);
  return [
    `compile: ${r.passes.length} load passes (${kb.toFixed(1)} KiB of WGSL), each round made distinct (no cache holds it); adapter: ${r.adapter}`,
    `one at a time (each awaited): ${r.oneAtATimeMs.toFixed(1)} ms (per pass median ${median(awaited).toFixed(1)}, max ${Math.max(...awaited).toFixed(1)})`,
    `all at once (createComputePipelineAsync): ${r.allAtOnceMs.toFixed(1)} ms: ${(r.oneAtATimeMs / r.allAtOnceMs).toFixed(2)} compiles at a time`,
    `synchronous (createComputePipeline, main thread): ${r.syncMs.toFixed(1)} ms`,
    `slowest one at a time: ${slowest.map((p) => `${p.pass} ${p.awaitedMs.toFixed(1)} ms (sync ${p.syncMs.toFixed(1)})`).join(', ')}`,
  ].join('\n');
}
