/**
 * Host driver of mergeJoin (codegen-wgsl kernels/merge-join.ts): joinCount writes per-row counts, an exclusive scan
 * turns them into output offsets, and joinWrite writes the rows. No input bounds the output, so the total is read
 * back to size it.
 */
import type { KernelShaders, PassName } from '@vixen/codegen-wgsl';
import type { GpuImpl } from '../device.js';
import { Recorder, type Bound } from '../recorder.js';
import { acquireBound, allocRelation, bound, checkResultSize, DeviceLimitError, submitAndSync, type DeviceRelation, type Size } from '../relations.js';
import { encodeScan } from './scan.js';

interface Compaction {
  /** Pass writing per-row counts, after the buffers it reads. */
  count: { pass: PassName; inputs: Bound[] };
  /** Pass writing rows at their offsets, after the buffers it reads (then offsets, output). */
  write: { pass: PassName; inputs: Bound[] };
  /** Host bound on the left rows (one thread and count each). */
  rows: number;
  /** Row counts of the inputs (left, then right), host-known or pending. */
  sizes: Size[];
  /** Host bound on the right input's rows (a join writes at most rows * right rows). */
  right: number;
  constants: Uint32Array;
  outWidth: number;
  /** The kernel's string built-in tables, bound to both passes. */
  tables?: Bound;
}

/**
 * Joins: per-row counts, an exclusive scan into offsets, one host sync that reads the total (and resolves every
 * pending count), then the output gets exactly that many rows.
 */
export async function compact(g: GpuImpl, shaders: KernelShaders, c: Compaction): Promise<DeviceRelation> {
  const n = c.rows;
  // Per-row counts (at most n * m rows) and an overflow flag.
  const wraps = n * c.right > 0xffffffff;
  const words = n + 1 + (wraps ? 1 : 0);
  // The passes read the bound on left rows from u0.z.
  const sizes: Size[] = [c.sizes[0]!, c.sizes[1]!, n];
  const offsets = acquireBound(g, words, `offsets for ${n} rows`);
  try {
    const rec = new Recorder(g, shaders);
    rec.dispatch(c.count.pass, [...c.count.inputs, offsets], sizes, n + 1, c.constants, c.tables);
    encodeScan(rec, offsets, n + 1);
    if (wraps) {
      g.writeBuffer(offsets.buffer, (n + 1) * 4, new Uint32Array(1));
      rec.dispatch('scanWrapped', [offsets], [n + 1], n + 1);
    }
    const [read] = await submitAndSync(g, rec, [{ buffer: offsets.buffer, offset: n * 4, words: wraps ? 2 : 1 }]);
    const [total, wrapped] = read!;
    if (wrapped) {
      throw new DeviceLimitError(
        `joining ${n} rows with up to ${c.right} rows each gives more than ${0xffffffff} rows, ` +
          `past the 32-bit row offsets of one relation`,
      );
    }
    checkResultSize(g, total! * c.outWidth, `relation of ${total} rows x ${c.outWidth} words`);
    const out = allocRelation(g, total!, c.outWidth);
    if (total === 0) return out;
    const writing = new Recorder(g, shaders);
    writing.dispatch(c.write.pass, [...c.write.inputs, offsets, bound(out)], sizes, n, c.constants, c.tables);
    await writing.submit();
    return out;
  } finally {
    g.pool.release(offsets.buffer);
  }
}
