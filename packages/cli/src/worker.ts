/**
 * The bundle's worker entry (vixen-worker.mjs): the pool's worker loop with every package's tasks registered up
 * front, since a bundled worker cannot import the modules that define them by their source URLs.
 */
import '@vixen/io/worker-tasks';
import '@vixen/runtime/worker-tasks';
import '@vixen/bench/worker-tasks';
import '@vixen/io/worker';
