/**
 * Device faults are user errors (gpu/device-fault.ts): a buffer the device refuses mid-run (Dawn's real refusal of
 * a size past maxBufferSize, injected into one kernel's request) and a lost device end the run with a DeviceFault
 * naming the kernel and relation, never Dawn's text; the device (or, once lost, a new one) runs the next program.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { renderDiagnostics } from '@vixen/queryplan';
import { compile, Database, DeviceFault, openGpu, type Gpu } from '../src/index.js';
import { internals } from '../src/gpu/index.js';

const tc = compile(`
edge(x, y) -> int32(x), int32(y).
path(x, y) <- edge(x, y).
path(x, z) <- path(x, y), edge(y, z).
`);
const edges = Array.from({ length: 40 }, (_, i) => [i, (i * 7 + 3) % 40]);
/** Dawn's wording, which must never reach the user. */
const DAWN = /CreateBuffer|BufferDescriptor|Invalid Buffer|maxBufferSize|While calling|VK_ERROR/;

async function expectedPaths(): Promise<number> {
  return (await tc.interpret({ facts: { edge: edges } })).get('path')!.length;
}

/** Makes the device refuse the first buffer asked for while `activity` matches: asks for twice its largest buffer. */
function refuseOnce(gpu: Gpu, activity: RegExp): void {
  const g = internals(gpu);
  const acquire = g.pool.acquire.bind(g.pool);
  let armed = true;
  g.pool.acquire = (bytes, usage) => {
    if (!armed || !activity.test(g.activity)) return acquire(bytes, usage);
    armed = false;
    return acquire(2 * g.limits.maxBufferSize, usage);
  };
}

describe('device faults', () => {
  let gpu: Gpu;
  let dir: string;
  beforeAll(async () => {
    gpu = await openGpu();
    dir = mkdtempSync(join(tmpdir(), 'vixen-fault-'));
    writeFileSync(join(dir, 'edge.csv'), edges.map((e) => e.join(',')).join('\n') + '\n');
  });
  afterAll(() => {
    gpu.dispose();
    rmSync(dir, { recursive: true, force: true });
  });

  it('a buffer the device refuses names the kernel and relation, and the device runs the next program', async () => {
    refuseOnce(gpu, /computing relation path/);
    const error = await tc.run({ gpu, facts: { edge: edges } }).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(error).toBeInstanceOf(DeviceFault);
    const fault = error as DeviceFault;
    expect(fault.kind).toBe('out-of-memory');
    expect(fault.message).toMatch(/^kernel k\d+ \(\w+.*\) computing relation path needed a buffer of 4\.0 GiB/);
    expect(fault.message).toMatch(/more than the device's largest buffer, 2\.0 GiB/);
    expect(renderDiagnostics(fault.diagnostics)).not.toMatch(DAWN);
    // What Dawn said is kept for debugging.
    expect(fault.detail).toMatch(/exceeds the max buffer size/);
    const again = await tc.run({ gpu, facts: { edge: edges } });
    expect(again.relations.get('path')!.length).toBe(await expectedPaths());
  });

  it('a Database keeps working after a refused buffer while loading', async () => {
    const db = new Database(gpu, dir);
    refuseOnce(gpu, /loading the facts of edge/);
    await expect(db.run(tc)).rejects.toThrow(/^loading the facts of edge \(40 rows\) needed a buffer of/);
    // The relation loaded in the failed run is not kept: the next run loads it again and answers.
    expect(db.resident).toEqual([]);
    const result = await db.run(tc);
    expect(result.relations.get('path')!.length).toBe(await expectedPaths());
    db.clear();
  });

  it('a lost device fails the next run with a fault, and a new device runs it', async () => {
    const lost = await openGpu();
    lost.device.destroy();
    const error = await tc.run({ gpu: lost, facts: { edge: edges } }).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(error).toBeInstanceOf(DeviceFault);
    expect((error as DeviceFault).kind).toBe('lost');
    expect((error as DeviceFault).message).toMatch(/the GPU device was closed.*a new device is needed/);
    expect((error as DeviceFault).message).not.toMatch(DAWN);
    lost.dispose();
    // Without a device given, a run opens its own.
    expect((await tc.run({ facts: { edge: edges } })).relations.get('path')!.length).toBe(await expectedPaths());
  });
});
