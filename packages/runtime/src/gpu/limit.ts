/**
 * Drivers of the limit kernel (`order P by ... limit N`): on the device, a top-k (codegen-wgsl kernels/top-k.ts)
 * whose few rows a sort then puts in canonical order, with no host round trip; on the host, for rows the device
 * cannot order (float32), read the rows back, pick the first `count` in typed order, upload them in canonical
 * (word) order.
 */
import { sortKeyWords, TOPK_BINS, TOPK_STATE_HEAD, TOPK_TILE_ITEMS, topKLevels, type KernelShaders } from '@vixen/codegen-wgsl';
import { wordsOf, type OutputOrder, type ScalarType } from '@vixen/queryplan';
import { releaseUnshared } from './chunks.js';
import type { GpuImpl } from './device.js';
import { rankSlices } from './kernels/rank-sort.js';
import { sortRows } from './kernels/sort.js';
import { Recorder, type Bound } from './recorder.js';
import { acquireBound, bound, pendingRelation, readWords, sizeOf, uploadRelation, type DeviceRelation } from './relations.js';

/**
 * Rows (a bound on them) up to which a top-k ranks each row against all others in one pass (topkRank, n^2
 * comparisons) instead of dispatching two passes per radix select level (0.37 ms of the H200 for TPC-H Q18's 11 key
 * words, whatever the rows): a rankSort of 4,739 rows took 0.16 ms of the H100 (kernels/rank-sort.ts).
 */
const TOPK_RANK_ROWS = 2 ** 12;
const TOPK_RANK_ROWS_SOFTWARE = 2 ** 10;

/** Which top-k runs: the driver's choice by rows and count, or (benches) the rounds of tiles or the radix select. */
export type TopKPath = 'auto' | 'tiles' | 'radix';

/**
 * The limit kernel on the device: the first `count` rows of `input` (duplicate-free, rows of `types`) by `keys`,
 * then every column ascending, in canonical order; the count stays pending.
 */
export async function limitOnDevice(
  g: GpuImpl,
  shaders: KernelShaders,
  input: DeviceRelation,
  types: readonly ScalarType[],
  keys: OutputOrder['keys'],
  count: number,
  path: TopKPath = 'auto',
): Promise<DeviceRelation> {
  const picked = await topKRows(g, shaders, input, topKLevels(types, keys), count, path);
  const sorted = await sortRows(g, shaders, picked, sortKeyWords(types, types.map((_, c) => c)));
  releaseUnshared(g, picked, sorted);
  return sorted;
}

/**
 * The first `count` rows of `input` (duplicate-free, any order) in the kernel's typed order, in no particular order:
 * for few rows one ranking pass; for a small count rounds of tiles (topKTiles); else `levels` radix select levels
 * (topKLevels) and the write pass in one submission. The count stays pending.
 */
async function topKRows(g: GpuImpl, shaders: KernelShaders, input: DeviceRelation, levels: number, count: number, path: TopKPath): Promise<DeviceRelation> {
  const { width } = input;
  const rows = input.count;
  const capacity = Math.min(count, rows);
  if (path === 'auto' && shaders.topkRank !== undefined && rows <= (g.software ? TOPK_RANK_ROWS_SOFTWARE : TOPK_RANK_ROWS)) {
    const out = acquireBound(g, capacity * width + 1, `top-k output of ${capacity} rows`);
    try {
      const rec = new Recorder(g, shaders);
      const slices = rankSlices(g, rows);
      const wg = g.limits.workgroupSize;
      rec.dispatch('topkRank', [bound(input), out], [sizeOf(input), slices, capacity], Math.ceil((rows * slices) / wg) * wg);
      await rec.submit();
    } catch (e) {
      g.pool.release(out.buffer);
      throw e;
    }
    return pendingRelation(g, out.buffer, capacity, width);
  }
  const tile = g.limits.workgroupSize * TOPK_TILE_ITEMS;
  const tiles = shaders.topkTile !== undefined && TOPK_TILE_SHARE * count <= tile;
  if (path === 'tiles' && !tiles) throw new Error(`internal: a top-k of ${count} rows by tiles of ${tile}`);
  if (tiles && path !== 'radix') return topKTiles(g, shaders, input, count, tile);
  const state = acquireBound(g, TOPK_STATE_HEAD + levels, 'top-k state');
  const hist = acquireBound(g, TOPK_BINS, 'top-k histogram');
  let out: ReturnType<typeof acquireBound> | undefined = acquireBound(g, capacity * width + 1, `top-k output of ${capacity} rows`);
  try {
    const rec = new Recorder(g, shaders);
    rec.clear(state.buffer, state.words * 4);
    rec.clear(hist.buffer, hist.words * 4);
    const n = sizeOf(input);
    // The level is on the device (state[1]): every level's dispatches share their uniforms.
    for (let d = 0; d < levels; d++) {
      rec.dispatch('topkHist', [bound(input), state, hist], [n], rows);
      rec.dispatch('topkPick', [state, hist], [n, 0, count], 1);
    }
    rec.dispatch('topkWrite', [bound(input), state, out], [n, capacity], rows);
    rec.copy(state.buffer, 4 * 4, out.buffer, capacity * width * 4, 4);
    await rec.submit();
    const result = pendingRelation(g, out.buffer, capacity, width);
    out = undefined;
    return result;
  } finally {
    g.pool.release(state.buffer);
    g.pool.release(hist.buffer);
    if (out) g.pool.release(out.buffer);
  }
}

