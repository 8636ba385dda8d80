/**
 * Spilling relations to host memory (executor.ts keeps a run's relations within its device memory budget): a
 * relation read back is kept as host words, and uploaded again when a kernel reads it. Rows keep their order,
 * so a canonical relation stays canonical; a chunked one comes back in chunks of the binding size.
 */
import { hostFreeMemory } from '#host';
import type { Gpu } from './gpu/device.js';
import { bindingBytes, downloadRelation, settle, uploadRelation, type DeviceRelation } from './gpu/relations.js';
import { sizeClass } from './gpu/pool.js';
import type { HostRows } from './partitioned.js';

/** A relation's rows in host memory. */
export interface SpilledRelation {
  words: Uint32Array;
  count: number;
  width: number;
  canonical: boolean;
  /** Device bytes it held (its buffers), which its reload needs again. */
  deviceBytes: number;
}

/** Host memory left free for the process and the system when spilling (spilling never takes the last of it). */
const HOST_RESERVE = 2 ** 30;

export class Spills {
  /** Bytes read back to host memory, and relations spilled (one relation may spill and come back many times). */
  bytes = 0;
  relations = 0;
  /** Bytes uploaded again. */
  reloadedBytes = 0;

  constructor(private readonly gpu: Gpu) {}

  /** Whether host memory has room for `rel`'s rows (its buffers' bytes bound them). */
  fits(deviceBytes: number): boolean {
    return deviceBytes + HOST_RESERVE <= hostFreeMemory();
  }

  /** `rel`'s rows on the host; the caller frees its buffers. */
  async spill(rel: DeviceRelation, deviceBytes: number): Promise<SpilledRelation> {
    const words = await downloadRelation(this.gpu, rel);
    this.bytes += words.byteLength;
    this.relations += 1;
    return { words, count: settle(rel).count, width: rel.width, canonical: rel.canonical === true, deviceBytes };
  }

  /** Rows kept in host memory from the start (loaded past the budget) or made there (partitioned.ts), counted as spilled. */
  kept(rows: HostRows, canonical: boolean): SpilledRelation {
    this.bytes += rows.count * rows.width * 4;
    this.relations += 1;
    const words = rows.count * rows.width;
    return { ...rows, canonical, deviceBytes: words === 0 ? 0 : sizeClass(bindingBytes(words)) };
  }

  /** `s`'s rows on the device again. */
  reload(s: SpilledRelation): DeviceRelation {
    this.reloadedBytes += s.words.byteLength;
    const rel = uploadRelation(this.gpu, s.words, s.width, s.count);
    return s.canonical ? { ...rel, canonical: true } : rel;
  }
}
