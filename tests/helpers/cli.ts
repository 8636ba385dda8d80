/** Runs the CLI in this process with captured stdout and stderr, as the CLI tests need. */
import { runCli } from '@vixen/cli';

export async function cli(...args: string[]): Promise<{ code: number; out: string; err: string }> {
  let out = '';
  let err = '';
  const code = await runCli(['node', 'vixen', ...args], (s) => (out += s), (s) => (err += s));
  return { code, out, err };
}
