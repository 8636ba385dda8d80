/**
 * `vixen serve`: builds the playground into a temporary folder and serves it on 127.0.0.1 (only this machine:
 * the page runs programs, it needs no one else). Static files only; everything runs in the browser.
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { buildSite, SITE_FILES } from './build.js';

const TYPES: Record<string, string> = { html: 'text/html; charset=utf-8', css: 'text/css; charset=utf-8', js: 'text/javascript; charset=utf-8' };

export interface Site {
  server: Server;
  url: string;
  /** Stops serving and removes the built files. */
  close(): Promise<void>;
}

/** Builds the site and serves it on 127.0.0.1:`port` (0: any free port; `url` says which). */
export async function serveSite(options: { port?: number } = {}): Promise<Site> {
  const dir = mkdtempSync(join(tmpdir(), 'vixen-web-'));
  try {
    await buildSite(dir);
  } catch (e) {
    rmSync(dir, { recursive: true, force: true });
    throw e;
  }
  // Read once: the files never change while serving, and no request can name any other path.
  const files = new Map(SITE_FILES.map((f) => [f, readFileSync(join(dir, f))]));
  const server = createServer((req, res) => {
    const path = new URL(req.url ?? '/', 'http://localhost').pathname.slice(1) || 'index.html';
    const body = files.get(path as (typeof SITE_FILES)[number]);
    if (!body || (req.method !== 'GET' && req.method !== 'HEAD')) {
      res.writeHead(404, { 'content-type': 'text/plain' }).end('not found\n');
      return;
    }
    res.writeHead(200, { 'content-type': TYPES[path.split('.').pop()!] ?? 'application/octet-stream', 'cache-control': 'no-cache' });
    res.end(req.method === 'HEAD' ? undefined : body);
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port ?? 8080, '127.0.0.1', () => resolve());
  });
  const address = server.address();
  const port = typeof address === 'object' && address ? address.port : options.port;
  return {
    server,
    url: `http://127.0.0.1:${port}/`,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => {
          rmSync(dir, { recursive: true, force: true });
          resolve();
        });
      }),
  };
}
