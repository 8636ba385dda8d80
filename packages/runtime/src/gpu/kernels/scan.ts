import type { Bound, Recorder } from '../recorder.js';

/** In-place exclusive prefix sum of `n` u32: block scans, then recursively over the block totals. */
export function encodeScan(rec: Recorder, data: Bound, n: number): void {
  const blocks = Math.ceil(n / rec.g.limits.workgroupSize);
  const sums = rec.scratch(blocks);
  rec.dispatch('scanBlock', [data, sums], [n], n);
  if (blocks > 1) {
    encodeScan(rec, sums, blocks);
    rec.dispatch('scanAdd', [data, sums], [n], n);
  }
}
