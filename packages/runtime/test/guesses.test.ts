/**
 * Guesses (gpu/relations.ts Guess): on resident relations, an aggregating pipeline that ran before sizes its group
 * table for the groups it found then and reads nothing back; the run's next sync checks the guess. A guess that
 * fails (more groups than last time) runs the program again without guesses, with the same answers.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { compile, Database, openGpu, type Gpu } from '../src/index.js';

const program = compile(`sale(id, c, x) -> int32(id), int32(c), int32(x).
total[c] = s <- agg<<s = sum(x)>> sale(id, c, x).`);

let gpu: Gpu;
const dirs: string[] = [];
beforeAll(async () => {
  gpu = await openGpu();
});
afterAll(() => {
  gpu?.dispose();
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

/** A facts folder of `rows` sales over `groups` customers. */
function sales(rows: number, groups: number): { dir: string; facts: number[][] } {
  const dir = mkdtempSync(join(tmpdir(), 'vixen-guess-'));
  dirs.push(dir);
  const facts = Array.from({ length: rows }, (_, i) => [i, (i * 7) % groups, (i % 13) - 4]);
  writeFileSync(join(dir, 'sale.csv'), facts.map((r) => r.join(',')).join('\n') + '\n');
  return { dir, facts };
}

it('runs an aggregation again on a guess, and once more without guesses when the groups outgrew it', async () => {
  const small = sales(500, 40);
  const large = sales(3000, 701);
  const oracle = async (facts: number[][]) => (await program.interpret({ facts: { sale: facts } })).get('total');
  const few = new Database(gpu, small.dir);
  const many = new Database(gpu, large.dir);
  // Each first run loads its facts: no guesses (a run that loads facts cannot start again).
  const loadLarge = await many.run(program);
  expect(loadLarge.relations.get('total')).toEqual(await oracle(large.facts));
  const loadSmall = await few.run(program);
  // On resident relations, with 40 groups seen: the table is sized for them and nothing is read back before the end.
  const guessed = await few.run(program);
  expect(guessed.relations.get('total')).toEqual(await oracle(small.facts));
  expect(guessed.relations.get('total')).toHaveLength(40);
  expect(guessed.stats.hostSyncs).toBe(1);
  expect(guessed.stats.startedAgain).toBe(false);
  expect(loadSmall.stats.hostSyncs).toBeGreaterThan(guessed.stats.hostSyncs);
  // 701 groups on a table sized for 40: the guess fails at the end, and the run without guesses answers.
  const missed = await many.run(program);
  expect(missed.relations.get('total')).toEqual(await oracle(large.facts));
  expect(missed.relations.get('total')).toHaveLength(701);
  expect(missed.stats.startedAgain).toBe(true);
  // It learnt the 701 groups: the next run's guess holds.
  const held = await many.run(program);
  expect(held.relations.get('total')).toEqual(missed.relations.get('total'));
  expect(held.stats.hostSyncs).toBe(1);
  expect(held.stats.startedAgain).toBe(false);
  expect(missed.stats.hostSyncs).toBeGreaterThan(held.stats.hostSyncs);
  // Two runs at once: a kernel guesses only while its run is the only one, so each checks its own guesses.
  const [a, b] = await Promise.all([many.run(program), few.run(program)]);
  expect(a.relations.get('total')).toEqual(missed.relations.get('total'));
  expect(b.relations.get('total')).toEqual(guessed.relations.get('total'));
});

/** A facts folder with `rows` rows each of `e(a, k)` and `f(b, k)` over `keys` keys; the rows. */
function keyed(rows: number, keys: number): { dir: string; facts: Record<string, number[][]> } {
  const dir = mkdtempSync(join(tmpdir(), 'vixen-guess-'));
  dirs.push(dir);
  const facts = { e: Array.from({ length: rows }, (_, i) => [i, i % keys]), f: Array.from({ length: rows }, (_, i) => [i + 1, i % keys]) };
  for (const [rel, rs] of Object.entries(facts)) writeFileSync(join(dir, `${rel}.csv`), rs.map((r) => r.join(',')).join('\n') + '\n');
  return { dir, facts };
}

