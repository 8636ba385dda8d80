/** The entry of the pool's worker threads (pool.ts): runs one request at a time and transfers its arrays back. */
import { parentPort } from 'node:worker_threads';
import { parseRange, type RangeResult, type RangeTask } from '../facts/parse-range.js';
import { dbgenChunk, type DbgenChunk, type DbgenChunkResult } from '../tpch/dbgen.js';

export type WorkerRequest = { kind: 'parseRange'; task: RangeTask } | { kind: 'dbgenChunk'; chunk: DbgenChunk };
export type WorkerResponse = RangeResult | DbgenChunkResult;

/** The buffers of a response, moved rather than copied. */
function transfers(r: WorkerResponse): ArrayBuffer[] {
  if ('files' in r) return r.files.map((f) => f.buffer as ArrayBuffer);
  return r.ok ? [r.words.buffer as ArrayBuffer, r.strings.bytes.buffer as ArrayBuffer, r.strings.ends.buffer as ArrayBuffer] : [];
}

function handle(request: WorkerRequest): WorkerResponse {
  switch (request.kind) {
    case 'parseRange':
      return parseRange(request.task);
    case 'dbgenChunk':
      return dbgenChunk(request.chunk);
  }
}

parentPort?.on('message', (request: WorkerRequest) => {
  try {
    const value = handle(request);
    parentPort!.postMessage({ ok: true, value }, transfers(value));
  } catch (e) {
    parentPort!.postMessage({ ok: false, message: e instanceof Error ? (e.stack ?? e.message) : String(e) });
  }
});
