import type { KernelShaders } from '@vixen/codegen-wgsl';
import type { GpuImpl } from '../device.js';
import { Recorder } from '../recorder.js';
import { acquireBound, bound, ResultLimitError, sizeOf, type DeviceRelation } from '../relations.js';
import { select } from './select.js';

/**
 * A hashed unique (input in any order): uniqueInsert marks rows equal to a row already in a table of at least
 * 2n slots, then the compaction keeps the unmarked rows in input order. The output is not canonical (unsorted).
 */
export async function hashedUnique(g: GpuImpl, shaders: KernelShaders, a: DeviceRelation, outWidth: number): Promise<DeviceRelation> {
  const n = a.count;
  let slots = 2 ** Math.ceil(Math.log2(2 * n));
  // Past one binding the table is halved while at most 3/4 full (linear probing stays short), so a unique of up to
  // 3/4 of the largest table's slots needs no chunks (at 2 GiB bindings: 201M rows).
  while (slots * 4 > g.limits.maxStorageBufferBindingSize && (slots / 2) * 0.75 >= n) slots /= 2;
  // Still too large: runKernel runs it as chunks.ts does a hashed unique, sorted by all columns and then unique.
  if (slots * 4 > g.limits.maxStorageBufferBindingSize) throw new ResultLimitError(`unique hash table of ${slots} slots for ${n} rows`);
  const table = acquireBound(g, slots, `unique hash table of ${slots} slots`);
  const dup = acquireBound(g, n, `unique marks for ${n} rows`);
  try {
    const rec = new Recorder(g, shaders);
    rec.clear(table.buffer, slots * 4);
    rec.dispatch('uniqueInsert', [bound(a), table, dup], [sizeOf(a), slots - 1], n);
    await rec.submit();
    // Queue order: the select pass runs after the inserts.
    return await select(g, shaders, {
      pass: 'selectAbsent',
      inputs: [bound(a), dup],
      rows: n,
      sizes: [sizeOf(a), n],
      constants: new Uint32Array(0),
      outWidth,
    });
  } finally {
    g.pool.release(table.buffer);
    g.pool.release(dup.buffer);
  }
}
