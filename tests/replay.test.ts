/**
 * Runs on a Database that replay the device work recorded from the program's last run (runtime replay.ts): the answers
 * of replayed runs against DuckDB (TPC-H at SF 0.01) and the reference interpreter (golden cases), runs that must not
 * replay (changed facts, replay: false), a replay whose guess the device finds too small, which runs as usual, and
 * the bench's report of replayed runs (--no-replay).
 */
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, test } from 'vitest';
import { compile, compileFile, Database, openGpu, type Gpu, type Program } from '@vixen/runtime';
import { compareAnswers, compileTpchQuery, dbgen, TPCH_QUERIES, tpchQuerySql, tpchSchema } from '@vixen/bench';
import { formatValue, type Row, type ScalarType } from '@vixen/queryplan';
import { runCli } from '@vixen/cli';
import { useTblData } from './helpers/tbl-data.js';

const queriesDir = join(import.meta.dirname, '..', 'examples', 'tpch');
const data = useTblData('tpch-replay', () => tpchSchema(queriesDir), (dir) => {
  dbgen({ sf: 0.01, out: dir, seed: 10 });
});

const lines = (rows: readonly Row[], types: readonly ScalarType[]): string[] => rows.map((r) => r.map((v, i) => formatValue(v, types[i])).join('\t'));

/** Most runs a program takes before one is replayed: the first loads, and a run is recorded once it plans as the one before. */
const MOST_RUNS = 8;

/**
 * Runs `run` until it says it replayed (at most MOST_RUNS times), then once more; the answers, each tagged
 * `planned` or `replayed`.
 */
async function untilReplayed(run: () => Promise<{ replayed: boolean; answer: string }>): Promise<string[]> {
  const seen: string[] = [];
  for (let i = 0; i < MOST_RUNS && !seen.at(-1)?.startsWith('replayed'); i++) seen.push(tag(await run()));
  seen.push(tag(await run()));
  return seen;
}

const tag = (r: { replayed: boolean; answer: string }): string => `${r.replayed ? 'replayed' : 'planned'} ${r.answer}`;

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

test.each([
  ['', undefined],
  [' (bindings of 2 MiB: relations in chunks, as at SF 10 with 2 GiB ones)', 2 * 2 ** 20],
])('every TPC-H query at SF 0.01 is replayed within a few runs, in the recorded run\'s submissions, and each run matches DuckDB%s', async (_, binding) => {
  const gpu = binding === undefined ? data.gpu : await openGpu({ maxStorageBufferBindingSize: binding });
  const db = new Database(gpu, data.dir);
  const runs: string[] = [];
  try {
    for (const q of TPCH_QUERIES) {
      const program = compileTpchQuery(queriesDir, q);
      const expected = (await data.duck.query(tpchQuerySql(queriesDir, q))).rows;
      const types = program.relations.find((r) => r.name === 'result')!.columns.map((c) => c.type);
      /** Submissions of the planned runs, then of the replayed ones. */
      const submissions = { planned: [] as number[], replayed: [] as number[] };
      /** Every relation's rows (ExecuteStats.relationRows), counted again by a replay's readback: by run kind. */
      const relationRows = { planned: [] as string[], replayed: [] as string[] };
      const run = async (replay = true): Promise<{ replayed: boolean; answer: string }> => {
        const r = await db.run(program, { outputs: ['result'], replay });
        const diffs = compareAnswers(r.relations.get('result')!, types, expected);
        submissions[r.stats.replayed ? 'replayed' : 'planned'].push(r.stats.submissions);
        relationRows[r.stats.replayed ? 'replayed' : 'planned'].push(JSON.stringify(r.stats.relationRows));
        return { replayed: r.stats.replayed, answer: diffs.length === 0 ? 'matches' : diffs.join('; ') };
      };
      const seen = await untilReplayed(run);
      // replay: false plans again, and the record stays for the next run.
      const recorded = submissions.planned.at(-1);
      seen.push(tag(await run(false)), tag(await run()));
      expect(seen.filter((t) => !t.endsWith(' matches')), `Q${q}`).toEqual([]);
      // A replay submits where the recorded run did (so the device starts on the first kernels early); a recorded
      // submission that held no traced command is no piece of its own (Trace.encoder), so it may submit fewer.
      for (const n of submissions.replayed) {
        expect(n, `Q${q} submissions`).toBeGreaterThanOrEqual(1);
        expect(n, `Q${q} submissions`).toBeLessThanOrEqual(recorded!);
      }
      expect(relationRows.replayed, `Q${q} relation rows`).toEqual(relationRows.replayed.map(() => relationRows.planned.at(-1)));
      runs.push(`Q${q}: ${seen.slice(-4).join(', ')}`);
    }
  } finally {
    db.clear();
    if (gpu !== data.gpu) gpu.dispose();
  }
  const m = 'matches';
  expect(runs).toEqual(TPCH_QUERIES.map((q) => `Q${q}: replayed ${m}, replayed ${m}, planned ${m}, replayed ${m}`));
}, 600_000);

