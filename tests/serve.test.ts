/** `vixen serve`: builds the playground and serves it on 127.0.0.1 until Ctrl+C. */
import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { expect, test } from 'vitest';

const main = join(import.meta.dirname, '..', 'packages', 'cli', 'src', 'main.ts');

test('vixen serve --port 0 serves the page on 127.0.0.1 and stops on SIGINT', async () => {
  const child = spawn(process.execPath, ['--import', 'tsx', main, 'serve', '--port', '0'], { stdio: ['ignore', 'pipe', 'pipe'] });
  try {
    const url = await new Promise<string>((resolve, reject) => {
      let out = '';
      child.stdout.on('data', (d: Buffer) => {
        out += d.toString();
        const m = /(http:\/\/127\.0\.0\.1:\d+\/)/.exec(out);
        if (m) resolve(m[1]!);
      });
      child.once('exit', (code) => reject(new Error(`vixen serve exited (${code}) before serving: ${out}`)));
    });
    const page = await fetch(url);
    expect(page.status).toBe(200);
    expect(await page.text()).toContain('<script type="module" src="app.js">');
    const script = await fetch(new URL('app.js', url));
    expect(script.headers.get('content-type')).toMatch(/javascript/);
    expect((await script.arrayBuffer()).byteLength).toBeGreaterThan(100_000);
    expect((await fetch(new URL('package.json', url))).status).toBe(404);
  } finally {
    const exited = new Promise((resolve) => child.once('exit', resolve));
    child.kill('SIGINT');
    expect(await exited).toBe(0);
  }
}, 120_000);
