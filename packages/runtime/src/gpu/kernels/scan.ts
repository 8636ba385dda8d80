import type { Bound, Recorder } from '../recorder.js';

/** In-place exclusive prefix sum of `n` u32: block scans, then recursively over the block totals. */
export function encodeScan(rec: Recorder, data: Bound, n: number): void {
  const sums = scanTotals(rec, n);
  rec.dispatch('scanBlock', [data, sums], [n], n);
  addBlockTotals(rec, data, n, sums);
}

/** Room for the block totals of a scan of `n` u32 (one per workgroup of them). */
export function scanTotals(rec: Recorder, n: number): Bound {
  return rec.scratch(Math.ceil(n / rec.g.limits.workgroupSize));
}

/**
 * The rest of encodeScan once each block of `data` holds its exclusive scan and `sums` (scanTotals) their totals,
 * as a pass that scanned its own blocks left them (joinCount).
 */
export function addBlockTotals(rec: Recorder, data: Bound, n: number, sums: Bound): void {
  const blocks = Math.ceil(n / rec.g.limits.workgroupSize);
  if (blocks > 1) {
    encodeScan(rec, sums, blocks);
    rec.dispatch('scanAdd', [data, sums], [n], n);
  }
}
