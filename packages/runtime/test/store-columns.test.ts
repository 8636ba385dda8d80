/**
 * A store's columns read straight into device memory (gpu/store-columns.ts) give the rows the host's store loader
 * gives: every type, two string columns, small pieces (so every column is read in many pieces, several in flight),
 * relations past one binding in chunks; a file changed after import fails the load.
 */
import { cpSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Column, RelationDecl } from '@vixen/queryplan';
import { columnTypes, decodeRow, EncodedFacts, importStore, loadFactsDirInto } from '@vixen/io';
import { openGpu, type Gpu } from '../src/index.js';
import { deviceRowsRelation } from '../src/gpu/parsed-rows.js';
import { downloadRelations, releaseRelation } from '../src/gpu/relations.js';
import { leaves } from '../src/gpu/chunks.js';
import { loadStoreOnDevice } from '../src/gpu/store-columns.js';

const columns: Column[] = [
  { name: 'k', type: 'int32' },
  { name: 'a', type: 'string' },
  { name: 'l', type: 'int64' },
  { name: 'd', type: 'decimal' },
  { name: 'b', type: 'string' },
  { name: 'dt', type: 'date' },
];
const decl: RelationDecl = { name: 'r', columns, kind: 'edb', output: false };
/** Columns 0, 1, 2 and 4 only, as a program reading those loads them. */
const pruned: RelationDecl = { ...decl, columns: [0, 1, 2, 4].map((c) => columns[c]!), pruned: { sourceColumns: columns, loadColumns: [0, 1, 2, 4] } };

let root: string;
let gpu: Gpu;
beforeAll(async () => {
  root = mkdtempSync(join(tmpdir(), 'vixen-store-columns-'));
  mkdirSync(join(root, 'text'));
  const lines = Array.from({ length: 20_000 }, (_, k) => `${k - 10_000},a${(k * 7919) % 1013},${(k - 9000) * 2 ** 35 + k},${k}.${k % 100},${k % 5 === 0 ? '' : `b${k % 17} ü`},${1990 + (k % 30)}-0${1 + (k % 9)}-1${k % 10}`);
  writeFileSync(join(root, 'text', 'r.csv'), lines.join('\n') + '\n');
  await importStore({ relations: [decl], factsDir: join(root, 'text'), out: join(root, 'store') });
  gpu = await openGpu({ maxStorageBufferBindingSize: 128 * 1024 });
});
afterAll(() => {
  gpu?.dispose();
  rmSync(root, { recursive: true, force: true });
});

describe('loadStoreOnDevice', () => {
  it.each([
    ['every column', decl],
    ['the columns a program reads', pruned],
  ])('%s: the rows the host loader gives, read in 16 KiB pieces, in chunks past one binding', async (_, d) => {
    const host = new EncodedFacts();
    await loadFactsDirInto(join(root, 'store'), [d], ['r'], [], host);
    const facts = new EncodedFacts();
    const plan = { pieceBytes: 16 * 1024, inFlight: 3 };
    await loadFactsDirInto(join(root, 'store'), [d], ['r'], [], facts, undefined, undefined, false, (read, strings, step) => loadStoreOnDevice(gpu, read, strings, step, plan));
    const rel = facts.relations.get('r')!;
    expect(rel.count).toBe(0);
    expect(rel.device.length).toBe(1);
    const types = columnTypes(d.columns);
    const device = await deviceRowsRelation(gpu, rel.device[0]!, types);
    try {
      expect(leaves(device).length).toBeGreaterThan(1);
      const words = await downloadRelations(gpu, leaves(device));
      const width = rel.width;
      const rows = words.flatMap((w) => Array.from({ length: w.length / width }, (_, i) => decodeRow(w, i * width, types, facts.strings)));
      expect(rows).toEqual(host.toRows().get('r'));
    } finally {
      releaseRelation(gpu, device);
    }
  });

  it('a column file changed after import (same size) fails the load with its name, keeping no rows', async () => {
    const bad = join(root, 'bad-store');
    cpSync(join(root, 'store'), bad, { recursive: true });
    const file = join(bad, 'r', '2.u32');
    const bytes = readFileSync(file);
    bytes[bytes.length - 5]! ^= 1;
    writeFileSync(file, bytes);
    const facts = new EncodedFacts();
    const plan = { pieceBytes: 16 * 1024, inFlight: 3 };
    const load = loadFactsDirInto(bad, [decl], ['r'], [], facts, undefined, undefined, false, (read, strings, step) => loadStoreOnDevice(gpu, read, strings, step, plan));
    await expect(load).rejects.toThrow(/store file .*bad-store\/r\/2\.u32 is corrupt: its CRC-32 differs from the manifest's/);
    expect(facts.relations.get('r')?.device.length ?? 0).toBe(0);
  });
});
