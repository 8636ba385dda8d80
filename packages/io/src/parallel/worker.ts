/**
 * The entry of the pool's worker threads (pool.ts): runs one request at a time and transfers the typed arrays
 * of its answer back. Which functions it runs is up to the packages that define tasks (tasks.ts).
 */
import { parentPort } from 'node:worker_threads';
import { taskFunction, type TaskRequest } from './tasks.js';

/**
 * The buffers of an answer's typed arrays, moved rather than copied (shared ones are neither): the answer itself,
 * or arrays up to two levels into its objects and arrays (parse results keep their strings' arrays one level down).
 */
function transfers(value: unknown, depth = 2, out = new Set<ArrayBuffer>()): ArrayBuffer[] {
  if (ArrayBuffer.isView(value)) {
    if (value.buffer instanceof ArrayBuffer) out.add(value.buffer);
  } else if (depth > 0 && value && typeof value === 'object') {
    for (const v of Object.values(value)) transfers(v, depth - 1, out);
  }
  return [...out];
}

parentPort?.on('message', (request: TaskRequest) => {
  taskFunction(request)
    .then((run) => run(request.payload))
    .then((value) => parentPort!.postMessage({ ok: true, value }, transfers(value)))
    .catch((e: unknown) => parentPort!.postMessage({ ok: false, message: e instanceof Error ? (e.stack ?? e.message) : String(e) }));
});
