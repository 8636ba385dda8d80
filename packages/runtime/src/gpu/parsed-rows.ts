/**
 * Rows a device parsed (parse-text.ts) as the executor takes them over: apart from the parser, which reads files,
 * so that the executor runs where there are none (a browser).
 */
import type { ScalarType } from '@vixen/queryplan';
import { PARSE_STRING_GROUP, PARSE_STRINGS } from '@vixen/codegen-wgsl';
import { stringWordOffsets, type DeviceRows } from '@vixen/io';
import { leaves } from './chunks.js';
import { internals, type Gpu } from './device.js';
import { Recorder } from './recorder.js';
import { acquireBound, bound, releaseRelation, type DeviceRelation } from './relations.js';

/**
 * Rows of one file on the device (see io's DeviceRows): `stringIds` holds each chunk's distinct strings as temporary
 * ids, the chunk's string words index them; leaf j's from `mapStarts[j]` on.
 */
export class ParsedRows implements DeviceRows {
  private taken = false;
  constructor(
    private readonly gpu: Gpu,
    readonly relation: DeviceRelation,
    readonly stringIds: Uint32Array,
    readonly mapStarts: readonly number[],
  ) {}

  get count(): number {
    return this.relation.count;
  }

  /** The relation, owned by the caller from now on. */
  take(): DeviceRelation {
    this.taken = true;
    return this.relation;
  }

  release(): void {
    if (!this.taken) for (const l of leaves(this.relation)) releaseRelation(this.gpu, l);
    this.taken = true;
  }
}

/**
 * `load` (a file's rows parsed or read onto the device) inside the device's error scopes (GpuImpl.runScoped), as
 * `activity`: a buffer the device refuses, or work it rejects, fails the load with a DeviceFault saying so (its
 * rows given back), rather than as errors outside any scope, which Dawn would print and a later call would meet.
 */
export async function loadScoped(gpu: Gpu, activity: string, load: () => Promise<DeviceRows | undefined>): Promise<DeviceRows | undefined> {
  const g = internals(gpu);
  let rows: DeviceRows | undefined;
  try {
    return await g.runScoped(activity, async () => {
      g.activity = activity;
      return (rows = await load());
    });
  } catch (e) {
    rows?.release();
    throw e;
  }
}

/**
 * The string columns' row word `offsets` in groups of PARSE_STRING_GROUP, as the passes that write string words take
 * them (parseStringIds, parseStrings): each group's first column, its columns and their offsets (padded).
 */
export function stringGroups(offsets: readonly number[]): Array<{ first: number; count: number; words: number[] }> {
  const groups = [];
  for (let first = 0; first < offsets.length; first += PARSE_STRING_GROUP) {
    const words = offsets.slice(first, first + PARSE_STRING_GROUP);
    groups.push({ first, count: words.length, words: [...words, ...Array<number>(PARSE_STRING_GROUP - words.length).fill(0)] });
  }
  return groups;
}

/**
 * The device relation of rows a device parsed (relation of column `types`), string words turned into `rows`'
 * (remapped) ids; the caller owns it.
 */
export async function deviceRowsRelation(gpu: Gpu, rows: DeviceRows, types: readonly ScalarType[]): Promise<DeviceRelation> {
  if (!(rows instanceof ParsedRows)) throw new Error('internal: device rows of another loader');
  const relation = rows.take();
  const offsets = stringWordOffsets(types);
  if (offsets.length === 0) return relation;
  const g = internals(gpu);
  const held: GPUBuffer[] = [];
  try {
    const rec = new Recorder(g, PARSE_STRINGS);
    leaves(relation).forEach((leaf, j) => {
      const map = rows.stringIds.subarray(rows.mapStarts[j]!, rows.mapStarts[j + 1] ?? rows.stringIds.length);
      const b = acquireBound(g, map.length, 'string ids');
      held.push(b.buffer);
      g.writeBuffer(b.buffer, 0, map);
      for (const { count, words } of stringGroups(offsets)) rec.dispatch('parseStrings', [b, bound(leaf)], [leaf.count], leaf.count, [relation.width, count, 0, 0, ...words]);
    });
    await rec.submit();
  } catch (e) {
    for (const l of leaves(relation)) releaseRelation(gpu, l);
    throw e;
  } finally {
    for (const b of held) g.pool.release(b);
  }
  return relation;
}
