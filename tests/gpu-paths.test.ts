/**
 * The code paths a GPU takes, run on llvmpipe (openGpu({ gpuPaths: true }), VIXEN_GPU_PATHS=1): a CPU adapter
 * otherwise takes fallbacks (host projections, host parses, string sorts on workers, smaller thresholds), so without
 * this the H200's paths would run in no test. TPC-H at SF 0.01 from .tbl files parsed on the device, each table loaded
 * once and every query's relations projected from them on the device, with the strings sorted on the device (radix
 * sort), against DuckDB; and a few golden cases. The assertions on the stats keep a fallback from passing silently.
 */
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, test, vi } from 'vitest';
import { compileFile, Database, openGpu, type Gpu } from '@vixen/runtime';
import { byteSortTimes } from '@vixen/io';
import { formatValue, type Row, type ScalarType } from '@vixen/queryplan';
import { columnsRead, compareAnswers, compileTpchQuery, dbgen, tableLoadProgram, TPCH_QUERIES, tpchQuerySql, tpchSchema } from '@vixen/bench';
import { useTblData } from './helpers/tbl-data.js';

const queriesDir = join(import.meta.dirname, '..', 'examples', 'tpch');
const casesDir = join(import.meta.dirname, 'cases');
const data = useTblData('gpu-paths', () => tpchSchema(queriesDir), (dir) => dbgen({ sf: 0.01, out: dir, seed: 10 }));

let gpu: Gpu;
let db: Database;
const programs = new Map(TPCH_QUERIES.map((q) => [q, compileTpchQuery(queriesDir, q)]));
const tables = new Set(tpchSchema(queriesDir).map((r) => r.name));
let projected = 0;

beforeAll(async () => {
  // lineitem's 1.9 MiB of loaded columns pass one binding of 1 MiB: its kernels run per chunk, as at SF 10 on the H200.
  gpu = await openGpu({ gpuPaths: true, maxStorageBufferBindingSize: 2 ** 20 });
  // The device sorts a load's strings from 2^17 of them on a GPU: SF 0.01 has fewer.
  vi.stubEnv('VIXEN_STRING_SORT', 'device');
  // Parsed on the device whatever the files' size (a GPU's `auto` does from 16 MiB); projections as a GPU's `auto`.
  db = new Database(gpu, data.dir, { parse: 'device' });
}, 60_000);
afterAll(() => {
  vi.unstubAllEnvs();
  db?.clear();
  gpu?.dispose();
});

test('a CPU adapter opened with gpuPaths takes the paths a GPU takes, where its loops allow', () => {
  expect(gpu.software).toBe(false);
  // The radix sort's look-back still waits on published tile statuses (llvmpipe ends any loop after 65,535 iterations).
  expect(gpu.cpuAdapter).toBe(true);
});

describe('TPC-H at SF 0.01 on the GPU paths matches DuckDB', () => {
  test('the tables load parsed on the device, their strings sorted there', async () => {
    const schema = tpchSchema(queriesDir);
    const read = columnsRead([...programs.values()], schema);
    const sorts = byteSortTimes.deviceSorts;
    const load = await db.run(tableLoadProgram(queriesDir, schema.filter((r) => read.has(r.name)).map((r) => [r, read.get(r.name)!] as const)));
    expect(load.stats.uploads.map((u) => u.name).sort()).toEqual([...read.keys()].sort());
    for (const u of load.stats.uploads) expect(u.parsedOnDevice, u.name).toBe(true);
    expect(byteSortTimes.deviceSorts - sorts).toBeGreaterThan(0);
    expect(db.resident.find((r) => r.name === 'lineitem')?.relation.chunks?.length).toBeGreaterThan(1);
  }, 60_000);

  for (const q of TPCH_QUERIES) {
    test(`Q${q}`, async () => {
      const program = programs.get(q)!;
      const run = await db.run(program, { outputs: ['result'] });
      // Made of the resident tables: no table read from its file again (a query's own facts upload).
      expect(run.stats.uploads.filter((u) => tables.has(u.name)), `Q${q}`).toEqual([]);
      projected += run.projectedOnDevice.length;
      const types = program.relations.find((r) => r.name === 'result')!.columns.map((c) => c.type);
      const expected = await data.duck.query(tpchQuerySql(queriesDir, q));
      expect(compareAnswers(run.relations.get('result')!, types, expected.rows), `Q${q}`).toEqual([]);
    }, 60_000);
  }

  test('the queries made their relations of the resident tables on the device', () => {
    expect(projected).toBeGreaterThanOrEqual(TPCH_QUERIES.length);
  });
});

describe('golden cases on the GPU paths', () => {
  const lines = (rows: readonly Row[], types: readonly ScalarType[]): string[] => rows.map((r) => r.map((v, i) => formatValue(v, types[i])).join('\t'));
  // Recursion (loop batches, small loops), strings, top-k and sorts: the paths whose thresholds a CPU adapter lowers.
  for (const name of ['tc-nonlinear', 'lattice-shortest-paths', 'strings-recursive', 'order-limit-top-k-tiles', 'negation-in-recursion']) {
    test(name, async () => {
      const dir = join(casesDir, name);
      const program = compileFile(join(dir, 'program.logic'));
      const facts = join(dir, 'facts');
      const run = await program.run({ ...(existsSync(facts) ? { factsDir: facts } : {}), gpu });
      const types = new Map(program.relations.map((r) => [r.name, r.columns.map((c) => c.type)]));
      const expected = readdirSync(join(dir, 'expected')).filter((f) => f.endsWith('.csv'));
      expect(expected.length).toBeGreaterThan(0);
      for (const f of expected) {
        const rel = f.replace(/\.csv$/, '');
        const want = readFileSync(join(dir, 'expected', f), 'utf8').split('\n').filter((l) => l.length > 0);
        expect(lines(run.relations.get(rel)!, types.get(rel)!), `${name}: ${rel}`).toEqual(want);
      }
    });
  }
});
