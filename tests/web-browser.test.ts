/**
 * The playground in a real browser: Debian's chromium, headless, WebGPU on its SwiftShader (the CPU), driven by
 * puppeteer-core. Every gallery program runs on the page and its tables must equal the API's answers in Node
 * (Dawn); a program typed with an error must get the front end's marker at the error's place; a Parquet file
 * written by DuckDB, uploaded on the page, runs as the API runs DuckDB's rows of it, and one whose column type does
 * not fit the declaration gets io's located message. Screenshots of each
 * go to test-artifacts/web/ (gitignored). Without chromium the test is skipped, saying so, except under CI, where
 * it must run (.ci/run installs chromium).
 */
import { existsSync, mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DuckDBInstance } from '@duckdb/node-api';
import puppeteer, { type Browser, type Page } from 'puppeteer-core';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { formatValue, type Row } from '@vixen/queryplan';
import { compile } from '@vixen/runtime';
import { factsFileRelation, parseFacts, serveSite, type Site } from '@vixen/web';
import { GALLERY, type GalleryProgram } from '@vixen/web/gallery';

const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
const found = existsSync(CHROMIUM);
const ARTIFACTS = join(import.meta.dirname, '..', 'test-artifacts', 'web');
// WebGPU on SwiftShader, and nothing that reaches the network on its own.
const FLAGS = ['--headless=new', '--no-sandbox', '--enable-unsafe-webgpu', '--disable-background-networking', '--disable-component-update', '--disable-sync', '--no-first-run'];

if (!found && process.env.CI) throw new Error(`chromium not found at ${CHROMIUM}: CI must run the browser test (scripts/install.sh installs it)`);
if (!found) console.warn(`skipping the browser test: no chromium at ${CHROMIUM} (apt-get install chromium, or set CHROMIUM_PATH)`);

/** The API's answer for a gallery program (with `given` rows instead of its facts), formatted as the page's tables are. */
async function apiAnswer(g: GalleryProgram, given?: Record<string, Row[]>): Promise<Record<string, string[][]>> {
  const program = compile([{ path: g.file, text: g.source }], g.outputs ? { outputs: g.outputs } : {});
  const facts =
    given ??
    Object.fromEntries(
      Object.entries(g.facts).map(([file, text]) => {
        const rel = program.relations.find((r) => r.name === factsFileRelation(file)!.relation)!;
        return [rel.name, parseFacts(file, text, rel)];
      }),
    );
  const result = await program.run({ facts });
  return Object.fromEntries(
    [...result.tables].map(([name, table]) => {
      const types = program.relations.find((r) => r.name === name)!.columns.map((c) => c.type);
      return [name, table.rows().map((row) => row.map((v, c) => formatValue(v, types[c])))];
    }),
  );
}

/** What the page keeps of its last run (window.vixenPlayground.state). */
interface PageState {
  status: string;
  error?: string;
  adapter?: string;
  relations?: Record<string, string[][]>;
}

const slug = (name: string): string => name.toLowerCase().replace(/[^a-z0-9]+/g, '-').replace(/^-|-$/g, '');

