/**
 * The compiler and engine core run in a browser: the playground's script, bundled for the browser, takes the
 * front end, the query plan and kernel IR pipelines, WGSL codegen and the runtime's executor through their
 * browser entries, and imports nothing from outside the bundle (no Node built-in, no Dawn).
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, expect, test } from 'vitest';
import { buildSite, SITE_FILES } from '../src/index.js';

const dir = mkdtempSync(join(tmpdir(), 'vixen-web-bundle-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

test('the page bundles for the browser with no Node built-ins and no external imports', async () => {
  const result = await buildSite(dir, { minify: false });
  expect(result.externalImports).toEqual([]);
  const script = readFileSync(join(dir, 'app.js'), 'utf8');
  expect(script).not.toMatch(/(?:from\s*|import\s*\(\s*|require\s*\(\s*)["'](?:node:|webgpu["'])/);
  // The engine is in it: the executor, the WGSL generator and the browser's device opener.
  for (const marker of ['executeKir', 'generateProgramShaders', 'navigator.gpu is missing']) expect(script).toContain(marker);
  for (const f of SITE_FILES) expect(readFileSync(join(dir, f)).length).toBeGreaterThan(0);
}, 120_000);
