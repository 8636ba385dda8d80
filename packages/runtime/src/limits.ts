/** Run limits (iterations, tuples, time, device memory): byte-size parsing and printing, and the error a broken limit throws. */
import { VixenError } from '@vixen/queryplan';
import type { ExecuteStats } from './executor.js';

/** A run stopped by one of its limits; `stats` describes the run up to that point, and the message sums it up. */
export class RunLimitError extends VixenError {
  constructor(
    message: string,
    readonly stats: ExecuteStats,
  ) {
    super({ severity: 'error', message: `${message}; ${partialSummary(stats)}` });
    this.name = 'RunLimitError';
  }
}

/** What a stopped run had done: iterations, elapsed time, launches, and the tuples held (largest relations named). */
function partialSummary(s: ExecuteStats): string {
  const iterations = s.loops.reduce((n, l) => n + l.iterations, 0);
  const tuples = s.relationRows.reduce((n, r) => n + r.rows, 0);
  const largest = [...s.relationRows].sort((a, b) => b.rows - a.rows).slice(0, 5);
  const named = largest.map((r) => `${r.name} ${r.rows}`).join(', ') + (s.relationRows.length > largest.length ? ', ...' : '');
  return (
    `stopped after ${iterations} fixpoint iteration${iterations === 1 ? '' : 's'}, ${s.launches} kernel launches ` +
    `and ${((s.milliseconds - s.loadMilliseconds) / 1000).toFixed(2)} s of evaluation, holding ${tuples} tuple${tuples === 1 ? '' : 's'}${named ? ` (${named})` : ''}`
  );
}

const UNITS: Record<string, number> = {
  '': 1,
  b: 1,
  k: 2 ** 10,
  kib: 2 ** 10,
  kb: 1e3,
  m: 2 ** 20,
  mib: 2 ** 20,
  mb: 1e6,
  g: 2 ** 30,
  gib: 2 ** 30,
  gb: 1e9,
  t: 2 ** 40,
  tib: 2 ** 40,
  tb: 1e12,
};

/**
 * Bytes from a number or text like `65536`, `64MiB`, `1.5 GiB`, `500MB` (KiB/MiB/GiB/TiB and bare K/M/G/T are
 * powers of 1024, KB/MB/GB/TB powers of 1000). A bad size is a user error naming `what`.
 */
export function parseByteSize(size: number | string, what = 'byte size'): number {
  if (typeof size === 'number') {
    if (Number.isSafeInteger(size) && size > 0) return size;
    throw new VixenError({ severity: 'error', message: `${what}: expected a positive whole number of bytes, got ${size}` });
  }
  const m = /^\s*(\d+(?:\.\d+)?)\s*([a-z]*)\s*$/i.exec(size);
  const unit = m ? UNITS[m[2]!.toLowerCase()] : undefined;
  const bytes = m && unit !== undefined ? Math.floor(Number(m[1]) * unit) : NaN;
  if (!Number.isSafeInteger(bytes) || bytes <= 0) {
    throw new VixenError({
      severity: 'error',
      message: `${what}: '${size}' is not a byte size (examples: 1048576, 64MiB, 2GiB, 500MB)`,
    });
  }
  return bytes;
}

/** `1.5 MiB (1572864 bytes)`; plain `N bytes` below 1 KiB. */
export function formatBytes(bytes: number): string {
  if (bytes < 1024) return `${bytes} bytes`;
  const units = ['KiB', 'MiB', 'GiB', 'TiB'];
  let value = bytes / 1024;
  let u = 0;
  while (value >= 1024 && u < units.length - 1) {
    value /= 1024;
    u++;
  }
  return `${value.toFixed(1)} ${units[u]} (${bytes} bytes)`;
}

/**
 * A run's copies, clears, buffers created and readbacks (ExecuteStats.work): device time that the kernels' compute
 * passes (a profile's times) do not cover. Sizes in MiB.
 */
export function formatWork(s: Pick<ExecuteStats, 'work' | 'buffersCreated' | 'hostSyncs'>): string {
  const w = s.work;
  const mib = (bytes: number): string => `${(bytes / 2 ** 20).toFixed(1)} MiB`;
  return (
    `${w.copies} copies (${mib(w.copyBytes)}), ${w.clears} clears (${mib(w.clearBytes)}), ` +
    `${s.buffersCreated} buffers created (${mib(w.createdBytes)}), ${w.readbacks} readbacks (${w.readbacks - s.hostSyncs} besides the host syncs)`
  );
}