test('golden cases on a Database: runs replayed or not give the reference answers', async () => {
  const casesDir = join(import.meta.dirname, 'cases');
  let replayed = 0;
  await withDir({}, async (empty) => {
    for (const name of readdirSync(casesDir).sort()) {
      const dir = join(casesDir, name);
      const program = compileFile(join(dir, 'program.logic'));
      const factsDir = existsSync(join(dir, 'facts')) ? join(dir, 'facts') : empty;
      // A Database reads every base relation without inline facts from its folder: cases that give one none are left out.
      if (program.relationsWithoutFacts({ facts: {} }).length > 0 && factsDir === empty) continue;
      const reference = await program.interpret(factsDir === empty ? {} : { factsDir });
      const types = new Map(program.relations.map((r) => [r.name, r.columns.map((c) => c.type)]));
      const db = new Database(data.gpu, factsDir);
      try {
        for (let i = 0; i < 4; i++) {
          const run = await db.run(program);
          if (run.stats.replayed) replayed++;
          for (const [rel, rows] of reference) expect(lines(run.relations.get(rel)!, types.get(rel)!), `${name} run ${i + 1}: ${rel}`).toEqual(lines(rows, types.get(rel)!));
        }
      } finally {
        db.clear();
      }
    }
  });
  // Cases whose runs sync with the host more than once (fixpoint loops) plan every run; the others replay.
  expect(replayed).toBeGreaterThan(40);
}, 600_000);

describe('runs that must not replay', () => {
  // p has inline facts and a file: both are loaded for every run (they are not kept resident), so the file's rows are
  // compared with those the record was made on.
  const source = `
    p(x) -> int32(x).
    p(1). p(2).
    e(x, y) -> int32(x), int32(y).
    q(x, y) <- p(x), e(x, y).`;
  const query = (db: Database, program: Program) => async () => {
    const run = await db.run(program, { outputs: ['q'] });
    return { replayed: run.stats.replayed, answer: JSON.stringify(run.relations.get('q')) };
  };

  test('a run whose run-only facts changed plans its kernels, and sees the new rows', async () => {
    await withDir({ 'p.csv': '3\n', 'e.csv': '1,10\n2,20\n3,30\n4,40\n' }, async (dir) => {
      const db = new Database(data.gpu, dir, { hostCache: false });
      const q = query(db, compile(source));
      try {
        const before = await untilReplayed(q);
        writeFileSync(join(dir, 'p.csv'), '4\n');
        const after = [tag(await q()), ...(await untilReplayed(q))];
        expect([...before.slice(-2), ...after.slice(0, 1), ...after.slice(-2)]).toEqual([
          'replayed [[1,10],[2,20],[3,30]]',
          'replayed [[1,10],[2,20],[3,30]]',
          'planned [[1,10],[2,20],[4,40]]',
          'replayed [[1,10],[2,20],[4,40]]',
          'replayed [[1,10],[2,20],[4,40]]',
        ]);
      } finally {
        db.clear();
      }
    });
  });

  test('a run on relations loaded again after Database.clear plans its kernels, and sees the new rows', async () => {
    await withDir({ 'p.csv': '', 'e.csv': '1,10\n2,20\n' }, async (dir) => {
      const db = new Database(data.gpu, dir, { hostCache: false });
      const q = query(db, compile(source));
      try {
        const before = await untilReplayed(q);
        db.clear();
        writeFileSync(join(dir, 'e.csv'), '1,11\n2,22\n');
        const after = [tag(await q()), ...(await untilReplayed(q))];
        expect([before.at(-1), after[0], after.at(-1)]).toEqual(['replayed [[1,10],[2,20]]', 'planned [[1,11],[2,22]]', 'replayed [[1,11],[2,22]]']);
      } finally {
        db.clear();
      }
    });
  });
});

