/** The entry of the pool's worker threads (pool.ts): runs one request at a time and transfers its arrays back. */
import { parentPort } from 'node:worker_threads';
import { parseRange, type RangeResult, type RangeTask } from '../facts/parse-range.js';
import { projectRows, type ProjectTask } from '../facts/project.js';
import { ssbgenChunk, type SsbgenChunk } from '../ssb/dbgen.js';
import { dbgenChunk, type DbgenChunk, type TableChunkResult } from '../tpch/dbgen.js';
import { sortedOrder } from './sort-strings.js';

export type WorkerRequest =
  | { kind: 'parseRange'; task: RangeTask }
  | { kind: 'dbgenChunk'; chunk: DbgenChunk }
  | { kind: 'ssbgenChunk'; chunk: SsbgenChunk }
  | { kind: 'project'; task: ProjectTask }
  | { kind: 'sortStrings'; strings: string[] };
export type WorkerResponse = RangeResult | TableChunkResult | Uint32Array;

/** The buffers of a response, moved rather than copied (shared ones are neither). */
function transfers(r: WorkerResponse): ArrayBuffer[] {
  const arrays = r instanceof Uint32Array ? [r] : 'files' in r ? r.files : r.ok ? [r.words, r.strings.bytes, r.strings.ends, r.strings.columns] : [];
  return arrays.map((a) => a.buffer).filter((b): b is ArrayBuffer => b instanceof ArrayBuffer);
}

function handle(request: WorkerRequest): WorkerResponse {
  switch (request.kind) {
    case 'parseRange':
      return parseRange(request.task);
    case 'dbgenChunk':
      return dbgenChunk(request.chunk);
    case 'ssbgenChunk':
      return ssbgenChunk(request.chunk);
    case 'project':
      return projectRows(request.task);
    case 'sortStrings':
      return sortedOrder(request.strings);
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
