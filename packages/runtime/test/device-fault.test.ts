/**
 * Device faults are user errors (gpu/device-fault.ts): a buffer the device refuses mid-run (Dawn's real refusal of
 * a size past maxBufferSize, injected into one request: each of a load's or a run's in turn), work Dawn rejects
 * outside any error scope, and a lost device end the run with a DeviceFault naming the kernel and relation, never
 * Dawn's text (nor printing it); the device (or, once lost, a new one) runs the next program.
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
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

/**
 * Makes the device refuse the `nth` buffer (from 1) asked for while `activity` matches: asks for twice its largest
 * buffer, which Dawn refuses. Returns how many were asked for so far, and whether one was refused.
 */
function refuseOnce(gpu: Gpu, activity: RegExp, nth = 1): () => { asked: number; refused: boolean } {
  const g = internals(gpu);
  const acquire = g.pool.acquire.bind(g.pool);
  let asked = 0;
  g.pool.acquire = (bytes, usage) => {
    if (!activity.test(g.activity) || ++asked !== nth) return acquire(bytes, usage);
    return acquire(2 * g.limits.maxBufferSize, usage);
  };
  return () => ({ asked, refused: asked >= nth });
}

/** Puts the pool's own acquire back (refuseOnce replaced it). */
function unpatch(gpu: Gpu): void {
  delete (internals(gpu).pool as { acquire?: unknown }).acquire;
}

