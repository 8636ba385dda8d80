/**
 * Relations larger than one storage binding (gpu/chunks.ts): a device opened with a small
 * maxStorageBufferBindingSize makes small data several chunks; answers must equal the reference interpreter and an
 * unchunked run.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { compile, Database, openGpu, type Gpu } from '../src/index.js';
import { internals } from '../src/gpu/device.js';
import { chunkedOf, chunkRows, leaves, packChunks } from '../src/gpu/chunks.js';
import { downloadRelation, hashGroupBy, hashJoin, releaseRelation, uploadRelation, type DeviceRelation } from '../src/gpu/index.js';
import { rng, sortedRows } from './gpu-fixtures.js';
import { printKir } from '@vixen/kernel-ir';

/** Bytes per binding: 1023 words, so a chunk holds a few hundred rows of these relations. */
const BINDING = 4096;

/**
 * For the hash operators: their tables are sized by rows (a probe's build side, up to 2^16 groups), so chunks
 * of 2^20 two-word rows (8 MiB) need a binding that holds those tables, yet not the rows.
 */
const MEDIUM = 6 * 2 ** 20;

let gpu: Gpu;
let small: Gpu;
let medium: Gpu;
beforeAll(async () => {
  gpu = await openGpu();
  small = await openGpu({ maxStorageBufferBindingSize: BINDING });
  medium = await openGpu({ maxStorageBufferBindingSize: MEDIUM });
});
afterAll(() => {
  gpu?.dispose();
  small?.dispose();
  medium?.dispose();
});

const schema = `sale(id, store, item, qty, price) -> int32(id), int32(store), int32(item), int32(qty), decimal(price).
item(i, cat) -> int32(i), string(cat).`;

function sales(n: number, seed: number): { sale: unknown[][]; item: unknown[][] } {
  const r = rng(seed);
  const sale = Array.from({ length: n }, (_, id) => [
    id,
    Math.floor(r() * 7),
    Math.floor(r() * 40),
    Math.floor(r() * 50) - 5,
    BigInt(Math.floor(r() * 100000)) * 100n,
  ]);
  const item = Array.from({ length: 40 }, (_, i) => [i, ['a', 'b', 'c'][i % 3]!]);
  return { sale, item };
}

/** Runs `source` on both devices and the interpreter: all three agree, and the small device used chunks. */
async function agree(source: string, facts: Record<string, unknown[][]>, joinStrategy: 'sort-merge' | 'hash' | 'auto' = 'auto'): Promise<void> {
  const p = compile(source, { filename: 'chunks.logic', joinStrategy });
  const oracle = await p.interpret({ facts: facts as never });
  const whole = await p.run({ gpu, facts: facts as never });
  const chunked = await p.run({ gpu: small, facts: facts as never });
  for (const [name, rows] of oracle) {
    expect(whole.relations.get(name), name).toEqual(rows);
    expect(chunked.relations.get(name), name).toEqual(rows);
  }
}

