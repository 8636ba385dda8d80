/**
 * A `.tbl` benchmark's test data (TPC-H, SSB): generated into a temporary folder before the file's tests, parsed
 * on the host and loaded into DuckDB, with a device to run on; all released after them.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll } from 'vitest';
import { openGpu, type Gpu } from '@vixen/runtime';
import { loadTblFacts, TblDuckDb } from '@vixen/bench';
import type { RelationDecl, Row } from '@vixen/queryplan';

export interface TblData {
  dir: string;
  gpu: Gpu;
  duck: TblDuckDb;
  facts: Record<string, Row[]>;
}

/** Registers the hooks; the fields are set once the file's `beforeAll` has run. */
export function useTblData(name: string, schema: () => RelationDecl[], generate: (dir: string) => void): TblData {
  const data = {} as TblData;
  beforeAll(async () => {
    data.dir = mkdtempSync(join(tmpdir(), `vixen-${name}-`));
    generate(data.dir);
    const relations = schema();
    data.facts = await loadTblFacts(data.dir, relations);
    data.duck = await TblDuckDb.open(data.dir, relations, 1);
    data.gpu = await openGpu();
  }, 120_000);
  afterAll(() => {
    data.duck?.close();
    data.gpu?.dispose();
    if (data.dir) rmSync(data.dir, { recursive: true, force: true });
  });
  return data;
}
