/** The select pass: mapFilter, unique and difference, and the range selections that partition a chunked sort (chunks.ts). */
import { COMPACT_ITEMS, hashSelectShaders, rangeSelectShaders, SELECT_PUBLISH, SELECT_STATE_HEAD, SELECT_UNORDERED, type KernelShaders } from '@vixen/codegen-wgsl';
import type { GpuImpl } from '../device.js';
import { memoShaders, Recorder, type Bound } from '../recorder.js';
import { acquireBound, allocPending, allocRelation, bound, checkResultSize, DeviceLimitError, sizeOf, submitAndSync, type DeviceRelation, type Size } from '../relations.js';

interface Selection {
  pass: 'select' | 'selectAbsent';
  /** The buffers the pass reads: the rows to select from, then (selectAbsent) the right side. */
  inputs: Bound[];
  /** Host bound on the rows to select from. */
  rows: number;
  /** Row counts of the inputs, host-known or pending. */
  sizes: Size[];
  constants: Uint32Array;
  outWidth: number;
  tables?: Bound;
  /** The rows may come out in any order across tiles (SELECT_UNORDERED): nothing downstream needs input order. */
  unordered?: boolean;
}

/**
 * mapFilter, unique and difference: one select pass (codegen-wgsl kernels/compaction.ts) writes the kept rows and
 * their count; the output has room for every input row and its count stays pending on the device. When that room
 * would pass one binding (a projection may widen rows), a counting run and a host sync size the output first.
 */
export async function select(g: GpuImpl, shaders: KernelShaders, c: Selection): Promise<DeviceRelation> {
  const n = c.rows;
  // The pass packs counts in 30 bits of its tile status words.
  if (n >= 2 ** 30) throw new DeviceLimitError(`selecting from ${n} rows: at most ${2 ** 30 - 1} rows`);
  const wg = g.limits.workgroupSize;
  const tiles = Math.ceil(n / (COMPACT_ITEMS * wg));
  const stateWords = SELECT_STATE_HEAD + tiles;
  const state = acquireBound(g, stateWords, `select state for ${n} rows`);
  /** `out` undefined: count only; `countAt`: the output's word for the count, if it has one. */
  const run = (rec: Recorder, out: Bound | undefined, countAt?: number): void => {
    rec.clear(state.buffer, stateWords * 4);
    // Unordered, no tile knows the total when it writes: the total word is copied to the count word after the pass.
    const mode = (out === undefined ? 0 : countAt === undefined || c.unordered ? 1 : 2) | (c.unordered ? SELECT_UNORDERED : 0);
    const bind = [...c.inputs, state, out ?? rec.scratch(1)];
    const sizes = (m: number): Size[] => [c.sizes[0]!, c.sizes[1] ?? 0, m, countAt ?? 0];
    if (g.cpuAdapter && !c.unordered) {
      // Every tile's status first, the tile counter zeroed after: the look-back never waits (SELECT_PUBLISH says why).
      rec.dispatch(c.pass, bind, sizes(mode | SELECT_PUBLISH), tiles * wg, c.constants, c.tables);
      rec.clear(state.buffer, 4);
    }
    rec.dispatch(c.pass, bind, sizes(mode), tiles * wg, c.constants, c.tables);
  };
  try {
    const rec = new Recorder(g, shaders);
    if ((n * c.outWidth + 1) * 4 <= g.limits.maxStorageBufferBindingSize) {
      const out = allocPending(g, n, c.outWidth);
      const count = out.pending!;
      run(rec, bound(out), count.offset / 4);
      if (c.unordered) rec.copy(state.buffer, 4, count.buffer, count.offset, 4);
      await rec.submit();
      return out;
    }
    run(rec, undefined);
    const [read] = await submitAndSync(g, rec, [{ buffer: state.buffer, offset: 4, words: 1 }]);
    checkResultSize(g, read![0]! * c.outWidth, `relation of ${read![0]} rows x ${c.outWidth} words`);
    const out = allocRelation(g, read![0]!, c.outWidth);
    if (out.count === 0) return out;
    const writing = new Recorder(g, shaders);
    run(writing, bound(out));
    await writing.submit();
    return out;
  } finally {
    g.pool.release(state.buffer);
  }
}

/**
 * The rows of `rel` (one buffer) whose words in `order`, compared as u32, lie in [lo, hi) (a bound left out is
 * open), in input order; the count stays pending on the device.
 */
export async function selectRange(g: GpuImpl, rel: DeviceRelation, order: readonly number[], lo?: Uint32Array, hi?: Uint32Array): Promise<DeviceRelation> {
  if (rel.count === 0) return { buffer: null, count: 0, width: rel.width };
  const shaders = memoShaders(['range', rel.width, order, lo !== undefined, hi !== undefined], () => rangeSelectShaders(rel.width, order, lo !== undefined, hi !== undefined));
  const constants = new Uint32Array([...(lo ?? []), ...(hi ?? [])]);
  return select(g, shaders, { pass: 'select', inputs: [bound(rel)], rows: rel.count, sizes: [sizeOf(rel)], constants, outWidth: rel.width });
}

/**
 * The rows of `rel` (one buffer) whose words `keys` hash (seeded by `seed`) to partition `part` of `parts`, in input
 * order; the count stays pending on the device.
 */
export async function selectHashed(g: GpuImpl, rel: DeviceRelation, keys: readonly number[], parts: number, part: number, seed: number): Promise<DeviceRelation> {
  if (rel.count === 0) return { buffer: null, count: 0, width: rel.width };
  const shaders = memoShaders(['hash', rel.width, keys], () => hashSelectShaders(rel.width, keys));
  return select(g, shaders, { pass: 'select', inputs: [bound(rel)], rows: rel.count, sizes: [sizeOf(rel)], constants: new Uint32Array([parts, part, seed]), outWidth: rel.width });
}