describe('chunked relations', () => {
  it('a fact relation of several bindings loads as chunks', () => {
    // 3000 rows x 6 words (decimal is two) is 18 bindings of 4096 bytes.
    expect(3000 / chunkRows(internals(small), 6)).toBeGreaterThan(10);
  });

  it('filter and project run per chunk', async () => {
    await agree(`${schema}
big(id, s, q) <- sale(id, s, _, q, _), q > 3.
out(s, q, id) <- big(id, s, q), s != 2.`, sales(3000, 1));
  });

  it('aggregates per chunk and combines: count, sum, min, max, decimal avg, grouped and not', async () => {
    await agree(`${schema}
per[s] = n, t, lo, hi, a <- agg<<n = count(), t = sum(p), lo = min(q), hi = max(p), a = avg(p)>> sale(_, s, _, q, p).
all[] = n, t, a <- agg<<n = count(), t = sum(q), a = avg(p)>> sale(_, _, _, q, p).
top[i] = m <- agg<<m = max(q)>> sale(_, _, i, q, _).`, sales(3000, 2));
  });

  it('a hashed aggregate whose groups outgrow the largest group table one binding holds sorts its rows instead', async () => {
    const source = `${schema}
per[i, s] = n <- agg<<n = count()>> sale(_, s, i, _, _).`;
    // 280 (item, store) groups; a 4096-byte binding holds a table for fewer than 100.
    expect(printKir(compile(source).kir)).toMatch(/pipeline sale .* aggregate by/);
    await agree(source, sales(3000, 6));
  });

  it('an int32 average over all rows is hashed, chunk by chunk', async () => {
    await agree(`${schema}
a[] = v <- agg<<v = avg(q)>> sale(_, _, _, q, _).`, sales(3000, 3));
  });

  it('an int32 average reduced by key (rows already in group order) needs its input whole and says so when it does not fit one binding', async () => {
    const p = compile(`${schema}
a[s, id] = v <- agg<<v = avg(q)>> sale(id, s, _, q, _).`, { filename: 'avg.logic' });
    await expect(p.run({ gpu: small, facts: sales(3000, 3) as never })).rejects.toThrow(/aggregate kernel \d+ needs its input of \d+ rows x \d+ words .* in one buffer/);
  });

  for (const joinStrategy of ['hash', 'sort-merge'] as const) {
    it(`${joinStrategy} joins probe a chunked relation; projections that repeat rows across chunks stay duplicate-free`, async () => {
      await agree(`${schema}
cat(id, c) <- sale(id, _, i, _, _), item(i, c).
stores(s, c) <- sale(_, s, i, _, _), item(i, c).
items(i) <- sale(_, _, i, _, _).
either(id) <- cat(id, "a").
either(id) <- cat(id, "c").`, sales(3000, 4), joinStrategy);
    });

    it(`${joinStrategy}: a join of two relations larger than one binding joins chunk with chunk`, async () => {
      await agree(`${schema}
cat(id, c) <- sale(id, _, i, _, _), item(i, c).
twice(id, s) <- cat(id, "a"), sale(id, s, _, _, _).`, sales(3000, 5), joinStrategy);
    });
  }

  it('a Database keeps a chunked base relation resident, and remaps its strings across programs', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'vixen-chunks-'));
    try {
      // 2000 rows x 3 words: several 4096-byte bindings; names shift ids once a program adds "Bo".
      const names = ['Alice', 'Bob', 'Carol', 'Zed'];
      writeFileSync(join(dir, 'person.csv'), Array.from({ length: 2000 }, (_, i) => `${i},${names[i % 4]},${i % 13}`).join('\n') + '\n');
      const decl = 'person(id, name, n) -> int32(id), string(name), int32(n).\n';
      // b and d keep the same columns (id, name): d reuses b's resident relation, whose ids "Bz" shifts.
      const programs = [
        compile(`${decl}b(id) <- person(id, name, _), name > "Bo".`),
        compile(`${decl}d(id, name) <- person(id, name, _), name < "Bz", id < 1500.`),
        compile(`${decl}a(name, n) <- person(_, name, n), n > 3.`),
        compile(`${decl}c[name] = k <- agg<<k = count()>> person(_, name, _).`),
      ];
      const db = new Database(small, dir);
      const resident: string[][] = [];
      for (const p of programs) {
        const run = await db.run(p);
        resident.push(run.stats.residentRelations);
        const oracle = await p.interpret({ factsDir: dir });
        for (const [name, rows] of oracle) expect(run.relations.get(name), name).toEqual(rows);
      }
      expect(resident[1]).toEqual(['person']);
      // b keeps (id, name): all 2000 rows, chunked.
      const person = db.resident.find((r) => r.name === 'person' && r.relation.count === 2000)!.relation;
      expect(person.chunks!.length).toBeGreaterThan(1);
      db.clear();
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  for (const joinStrategy of ['hash', 'sort-merge'] as const) {
    it(`${joinStrategy} joins: a fixpoint whose relation outgrows one binding (merge and difference over chunks)`, async () => {
      // chain(70): path has 2415 rows x 2 words, 5 bindings of 4096 bytes.
      const tc = `edge(x, y) -> int32(x), int32(y).
path(x, y) <- edge(x, y).
path(x, z) <- path(x, y), edge(y, z).`;
      await agree(tc, { edge: Array.from({ length: 69 }, (_, i) => [i, i + 1]) }, joinStrategy);
    }, 120_000);
  }

  /** `rel`'s rows as sorted strings, released after. */
  const rowsOf = async (on: Gpu, rel: DeviceRelation): Promise<string[]> => {
    const words = await downloadRelation(on, rel);
    releaseRelation(on, rel);
    return sortedRows(words, rel.width, rel.count);
  };

  it('hash probe and hash group-by of a chunked relation equal the unchunked ones', async () => {
    const r = rng(7);
    // 2^20 rows x 2 words: two chunks; keys repeat, values signed.
    const rows = new Uint32Array(2 ** 21).map((_, i) => (i % 2 === 0 ? Math.floor(r() * 300) : (Math.floor(r() * 2000) - 1000) >>> 0));
    const build = new Uint32Array(400).map((_, i) => (i % 2 === 0 ? i : i * 3));
    const results: string[][][] = [];
    for (const on of [gpu, medium]) {
      const rel = uploadRelation(on, rows, 2);
      const table = uploadRelation(on, build, 2);
      if (on === medium) expect(rel.chunks!.length).toBeGreaterThan(1);
      const joined = await hashJoin(on, { relation: table, keyWords: [0] }, { relation: rel, keyWords: [0] }, [{ from: 'probe', word: 1 }, { from: 'build', word: 1 }]);
      const grouped = await hashGroupBy(on, { relation: rel, keyWords: [0] }, [{ fn: 'count' }, { fn: 'sum', word: 1, type: 'int32' }, { fn: 'min', word: 1 }, { fn: 'max', word: 1 }]);
      results.push([await rowsOf(on, joined), await rowsOf(on, grouped)]);
      releaseRelation(on, rel);
      releaseRelation(on, table);
    }
    expect(results[0]![0]!.length).toBeGreaterThan(100);
    expect(results[0]![1]!.length).toBe(300);
    expect(results[1]).toEqual(results[0]);
  });
  it('many small pieces of rows are packed into as few chunks as a binding allows, in order', async () => {
    // 9 pieces of 50 three-word rows (a parsed text chunk each) on a device whose binding holds 341 such rows.
    const words = new Uint32Array(9 * 50 * 3).map((_, i) => i);
    const pieces = Array.from({ length: 9 }, (_, k) => uploadRelation(small, words.subarray(k * 150, (k + 1) * 150), 3));
    const rel = chunkedOf(pieces, 3);
    const packed = await packChunks(internals(small), rel);
    expect(leaves(packed).map((l) => l.count)).toEqual([chunkRows(internals(small), 3), 450 - chunkRows(internals(small), 3)]);
    expect(Array.from(await downloadRelation(small, packed))).toEqual(Array.from(words));
    // Already as few chunks as possible: kept as it is.
    expect(await packChunks(internals(small), packed)).toBe(packed);
    releaseRelation(small, rel);
    releaseRelation(small, packed);
  });
});
