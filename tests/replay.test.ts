/**
 * Runs on a Database that replay the device work recorded from the program's last run (runtime replay.ts): the answers
 * of replayed runs against DuckDB (TPC-H at SF 0.01) and the reference interpreter (golden cases), runs that must not
 * replay (changed facts, replay: false), and a replay whose guess the device finds too small, which runs as usual.
 */
import { existsSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, test } from 'vitest';
import { compile, compileFile, Database, type Gpu } from '@vixen/runtime';
import { compareAnswers, compileTpchQuery, dbgen, TPCH_QUERIES, tpchQuerySql, tpchSchema } from '@vixen/bench';
import { formatValue, type Row, type ScalarType } from '@vixen/queryplan';
import { useTblData } from './helpers/tbl-data.js';

const queriesDir = join(import.meta.dirname, '..', 'examples', 'tpch');
const data = useTblData('tpch-replay', () => tpchSchema(queriesDir), (dir) => {
  dbgen({ sf: 0.01, out: dir, seed: 10 });
});

const lines = (rows: readonly Row[], types: readonly ScalarType[]): string[] => rows.map((r) => r.map((v, i) => formatValue(v, types[i])).join('\t'));

/** A folder with `files` (name -> text), removed after `f`. */
async function withDir<T>(files: Record<string, string>, f: (dir: string) => Promise<T>): Promise<T> {
  const dir = mkdtempSync(join(tmpdir(), 'vixen-replay-'));
  try {
    for (const [name, text] of Object.entries(files)) writeFileSync(join(dir, name), text);
    return await f(dir);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

test('every TPC-H query at SF 0.01 replays its fourth and fifth runs in one submission, and each run matches DuckDB', async () => {
  const db = new Database(data.gpu, data.dir);
  const runs: string[] = [];
  try {
    for (const q of TPCH_QUERIES) {
      const program = compileTpchQuery(queriesDir, q);
      const expected = (await data.duck.query(tpchQuerySql(queriesDir, q))).rows;
      const types = program.relations.find((r) => r.name === 'result')!.columns.map((c) => c.type);
      // The first run loads the tables; the second guesses from the first's totals for the first time; the third is
      // recorded (the second where nothing guessed); the fourth and fifth replay it; the last plans again.
      const options = [{}, {}, {}, {}, {}, { replay: false }];
      const seen: string[] = [];
      for (const o of options) {
        const run = await db.run(program, { outputs: ['result'], ...o });
        expect(compareAnswers(run.relations.get('result')!, types, expected), `Q${q} run ${seen.length + 1}`).toEqual([]);
        seen.push(run.stats.replayed ? `replayed in ${run.stats.submissions}` : 'planned');
      }
      runs.push(`Q${q}: ${[seen[0], ...seen.slice(3)].join(', ')}`);
    }
  } finally {
    db.clear();
  }
  expect(runs).toEqual(TPCH_QUERIES.map((q) => `Q${q}: planned, replayed in 1, replayed in 1, planned`));
}, 600_000);

test('golden cases on a Database: runs replayed or not give the reference answers', async () => {
  const casesDir = join(import.meta.dirname, 'cases');
  let replayed = 0;
  await withDir({}, async (empty) => {
    for (const name of readdirSync(casesDir).sort()) {
      const dir = join(casesDir, name);
      const program = compileFile(join(dir, 'program.logic'));
      const factsDir = existsSync(join(dir, 'facts')) ? join(dir, 'facts') : empty;
      // A Database reads every base relation from its folder: a case whose program gives some no facts runs without one.
      if (program.relationsWithoutFacts({ facts: {} }).length > 0 && factsDir === empty) continue;
      const reference = await program.interpret(factsDir === empty ? {} : { factsDir });
      const types = new Map(program.relations.map((r) => [r.name, r.columns.map((c) => c.type)]));
      const db = new Database(data.gpu, factsDir);
      try {
        for (let i = 0; i < 3; i++) {
          const run = await db.run(program);
          if (run.stats.replayed) replayed++;
          for (const [rel, rows] of reference) expect(lines(run.relations.get(rel)!, types.get(rel)!), `${name} run ${i + 1}: ${rel}`).toEqual(lines(rows, types.get(rel)!));
        }
      } finally {
        db.clear();
      }
    }
  });
  expect(replayed).toBeGreaterThan(20);
}, 600_000);

describe('runs that must not replay', () => {
  // p has inline facts and a file: both are loaded for every run (they are not kept resident), so the file's rows are
  // compared with those the record was made on.
  const source = `
    p(x) -> int32(x).
    p(1). p(2).
    e(x, y) -> int32(x), int32(y).
    q(x, y) <- p(x), e(x, y).`;

  test('a run whose run-only facts changed plans its kernels, and sees the new rows', async () => {
    await withDir({ 'p.csv': '3\n', 'e.csv': '1,10\n2,20\n3,30\n4,40\n' }, async (dir) => {
      const program = compile(source);
      const db = new Database(data.gpu, dir, { hostCache: false });
      const q = async (): Promise<string> => {
        const run = await db.run(program, { outputs: ['q'] });
        return `${run.stats.replayed ? 'replayed' : 'planned'} ${JSON.stringify(run.relations.get('q'))}`;
      };
      try {
        // The join's output is guessed from the run before: the third run is recorded, the fourth replays.
        const before = [await q(), await q(), await q(), await q()];
        writeFileSync(join(dir, 'p.csv'), '4\n');
        const after = [await q(), await q()];
        expect([...before, ...after]).toEqual([
          'planned [[1,10],[2,20],[3,30]]',
          'planned [[1,10],[2,20],[3,30]]',
          'planned [[1,10],[2,20],[3,30]]',
          'replayed [[1,10],[2,20],[3,30]]',
          'planned [[1,10],[2,20],[4,40]]',
          'replayed [[1,10],[2,20],[4,40]]',
        ]);
      } finally {
        db.clear();
      }
    });
  });

  test('a run on relations loaded again after Database.clear plans its kernels, and sees the new rows', async () => {
    await withDir({ 'p.csv': '', 'e.csv': '1,10\n2,20\n' }, async (dir) => {
      const program = compile(source);
      const db = new Database(data.gpu, dir, { hostCache: false });
      try {
        const q = async (): Promise<string> => {
          const run = await db.run(program, { outputs: ['q'] });
          return `${run.stats.replayed ? 'replayed' : 'planned'} ${JSON.stringify(run.relations.get('q'))}`;
        };
        const before = [await q(), await q(), await q(), await q()];
        db.clear();
        writeFileSync(join(dir, 'e.csv'), '1,11\n2,22\n');
        // Loaded again; the program guessed before, so its next run is recorded.
        const after = [await q(), await q(), await q()];
        expect([before[3], ...after]).toEqual(['replayed [[1,10],[2,20]]', 'planned [[1,11],[2,22]]', 'planned [[1,11],[2,22]]', 'replayed [[1,11],[2,22]]']);
      } finally {
        db.clear();
      }
    });
  });
});

test('a replay whose group table guess the device finds too small is dropped, and the run plans its kernels', async () => {
  // The aggregate's output is sized by the groups of the run before (a guess; the first run that may guess has no
  // total yet and takes a group per row, so the run after it is recorded). The resident rows are then rewritten in
  // place (same relation, same buffer, as the record sees it) with a group per row: the replay's readback finds its
  // guess failed, and the program runs as usual on the new rows.
  const rows = 64;
  const sale = Array.from({ length: rows }, (_, i) => `${1 + (i % 2)},${i + 1}`).join('\n');
  await withDir({ 'sale.csv': sale + '\n' }, async (dir) => {
    const program = compile(`
      sale(c, v) -> int32(c), int32(v).
      total(c, t) <- agg<<t = sum(v)>> sale(c, v), v > 0.`);
    const db = new Database(data.gpu, dir);
    const run = async (): Promise<string> => {
      const r = await db.run(program, { outputs: ['total'] });
      return `${r.stats.replayed ? 'replayed' : 'planned'} ${r.relations.get('total')!.length} groups`;
    };
    try {
      const before = [await run(), await run(), await run(), await run()];
      const resident = db.resident.find((r) => r.name === 'sale')!.relation;
      expect([resident.count, resident.width]).toEqual([rows, 2]);
      // Canonical rows (sorted, distinct), one group each: (c, v) = (i, 1), int32 words their bits.
      const words = new Uint32Array(2 * rows);
      for (let i = 0; i < rows; i++) [words[2 * i], words[2 * i + 1]] = [i + 1, 1];
      (data.gpu as Gpu).device.queue.writeBuffer(resident.buffer!, 0, words);
      const after = await db.run(program, { outputs: ['total'] });
      const totals = [...after.relations.get('total')!].map((r) => r.join(','));
      expect([...before, `${after.stats.replayed ? 'replayed' : 'planned'} ${totals.length} groups`]).toEqual([
        'planned 2 groups',
        'planned 2 groups',
        'planned 2 groups',
        'replayed 2 groups',
        `planned ${rows} groups`,
      ]);
      expect(totals).toEqual(Array.from({ length: rows }, (_, i) => `${i + 1},1`));
    } finally {
      db.clear();
    }
  });
});
