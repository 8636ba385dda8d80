import { APPEND_ROWS, type KernelShaders } from '@vixen/codegen-wgsl';
import type { GpuImpl } from '../device.js';
import { Recorder } from '../recorder.js';
import { allocPending, allocRelation, bound, sameCount, settle, sizeOf, syncCounts, type DeviceRelation, type Size } from '../relations.js';

const APPEND_PASSES: KernelShaders = { appendRows: APPEND_ROWS };

/**
 * Copies of whole relations, back to back (copy and concat). One part whose count is pending stays pending
 * (rows and count word copied); several parts with pending counts whose bounds fit one binding together are
 * appended on the device (appendOnDevice), else their counts are read first, to place the later ones.
 */
export async function concatenate(g: GpuImpl, all: DeviceRelation[], width: number): Promise<DeviceRelation> {
  const parts = all.filter((p) => p.count > 0);
  const single = parts.length === 1 ? settle(parts[0]!) : undefined;
  if (single?.pending) {
    const rec = new Recorder(g, {});
    const out = sameCount(g, rec, single, width);
    rec.copy(single.buffer!, 0, out.buffer!, 0, single.count * width * 4);
    await rec.submit();
    return out;
  }
  if (parts.some((p) => settle(p).pending)) {
    const capacity = parts.reduce((n, p) => n + p.count, 0);
    if (width > 0 && (capacity * width + 1) * 4 <= g.limits.maxStorageBufferBindingSize) return appendOnDevice(g, parts, capacity, width);
    await syncCounts(g);
  }
  parts.forEach(settle);
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

/**
 * `parts` (some counts pending) back to back in an output with room for their bounds (`capacity` rows), its count
 * pending: one appendRows pass per part, each placing its rows after the count the one before wrote, so no host
 * sync reads the counts (a chunked relation gathered for a kernel that needs one buffer, as gpu/chunks.ts whole).
 */
async function appendOnDevice(g: GpuImpl, parts: readonly DeviceRelation[], capacity: number, width: number): Promise<DeviceRelation> {
  const out = allocPending(g, capacity, width);
  const target = { buffer: out.buffer!, words: capacity * width + 1 };
  const rec = new Recorder(g, APPEND_PASSES);
  let at: Size = 0;
  for (const p of parts) {
    if (p.width !== width) throw new Error(`internal: concatenating rows of ${p.width} and ${width} words`);
    rec.dispatch('appendRows', [bound(p), target], [sizeOf(p), at, width, capacity * width], p.count * width);
    at = typeof at === 'number' && !p.pending ? at + p.count : out.pending!;
  }
  await rec.submit();
  return out;
}
