/**
 * Host-to-device upload bandwidth by method (the `upload` rows of `vixen bench load`): writeBuffer whole or in
 * chunks, a buffer mapped at creation filled in place, and the runtime's ring of MAP_WRITE staging buffers
 * (gpu/upload.ts), from host memory and from a file (read into a host buffer, or straight into the mapped staging
 * buffer). Each figure is bytes over the time from the first call until the device has done the copies.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { open, type FileHandle } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { internals, uploadBytes, uploadWords, type Gpu, type UploadFill, type UploadPlan } from '@vixen/runtime/gpu';
import { readExactly } from '@vixen/io';
import { median } from './operators.js';

export interface UploadCase {
  method: string;
  /** Where the bytes come from: host memory, or a file (in the page cache: written just before). */
  source: 'memory' | 'file';
  medianMs: number;
  gbPerSecond: number;
}

export interface UploadReport {
  bytes: number;
  cases: UploadCase[];
}

const MiB = 2 ** 20;

type Body = (dst: readonly GPUBuffer[], words: Uint32Array, file: FileHandle) => Promise<void>;

/** Each destination buffer's share of `words`, in order. */
function spread(dst: readonly GPUBuffer[], words: Uint32Array): Array<[GPUBuffer, Uint32Array]> {
  const per = dst[0]!.size / 4;
  return dst.map((d, i) => [d, words.subarray(i * per, Math.min(words.length, (i + 1) * per))]);
}

/** Reads `into.length` bytes of `file` at `position`. */
const readFully = (file: FileHandle, into: Uint8Array, position: number): Promise<void> =>
  readExactly(file, into, position, (at) => new Error(`upload bench: file ended after ${at} bytes`));

const fromFile = (file: FileHandle, base: number): UploadFill => (into, at) => readFully(file, into, base + at);

function cases(gpu: Gpu): Array<{ method: string; source: UploadCase['source']; body: Body }> {
  const plan = (method: UploadPlan['method'], chunkMiB: number, inFlight = 0): UploadPlan => ({ method, chunkBytes: chunkMiB * MiB, inFlight });
  const words = (p: UploadPlan): Body => async (dst, w) => {
    for (const [d, part] of spread(dst, w)) await uploadWords(gpu, d, 0, [part], p);
  };
  const file = (p: UploadPlan): Body => async (dst, _w, f) => {
    let base = 0;
    for (const d of dst) {
      await uploadBytes(gpu, d, 0, d.size, fromFile(f, base), p);
      base += d.size;
    }
  };
  const small = gpu.cpuAdapter ? 1 : 16;
  const large = gpu.cpuAdapter ? 4 : 64;
  return [
    { method: 'writeBuffer, one call per buffer', source: 'memory', body: words(plan('write', 0)) },
    { method: `writeBuffer, ${small} MiB calls`, source: 'memory', body: words(plan('write', small)) },
    { method: `writeBuffer, ${large} MiB calls`, source: 'memory', body: words(plan('write', large)) },
    {
      method: 'mappedAtCreation, filled in place',
      source: 'memory',
      body: async (dst, w) => {
        // A new buffer per destination (this method cannot fill an existing one); made and dropped in the timing.
        for (const [d, part] of spread(dst, w)) {
          const b = gpu.device.createBuffer({ size: d.size, usage: d.usage, mappedAtCreation: true });
          new Uint32Array(b.getMappedRange()).set(part);
          b.unmap();
          b.destroy();
        }
      },
    },
    { method: `staging ring ${small} MiB x 4`, source: 'memory', body: words(plan('staging', small, 4)) },
    { method: `staging ring ${large} MiB x 4`, source: 'memory', body: words(plan('staging', large, 4)) },
    { method: `staging ring ${small} MiB x 8`, source: 'memory', body: words(plan('staging', small, 8)) },
    { method: `staging ring ${large} MiB x 8`, source: 'memory', body: words(plan('staging', large, 8)) },
    {
      method: 'file read only (no device)',
      source: 'file',
      body: async (dst, _w, f) => {
        const host = new Uint8Array(large * MiB);
        const total = dst.reduce((n, d) => n + d.size, 0);
        for (let at = 0; at < total; at += host.length) await readFully(f, host.subarray(0, Math.min(host.length, total - at)), at);
      },
    },
    { method: `file -> writeBuffer, ${large} MiB calls`, source: 'file', body: file(plan('write', large)) },
    { method: `file -> staging ring ${small} MiB x 4`, source: 'file', body: file(plan('staging', small, 4)) },
    { method: `file -> staging ring ${large} MiB x 4`, source: 'file', body: file(plan('staging', large, 4)) },
  ];
}

/**
 * Uploads `bytes` (rounded down to whole destination buffers of at most 256 MiB) by each method, `warmup` untimed
 * then `runs` timed times; the median is reported.
 */
export async function benchUpload(gpu: Gpu, bytes: number, runs: number, warmup: number, onCase?: (c: UploadCase) => void): Promise<UploadReport> {
  const g = internals(gpu);
  const per = Math.min(256 * MiB, Math.floor(g.limits.maxBufferSize / 4) * 4, bytes);
  const count = Math.max(1, Math.floor(bytes / per));
  const total = per * count;
  const words = new Uint32Array(total / 4);
  for (let i = 0; i < words.length; i++) words[i] = (i * 2654435761) >>> 0;
  const dir = mkdtempSync(join(tmpdir(), 'vixen-upload-'));
  const path = join(dir, 'words.bin');
  writeFileSync(path, words);
  const dst = Array.from({ length: count }, () => gpu.device.createBuffer({ size: per, usage: GPUBufferUsage.STORAGE | GPUBufferUsage.COPY_DST | GPUBufferUsage.COPY_SRC }));
  const file = await open(path, 'r');
  const out: UploadCase[] = [];
  try {
    for (const c of cases(gpu)) {
      const times: number[] = [];
      for (let k = 0; k < warmup + runs; k++) {
        await gpu.device.queue.onSubmittedWorkDone();
        const t0 = performance.now();
        await c.body(dst, words, file);
        await gpu.device.queue.onSubmittedWorkDone();
        if (k >= warmup) times.push(performance.now() - t0);
      }
      g.check();
      const ms = median(times);
      const result = { method: c.method, source: c.source, medianMs: ms, gbPerSecond: total / ms / 1e6 };
      onCase?.(result);
      out.push(result);
    }
  } finally {
    await file.close();
    for (const d of dst) d.destroy();
    rmSync(dir, { recursive: true, force: true });
  }
  return { bytes: total, cases: out };
}

export function formatUploadReport(r: UploadReport): string {
  return [
    `host -> device upload of ${(r.bytes / MiB).toFixed(0)} MiB`,
    `${'method'.padEnd(40)}${'source'.padStart(8)}${'ms'.padStart(10)}${'GB/s'.padStart(8)}`,
    ...r.cases.map((c) => `${c.method.padEnd(40)}${c.source.padStart(8)}${c.medianMs.toFixed(1).padStart(10)}${c.gbPerSecond.toFixed(2).padStart(8)}`),
  ].join('\n');
}
