/** The entry of the pool's worker threads (pool.ts): runs one request at a time and transfers its arrays back. */
import { parentPort } from 'node:worker_threads';
import { parseRange, type RangeResult, type RangeTask } from '../facts/parse-range.js';

export type WorkerRequest = { kind: 'parseRange'; task: RangeTask };
export type WorkerResponse = RangeResult;

/** The buffers of a response, moved rather than copied. */
function transfers(r: WorkerResponse): ArrayBuffer[] {
  return r.ok ? [r.words.buffer as ArrayBuffer, r.strings.bytes.buffer as ArrayBuffer, r.strings.ends.buffer as ArrayBuffer] : [];
}

function handle(request: WorkerRequest): WorkerResponse {
  switch (request.kind) {
    case 'parseRange':
      return parseRange(request.task);
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
