/**
 * TPC-H and SSB queries over relations larger than one storage binding (gpu/chunks.ts): a device opened with a
 * 512 KiB maxStorageBufferBindingSize makes SF 0.01's lineitem and lineorder several chunks each; the answers
 * must still match DuckDB, as on an unchunked device (tests/tpch.test.ts, tests/ssb.test.ts). The lattice graph
 * programs (recursion through min) run on chunked edges and candidates and must match an unchunked device.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { compile, openGpu, type Gpu, type Program } from '@vixen/runtime';
import { compareAnswers, edgeRows, rmat, symmetric, weightedEdgeRows, compileSsbQuery, compileTpchQuery, dbgen, factsFor, ssbgen, ssbQuerySql, ssbSchema, tpchQuerySql, tpchSchema } from '@vixen/bench';
import { useTblData, type TblData } from './helpers/tbl-data.js';

const BINDING = 512 * 1024;
const examples = join(import.meta.dirname, '..', 'examples');

let small: Gpu;
beforeAll(async () => {
  small = await openGpu({ maxStorageBufferBindingSize: BINDING });
});
afterAll(() => small?.dispose());

async function matchesDuckDb(program: Program, data: TblData, sql: string, fact: string): Promise<void> {
  const facts = factsFor(program, data.facts);
  // The fact table is several bindings even after its columns are pruned.
  const width = program.relations.find((r) => r.name === fact)!.columns.length;
  expect(facts[fact]!.length * width * 4).toBeGreaterThan(2 * BINDING);
  const run = await program.run({ facts, gpu: small, outputs: ['result'] });
  const types = program.relations.find((r) => r.name === 'result')!.columns.map((c) => c.type);
  expect(compareAnswers(run.relations.get('result')!, types, (await data.duck.query(sql)).rows)).toEqual([]);
}

describe('TPC-H at SF 0.01 on chunked relations matches DuckDB', () => {
  const dir = join(examples, 'tpch');
  const data = useTblData('tpch-chunked', () => tpchSchema(dir), (out) => dbgen({ sf: 0.01, out, seed: 10 }));
  // Q1 and Q6 aggregate a chunked lineitem; Q5, Q7, Q8 and Q21 join it with chunk against chunk or past one binding.
  for (const q of [1, 5, 6, 7, 8, 21]) {
    test(`Q${q}`, () => matchesDuckDb(compileTpchQuery(dir, q), data, tpchQuerySql(dir, q), 'lineitem'), 240_000);
  }
});

describe('SSB at SF 0.01 on chunked relations matches DuckDB', () => {
  const dir = join(examples, 'ssb');
  const data = useTblData('ssb-chunked', () => ssbSchema(dir), (out) => ssbgen({ sf: 0.01, out, seed: 22 }));
  for (const q of ['1.1', '1.2', '1.3'] as const) {
    test(`q${q}`, () => matchesDuckDb(compileSsbQuery(dir, q), data, ssbQuerySql(dir, q), 'lineorder'), 240_000);
  }
});

describe('lattice graph programs on chunked relations match an unchunked device', () => {
  let whole: Gpu;
  beforeAll(async () => {
    whole = await openGpu();
  });
  afterAll(() => whole?.dispose());
  const g = rmat({ scale: 13, edgeFactor: 16, seed: 5 });
  const cases = {
    cc: { edge: edgeRows(symmetric(g)) },
    sssp: { edge: weightedEdgeRows(g), source: [[0]] },
  };
  for (const [name, facts] of Object.entries(cases)) {
    test(`${name}.logic on R-MAT scale 13`, async () => {
      const filename = join(examples, 'graphs', `${name}.logic`);
      const program = compile(readFileSync(filename, 'utf8'), { filename });
      // The edges are several bindings.
      expect(facts.edge.length * facts.edge[0]!.length * 4).toBeGreaterThan(2 * BINDING);
      const chunked = await program.run({ facts, gpu: small });
      const unchunked = await program.run({ facts, gpu: whole });
      expect(chunked.relations).toEqual(unchunked.relations);
      expect([...unchunked.relations.values()].every((rows) => rows.length > 100)).toBe(true);
    }, 240_000);
  }
});
