import type { KernelShaders } from '@vixen/codegen-wgsl';
import type { GpuImpl } from '../device.js';
import { Recorder, type Bound } from '../recorder.js';
import { bound, checkResultSize, exactCount, sameCount, settle, sizeOf, type DeviceRelation } from '../relations.js';

/**
 * A mapFilter that keeps every row (isProjection): one pass writes input row i's projection at output row i. The
 * output has the input's count: host-known, or pending, the input's count word then copied after the output's rows
 * in the same submission. Where room for the input's bound would pass one binding, the count is read first.
 */
export async function project(g: GpuImpl, shaders: KernelShaders, a: DeviceRelation, outWidth: number, constants: Uint32Array, tables: Bound | undefined): Promise<DeviceRelation> {
  if (settle(a).pending && (a.count * outWidth + 1) * 4 > g.limits.maxStorageBufferBindingSize) await exactCount(g, a);
  if (!settle(a).pending) checkResultSize(g, a.count * outWidth, `relation of ${a.count} rows x ${outWidth} words`);
  const rec = new Recorder(g, shaders);
  const out = sameCount(g, rec, a, outWidth);
  if (out.count === 0) return out;
  rec.dispatch('project', [bound(a), bound(out)], [sizeOf(a)], a.count, constants, tables);
  await rec.submit();
  return out;
}
