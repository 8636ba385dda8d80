import type { KernelShaders } from '@vixen/codegen-wgsl';
import type { GpuImpl } from '../device.js';
import { Recorder } from '../recorder.js';
import { bound, sameCount, settle, sizeOf, type DeviceRelation } from '../relations.js';

/**
 * Threads rankSort gives each of `n` rows, each comparing a slice of the rows: a power of two up to 32 (and the
 * workgroup size) while n times it stays within RANK_SORT_THREADS. With one thread a row, the 6,249 rows of a
 * TPC-H Q12 sort at SF 1 ran as 25 workgroups, one long loop each, and took 1.5 ms of the H100.
 */
function rankSlices(g: GpuImpl, n: number): number {
  const most = Math.min(32, g.limits.workgroupSize);
  let p = 1;
  while (2 * p <= most && 2 * p * n <= (g.software ? RANK_SORT_THREADS_SOFTWARE : RANK_SORT_THREADS)) p *= 2;
  return p;
}

/** About the threads that fill the H100 (132 SMs of 2,048); a CPU adapter gets a few slices per row (its tests too). */
const RANK_SORT_THREADS = 2 ** 18;
const RANK_SORT_THREADS_SOFTWARE = 2 ** 13;

/** The rows sorted by rankSort: one dispatch, no scratch buffers. */
export async function rankSortRows(g: GpuImpl, shaders: KernelShaders, rows: DeviceRelation): Promise<DeviceRelation> {
  const input = settle(rows);
  const rec = new Recorder(g, shaders);
  const out = sameCount(g, rec, input, input.width);
  const slices = rankSlices(g, input.count);
  const wg = g.limits.workgroupSize;
  rec.dispatch('rankSort', [bound(input), bound(out)], [sizeOf(input), slices], Math.ceil((input.count * slices) / wg) * wg);
  await rec.submit();
  return out;
}
