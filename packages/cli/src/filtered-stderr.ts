/**
 * The CLI's GPU commands run in a child process whose stderr passes through DawnNoiseFilter (see dawn-noise.ts:
 * Dawn writes its warnings to file descriptor 2 from native code, out of JavaScript's reach). `--verbose` runs in
 * this process, Dawn's text included. The child shares stdin and stdout, so pipes and the shell behave as before.
 */
import { spawn } from 'node:child_process';
import { DawnNoiseFilter } from './dawn-noise.js';

/** Set in the child: it runs the command itself. */
const CHILD = 'VIXEN_STDERR_FILTERED';
/** Set in the child when the real stderr is a terminal (its own is a pipe): the progress line may draw. */
const TERMINAL = 'VIXEN_STDERR_TTY';

/** Commands that open a WebGPU adapter, and so make Dawn talk (`--version` names the adapter it would use). */
const GPU_COMMANDS = new Set(['run', 'explain', 'bench', 'shell', '--version', '-V']);

/** Whether `argv` (process.argv) should run in a filtered child. */
export function filtersStderr(argv: readonly string[]): boolean {
  return process.env[CHILD] !== '1' && GPU_COMMANDS.has(argv[2] ?? '') && !argv.includes('--verbose');
}

/** Whether the stderr the user sees is a terminal (this process's, or the parent's for a filtered child). */
export function stderrIsTerminal(): boolean {
  return process.stderr.isTTY === true || process.env[TERMINAL] === '1';
}

/** Runs `argv` again in a child with filtered stderr; resolves with its exit status (or re-raises its signal). */
export function runFiltered(argv: readonly string[]): Promise<number> {
  const env = { ...process.env, [CHILD]: '1', ...(process.stderr.isTTY ? { [TERMINAL]: '1' } : {}) };
  const child = spawn(process.execPath, [...process.execArgv, ...argv.slice(1)], { stdio: ['inherit', 'inherit', 'pipe'], env });
  const filter = new DawnNoiseFilter((text) => process.stderr.write(text));
  child.stderr.setEncoding('utf8');
  child.stderr.on('data', (text: string) => filter.push(text));
  // Ctrl-C reaches the child too (same process group): it decides, and this process reports how it ended.
  const ignore = (): void => undefined;
  process.on('SIGINT', ignore);
  process.on('SIGTERM', ignore);
  return new Promise((resolve, reject) => {
    child.on('error', reject);
    child.on('close', (code, signal) => {
      filter.end();
      process.off('SIGINT', ignore);
      process.off('SIGTERM', ignore);
      if (signal) process.kill(process.pid, signal);
      resolve(code ?? 1);
    });
  });
}
