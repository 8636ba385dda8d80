/**
 * A pool of worker threads for the host work that scales with the data (parsing facts files, generating benchmark
 * data): one worker per core up to MAX_WORKERS, started on first use and kept, unreferenced, for later tasks.
 * Results come back as transferred typed arrays, so nothing is copied on the way. Task kinds are defined by the
 * packages that own them (tasks.ts).
 */
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { availableParallelism } from 'node:os';
import { pathToFileURL } from 'node:url';
import { Worker } from 'node:worker_threads';
import type { Task, TaskRequest } from './tasks.js';

/** Past this many workers the main thread's share (merging, projection) bounds a load anyway. */
const MAX_WORKERS = 16;

/** How many tasks run at once. */
export const workerCount = (): number => Math.max(1, Math.min(availableParallelism(), MAX_WORKERS));

/** A young generation larger than V8's default: tasks make many short-lived strings and values, quickly. */
const resourceLimits = { maxYoungGenerationSizeMb: 64 };

/**
 * The worker's entry: from the sources its .ts beside this file, loaded through tsx (which the workspace runs
 * on, and which does not reach worker threads by itself); in built code (the `vixen` package of `pnpm
 * release-pack`, `vixen bundle`: cli/src/build-js.ts) vixen-worker.mjs beside the module this file is bundled
 * into, which holds every package's tasks already.
 */
function startWorker(): Worker {
  if (!import.meta.url.endsWith('.ts')) return new Worker(new URL('./vixen-worker.mjs', import.meta.url), { resourceLimits });
  const entry = new URL('./worker.ts', import.meta.url).href;
  // tsx's ESM entry of `tsx/esm/api` (require.resolve would give its CommonJS one, which cannot register from here).
  const pkg = createRequire(import.meta.url).resolve('tsx/package.json');
  const exports = (JSON.parse(readFileSync(pkg, 'utf8')) as { exports: Record<string, { import: { default: string } }> }).exports;
  const tsx = new URL(exports['./esm/api']!.import.default, pathToFileURL(pkg)).href;
  const code = `import(${JSON.stringify(tsx)}).then((api) => { api.register(); return import(${JSON.stringify(entry)}); });`;
  return new Worker(code, { eval: true, resourceLimits });
}

const idle: Worker[] = [];
let started = 0;
const waiting: Array<(w: Worker) => void> = [];

async function acquire(): Promise<Worker> {
  const w = idle.pop();
  if (w) return w;
  if (started < workerCount()) {
    started++;
    return startWorker();
  }
  return new Promise((resolve) => waiting.push(resolve));
}

function release(w: Worker): void {
  const next = waiting.shift();
  if (next) return next(w);
  // An idle worker must not keep the process alive.
  w.unref();
  idle.push(w);
}

/** Runs `task` on `payload` on a worker of the pool; the buffers in `transfer` are moved there, not copied. */
export async function runInWorker<P, R>(task: Task<P, R>, payload: P, transfer: readonly ArrayBuffer[] = []): Promise<R> {
  const request: TaskRequest = { key: task.key, module: task.module, payload };
  const w = await acquire();
  w.ref();
  return new Promise<R>((resolve, reject) => {
    const done = (): void => {
      w.off('message', onMessage);
      w.off('error', onError);
    };
    const onMessage = (m: { ok: true; value: R } | { ok: false; message: string }): void => {
      done();
      release(w);
      if (m.ok) resolve(m.value);
      else reject(new Error(`worker: ${m.message}`));
    };
    const onError = (e: Error): void => {
      // The worker is gone: start another for later tasks.
      done();
      started--;
      const next = waiting.shift();
      if (next) {
        started++;
        next(startWorker());
      }
      reject(e);
    };
    w.on('message', onMessage);
    w.on('error', onError);
    w.postMessage(request, transfer);
  });
}

/** Runs `task` on every payload on the pool, at most workerCount() at once; results in payload order. */
export function runAllInWorkers<P, R>(task: Task<P, R>, payloads: readonly P[]): Promise<R[]> {
  return Promise.all(payloads.map((p) => runInWorker(task, p)));
}
