/**
 * Facts loading memory and speed (issue #3): generates a CSV of int32, int64, decimal and a string with many
 * repeats, loads it through the columnar loader and reports rows/s, peak RSS and heap.
 *
 *   node --expose-gc --import tsx scripts/facts-memory.ts [--mb 1024 | --rows N] [--compare] [--json] [--keep DIR]
 *
 * `--compare` then decodes the loaded facts into Row[] (what loading produced before) and reports the heap that
 * takes, for comparison. `--json` prints one JSON object (tests read it). Run with --expose-gc for exact heap
 * figures (without it heap growth includes garbage).
 */
import { closeSync, mkdtempSync, openSync, rmSync, statSync, writeSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import type { Column } from '@vixen/queryplan';
import { columnTypes, EncodedFacts, loadFactsFileInto, StringDictionary } from '@vixen/io';

const COLUMNS: Column[] = [
  { name: 'k', type: 'int32' },
  { name: 'big', type: 'int64' },
  { name: 'price', type: 'decimal' },
  { name: 'name', type: 'string' },
];
/** Distinct values of the string column. */
const NAMES = 5000;

function line(i: number): string {
  const price = `${(i * 31) % 100000}.${String(i % 100).padStart(2, '0')}`;
  return `${i % 1000003},${i * 1000003},${price},name${(Math.imul(i, 2654435761) >>> 0) % NAMES}\n`;
}

/** Writes rows until `rows` or `bytes` is reached; returns the rows written. */
function generate(path: string, limit: { rows?: number; bytes?: number }): number {
  const fd = openSync(path, 'w');
  let rows = 0;
  let bytes = 0;
  try {
    for (;;) {
      let chunk = '';
      for (let j = 0; j < 10000; j++) {
        if (limit.rows !== undefined && rows >= limit.rows) break;
        if (limit.bytes !== undefined && bytes + chunk.length >= limit.bytes) break;
        chunk += line(rows++);
      }
      if (chunk === '') break;
      bytes += chunk.length;
      writeSync(fd, chunk);
    }
  } finally {
    closeSync(fd);
  }
  return rows;
}

const gc = (globalThis as { gc?: () => void }).gc;
/** Heap plus ArrayBuffer bytes (typed arrays live outside the JS heap), after a full GC when exposed. */
function retained(): { heap: number; arrayBuffers: number } {
  gc?.();
  const m = process.memoryUsage();
  return { heap: m.heapUsed, arrayBuffers: m.arrayBuffers };
}

const MiB = 2 ** 20;
const mib = (n: number): number => Math.round((n / MiB) * 10) / 10;

async function main(): Promise<void> {
  const { values } = parseArgs({
    options: {
      mb: { type: 'string' },
      rows: { type: 'string' },
      compare: { type: 'boolean', default: false },
      json: { type: 'boolean', default: false },
      keep: { type: 'string' },
    },
  });
  const dir = values.keep ?? mkdtempSync(join(tmpdir(), 'vixen-facts-memory-'));
  const path = join(dir, 'facts.csv');
  try {
    const limit = values.rows !== undefined ? { rows: Number(values.rows) } : { bytes: Number(values.mb ?? '1024') * MiB };
    const genStart = performance.now();
    const written = generate(path, limit);
    const genSeconds = (performance.now() - genStart) / 1000;
    const fileBytes = statSync(path).size;

    const before = retained();
    const rssBefore = process.memoryUsage().rss;
    let peakRss = rssBefore;
    let peakHeap = 0;
    const sampler = setInterval(() => {
      const m = process.memoryUsage();
      peakRss = Math.max(peakRss, m.rss);
      peakHeap = Math.max(peakHeap, m.heapUsed - before.heap);
    }, 50);
    const facts = new EncodedFacts();
    const target = facts.relation('facts', columnTypes(COLUMNS));
    const loadStart = performance.now();
    await loadFactsFileInto(path, COLUMNS, target, facts.strings, 'facts');
    const loadSeconds = (performance.now() - loadStart) / 1000;
    const dictStart = performance.now();
    facts.remapStrings(new StringDictionary(facts.strings.strings));
    const dictSeconds = (performance.now() - dictStart) / 1000;
    clearInterval(sampler);
    const after = retained();
    const encoded = {
      heapBytes: after.heap - before.heap,
      arrayBufferBytes: after.arrayBuffers - before.arrayBuffers,
      wordBytes: target.pieces().reduce((n, p) => n + p.byteLength, 0),
    };

    let rowArrays: { heapBytes: number } | undefined;
    if (values.compare) {
      // What the Row[] path held: every row as an array of JS values (strings decoded from the interner).
      const rows = target.rows({ id: () => 0, text: (id) => `name${id}` });
      rowArrays = { heapBytes: retained().heap - after.heap };
      if (rows.length !== written) throw new Error('decoded row count differs');
    }
    const report = {
      rows: target.count,
      columns: COLUMNS.map((c) => c.type),
      fileMiB: mib(fileBytes),
      generateSeconds: genSeconds,
      loadSeconds,
      rowsPerSecond: Math.round(target.count / loadSeconds),
      mibPerSecond: mib(fileBytes / loadSeconds),
      dictionaryAndRemapSeconds: dictSeconds,
      rssBeforeLoadMiB: mib(rssBefore),
      // Sampled during the load; the process's lifetime peak (generation included) may be higher.
      peakRssMiB: mib(peakRss),
      maxRssMiB: mib(process.resourceUsage().maxRSS * 1024),
      peakHeapGrowthMiB: mib(peakHeap),
      retained: { heapMiB: mib(encoded.heapBytes), arrayBuffersMiB: mib(encoded.arrayBufferBytes), wordsMiB: mib(encoded.wordBytes) },
      ...(rowArrays ? { rowArraysHeapMiB: mib(rowArrays.heapBytes) } : {}),
      gcExposed: gc !== undefined,
    };
    if (target.count !== written) throw new Error(`loaded ${target.count} rows of ${written}`);
    console.log(values.json ? JSON.stringify(report) : report);
  } finally {
    if (values.keep === undefined) rmSync(dir, { recursive: true, force: true });
  }
}

await main();
