/**
 * Compiles sources sent by tests/fuzz/parser.test.ts in a worker thread, so a hanging compile can be
 * time-boxed (terminated) without blocking the test. Replies with how `compile` ended (CompileOutcome there).
 * Plain JavaScript: a worker thread does not inherit the test runner's TypeScript loader, so it registers tsx.
 */
import { parentPort } from 'node:worker_threads';
import { register } from 'tsx/esm/api';

register();
const { compile } = await import('@vixen/runtime');
const { VixenError } = await import('@vixen/queryplan');

parentPort.on('message', ({ id, source, filename }) => {
  let outcome;
  try {
    compile(source, { filename, readFile: () => undefined });
    outcome = { kind: 'ok' };
  } catch (e) {
    outcome =
      e instanceof VixenError
        ? { kind: 'vixen', diagnostics: e.diagnostics }
        : { kind: 'crash', error: e instanceof Error ? (e.stack ?? e.message) : String(e) };
  }
  parentPort.postMessage({ id, outcome });
});
parentPort.postMessage({ ready: true });
