/**
 * The worker pool's interface (pool.ts) where there are no worker threads, as in a browser bundle (browser.ts):
 * every task runs on the calling thread, in turn.
 */
import type { Task } from './tasks.js';

export const workerCount = (): number => 1;

export async function runInWorker<P, R>(task: Task<P, R>, payload: P): Promise<R> {
  return task.run(payload);
}

export async function runAllInWorkers<P, R>(task: Task<P, R>, payloads: readonly P[]): Promise<R[]> {
  const results: R[] = [];
  for (const p of payloads) results.push(await task.run(p));
  return results;
}
