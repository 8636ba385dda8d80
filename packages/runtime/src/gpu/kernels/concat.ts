import type { GpuImpl } from '../device.js';
import { Recorder } from '../recorder.js';
import { allocRelation, sameCount, settle, syncCounts, type DeviceRelation } from '../relations.js';

/**
 * Copies of whole relations, back to back (copy and concat). One part whose count is pending stays pending
 * (rows and count word copied); several parts need their counts, to place the later ones.
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
  if (parts.some((p) => settle(p).pending)) await syncCounts(g);
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