describe.skipIf(!found)('the playground in chromium', () => {
  let site: Site;
  let browser: Browser;
  let page: Page;

  beforeAll(async () => {
    mkdirSync(ARTIFACTS, { recursive: true });
    site = await serveSite({ port: 0 });
    browser = await puppeteer.launch({ executablePath: CHROMIUM, headless: true, args: FLAGS });
    page = await browser.newPage();
    await page.setViewport({ width: 1400, height: 900 });
    await page.goto(site.url);
    await page.waitForFunction('window.vixenPlayground !== undefined');
  }, 120_000);

  afterAll(async () => {
    await browser?.close();
    await site?.close();
  });

  test('the page has WebGPU', async () => {
    await page.waitForFunction("document.querySelector('#status').textContent.startsWith('ready: ')", { timeout: 60_000 });
    expect(await page.evaluate("'gpu' in navigator")).toBe(true);
    expect(await page.evaluate("document.querySelector('#no-webgpu').hidden")).toBe(true);
  });

  for (const [i, g] of GALLERY.entries()) {
    test(`gallery: ${g.name} gives the API's tables`, async () => {
      await page.select('#gallery', String(i));
      await page.click('#run');
      await page.waitForFunction("['done', 'error'].includes(document.querySelector('#status').dataset.state)", { timeout: 300_000 });
      await page.screenshot({ path: join(ARTIFACTS, `${slug(g.name)}.png`) });
      const state = (await page.evaluate('window.vixenPlayground.state')) as PageState;
      expect(state.error).toBeUndefined();
      expect(state.status).toBe('done');
      expect(state.adapter).toMatch(/webgpu/);
      const expected = await apiAnswer(g);
      expect(state.relations).toEqual(expected);
      // The tables shown: one per relation, with its row count.
      const counts = await page.evaluate("[...document.querySelectorAll('.relation')].map((s) => [s.dataset.relation, s.querySelector('.count').textContent])");
      expect(counts).toEqual(Object.entries(expected).map(([n, rows]) => [n, `${rows.length} row${rows.length === 1 ? '' : 's'}`]));
    }, 600_000);
  }

  test('the views show the last program\'s plan, kernel IR, WGSL, graph and profile', async () => {
    const text = async (selector: string): Promise<string> => (await page.evaluate(`document.querySelector('${selector}').textContent`)) as string;
    await page.click('.tab[data-view="plan"]');
    expect(await text('#view-plan')).toMatch(/result/);
    await page.click('.tab[data-view="kir"]');
    expect(await text('#view-kir')).toMatch(/k0/);
    await page.click('.tab[data-view="wgsl"]');
    expect(await text('#view-wgsl')).toMatch(/@compute/);
    await page.screenshot({ path: join(ARTIFACTS, 'view-wgsl.png') });
    await page.click('.tab[data-view="graph"]');
    await page.waitForSelector('#view-graph svg', { timeout: 60_000 });
    await page.screenshot({ path: join(ARTIFACTS, 'view-graph.png') });
    await page.click('.tab[data-view="profile"]');
    // One row per kernel that ran, each with its time.
    expect(await page.evaluate("document.querySelectorAll('#view-profile tbody tr').length")).toBeGreaterThan(0);
    await page.screenshot({ path: join(ARTIFACTS, 'view-profile.png') });
    await page.click('.tab[data-view="results"]');
  }, 120_000);

  test('a browser whose WebGPU offers no adapter is told so, and Run is off', async () => {
    // Without --enable-unsafe-webgpu this chromium has navigator.gpu but no adapter.
    const plain = await puppeteer.launch({ executablePath: CHROMIUM, headless: true, args: FLAGS.filter((f) => f !== '--enable-unsafe-webgpu') });
    try {
      const other = await plain.newPage();
      await other.setViewport({ width: 1400, height: 900 });
      await other.goto(site.url);
      await other.waitForFunction("!document.querySelector('#no-webgpu').hidden", { timeout: 60_000 });
      await other.screenshot({ path: join(ARTIFACTS, 'no-webgpu.png') });
      expect(await other.evaluate("document.querySelector('#no-webgpu-reason').textContent")).toMatch(/no adapter|no WebGPU/);
      expect(await other.evaluate("document.querySelector('#run').disabled")).toBe(true);
      // The compiler still works there: the plan view shows the gallery's first program.
      expect(await other.evaluate("document.querySelector('#view-plan').textContent")).toMatch(/even/);
    } finally {
      await plain.close();
    }
  }, 120_000);

  test('a Parquet file uploaded on the page runs as the API runs its rows; a column of another type is a located error', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'vixen-web-parquet-'));
    const duck = await (await DuckDBInstance.create(':memory:', { threads: '1' })).connect();
    try {
      const tc = GALLERY.findIndex((g) => g.name === 'Transitive closure');
      // A graph of 30 nodes with two chains and a cycle, in two row groups; the API gets the rows as DuckDB reads them.
      const edges = 'SELECT (i % 30)::INTEGER AS x, ((i * 7 + 3) % 30)::INTEGER AS y FROM range(45) t(i)';
      mkdirSync(join(dir, 'good'));
      mkdirSync(join(dir, 'bad'));
      await duck.run(`COPY (${edges}) TO '${join(dir, 'good', 'edge.parquet')}' (FORMAT PARQUET, ROW_GROUP_SIZE 20)`);
      await duck.run(`COPY (SELECT x, y::VARCHAR AS y FROM (${edges})) TO '${join(dir, 'bad', 'edge.parquet')}' (FORMAT PARQUET)`);
      const rows = (await duck.runAndReadAll(edges)).getRows() as Row[];

      await page.select('#gallery', String(tc));
      // The gallery's own edge.csv goes; the Parquet file is the only facts.
      await page.evaluate("document.querySelectorAll('.facts-entry button').forEach((b) => b.click())");
      const upload = async (path: string): Promise<void> => {
        const input = (await page.$('#file-input'))!;
        await input.uploadFile(path);
        await page.waitForFunction(`[...document.querySelectorAll('.facts-entry')].some((e) => e.textContent.includes('Parquet, ${rows.length} rows'))`, { timeout: 30_000 });
      };
      await upload(join(dir, 'good', 'edge.parquet'));
      expect(await page.evaluate("[...document.querySelectorAll('.facts-entry')].map((e) => [e.querySelector('input').value, e.querySelector('.muted').textContent])")).toEqual([
        ['edge.parquet', `Parquet, ${rows.length} rows`],
      ]);
      await page.click('#run');
      await page.waitForFunction("['done', 'error'].includes(document.querySelector('#status').dataset.state)", { timeout: 300_000 });
      await page.screenshot({ path: join(ARTIFACTS, 'parquet.png') });
      const state = (await page.evaluate('window.vixenPlayground.state')) as PageState;
      expect(state.error).toBeUndefined();
      expect(state.status).toBe('done');
      const expected = await apiAnswer(GALLERY[tc]!, { edge: rows });
      expect(expected.path!.length).toBeGreaterThan(rows.length);
      expect(state.relations).toEqual(expected);

      // The same name again replaces the entry.
      await upload(join(dir, 'bad', 'edge.parquet'));
      expect(await page.evaluate("document.querySelectorAll('.facts-entry').length")).toBe(1);
      await page.click('#run');
      await page.waitForFunction("['done', 'error'].includes(document.querySelector('#status').dataset.state)", { timeout: 300_000 });
      const failed = (await page.evaluate('window.vixenPlayground.state')) as PageState;
      expect(failed.status).toBe('error');
      expect(failed.error).toContain('edge.parquet: expected int32 in column 2 (y; Parquet "y") of edge, found BYTE_ARRAY (UTF8)');
      expect(await page.evaluate("document.querySelector('#error').textContent")).toContain('column 2 (y; Parquet "y") of edge');
    } finally {
      duck.closeSync();
      rmSync(dir, { recursive: true, force: true });
    }
  }, 600_000);

  test('an error typed into the editor is marked where it is', async () => {
    await page.select('#gallery', '1');
    await page.click('.cm-content');
    await page.keyboard.down('Control');
    await page.keyboard.press('a');
    await page.keyboard.up('Control');
    await page.keyboard.press('Backspace');
    // z is bound by no atom of the body: an unsafe head, reported at z.
    await page.keyboard.type('edge(x, y) -> int32(x), int32(y).\npath(x, z) <- edge(x, y).\n');
    await page.waitForSelector('.cm-lintRange-error', { timeout: 30_000 });
    await page.screenshot({ path: join(ARTIFACTS, 'error-marker.png') });
    expect(await page.evaluate("[...document.querySelectorAll('.cm-lintRange-error')].map((e) => e.textContent)")).toEqual(['z']);
    expect(await page.evaluate("document.querySelector('#diagnostics').dataset.errors")).toBe('1');
    // The gutter marks the line too.
    expect(await page.$('.cm-lint-marker-error')).not.toBeNull();
  }, 120_000);
});
