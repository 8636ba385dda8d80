/**
 * Whether loaded rows are canonical already (strictly ascending by all words: sorted, no duplicate), checked in one
 * pass over them (codegen-wgsl rowsOrderShaders) rather than assumed: facts written in order (a store imported from
 * sorted files, most TPC-H tables by their keys) then need no sort, and their leading-column keys no check of their
 * own. A row out of order costs the pass and a round trip, and the sort runs as before.
 */
import { rowsOrderShaders, type KernelShaders } from '@vixen/codegen-wgsl';
import { leaves } from '../chunks.js';
import type { GpuImpl } from '../device.js';
import { memoShaders, Recorder } from '../recorder.js';
import { acquireBound, bound, submitAndSync, type DeviceRelation } from '../relations.js';

export interface RowsOrder {
  /** Strictly ascending: canonical. */
  ascending: boolean;
  /** The most leading words two adjacent rows share. */
  shared: number;
}

/** The rowsOrder pass, for any row width. */
export const rowsOrderPasses = (): KernelShaders => memoShaders({ rowsOrder: true }, () => rowsOrderShaders());

/** The order of `rel`'s rows (its chunks in order), or undefined where a count is pending. */
export async function rowsOrder(g: GpuImpl, rel: DeviceRelation): Promise<RowsOrder | undefined> {
  const parts = leaves(rel).filter((p) => p.count > 0);
  if (parts.some((p) => p.pending)) return undefined;
  const shaders = rowsOrderPasses();
  const state = acquireBound(g, 2, 'row order state');
  try {
    const rec = new Recorder(g, shaders);
    rec.clear(state.buffer, 8);
    parts.forEach((p, j) => {
      const next = parts[j + 1];
      rec.dispatch('rowsOrder', [bound(p), bound(next ?? p), state], [p.count, rel.width, next ? 1 : 0], p.count);
    });
    const [words] = await submitAndSync(g, rec, [{ buffer: state.buffer, offset: 0, words: 2 }]);
    return { ascending: words![0] === 0, shared: words![1]! };
  } finally {
    g.pool.release(state.buffer);
  }
}
