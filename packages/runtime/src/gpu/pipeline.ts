/**
 * Host driver of the fused `pipeline` kernel (codegen-wgsl kernels/pipeline.ts): build each probe's join table
 * (hash.ts buildTable, with the kernel's own build pass), copy tables, chains and build rows into one buffer,
 * then one probe pass over the input writes the output rows (hash.ts countedOutput: one readback, a second run
 * only when the rows outgrow one per input row).
 */
import { HASH_ITEMS, pipelineBuildLayouts, pipelineBuildPass, pipelineParamsAt, type KernelShaders } from '@vixen/codegen-wgsl';
import type { KirKernel } from '@vixen/kernel-ir';
import type { ScalarType } from '@vixen/queryplan';
import type { GpuImpl } from './device.js';
import { buildTable, countedOutput, joinTableWords, releaseTable, type HashTable } from './hash.js';
import type { Bound } from './recorder.js';
import { Recorder } from './recorder.js';
import { acquireBound, bound, sizeOf, type DeviceRelation, type Size } from './relations.js';

/** Words pipelineRows packs into one buffer for these build sides: each one's table, chains and rows. */
export function pipelineTableWords(builds: readonly DeviceRelation[], buildTypes: readonly (readonly ScalarType[])[], kernel: Extract<KirKernel, { kind: 'pipeline' }>): number {
  const layouts = pipelineBuildLayouts(kernel, buildTypes);
  return builds.reduce((n, b, j) => n + joinTableWords(b.count, layouts[j]!.keyWords.length) + b.count + b.count * b.width, 0);
}

export async function pipelineRows(
  g: GpuImpl,
  kernel: Extract<KirKernel, { kind: 'pipeline' }>,
  shaders: KernelShaders,
  [input, ...builds]: DeviceRelation[],
  buildTypes: readonly (readonly ScalarType[])[],
  constWords: Uint32Array,
  outWidth: number,
  tables: Bound | undefined,
): Promise<DeviceRelation> {
  if (!input || input.count === 0 || builds.some((b) => b.count === 0)) return { buffer: null, count: 0, width: outWidth };
  const layouts = pipelineBuildLayouts(kernel, buildTypes);
  const built: HashTable[] = [];
  let hashed: Bound | undefined;
  try {
    for (const [j, build] of builds.entries()) {
      built.push(await buildTable(g, { relation: build, keyWords: layouts[j]!.keyWords }, { hashBuild: shaders[pipelineBuildPass(j)]! }));
    }
    // Per probe: its table (with the repeated-key word), chains, build rows, back to back; the offsets go to the pass.
    const params: number[] = [];
    let words = 0;
    for (const [j, t] of built.entries()) {
      params.push(t.slots - 1, words, words + t.table!.words, words + t.table!.words + t.next!.words);
      words += t.table!.words + t.next!.words + builds[j]!.count * builds[j]!.width;
    }
    hashed = acquireBound(g, words, `pipeline hash tables of ${words} words`);
    const copies = new Recorder(g, {});
    for (const [j, t] of built.entries()) {
      copies.copy(t.table!.buffer, 0, hashed.buffer, params[4 * j + 1]! * 4, t.table!.words * 4);
      copies.copy(t.next!.buffer, 0, hashed.buffer, params[4 * j + 2]! * 4, t.next!.words * 4);
      copies.copy(builds[j]!.buffer!, 0, hashed.buffer, params[4 * j + 3]! * 4, builds[j]!.count * builds[j]!.width * 4);
    }
    await copies.submit();
    const constants: Size[] = [...constWords];
    while (constants.length < pipelineParamsAt(constWords.length)) constants.push(0);
    constants.push(...params);
    const tiles = Math.ceil(input.count / (HASH_ITEMS * g.limits.workgroupSize));
    const table = hashed;
    return await countedOutput(g, outWidth, input.count, shaders, (rec, out, capacity, counter) =>
      rec.dispatch('pipelineProbe', [bound(input), table, out, counter], [sizeOf(input), capacity], tiles * g.limits.workgroupSize, constants, tables),
    );
  } finally {
    for (const t of built) releaseTable(g, t);
    if (hashed) g.pool.release(hashed.buffer);
  }
}
