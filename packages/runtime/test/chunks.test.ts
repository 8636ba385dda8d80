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
import { chunkRows } from '../src/gpu/chunks.js';
import { rng } from './gpu-fixtures.js';

/** Bytes per binding: 1023 words, so a chunk holds a few hundred rows of these relations. */
const BINDING = 4096;

let gpu: Gpu;
let small: Gpu;
beforeAll(async () => {
  gpu = await openGpu();
  small = await openGpu({ maxStorageBufferBindingSize: BINDING });
});
afterAll(() => {
  gpu?.dispose();
  small?.dispose();
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

  it('an int32 average needs its input whole and says so when it does not fit one binding', async () => {
    const p = compile(`${schema}
a[] = v <- agg<<v = avg(q)>> sale(_, _, _, q, _).`, { filename: 'avg.logic' });
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

    it(`${joinStrategy}: a join of two relations larger than one binding refuses with a clear error`, async () => {
      const p = compile(`${schema}
cat(id, c) <- sale(id, _, i, _, _), item(i, c).
twice(id) <- cat(id, "a"), sale(id, _, _, _, _).`, { filename: 'big-join.logic', joinStrategy });
      await expect(p.run({ gpu: small, facts: sales(3000, 5) as never })).rejects.toThrow(/(hashJoin|mergeJoin) kernel \d+ needs its input of \d+ rows x \d+ words .* in one buffer/);
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
});
