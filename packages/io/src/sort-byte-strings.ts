/**
 * Sorting millions of strings given as UTF-8 bytes on the worker pool (sorted-order.ts sortedByteStrings), with no
 * JS string made: the strings of device-parsed text and of Parquet files, which the run's dictionary then merges as
 * lists without decoding them.
 */
import { Buffer } from 'node:buffer';
import type { AsciiStrings, SortedStrings } from './encoding.js';
import { runAllInWorkers, workerCount } from './parallel/pool.js';
import { binShares, PARALLEL_STRINGS, sortedByteStrings, sortedByteStringsTask } from './sorted-order.js';

/** Bins of byteBin: the empty string, then 257 per first byte (no second byte, then each). */
const BYTE_BINS = 1 + 256 * 257;

/**
 * Strings given as bytes (string i is bytes [starts[i], starts[i + 1])) sorted by their bytes, distinct, back to
 * back, and per string its position among them; no JS string made. On the worker pool when there are many: each
 * worker sorts the strings of a range of first two bytes (sortedByteStrings), reading `bytes` and `starts` in shared
 * memory, so its sorted share is one stretch of the whole and the shares are concatenated.
 */
export async function sortByteStrings(bytes: Uint8Array, starts: Uint32Array): Promise<{ sorted: AsciiStrings; rank: Uint32Array }> {
  const n = starts.length - 1;
  const workers = workerCount();
  if (n < PARALLEL_STRINGS || workers < 2) {
    const all = sortedByteStrings({ bytes, starts, indices: Uint32Array.from({ length: n }, (_, i) => i) });
    return { sorted: { bytes: all.bytes, starts: all.starts }, rank: all.rank };
  }
  const shared = <T extends Uint8Array | Uint32Array>(a: T): T => {
    if (a.buffer instanceof SharedArrayBuffer) return a;
    const b = new (a.constructor as new (buffer: SharedArrayBuffer) => T)(new SharedArrayBuffer(a.byteLength));
    b.set(a);
    return b;
  };
  const [sharedBytes, sharedStarts] = [shared(bytes), shared(starts)];
  const bins = new Uint32Array(n);
  const counts = new Uint32Array(BYTE_BINS);
  for (let i = 0; i < n; i++) {
    const s = starts[i]!;
    const len = starts[i + 1]! - s;
    counts[(bins[i] = len === 0 ? 0 : 1 + bytes[s]! * 257 + (len > 1 ? bytes[s + 1]! + 1 : 0))]!++;
  }
  const shareOf = binShares(counts, n, workers);
  const sizes = new Uint32Array(workers);
  for (let b = 0; b < BYTE_BINS; b++) sizes[shareOf[b]!]! += counts[b]!;
  const indices = Array.from(sizes, (size) => new Uint32Array(size));
  const filled = new Uint32Array(workers);
  for (let i = 0; i < n; i++) {
    const w = shareOf[bins[i]!]!;
    indices[w]![filled[w]!++] = i;
  }
  const results = await runAllInWorkers(sortedByteStringsTask, indices.map((ix) => ({ bytes: sharedBytes, starts: sharedStarts, indices: ix })));
  const out = new Uint8Array(results.reduce((m, r) => m + r.bytes.length, 0));
  const outStarts = new Uint32Array(results.reduce((m, r) => m + r.starts.length - 1, 0) + 1);
  const rank = new Uint32Array(n);
  let at = 0;
  let d = 0;
  results.forEach((r, w) => {
    out.set(r.bytes, at);
    for (let k = 1; k < r.starts.length; k++) outStarts[d + k] = at + r.starts[k]!;
    const ix = indices[w]!;
    for (let k = 0; k < ix.length; k++) rank[ix[k]!] = d + r.rank[k]!;
    at += r.bytes.length;
    d += r.starts.length - 1;
  });
  return { sorted: { bytes: out, starts: outStarts }, rank };
}

let warmed = false;

/**
 * Starts the worker pool's threads for sortByteStrings (once per process), without waiting: a device parse calls it
 * as a file starts, so the workers load while the device parses rather than when the file's strings wait for them.
 */
export function warmByteSortWorkers(): void {
  if (warmed || workerCount() < 2) return;
  warmed = true;
  const none = { bytes: new Uint8Array(0), starts: new Uint32Array(1), indices: new Uint32Array(0) };
  runAllInWorkers(sortedByteStringsTask, Array.from({ length: workerCount() }, () => none)).catch(() => undefined);
}

/** ASCII strings, sorted and distinct, as a list the run's dictionary merges without decoding them (mergeSortedLists). */
export function asciiList(ascii: AsciiStrings): SortedStrings {
  const { bytes, starts } = ascii;
  const text = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  return { size: starts.length - 1, ascii, text: (i) => text.toString('latin1', starts[i]!, starts[i + 1]!) };
}