it.each(['hash', 'sort-merge'] as const)('a %s join guesses its output rows, starts again when they outgrow the guess, then guesses right', async (joinStrategy) => {
  const joined = compile(
    `e(a, k) -> int32(a), int32(k).
f(b, k) -> int32(b), int32(k).
pair(a, b) <- e(a, k), f(b, k).`,
    { joinStrategy },
  );
  // One row a key on each side (300 pairs), and every key 6 times on each side (36 pairs a key, 1,800 in all).
  const single = keyed(300, 300);
  const fanned = keyed(300, 50);
  const oracle = async (facts: Record<string, number[][]>) => (await joined.interpret({ facts })).get('pair');
  const few = new Database(gpu, single.dir);
  const many = new Database(gpu, fanned.dir);
  expect((await many.run(joined)).relations.get('pair')).toEqual(await oracle(fanned.facts));
  expect((await few.run(joined)).relations.get('pair')).toHaveLength(300);
  // On resident relations, room for the 300 pairs seen last: no readback before the end.
  const guessed = await few.run(joined);
  expect(guessed.relations.get('pair')).toEqual(await oracle(single.facts));
  expect(guessed.stats.hostSyncs).toBe(1);
  expect(guessed.stats.startedAgain).toBe(false);
  // 1,800 pairs in room for 300: the guess fails at the end, and the run without guesses answers.
  const missed = await many.run(joined);
  expect(missed.relations.get('pair')).toEqual(await oracle(fanned.facts));
  expect(missed.relations.get('pair')).toHaveLength(1800);
  expect(missed.stats.startedAgain).toBe(true);
  // It learnt the 1,800 pairs: the next run's guess holds.
  const held = await many.run(joined);
  expect(held.relations.get('pair')).toEqual(missed.relations.get('pair'));
  expect(held.stats.hostSyncs).toBe(1);
  expect(held.stats.startedAgain).toBe(false);
});

it('a sorted aggregate keeps its group count on the device, and its decimal overflow still stops the run', async () => {
  // Grouped by the leading column of a canonical relation: the sorted aggregate kernel (as TPC-H Q18's).
  const summed = compile(`sale(o, ln, q) -> int32(o), int32(ln), decimal(q).
line(o, ln, q) <- sale(o, ln, q).
total[o] = s <- agg<<s = sum(q)>> line(o, ln, q).`);
  expect(summed.kir.kernels.some((k) => k.kind === 'aggregate')).toBe(true);
  const dir = mkdtempSync(join(tmpdir(), 'vixen-guess-'));
  dirs.push(dir);
  const facts = Array.from({ length: 400 }, (_, i) => [i % 37, i, `${(i % 11) - 3}.25`]);
  writeFileSync(join(dir, 'sale.csv'), facts.map((r) => r.join(',')).join('\n') + '\n');
  const db = new Database(gpu, dir);
  const expected = (await summed.interpret({ factsDir: dir })).get('total');
  expect((await db.run(summed)).relations.get('total')).toEqual(expected);
  const resident = await db.run(summed);
  expect(resident.relations.get('total')).toEqual(expected);
  expect(resident.relations.get('total')).toHaveLength(37);
  expect(resident.stats.hostSyncs).toBe(1);
  // Two rows of one group whose sum leaves the 64-bit decimal range: the flag is a guess that fails, and the run
  // without guesses reports the overflow as the first run did.
  const big = mkdtempSync(join(tmpdir(), 'vixen-guess-'));
  dirs.push(big);
  writeFileSync(join(big, 'sale.csv'), '1,1,900000000000000\n1,2,900000000000000\n2,1,1\n');
  const over = new Database(gpu, big);
  await expect(over.run(summed)).rejects.toThrow(/decimal overflow/);
  await expect(over.run(summed)).rejects.toThrow(/decimal overflow/);
});