/**
 * A tile keeps at most this share of its rows (k <= TILE / 4) for the rounds of tiles to be taken: then each round
 * keeps at most a quarter of its rows and k more, so few rounds reach one tile (TPC-H Q10's 20 of 381K rows at SF 10:
 * two rounds, where the radix select dispatched 97 passes, two for each of its 48 levels, most of them past the
 * level that found the threshold).
 */
const TOPK_TILE_SHARE = 4;

/**
 * The first `count` rows of `input` by rounds of topkTile, each keeping every tile's first `count` rows, until one
 * tile holds the rows; one submission, the count pending. Round r's bound follows the shader's count.
 */
async function topKTiles(g: GpuImpl, shaders: KernelShaders, input: DeviceRelation, count: number, tile: number): Promise<DeviceRelation> {
  const { width } = input;
  const n = sizeOf(input);
  const rec = new Recorder(g, shaders);
  let src = bound(input);
  let rows = input.count;
  let out: Bound | undefined;
  try {
    for (let round = 0; ; round++) {
      const capacity = Math.floor(rows / tile) * count + Math.min(count, rows % tile);
      const last = rows <= tile;
      const to = last ? (out = acquireBound(g, capacity * width + 1, `top-k output of ${capacity} rows`)) : rec.scratch(capacity * width + 1);
      rec.dispatch('topkTile', [src, to], [n, count, capacity, round], Math.ceil(rows / tile) * g.limits.workgroupSize);
      if (last) {
        await rec.submit();
        const result = pendingRelation(g, to.buffer, capacity, width);
        out = undefined;
        return result;
      }
      src = to;
      rows = capacity;
    }
  } finally {
    if (out) g.pool.release(out.buffer);
  }
}

const f32 = new Float32Array(1);
const f32Bits = new Uint32Array(f32.buffer);

/** Typed comparison of a column's words (the words' order where it is already the typed order). */
function columnCompare(type: ScalarType, words: Uint32Array, at: number): (a: number, b: number) => number {
  const cmp = (x: number | bigint, y: number | bigint) => (x < y ? -1 : x > y ? 1 : 0);
  switch (type) {
    case 'int32':
    case 'date':
      return (a, b) => cmp(words[a + at]! | 0, words[b + at]! | 0);
    case 'uint32':
    case 'boolean':
    case 'string':
      // Dictionary ids are in string order.
      return (a, b) => cmp(words[a + at]!, words[b + at]!);
    case 'float32': {
      const value = (i: number) => ((f32Bits[0] = words[i + at]!), f32[0]!);
      return (a, b) => cmp(value(a), value(b));
    }
    case 'int64':
    case 'decimal':
      // (lo, hi): the signed high word decides, then the unsigned low word.
      return (a, b) => cmp(words[a + at + 1]! | 0, words[b + at + 1]! | 0) || cmp(words[a + at]!, words[b + at]!);
  }
}

export async function limitRows(
  g: GpuImpl,
  input: DeviceRelation,
  types: readonly ScalarType[],
  keys: OutputOrder['keys'],
  count: number,
): Promise<DeviceRelation> {
  const width = input.width;
  if (!input.buffer || count === 0) return { buffer: null, count: 0, width };
  // A mid-run round trip like a count readback (and the input's count is exact: the kernel driver resolved it).
  g.hostSyncs += 1;
  const words = await readWords(g, input.buffer, 0, input.count * width);
  const offsets = types.map((_, c) => types.slice(0, c).reduce((n, t) => n + wordsOf(t), 0));
  const byColumn = types.map((t, c) => columnCompare(t, words, offsets[c]!));
  const typed = [...keys.map((k) => ({ cmp: byColumn[k.column]!, sign: k.descending ? -1 : 1 })), ...byColumn.map((cmp) => ({ cmp, sign: 1 }))];
  const rows = Array.from({ length: input.count }, (_, r) => r * width);
  rows.sort((a, b) => {
    for (const { cmp, sign } of typed) {
      const c = cmp(a, b);
      if (c !== 0) return sign * c;
    }
    return 0;
  });
  // Canonical form: the chosen rows in unsigned word order. The input was canonical, so that is their input order.
  const chosen = rows.slice(0, count).sort((a, b) => a - b);
  const out = new Uint32Array(chosen.length * width);
  chosen.forEach((r, i) => out.set(words.subarray(r, r + width), i * width));
  return uploadRelation(g, out, width, chosen.length);
}