/** What `p` rejected with (undefined if it resolved). */
const failure = (p: Promise<unknown>): Promise<unknown> => p.then(() => undefined, (e: unknown) => e);

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
    unpatch(gpu);
    const again = await tc.run({ gpu, facts: { edge: edges } });
    expect(again.relations.get('path')!.length).toBe(await expectedPaths());
  });

  it('a Database keeps working after a refused buffer while loading', async () => {
    const db = new Database(gpu, dir);
    refuseOnce(gpu, /loading the facts of edge/);
    await expect(db.run(tc)).rejects.toThrow(/^loading the facts of edge \(40 rows\) needed a buffer of/);
    // The relation loaded in the failed run is not kept: the next run loads it again and answers.
    expect(db.resident).toEqual([]);
    unpatch(gpu);
    const result = await db.run(tc);
    expect(result.relations.get('path')!.length).toBe(await expectedPaths());
    db.clear();
  });

  // TPC-H SF 30 on the H200: one refused buffer while a query's lineitem was parsed on the device failed every later
  // query (the parse ran outside error scopes, and a refused chunk buffer went back to the pool).
  it('each buffer of a load parsed on the device refused in turn: the load names it, the same Database loads and answers next', async () => {
    const paths = await expectedPaths();
    let n = 0;
    for (let nth = 1; ; nth++) {
      const db = new Database(gpu, dir, { parse: 'device' });
      const asked = refuseOnce(gpu, /parsed on the device/, nth);
      const error = await failure(db.run(tc));
      n = asked().asked;
      unpatch(gpu);
      if (!asked().refused) {
        // Past the parse's last buffer: nothing was refused and the run answered.
        expect(error).toBeUndefined();
        break;
      }
      expect(error, `buffer ${nth} of the parse`).toBeInstanceOf(DeviceFault);
      expect((error as DeviceFault).message).toMatch(/^loading the facts of edge \(parsed on the device\) needed a buffer of 4\.0 GiB/);
      expect(db.resident).toEqual([]);
      for (let run = 0; run < 2; run++) expect((await db.run(tc)).relations.get('path')!.length, `run ${run} after refusing buffer ${nth}`).toBe(paths);
      db.clear();
    }
    // The chunk's text, counts, rows, spans, string table...: every buffer of the parse was refused once.
    expect(n).toBeGreaterThanOrEqual(6);
  });

  it('each buffer of a run on resident relations refused in turn: the same Database answers the next run', async () => {
    const paths = await expectedPaths();
    const db = new Database(gpu, dir);
    // Resident, and its run recorded for replay.
    expect((await db.run(tc)).relations.get('path')!.length).toBe(paths);
    let nth = 1;
    for (; nth <= 60; nth++) {
      const asked = refuseOnce(gpu, /computing|reading back/, nth);
      const error = await failure(db.run(tc));
      unpatch(gpu);
      if (!asked().refused) {
        expect(error).toBeUndefined();
        break;
      }
      expect(error, `buffer ${nth} of the run`).toBeInstanceOf(DeviceFault);
      expect(renderDiagnostics((error as DeviceFault).diagnostics)).not.toMatch(DAWN);
      for (let run = 0; run < 2; run++) expect((await db.run(tc)).relations.get('path')!.length, `run ${run} after refusing buffer ${nth}`).toBe(paths);
    }
    expect(nth).toBeGreaterThan(3);
    db.clear();
  });

  it('each buffer of a run that rewrites a resident relation\'s strings refused in turn: both programs answer next', async () => {
    const decl = 'edge(x, y) -> string(x), string(y).\npath(x, y) <- edge(x, y).\npath(x, z) <- path(x, y), edge(y, z).\n';
    const names = compile(decl);
    // "a0" sorts before every name of the file: the run's dictionary moves the resident edge's string ids (remap).
    const more = compile(decl + 'extra(x) -> string(x).\nextra("a0").\nboth(x) <- extra(x), path(x, _).\n');
    const strings = mkdtempSync(join(tmpdir(), 'vixen-fault-strings-'));
    writeFileSync(join(strings, 'edge.csv'), edges.map(([x, y]) => `n${x},n${y}`).join('\n') + '\n');
    const paths = await expectedPaths();
    for (let nth = 1; ; nth++) {
      const db = new Database(gpu, strings);
      expect((await db.run(names)).relations.get('path')!.length).toBe(paths);
      const asked = refuseOnce(gpu, /^/, nth);
      const error = await failure(db.run(more));
      unpatch(gpu);
      if (!asked().refused) {
        expect(error).toBeUndefined();
        expect(nth).toBeGreaterThan(10);
        break;
      }
      expect(error, `buffer ${nth} of the run`).toBeInstanceOf(DeviceFault);
      for (const p of [names, more, names]) expect((await db.run(p)).relations.get('path')!.length, `after refusing buffer ${nth}`).toBe(paths);
      db.clear();
    }
    rmSync(strings, { recursive: true, force: true });
  });

  it('work the device rejects outside any error scope fails the next run once, and the device goes on', async () => {
    const g = internals(gpu);
    const bad = gpu.device.createBuffer({ size: 2 * g.limits.maxBufferSize, usage: GPUBufferUsage.STORAGE | GPUBufferUsage.COPY_DST });
    const encoder = gpu.device.createCommandEncoder();
    encoder.clearBuffer(bad);
    gpu.device.queue.submit([encoder.finish()]);
    await gpu.device.queue.onSubmittedWorkDone();
    await new Promise((resolve) => setTimeout(resolve, 100));
    const error = await failure(tc.run({ gpu, facts: { edge: edges } }));
    expect(error).toBeInstanceOf(DeviceFault);
    expect((error as DeviceFault).kind).toBe('validation');
    expect((error as DeviceFault).failsDevice).toBe(false);
    expect((error as DeviceFault).message).toMatch(/^the device refused the run's work/);
    expect((error as DeviceFault).message).not.toMatch(DAWN);
    expect((error as DeviceFault).detail).toMatch(/max buffer size/);
    expect((await tc.run({ gpu, facts: { edge: edges } })).relations.get('path')!.length).toBe(await expectedPaths());
  });

  it('prints nothing of such an error: dawn.node prints device errors nobody handles on stdout', () => {
    const script = `
      import { openGpu } from ${JSON.stringify(pathToFileURL(join(import.meta.dirname, '../src/index.ts')).href)};
      const gpu = await openGpu();
      const bad = gpu.device.createBuffer({ size: 2 * gpu.limits.maxBufferSize, usage: GPUBufferUsage.STORAGE | GPUBufferUsage.COPY_DST });
      const encoder = gpu.device.createCommandEncoder();
      encoder.clearBuffer(bad);
      gpu.device.queue.submit([encoder.finish()]);
      await gpu.device.queue.onSubmittedWorkDone();
      await new Promise((resolve) => setTimeout(resolve, 100));
      gpu.dispose();
      console.log('done');`;
    const r = spawnSync(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script], { encoding: 'utf8' });
    expect({ status: r.status, stdout: r.stdout }).toEqual({ status: 0, stdout: 'done\n' });
    expect(r.stderr).not.toMatch(/validation:|Invalid Buffer|While (calling|encoding)|exceeds the max buffer size/);
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

  it('a Database whose device is lost runs the next program on a new one (reopen), its relations loaded again', async () => {
    const first = await openGpu();
    const db = new Database(first, dir, { reopen: () => openGpu() });
    expect((await db.run(tc)).relations.get('path')!.length).toBe(await expectedPaths());
    first.device.destroy();
    const error = await failure(db.run(tc));
    expect(error).toBeInstanceOf(DeviceFault);
    expect((error as DeviceFault).failsDevice).toBe(true);
    expect((await db.run(tc)).relations.get('path')!.length).toBe(await expectedPaths());
    expect(db.gpu).not.toBe(first);
    expect(db.resident.map((r) => r.name)).toEqual(['edge']);
    db.clear();
    first.dispose();
  });
});
