/**
 * TPC-H and SSB queries over relations larger than one storage binding (gpu/chunks.ts): a device opened with a
 * 512 KiB maxStorageBufferBindingSize makes SF 0.01's lineitem and lineorder several chunks each; the answers
 * must still match DuckDB, as on an unchunked device (tests/tpch.test.ts, tests/ssb.test.ts).
 */
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { openGpu, type Gpu, type Program } from '@vixen/runtime';
import { compareAnswers, compileSsbQuery, compileTpchQuery, dbgen, factsFor, ssbgen, ssbQuerySql, ssbSchema, tpchQuerySql, tpchSchema } from '@vixen/bench';
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
