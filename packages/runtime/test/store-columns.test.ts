/**
 * A store's columns read straight into device memory (gpu/store-columns.ts) give the rows the host's store loader
 * gives: every type, two string columns, small pieces (so every column is read in many pieces, several in flight),
 * relations past one binding in chunks; random columns of every type and range (edge values, every narrow width)
 * round-trip exactly through an import and a device load; loads of two read plans at once each read through
 * buffers of their own, which are freed once no load holds them; a file changed after import fails the load.
 */
import { cpSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { formatValue, parseDate, wordsOf, type Column, type RelationDecl, type Row, type ScalarType } from '@vixen/queryplan';
import { columnTypes, decodeRow, EncodedFacts, importStore, loadFactsDirInto, type ColumnEncoding } from '@vixen/io';
import { openGpu, type Gpu } from '../src/index.js';
import { deviceRowsRelation } from '../src/gpu/parsed-rows.js';
import { downloadRelations, releaseRelation } from '../src/gpu/relations.js';
import { leaves } from '../src/gpu/chunks.js';
import { loadStoreOnDevice, type StoreReadPlan } from '../src/gpu/store-columns.js';
import { dropIdleReads, keptReadBytes } from '../src/gpu/mapped-reads.js';
import { internals } from '../src/gpu/device.js';

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

/** The rows of relation r of `facts`, loaded on the device, downloaded and decoded; and the chunks it took. */
async function deviceRows(facts: EncodedFacts, d: RelationDecl): Promise<{ rows: Row[]; chunks: number }> {
  const rel = facts.relations.get('r')!;
  expect(rel.count).toBe(0);
  expect(rel.device.length).toBe(1);
  const types = columnTypes(d.columns);
  const device = await deviceRowsRelation(gpu, rel.device[0]!, types);
  try {
    const words = await downloadRelations(gpu, leaves(device));
    const width = rel.width;
    return { rows: words.flatMap((w) => Array.from({ length: w.length / width }, (_, i) => decodeRow(w, i * width, types, facts.strings))), chunks: leaves(device).length };
  } finally {
    releaseRelation(gpu, device);
  }
}

/** Each type's values as integers: the device words' numbers (dates in days; decimals scaled; string k: `s` and k). */
const DOMAINS: Record<Exclude<ScalarType, 'float32'>, [bigint, bigint]> = {
  int32: [-(2n ** 31n), 2n ** 31n - 1n],
  uint32: [0n, 2n ** 32n - 1n],
  date: [BigInt(parseDate('0000-01-01')!), BigInt(parseDate('9999-12-31')!)],
  int64: [-(2n ** 63n), 2n ** 63n - 1n],
  decimal: [-(2n ** 63n), 2n ** 63n - 1n],
  boolean: [0n, 1n],
  string: [0n, 10n ** 9n],
};
/** A whole number from 0 to `most` for a pick `p` from 0 to 1. */
const pick = (p: number, most: bigint): bigint => {
  const k = (BigInt(Math.floor(p * 2 ** 32)) * (most + 1n)) >> 32n;
  return k > most ? most : k;
};
const SPANS = [0n, 1n, 255n, 256n, 65_535n, 65_536n, 2n ** 31n - 1n, 2n ** 32n - 1n, 2n ** 32n];

/**
 * A column: its type and the text of each row's value. The values start at the type's minimum or maximum, at 0, -1 or
 * anywhere, and take `span` (the first row the lowest, the second the highest) in multiples of `step`; float32
 * columns are random f32 values, or all equal.
 */
const column$ = (rows: number) =>
  fc
    .record({
      type: fc.constantFrom<ScalarType>('int32', 'uint32', 'date', 'int64', 'decimal', 'boolean', 'string', 'float32'),
      anchor: fc.oneof(fc.constantFrom('min', 'max', 0n, -1n), fc.bigInt({ min: -(2n ** 63n), max: 2n ** 63n - 1n })),
      span: fc.oneof({ arbitrary: fc.constantFrom(...SPANS), weight: 3 }, { arbitrary: fc.bigInt({ min: 0n, max: 2n ** 33n }), weight: 1 }),
      step: fc.constantFrom(1n, 1n, 3n, 100n, 10_000n),
      picks: fc.array(fc.double({ min: 0, max: 1, noNaN: true }), { minLength: rows, maxLength: rows }),
      floats: fc.array(fc.float({ noNaN: true, noDefaultInfinity: true }), { minLength: 1, maxLength: rows }),
    })
    .map(({ type, anchor, span, step, picks, floats }) => {
      if (type === 'float32') return { type, texts: picks.map((_, i) => formatValue(floats[i % floats.length]!, type)) };
      const [min, max] = DOMAINS[type];
      if (span * step > max - min) [span, step] = [max - min, 1n];
      const total = span * step;
      const at = typeof anchor === 'bigint' ? anchor : anchor === 'min' ? min : max - total;
      const lo = at < min ? min : at > max - total ? max - total : at;
      const values = picks.map((p, i) => lo + (i === 0 ? 0n : i === 1 ? span : pick(p, span)) * step);
      const text = (v: bigint): string =>
        type === 'string' ? `s${v.toString().padStart(10, '0')}` : type === 'boolean' ? String(v === 1n) : type === 'int64' || type === 'decimal' ? formatValue(v, type) : formatValue(Number(v), type);
      return { type, texts: values.map(text) };
    });

/** A table of 1 to 6 random columns and up to 600 rows, and the piece size its device load reads. */
const table$ = fc.oneof(fc.integer({ min: 1, max: 8 }), fc.integer({ min: 300, max: 600 })).chain((rows) =>
  fc.record({ columns: fc.array(column$(rows), { minLength: 1, maxLength: 6 }), pieceBytes: fc.constantFrom(8, 60, 1024, 16 * 1024) }).map(({ columns, pieceBytes }) => ({
    types: columns.map((c) => c.type),
    lines: Array.from({ length: rows }, (_, r) => columns.map((c) => c.texts[r]!).join(',')),
    pieceBytes,
  })),
);

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
    const { rows, chunks } = await deviceRows(facts, d);
    expect(chunks).toBeGreaterThan(1);
    expect(rows).toEqual(host.toRows().get('r'));
  });

  it('random columns of every type round-trip exactly, edge values and every narrow width included', async () => {
    const seen = new Set<string>();
    let run = 0;
    await fc.assert(
      fc.asyncProperty(table$, async ({ types, lines, pieceBytes }) => {
        const dir = join(root, `random-${run++}`);
        mkdirSync(join(dir, 'text'), { recursive: true });
        writeFileSync(join(dir, 'text', 'r.csv'), lines.join('\n') + '\n');
        const d: RelationDecl = { name: 'r', columns: types.map((type, c) => ({ name: `c${c}`, type })), kind: 'edb', output: false };
        await importStore({ relations: [d], factsDir: join(dir, 'text'), out: join(dir, 'store') });
        const manifest = JSON.parse(readFileSync(join(dir, 'store', 'vixen-store.json'), 'utf8')) as { relations: { r: { columns: Array<{ type: ScalarType; encoding: ColumnEncoding }> } } };
        for (const { type, encoding } of manifest.relations.r.columns) seen.add(`${wordsOf(type)}:${encoding.kind === 'frame' ? encoding.width : 'words'}`);
        const text = new EncodedFacts();
        await loadFactsDirInto(join(dir, 'text'), [d], ['r'], [], text);
        const facts = new EncodedFacts();
        await loadFactsDirInto(join(dir, 'store'), [d], ['r'], [], facts, undefined, undefined, false, (read, strings, step) => loadStoreOnDevice(gpu, read, strings, step, { pieceBytes, inFlight: 3 }));
        // An import may write rows in another order (the device's canonical one, where they are near it).
        const key = (r: Row): string => r.map((v) => (Object.is(v, -0) ? '-0' : String(v))).join('|');
        const sorted = (rows: Row[]): string[] => rows.map(key).sort();
        expect(sorted((await deviceRows(facts, d)).rows)).toEqual(sorted(text.toRows().get('r')!));
        // The host's store loader widens the same files to the same rows.
        const host = new EncodedFacts();
        await loadFactsDirInto(join(dir, 'store'), [d], ['r'], [], host);
        expect(sorted(host.toRows().get('r')!)).toEqual(sorted(text.toRows().get('r')!));
        rmSync(dir, { recursive: true });
      }),
      // And one table sure to take every width: two bytes (300 distinct values), three (i * i), four of two words,
      // and a 64-bit product (values 2^32 - 1 apart).
      {
        numRuns: 40,
        seed: 37,
        examples: [
          [
            {
              types: ['int32', 'int64', 'string', 'decimal', 'int32', 'int64', 'int64'],
              lines: Array.from({ length: 300 }, (_, i) => `${-i},${7 * i - 1000},s${i},${i * i * 1000 + i},${i * i},${i * i},${BigInt(i) * (2n ** 32n - 1n) - 2n ** 62n}`),
              pieceBytes: 60,
            },
          ],
        ],
      },
    );
    // Every width a one-word column can take (four bytes are no fewer than its word), and every one of two words.
    expect([...seen].sort()).toEqual(['1:1', '1:2', '1:3', '1:words', '2:1', '2:2', '2:3', '2:4', '2:words']);
  }, 300_000);

  it('loads of two read plans at once both give the rows; the kept read buffers are freed once no load holds them', async () => {
    const host = new EncodedFacts();
    await loadFactsDirInto(join(root, 'store'), [decl], ['r'], [], host);
    const load = async (plan: StoreReadPlan): Promise<EncodedFacts> => {
      const facts = new EncodedFacts();
      await loadFactsDirInto(join(root, 'store'), [decl], ['r'], [], facts, undefined, undefined, false, (read, strings, step) => loadStoreOnDevice(gpu, read, strings, step, plan));
      return facts;
    };
    const g = internals(gpu);
    dropIdleReads(g);
    const both = await Promise.all([load({ pieceBytes: 16 * 1024, inFlight: 3 }), load({ pieceBytes: 8 * 1024, inFlight: 2 })]);
    for (const facts of both) expect((await deviceRows(facts, decl)).rows).toEqual(host.toRows().get('r'));
    // The first load's buffers stay for the next load of its plan (at most its limit of 7 of them), the other's are gone.
    expect(keptReadBytes(g)).toBeGreaterThan(0);
    expect(keptReadBytes(g)).toBeLessThanOrEqual(7 * 16 * 1024);
    // What Database.clear does (and an idle device after a few seconds).
    dropIdleReads(g);
    expect(keptReadBytes(g)).toBe(0);
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
