/**
 * Task kinds of the worker pool, registered by the package that owns each one: `defineTask` names a function and
 * the module that defines it, so a worker thread can load that module (and with it the registration) on the
 * first request of that kind. The pool knows no task kinds of its own.
 */

/** A function a worker runs: plain data in (structured-cloned), plain data and typed arrays out (or a promise of them). */
export type TaskFunction<P, R> = (payload: P) => R | Promise<R>;

/** What the pool sends a worker. */
export interface TaskRequest {
  /** The task's key, unique across packages (`package/task`). */
  key: string;
  /** URL of the module whose evaluation registers `key`. */
  module: string;
  payload: unknown;
}

const registry = new Map<string, TaskFunction<unknown, unknown>>();

export interface Task<P, R> {
  readonly key: string;
  readonly module: string;
  /** The function itself, for callers that run it on the calling thread. */
  readonly run: TaskFunction<P, R>;
}

/**
 * Registers `run` under `key` in this thread and returns the handle callers give the pool. `module` is the
 * calling module's `import.meta.url`: a worker that has not seen `key` yet imports it.
 */
export function defineTask<P, R>(key: string, module: string, run: TaskFunction<P, R>): Task<P, R> {
  const known = registry.get(key);
  if (known && known !== run) throw new Error(`worker task ${key} is defined twice`);
  registry.set(key, run as TaskFunction<unknown, unknown>);
  return { key, module, run };
}

/** The registered function of a request, loading its module first if this thread has not yet. */
export async function taskFunction(request: TaskRequest): Promise<TaskFunction<unknown, unknown>> {
  if (!registry.has(request.key)) await import(request.module);
  const run = registry.get(request.key);
  if (!run) throw new Error(`module ${request.module} does not define worker task ${request.key}`);
  return run;
}
