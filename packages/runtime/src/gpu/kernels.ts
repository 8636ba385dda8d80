/**
 * Host drivers: run one KIR kernel's passes on the device. Compacting kernels (mapFilter, unique,
 * difference, mergeJoin) share one shape: a pass writes a per-row count (n+1 entries, the last 0),
 * an exclusive scan turns counts into output offsets, the host reads back only the total (entry n)
 * to size the output, and a second pass writes the rows.
 */
import { rowWords } from '@vixen/queryplan';
import type { KernelShaders, PassName } from '@vixen/codegen-wgsl';
import { kernelInputs, type KirKernel, type KirVariable, type VarId } from '@vixen/kernel-ir';
import { internals, type Gpu, type GpuImpl } from './device.js';
import { Recorder, type Bound } from './recorder.js';
import { allocRelation, bindingBytes, checkBindingSize, readWords, relationUsage, type DeviceRelation } from './relations.js';

function bound(rel: DeviceRelation): Bound {
  if (!rel.buffer) throw new Error('internal: binding an empty relation');
  return { buffer: rel.buffer, words: rel.count * rel.width };
}

/** In-place exclusive prefix sum of `n` u32: block scans, then recursively over the block totals. */
function encodeScan(rec: Recorder, data: Bound, n: number): void {
  const blocks = Math.ceil(n / rec.g.limits.workgroupSize);
  const sums = rec.scratch(blocks);
  rec.dispatch('scanBlock', [data, sums], [n], n);
  if (blocks > 1) {
    encodeScan(rec, sums, blocks);
    rec.dispatch('scanAdd', [data, sums], [n], n);
  }
}

interface Compaction {
  /** Pass writing per-row counts, after the buffers it reads. */
  count: { pass: PassName; inputs: Bound[] };
  /** Pass writing rows at their offsets, after the buffers it reads (then offsets, output). */
  write: { pass: PassName; inputs: Bound[] };
  /** Rows driving both passes (one thread each). */
  rows: number;
  sizes: number[];
  constants: Uint32Array;
  outWidth: number;
}

async function compact(g: GpuImpl, shaders: KernelShaders, c: Compaction): Promise<DeviceRelation> {
  const n = c.rows;
  checkBindingSize(g, n + 1, `offsets for ${n} rows`);
  const offsets: Bound = { buffer: g.pool.acquire(bindingBytes(n + 1), relationUsage()), words: n + 1 };
  try {
    const counting = new Recorder(g, shaders);
    counting.dispatch(c.count.pass, [...c.count.inputs, offsets], c.sizes, n + 1, c.constants);
    encodeScan(counting, offsets, n + 1);
    await counting.submit();
    const total = (await readWords(g, offsets.buffer, n * 4, 1))[0]!;
    const out = allocRelation(g, total, c.outWidth);
    if (total === 0) return out;
    const writing = new Recorder(g, shaders);
    writing.dispatch(c.write.pass, [...c.write.inputs, offsets, bound(out)], c.sizes, n, c.constants);
    await writing.submit();
    return out;
  } finally {
    g.pool.release(offsets.buffer);
  }
}

/** Copies of whole relations, back to back (copy and concat). */
async function concatenate(g: GpuImpl, parts: DeviceRelation[], width: number): Promise<DeviceRelation> {
  const out = allocRelation(g, parts.reduce((n, p) => n + p.count, 0), width);
  const rec = new Recorder(g, {});
  let offset = 0;
  for (const p of parts) {
    if (p.width !== width) throw new Error(`internal: concatenating rows of ${p.width} and ${width} words`);
    const bytes = p.count * p.width * 4;
    if (p.buffer && out.buffer) rec.copy(p.buffer, 0, out.buffer, offset, bytes);
    offset += bytes;
  }
  await rec.submit();
  return out;
}

/** Bitonic sort of an index permutation over all stages, then a gather of whole rows. */
async function sortRows(g: GpuImpl, shaders: KernelShaders, input: DeviceRelation): Promise<DeviceRelation> {
  const n = input.count;
  if (n <= 1) return concatenate(g, [input], input.width);
  const out = allocRelation(g, n, input.width);
  const rec = new Recorder(g, shaders);
  const idx = rec.scratch(n);
  rec.dispatch('sortInit', [idx], [n], n);
  const size = 2 ** Math.ceil(Math.log2(n));
  for (let k = 2; k <= size; k *= 2) {
    rec.dispatch('sortStep', [bound(input), idx], [n, k / 2, 1], n);
    for (let j = k / 4; j >= 1; j /= 2) rec.dispatch('sortStep', [bound(input), idx], [n, j, 0], n);
  }
  rec.dispatch('gather', [bound(input), idx, bound(out)], [n], n);
  await rec.submit();
  return out;
}

async function run(g: GpuImpl, kernel: KirKernel, shaders: KernelShaders, inputs: DeviceRelation[], constWords: Uint32Array, width: (v: VarId) => number): Promise<DeviceRelation> {
  const outWidth = width(kernel.output);
  const empty: DeviceRelation = { buffer: null, count: 0, width: outWidth };
  const [a, b] = inputs as [DeviceRelation, DeviceRelation];
  switch (kernel.kind) {
    case 'mapFilter':
    case 'unique':
      if (a.count === 0) return empty;
      return compact(g, shaders, {
        count: { pass: 'flags', inputs: [bound(a)] },
        write: { pass: 'scatter', inputs: [bound(a)] },
        rows: a.count,
        sizes: [a.count],
        constants: constWords,
        outWidth,
      });
    case 'difference':
      if (a.count === 0) return empty;
      if (b.count === 0) return concatenate(g, [a], outWidth);
      return compact(g, shaders, {
        count: { pass: 'flagsAbsent', inputs: [bound(a), bound(b)] },
        write: { pass: 'scatter', inputs: [bound(a)] },
        rows: a.count,
        sizes: [a.count, b.count],
        constants: constWords,
        outWidth,
      });
    case 'mergeJoin':
      if (a.count === 0 || b.count === 0) return empty;
      return compact(g, shaders, {
        count: { pass: 'joinCount', inputs: [bound(a), bound(b)] },
        write: { pass: 'joinWrite', inputs: [bound(a), bound(b)] },
        rows: a.count,
        sizes: [a.count, b.count],
        constants: constWords,
        outWidth,
      });
    case 'sort':
      return sortRows(g, shaders, a);
    case 'concat':
      return concatenate(g, [a, b], outWidth);
    case 'copy':
      return concatenate(g, [a], outWidth);
  }
}

/**
 * Runs one kernel. `inputs` in kernelInputs(kernel) order; `constWords` = the kernel's constants
 * encoded in kernelConstants() order (int32 1 word, int64 2 words lo,hi, string 1 word).
 */
export async function runKernel(
  gpu: Gpu,
  kernel: KirKernel,
  shaders: KernelShaders,
  inputs: DeviceRelation[],
  constWords: Uint32Array,
  variables: readonly KirVariable[],
): Promise<DeviceRelation> {
  const g = internals(gpu);
  const width = (id: VarId): number => {
    const v = variables.find((x) => x.id === id);
    if (!v) throw new Error(`internal: kernel ${kernel.id} uses unknown variable ${id}`);
    return rowWords(v.columns);
  };
  if (inputs.length !== kernelInputs(kernel).length) throw new Error(`internal: ${kernel.kind} kernel ${kernel.id} given ${inputs.length} inputs`);
  return g.scoped(`${kernel.kind} kernel ${kernel.id}`, () => run(g, kernel, shaders, inputs, constWords, width));
}