it('a sorted aggregate sizes its output for the groups it had last time, and starts again when they outgrow it', async () => {
  const summed = compile(`sale(o, ln, q) -> int32(o), int32(ln), decimal(q).
line(o, ln, q) <- sale(o, ln, q).
total[o] = s <- agg<<s = sum(q)>> line(o, ln, q).`);
  expect(summed.kir.kernels.some((k) => k.kind === 'aggregate')).toBe(true);
  // 400 rows in 37 groups, and 3,000 rows in 1,500 groups.
  const folder = (rows: number, groups: number): string => {
    const dir = mkdtempSync(join(tmpdir(), 'vixen-guess-'));
    dirs.push(dir);
    writeFileSync(join(dir, 'sale.csv'), Array.from({ length: rows }, (_, i) => `${i % groups},${i},${(i % 11) - 3}.25`).join('\n') + '\n');
    return dir;
  };
  const [fewDir, manyDir] = [folder(400, 37), folder(3000, 1500)];
  const [fewWant, manyWant] = await Promise.all([fewDir, manyDir].map(async (factsDir) => (await summed.interpret({ factsDir })).get('total')));
  const few = new Database(gpu, fewDir);
  const many = new Database(gpu, manyDir);
  expect((await many.run(summed)).relations.get('total')).toEqual(manyWant);
  expect((await few.run(summed)).relations.get('total')).toEqual(fewWant);
  // Room for the 37 groups seen last (and more), not for 400: one sync, for the readback.
  const guessed = await few.run(summed);
  expect(guessed.relations.get('total')).toEqual(fewWant);
  expect(guessed.stats.hostSyncs).toBe(1);
  expect(guessed.stats.startedAgain).toBe(false);
  // 1,500 groups in room for 37 in proportion to the rows (278 and more): the guess fails, the run without answers.
  const missed = await many.run(summed);
  expect(missed.relations.get('total')).toEqual(manyWant);
  expect(missed.relations.get('total')).toHaveLength(1500);
  expect(missed.stats.startedAgain).toBe(true);
  const held = await many.run(summed);
  expect(held.relations.get('total')).toEqual(manyWant);
  expect(held.stats.hostSyncs).toBe(1);
  expect(held.stats.startedAgain).toBe(false);
});

it('a run with inline facts keeps their host rows, so it guesses too and can start again', async () => {
  const picked = compile(`e(a, k) -> int32(a), int32(k).
f(b, k) -> int32(b), int32(k).
pick(k) -> int32(k).
${Array.from({ length: 50 }, (_, k) => `pick(${k}).`).join(' ')}
pair(a, b) <- pick(k), e(a, k), f(b, k).`);
  const single = keyed(300, 300);
  const fanned = keyed(300, 50);
  const oracle = async (facts: Record<string, number[][]>) => (await picked.interpret({ facts })).get('pair');
  const few = new Database(gpu, single.dir);
  const many = new Database(gpu, fanned.dir);
  await many.run(picked);
  await few.run(picked);
  // The inline facts are loaded for each run: a run that loads them may guess now.
  const guessed = await few.run(picked);
  expect(guessed.relations.get('pair')).toEqual(await oracle(single.facts));
  expect(guessed.stats.hostSyncs).toBe(1);
  // 1,800 pairs in room for the 300 rows of a side: it starts again, loading the inline facts again.
  const missed = await many.run(picked);
  expect(missed.stats.startedAgain).toBe(true);
  expect(missed.relations.get('pair')).toEqual(await oracle(fanned.facts));
  expect(missed.relations.get('pair')).toHaveLength(1800);
});

it('a join whose total might pass 32 bits guesses its rows too, checking the wrap on the device (TPC-H Q20)', async () => {
  // 70,000 rows joined with room for about 80,000 sums: 5.6 * 10^9 > 2^32 rows at most, 70,000 in fact. e is sorted
  // by its key already (a sort of it would read its key bits back on a CPU adapter).
  const summed = compile(
    `e(k, a) -> int32(k), int32(a).
f(b, k) -> int32(b), int32(k).
tot[k] = s <- agg<<s = sum(b)>> f(b, k).
pair(a, s) <- e(k, a), tot[k] = s.`,
    { joinStrategy: 'sort-merge' },
  );
  expect(summed.kir.kernels.some((k) => k.kind === 'mergeJoin')).toBe(true);
  const rows = 70_000;
  const facts = { e: Array.from({ length: rows }, (_, i) => [i, 3 * i]), f: Array.from({ length: rows }, (_, i) => [i % 9, i]) };
  const dir = mkdtempSync(join(tmpdir(), 'vixen-guess-'));
  dirs.push(dir);
  for (const [rel, rs] of Object.entries(facts)) writeFileSync(join(dir, `${rel}.csv`), rs.map((r) => r.join(',')).join('\n') + '\n');
  const db = new Database(gpu, dir);
  const expected = (await summed.interpret({ facts })).get('pair');
  expect((await db.run(summed)).relations.get('pair')).toEqual(expected);
  // On resident relations, the join's room is guessed (no sync of its own): one sync, for the readback.
  for (let i = 0; i < 2; i++) {
    const guessed = await db.run(summed, { replay: false });
    expect(guessed.relations.get('pair')).toEqual(expected);
    expect(guessed.stats.startedAgain).toBe(false);
    if (i === 1) expect(guessed.stats.hostSyncs).toBe(1);
  }
});