test('a replay whose group room the device finds too small is dropped, and the run plans its kernels', async () => {
  // The aggregate's output is sized by the groups of the run before (a guess; a first run with no total yet takes a
  // group per row). Once a run replays, the resident rows are rewritten in place (same relation, same buffer, as the
  // record sees it) with a group per row: the replay's readback finds its guess failed, and the program runs as usual
  // on the new rows.
  const rows = 64;
  const sale = Array.from({ length: rows }, (_, i) => `${1 + (i % 2)},${i + 1}`).join('\n');
  await withDir({ 'sale.csv': sale + '\n' }, async (dir) => {
    const program = compile(`
      sale(c, v) -> int32(c), int32(v).
      total(c, t) <- agg<<t = sum(v)>> sale(c, v), v > 0.`);
    const db = new Database(data.gpu, dir);
    let missed: string | undefined;
    const run = async () => {
      const r = await db.run(program, { outputs: ['total'] });
      missed = r.stats.replayMissed;
      const totals = [...r.relations.get('total')!].map((row) => row.join(','));
      return { replayed: r.stats.replayed, answer: totals.length === 2 ? `2 groups` : totals.join(' ') };
    };
    try {
      const before = await untilReplayed(run);
      const resident = db.resident.find((r) => r.name === 'sale')!.relation;
      expect([resident.count, resident.width]).toEqual([rows, 2]);
      // Canonical rows (sorted, distinct), one group each: (c, v) = (i, 1), int32 words their bits.
      const words = new Uint32Array(2 * rows);
      for (let i = 0; i < rows; i++) [words[2 * i], words[2 * i + 1]] = [i + 1, 1];
      (data.gpu as Gpu).device.queue.writeBuffer(resident.buffer!, 0, words);
      expect([before.at(-1), tag(await run())]).toEqual(['replayed 2 groups', `planned ${Array.from({ length: rows }, (_, i) => `${i + 1},1`).join(' ')}`]);
      // The run says why it planned (the bench sums these over a query's timed runs).
      expect(missed).toBe('a guess it rests on failed');
    } finally {
      db.clear();
    }
  });
});

test('vixen bench tpch reports replayed runs, and --no-replay plans every run', async () => {
  const replayed: Array<boolean | undefined> = [];
  for (const flags of [[], ['--no-replay']]) {
    await withDir({}, async (dir) => {
      const json = join(dir, 'bench.json');
      let out = '';
      let err = '';
      const code = await runCli(
        ['node', 'vixen', 'bench', 'tpch', '--sf', '0.002', '--queries', '6', '--runs', '4', '--warmup', '2', '--json', json, ...flags],
        (x) => (out += x),
        (x) => (err += x),
      );
      expect(code, err).toBe(0);
      const report = JSON.parse(readFileSync(json, 'utf8')) as { queries: Array<{ status: string; replayed: boolean }> };
      expect(report.queries.map((q) => q.status)).toEqual(['ok']);
      replayed.push(report.queries[0]!.replayed);
      expect(out).toMatch(new RegExp(`^Q6 +ok .* ${report.queries[0]!.replayed ? 'yes' : 'no'} +\\d+$`, 'm'));
    });
  }
  expect(replayed).toEqual([true, false]);
}, 120_000);

test('a run that needs device memory releases the records, and their programs plan their next runs', async () => {
  const db = new Database(data.gpu, data.dir);
  const q6 = compileTpchQuery(queriesDir, 6);
  const expected = (await data.duck.query(tpchQuerySql(queriesDir, 6))).rows;
  const types = q6.relations.find((r) => r.name === 'result')!.columns.map((c) => c.type);
  let missed: string | undefined;
  const run = async (program: Program, budget?: string) => {
    const r = await db.run(program, { outputs: ['result'], ...(budget ? { maxDeviceMemory: budget } : {}) });
    missed = r.stats.replayMissed;
    return { replayed: r.stats.replayed, answer: compareAnswers(r.relations.get('result')!, types, expected).join('; ') || 'matches' };
  };
  try {
    expect((await untilReplayed(() => run(q6))).at(-1)).toBe('replayed matches');
    // Q1 under a budget far below lineitem's columns: its kernels make room, and the records go first.
    const q1 = await db.run(compileTpchQuery(queriesDir, 1), { outputs: ['result'], maxDeviceMemory: '256KiB' });
    expect(q1.stats.spills + q1.stats.partitionedLaunches).toBeGreaterThan(0);
    const next = tag(await run(q6));
    expect([next, missed]).toEqual(['planned matches', 'its record was released for device memory']);
    expect((await untilReplayed(() => run(q6))).slice(-1)).toEqual(['replayed matches']);
    expect(missed).toBeUndefined();
  } finally {
    db.clear();
  }
}, 300_000);
