/**
 * Resident relations (database.ts): programs run against one Database give the answers fresh runs give, reuse
 * the relations earlier runs made resident, remap their string ids when a program's strings shift the
 * dictionary, and never change a resident buffer. Other column sets of a table are projected from the host
 * cache, never read from its file again, or (DatabaseOptions.project, on a GPU by default) made on the device from
 * resident relations holding their columns.
 */
import { copyFileSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { compile, Database, openGpu, type ExecuteStats, type Gpu, type Program, type ResidentRelation } from '../src/index.js';
import { downloadRelation, internals } from '../src/gpu/index.js';
import { leaves } from '../src/gpu/chunks.js';

const schema = `
person(id, name, city, note) -> int32(id), string(name), string(city), string(note).
visit(pid, place, day) -> int32(pid), string(place), date(day).
`;
// Both read person's id, name and city (the same kept columns, so the same resident relation).
const museum = compile(`${schema}p1(name, city) <- person(id, name, city, _), visit(id, "museum", _).`);
// "Bo" is in no fact: it sorts between "Alice" and "Bob", so every later string gets another id.
const afterBo = compile(`${schema}p2(id, city) <- person(id, name, city, _), name > "Bo".`);
// Other kept columns of person than museum's: the note, and id with city only.
const notes = compile(`${schema}p4(id, note) <- person(id, _, _, note), id < 30.`);
const cities = compile(`${schema}p5(city, id) <- person(id, _, city, _).`);
// Passes person's kept rows through (kernels may hand the resident buffer on as their output).
const everyone = compile(`${schema}p3(id, name, city) <- person(id, name, city, _).`);

let gpu: Gpu;
let dir: string;
beforeAll(async () => {
  gpu = await openGpu();
  dir = mkdtempSync(join(tmpdir(), 'vixen-db-'));
  const names = ['Alice', 'Bob', 'Carol', 'Dave', 'Eve', 'Zed'];
  const cities = ['Oslo', 'Lima', 'Pune'];
  const people = Array.from({ length: 60 }, (_, i) => `${i},${names[i % 6]},${cities[i % 3]},note ${i}`);
  // A duplicate row and one differing only in the unread note: canonical form removes both.
  writeFileSync(join(dir, 'person.csv'), [...people, people[5], '5,Zed,Pune,other note'].join('\n') + '\n');
  const places = ['museum', 'park', 'zoo'];
  writeFileSync(join(dir, 'visit.csv'), Array.from({ length: 90 }, (_, i) => `${(i * 7) % 60},${places[i % 4] ?? 'museum'},2024-01-${String((i % 28) + 1).padStart(2, '0')}`).join('\n') + '\n');
});
afterAll(() => {
  gpu?.dispose();
  rmSync(dir, { recursive: true, force: true });
});

const fresh = async (p: Program) => (await p.run({ gpu, factsDir: dir })).relations;
const words = async (db: Database, name: string) => downloadRelation(gpu, db.resident.find((r) => r.name === name)!.relation);

describe('Database', () => {
  it('gives the answers of fresh runs and leaves resident relations unchanged', async () => {
    const db = new Database(gpu, dir);
    try {
      const first = await db.run(museum);
      expect(first.relations).toEqual(await fresh(museum));
      expect(first.relations.get('p1')!.length).toBeGreaterThan(0);
      expect(first.stats.uploads.map((u) => u.name).sort()).toEqual(['person', 'visit']);
      // Only the kept columns: id, name and city are 3 words a row (the note is never read).
      expect(first.stats.uploads.find((u) => u.name === 'person')).toEqual({ name: 'person', rows: 60, width: 3, ms: expect.any(Number) });
      expect(db.resident.find((r) => r.name === 'person')!.loadColumns).toEqual([0, 1, 2]);
      const person = await words(db, 'person');
      const buffer = db.resident.find((r) => r.name === 'person')!.relation.buffer;

      const again = await db.run(museum);
      expect(again.relations).toEqual(first.relations);
      expect(again.stats.uploads).toEqual([]);
      expect(again.stats.residentRelations.sort()).toEqual(['person', 'visit']);
      // The same inputs either way: resident relations count as what the run read, as uploaded ones did.
      const byName = (xs: ExecuteStats['inputs']) => [...xs].sort((x, y) => x.name.localeCompare(y.name));
      const uploaded = byName(first.stats.uploads.map(({ ms: _ms, ...u }) => u));
      expect(byName(again.stats.inputs)).toEqual(uploaded);
      expect(byName(first.stats.inputs)).toEqual(uploaded);
      // All its strings were resident already: the run kept their dictionary rather than sorting them again.
      expect([first.stats.residentDictionary, again.stats.residentDictionary]).toEqual([false, true]);
      expect(again.hostLoadMilliseconds).toBeLessThan(first.hostLoadMilliseconds + 50);

      const passed = await db.run(everyone);
      expect(passed.relations).toEqual(await fresh(everyone));
      expect(passed.stats.residentRelations).toEqual(['person']);
      // Same dictionary (no new strings): no remap, the same buffer, the same words, even after pool reuse.
      expect(db.resident.find((r) => r.name === 'person')!.relation.buffer).toBe(buffer);
      await db.run(museum);
      expect(await words(db, 'person')).toEqual(person);
    } finally {
      db.clear();
    }
  });

  it('keeps a dictionary closed over the substrings a program makes, and builds one for new substrings', async () => {
    const initials = compile(`${schema}p6(id, i) <- person(id, name, _, _), i = string:substring[name, 0, 1].`);
    const pairs = compile(`${schema}p7(id, i) <- person(id, name, _, _), i = string:substring[name, 1, 2].`);
    const db = new Database(gpu, dir);
    try {
      const runs = [await db.run(initials), await db.run(initials), await db.run(pairs), await db.run(pairs)];
      // The second run of each finds its substrings in the dictionary the first one built.
      expect(runs.map((r) => r.stats.residentDictionary)).toEqual([false, true, false, true]);
      expect(runs[1]!.relations).toEqual(await fresh(initials));
      expect(runs[3]!.relations).toEqual(await fresh(pairs));
      expect(runs[1]!.relations.get('p6')!.length).toBe(60);
    } finally {
      db.clear();
    }
  });

  it('keeps the string tables of a dictionary on the device for the runs that keep it, and drops them with it', async () => {
    const initials = compile(`${schema}p6(id, i) <- person(id, name, _, _), i = string:substring[name, 0, 1].`);
    // "Bob" is a name already: the dictionary the initials built serves this program too, with another table.
    const bobs = compile(`${schema}p9(id) <- person(id, name, _, _), string:startswith(name, "Bob").`);
    const pairs = compile(`${schema}p7(id, i) <- person(id, name, _, _), i = string:substring[name, 1, 2].`);
    const db = new Database(gpu, dir);
    try {
      const order = [initials, bobs, initials, bobs, pairs, initials, bobs];
      const runs = [];
      for (const p of order) runs.push(await db.run(p));
      expect(runs.map((r) => r.stats.residentDictionary)).toEqual([false, true, true, true, false, false, true]);
      for (const [k, r] of runs.entries()) expect(r.relations, `run ${k}`).toEqual(await fresh(order[k]!));
      expect(runs[1]!.relations.get('p9')!.length).toBe(10);
    } finally {
      db.clear();
    }
  });

  it('keeps its dictionary for a program whose inline facts hold strings it already has', async () => {
    // Paris is in no facts file: the first run's dictionary takes it in, so later runs can keep that dictionary.
    const wanted = compile(`${schema}want(c) -> string(c).\nwant("Oslo"). want("Paris").\np8(id, c) <- person(id, _, c, _), want(c).`);
    const db = new Database(gpu, dir);
    try {
      const runs = [await db.run(wanted), await db.run(wanted)];
      expect(runs.map((r) => r.stats.residentDictionary)).toEqual([false, true]);
      expect(runs[1]!.relations).toEqual(await fresh(wanted));
      expect(runs[1]!.relations.get('p8')!.length).toBe(20);
    } finally {
      db.clear();
    }
  });

  it('remaps resident string ids when a program brings new strings', async () => {
    const db = new Database(gpu, dir);
    try {
      await db.run(museum);
      const before = await words(db, 'person');
      const shifted = await db.run(afterBo);
      expect(shifted.stats.residentRelations).toEqual(['person']);
      expect(shifted.stats.uploads).toEqual([]);
      // "Bo" is in no resident dictionary: a new one is built.
      expect(shifted.stats.residentDictionary).toBe(false);
      expect(shifted.relations).toEqual(await fresh(afterBo));
      expect(shifted.relations.get('p2')!.length).toBe(50);
      const remapped = await words(db, 'person');
      expect(remapped).not.toEqual(before);
      // Back to the first program's strings: remapped again, and its answers are still a fresh run's.
      expect((await db.run(museum)).relations).toEqual(await fresh(museum));
      expect(await words(db, 'person')).toEqual(before);
      // A run that needs no remap leaves the words as they are.
      await db.run(museum);
      expect(await words(db, 'person')).toEqual(before);
    } finally {
      db.clear();
    }
  });

  it('frees the least recently used relations past maxResidentBytes, never those the run read', async () => {
    const db = new Database(gpu, dir, { maxResidentBytes: 1 });
    try {
      await db.run(museum);
      expect(db.resident.map((r) => r.name).sort()).toEqual(['person', 'visit']);
      const r = await db.run(afterBo);
      expect(r.relations).toEqual(await fresh(afterBo));
      expect(db.resident.map((r) => r.name)).toEqual(['person']);
      expect((await db.run(museum)).relations).toEqual(await fresh(museum));
    } finally {
      db.clear();
    }
  });

  it('frees the relations release picks, and a later run that reads one loads it again', async () => {
    const db = new Database(gpu, dir);
    try {
      await db.run(museum);
      db.release((r) => r.name === 'visit');
      expect(db.resident.map((r) => r.name)).toEqual(['person']);
      const again = await db.run(museum);
      expect(again.relations).toEqual(await fresh(museum));
      expect(again.stats.uploads.map((u) => u.name)).toEqual(['visit']);
      expect(db.resident.map((r) => r.name).sort()).toEqual(['person', 'visit']);
    } finally {
      db.clear();
    }
  });

  it("gives the pool's free buffers up before an idle resident relation, also those destroyed while commands are recorded", async () => {
    const small = await openGpu();
    const pool = internals(small).pool;
    const db = new Database(small, dir);
    try {
      // person's id and note stay resident, idle while museum runs on its own resident relations.
      await db.run(notes);
      await db.run(museum);
      // What museum's run creates from an empty pool.
      pool.trim();
      const before = pool.allocatedBytes;
      expect((await db.run(museum)).relations).toEqual(await fresh(museum));
      const need = pool.peakAllocatedBytes - before;
      expect(need).toBeGreaterThan(0);
      // Free buffers no run takes (a usage none asks for), twice that, then a budget half the run's need short.
      pool.trim();
      const odd = Array.from({ length: 2 }, () => pool.acquire(need, GPUBufferUsage.STORAGE | GPUBufferUsage.INDIRECT));
      for (const b of odd) pool.release(b);
      expect(pool.freeBytes).toBeGreaterThanOrEqual(2 * need);
      pool.budget = pool.allocatedBytes + need / 2;
      // Not so near the budget that the run trims the pool before it starts: its creations make the room.
      expect(pool.allocatedBytes).toBeLessThan(0.9 * pool.budget);
      const r = await db.run(museum);
      expect(r.relations).toEqual(await fresh(museum));
      expect(pool.relieved.buffers).toBeGreaterThan(0);
      expect(r.evictions.relations).toBe(0);
      // notes' person, museum's person and visit.
      expect(db.resident).toHaveLength(3);
    } finally {
      db.clear();
      small.dispose();
    }
  });

  it("gives a run the device's memory budget less the resident relations it does not read, or the budget given", async () => {
    const small = await openGpu();
    // As if the device had 1 MiB: person's resident rows then hold part of it.
    Object.assign(internals(small), { memoryBudget: 2 ** 20 });
    const db = new Database(small, dir);
    const visits = compile(`${schema}v(p) <- visit(p, _, _).`);
    const bytes = (which: (r: ResidentRelation) => boolean): number =>
      db.resident.filter(which).reduce((n, r) => n + leaves(r.relation).reduce((m, l) => m + l.buffer!.size, 0), 0);
    try {
      await db.run(museum);
      // museum's person and visit columns are resident; visits reads another column set of visit.
      const museumBytes = bytes(() => true);
      expect(museumBytes).toBeGreaterThan(0);
      const r = await db.run(visits);
      expect(r.relations).toEqual(await fresh(visits));
      expect(r.stats.deviceMemoryBudget).toBe(2 ** 20 - museumBytes);
      const visitsBytes = bytes((x) => x.name === 'visit' && x.loadColumns?.join() === '0');
      expect(visitsBytes).toBeGreaterThan(0);
      expect((await db.run(museum)).stats.deviceMemoryBudget).toBe(2 ** 20 - visitsBytes);
      expect((await db.run(visits, { maxDeviceMemory: 2 ** 19 })).stats.deviceMemoryBudget).toBe(2 ** 19);
    } finally {
      db.clear();
      small.dispose();
    }
  });

  it('builds a run a dictionary of its own strings where a table over the one it would share costs more', async () => {
    const db = new Database(gpu, dir, { project: 'device' });
    // Every column of person: its names, cities and 60 notes in one dictionary.
    const everyColumn = compile(`${schema}all(id, name, city, note) <- person(id, name, city, note).`);
    // Made from it on the device: 3 cities, with a LIKE (a table over the dictionary) or with none.
    const like = compile(`${schema}l(id) <- person(id, _, city, _), string:like(city, "L%").`);
    const named = compile(`${schema}n(id) <- person(id, name, _, _), name = "Bob".`);
    try {
      await db.run(everyColumn);
      const r = await db.run(like);
      expect(r.projectedOnDevice.map((p) => p.name)).toEqual(['person']);
      expect(r.relations).toEqual(await fresh(like));
      expect([r.stats.residentDictionary, r.stats.tablesBuilt]).toEqual([false, 1]);
      // Its relation now refers to the run's dictionary, which later runs keep, with the LIKE's table: a repeated run
      // builds neither, and answers the same.
      const again = await db.run(like);
      expect([again.stats.residentDictionary, again.stats.tablesBuilt]).toEqual([true, 0]);
      expect(again.relations).toEqual(r.relations);
      const n = await db.run(named);
      expect(n.projectedOnDevice.map((p) => p.name)).toEqual(['person']);
      expect(n.relations).toEqual(await fresh(named));
      expect(n.stats.residentDictionary).toBe(true);
    } finally {
      db.clear();
    }
  });

  it('keeps resident relations intact when a run fails on a limit', async () => {
    const db = new Database(gpu, dir);
    try {
      await db.run(museum);
      const before = await words(db, 'person');
      await expect(db.run(everyone, { maxDeviceMemory: 1 })).rejects.toThrow(/device memory limit exceeded/);
      expect(await words(db, 'person')).toEqual(before);
      expect((await db.run(everyone)).relations).toEqual(await fresh(everyone));
      expect(await words(db, 'person')).toEqual(before);
    } finally {
      db.clear();
    }
  });

  it('reads each facts file once for any column sets, with the answers of fresh runs', async () => {
    const own = mkdtempSync(join(tmpdir(), 'vixen-db-cache-'));
    for (const f of ['person.csv', 'visit.csv']) copyFileSync(join(dir, f), join(own, f));
    const db = new Database(gpu, own, { project: 'host' });
    try {
      expect((await db.run(museum)).relations).toEqual(await fresh(museum));
      expect(db.fileReads).toBe(2);
      // Strings only in the cached note column must not reach a run that does not keep it.
      const r = await db.run(afterBo);
      expect(r.relations).toEqual(await fresh(afterBo));
      const n = await db.run(notes);
      // id and note: 2 words a row; of the 62 lines only the exact duplicate goes.
      expect(n.stats.uploads).toEqual([{ name: 'person', rows: 61, width: 2, ms: expect.any(Number) }]);
      expect(n.relations).toEqual(await fresh(notes));
      expect(db.fileReads).toBe(2);
      // With the file unreadable as person, a new column set still loads: from the cache.
      writeFileSync(join(own, 'person.csv'), 'not,a,person\n');
      const c = await db.run(cities);
      expect(c.stats.uploads.map((u) => u.name)).toEqual(['person']);
      expect(c.relations).toEqual(await fresh(cities));
      expect(db.fileReads).toBe(2);
    } finally {
      db.clear();
      rmSync(own, { recursive: true, force: true });
    }
  });

  it('reads the file per column set without the host cache, and where an unread column is bad', async () => {
    const uncached = new Database(gpu, dir, { hostCache: false, project: 'host' });
    try {
      await uncached.run(museum);
      expect((await uncached.run(notes)).relations).toEqual(await fresh(notes));
      expect(uncached.fileReads).toBe(3);
    } finally {
      uncached.clear();
    }
    const own = mkdtempSync(join(tmpdir(), 'vixen-db-bad-'));
    // Not a date in the unread day column: pruned runs never check it, with or without the cache.
    writeFileSync(join(own, 'visit.csv'), '1,zoo,2024-01-01\n2,park,someday\n');
    const visitors = compile(`${schema}v(pid, place) <- visit(pid, place, _).`);
    const places = compile(`${schema}w(place) <- visit(_, place, _).`);
    const db = new Database(gpu, own, { project: 'host' });
    try {
      expect((await db.run(visitors)).relations.get('v')).toEqual([[1, 'zoo'], [2, 'park']]);
      expect((await db.run(places)).relations.get('w')).toEqual([['park'], ['zoo']]);
      // The whole file once (it fails), then the kept columns per column set.
      expect(db.fileReads).toBe(3);
    } finally {
      db.clear();
      rmSync(own, { recursive: true, force: true });
    }
  });

  it('keeps only the read columns of a keyed relation, one row per fact, apart from the whole relation', async () => {
    const own = mkdtempSync(join(tmpdir(), 'vixen-db-keyed-'));
    // Two sales agree on everything but the key: both count, although no kernel reads the key.
    writeFileSync(join(own, 'sale.csv'), '1,north,5\n2,north,5\n3,south,7\n3,south,7\n');
    const keyed = `sale(id, region, amount) -> int32(id), string(region), int32(amount).
sale(id, r, a), sale(id, r2, a2) -> r = r2, a = a2.
`;
    const totals = compile(`${keyed}total[r] = s <- agg<<s = sum(a)>> sale(_, r, a).`);
    const rows = compile(`${keyed}row(id, r, a) <- sale(id, r, a).`);
    expect(totals.kir.relations.find((r) => r.name === 'sale')!.deviceColumns).toEqual([1, 2]);
    const db = new Database(gpu, own);
    try {
      const t = await db.run(totals);
      expect(t.relations.get('total')).toEqual([['north', 10], ['south', 7]]);
      // Loaded with the key (the exact duplicate goes), then kept 2 words a row.
      expect(t.stats.uploads).toEqual([{ name: 'sale', rows: 3, width: 2, ms: expect.any(Number) }]);
      expect((await db.run(totals)).relations.get('total')).toEqual([['north', 10], ['south', 7]]);
      // The whole relation is another resident relation, canonical by all its columns.
      const r = await db.run(rows);
      expect(r.relations.get('row')).toEqual([[1, 'north', 5], [2, 'north', 5], [3, 'south', 7]]);
      expect(r.stats.uploads.map((u) => u.name)).toEqual(['sale']);
      expect((await db.run(totals)).stats.uploads).toEqual([]);
      // "east" sorts before both regions: the kept (region, amount) rows' string words are remapped, not the amounts.
      const east = compile(`${keyed}total[r] = s <- agg<<s = sum(a)>> sale(_, r, a), r != "east".`);
      const shifted = await db.run(east);
      expect(shifted.stats.residentRelations).toEqual(['sale']);
      expect(shifted.relations.get('total')).toEqual([['north', 10], ['south', 7]]);
      expect((await db.run(totals)).relations.get('total')).toEqual([['north', 10], ['south', 7]]);
    } finally {
      db.clear();
      rmSync(own, { recursive: true, force: true });
    }
  });
});

describe('Database: keys a program declares on a resident relation', () => {
  const sale = `sale(id, region, amount) -> int32(id), string(region), int32(amount).\n`;
  const key = `sale(id, r, a), sale(id, r2, a2) -> r = r2, a = a2.\n`;
  // The same kept columns with and without the key: one resident relation.
  const plain = compile(`${sale}row(id, r, a) <- sale(id, r, a).`);
  const keyed = compile(`${sale}${key}row(id, r, a) <- sale(id, r, a).`);
  const keyedToo = compile(`${sale}${key}big(id, r) <- sale(id, r, a), a > 4.`);
  let own: string;
  const facts = (name: string, text: string): string => {
    const d = join(own, name);
    mkdirSync(d);
    writeFileSync(join(d, 'sale.csv'), text);
    return d;
  };
  beforeAll(() => {
    own = mkdtempSync(join(tmpdir(), 'vixen-db-reskeys-'));
  });
  afterAll(() => rmSync(own, { recursive: true, force: true }));

  it('checks a key the loading program did not declare, with the error a fresh load gives', async () => {
    // Ids 1 and 3 each name two sales: no key of these facts.
    const d = facts('broken', '1,north,5\n1,south,7\n2,north,3\n3,east,1\n3,west,2\n');
    const db = new Database(gpu, d);
    const single = new Database(gpu, d);
    try {
      expect((await db.run(plain)).relations.get('row')).toHaveLength(5);
      const expected = await single.run(keyed).then(() => undefined, (e: unknown) => e);
      expect(String(expected)).toMatch(/key violated: sale/);
      const got = await db.run(keyed).then(() => undefined, (e: unknown) => e);
      // The same message, and the same violations: the constraint where the program declares it, the repeated ids.
      expect(String(got)).toBe(String(expected));
      expect((expected as { violations: unknown[] }).violations).toHaveLength(1);
      expect((got as { violations: unknown[] }).violations).toEqual((expected as { violations: unknown[] }).violations);
      // Still not a key on a later run, and the program without it still runs.
      await expect(db.run(keyedToo)).rejects.toThrow(/key violated: sale/);
      expect((await db.run(plain)).relations).toEqual((await plain.run({ gpu, factsDir: d })).relations);
    } finally {
      db.clear();
      single.clear();
    }
  });

  it('runs on the resident relation where the key holds, checked once, with the answers of fresh runs', async () => {
    const d = facts('holds', '1,north,5\n2,north,5\n3,south,7\n3,south,7\n4,east,2\n');
    const db = new Database(gpu, d);
    try {
      expect((await db.run(plain)).relations).toEqual((await plain.run({ gpu, factsDir: d })).relations);
      for (const p of [keyed, keyedToo, keyed, plain]) {
        const r = await db.run(p);
        expect(r.relations).toEqual((await p.run({ gpu, factsDir: d })).relations);
        // Not loaded again: the key was checked on the resident relation.
        expect(r.stats.uploads).toEqual([]);
      }
      expect(db.fileReads).toBe(1);
    } finally {
      db.clear();
    }
  });

  it('loads again, checked, a relation kept narrower than its load whose key columns it may lack', async () => {
    // Both keep (region, amount) on the device; the first declares (id, region) a key, the second also id.
    const pair = `sale(i, r, a), sale(i, r, a2) -> a = a2.\n`;
    const weak = compile(`${sale}${pair}total[r] = s <- agg<<s = sum(a)>> sale(_, r, a).`);
    const strong = compile(`${sale}${key}${pair}total[r] = s <- agg<<s = sum(a)>> sale(_, r, a).`);
    expect(strong.kir.relations.find((r) => r.name === 'sale')!.deviceColumns).toEqual([1, 2]);
    expect(weak.kir.relations.find((r) => r.name === 'sale')!.deviceColumns).toEqual([1, 2]);
    const broken = facts('narrow-broken', '1,north,5\n1,south,7\n2,north,3\n');
    const holds = facts('narrow-holds', '1,north,5\n2,north,5\n3,south,7\n');
    const db = new Database(gpu, broken);
    const other = new Database(gpu, holds);
    try {
      expect((await db.run(weak)).relations).toEqual((await weak.run({ gpu, factsDir: broken })).relations);
      const message = await strong.run({ gpu, factsDir: broken }).then(() => 'no error', (e: Error) => e.message);
      expect(message).toMatch(/key violated: sale/);
      await expect(db.run(strong)).rejects.toThrow(message);
      await other.run(weak);
      const first = await other.run(strong);
      expect(first.relations).toEqual((await strong.run({ gpu, factsDir: holds })).relations);
      expect(first.stats.uploads.map((u) => u.name)).toEqual(['sale']);
      // Both keys now checked: later runs of either reuse it.
      for (const p of [weak, strong]) expect((await other.run(p)).stats.uploads).toEqual([]);
    } finally {
      db.clear();
      other.clear();
    }
  });
});

describe('Database: column sets made on the device from resident ones', () => {
  const items = `item(k, cat, qty, price) -> int32(k), string(cat), int32(qty), decimal(price).\n`;
  // Holds every column; the others load fewer: a prefix (k, cat), columns out of order (cat, qty) with many equal
  // rows, no string column (k, qty), and all of them but kept on the device as (qty, price) only.
  const whole = compile(`${items}all(k, c, q, p) <- item(k, c, q, p).`);
  const narrower = [
    compile(`${items}pre(k, c) <- item(k, c, _, _), k > 5.`),
    compile(`${items}mix(c, q) <- item(_, c, q, _).`),
    compile(`${items}ints(k) <- item(k, _, q, _), q > 2.`),
    compile(`${items}cost[q] = s <- agg<<s = sum(p)>> item(_, _, q, p).`),
  ];
  let own: string;
  beforeAll(() => {
    own = mkdtempSync(join(tmpdir(), 'vixen-db-project-'));
    const cats = ['tools', 'garden', 'books', 'toys', 'food'];
    // Exact duplicate lines: a load drops them, and so must a projection.
    const lines = Array.from({ length: 700 }, (_, i) => `${(i * 37) % 650},${cats[(i * 7) % 5]},${i % 9},${(i % 11) * 2.5}`);
    writeFileSync(join(own, 'item.csv'), lines.join('\n') + '\n');
  });
  afterAll(() => rmSync(own, { recursive: true, force: true }));

  /** The first (`whole`'s) or the last made resident relation of item, read back. */
  const itemWords = async (on: Gpu, db: Database, which: 'first' | 'last') => {
    const items = db.resident.filter((r) => r.name === 'item');
    return downloadRelation(on, items[which === 'first' ? 0 : items.length - 1]!.relation);
  };

  /**
   * Runs `whole`, then each narrower program on one Database of `on`: every answer a fresh Database's, every resident
   * relation the words a fresh Database loads, nothing read or uploaded from the host for those. Returns what each
   * run projected on the device.
   */
  const againstFresh = async (on: Gpu, budget?: number) => {
    const options = budget === undefined ? {} : { maxDeviceMemory: budget };
    const db = new Database(on, own, { project: 'device' });
    const projected: string[][] = [];
    try {
      await db.run(whole);
      for (const p of narrower) {
        const single = new Database(on, own);
        try {
          const expected = await single.run(p, options);
          const r = await db.run(p, options);
          expect(r.relations).toEqual(expected.relations);
          projected.push(r.projectedOnDevice.map((x) => `${x.name} [${x.loadColumns ?? '*'}] from [${x.from ?? '*'}]`));
          if (r.projectedOnDevice.length === 0) continue;
          // Not read, not uploaded: made of the resident columns, the rows a load of the file makes.
          expect(db.fileReads).toBe(1);
          expect(r.stats.uploads).toEqual([]);
          expect(r.stats.residentRelations).toEqual(['item']);
          expect(r.projectedOnDevice.map(({ rows, width }) => ({ rows, width }))).toEqual(expected.stats.uploads.map(({ rows, width }) => ({ rows, width })));
          // The same dictionary (the same strings), so the same words in the same order.
          expect(await itemWords(on, db, 'last')).toEqual(await itemWords(on, single, 'last'));
          // Resident now: the next run reads it as it is.
          const again = await db.run(p, options);
          expect(again.relations).toEqual(expected.relations);
          expect(again.projectedOnDevice).toEqual([]);
        } finally {
          single.clear();
        }
      }
      // The first relation's words never changed.
      const single = new Database(on, own);
      try {
        await single.run(whole);
        expect(await itemWords(on, db, 'first')).toEqual(await itemWords(on, single, 'first'));
      } finally {
        single.clear();
      }
    } finally {
      db.clear();
    }
    return projected;
  };

  // The sum keeps one row per fact: it loads every column, and keeps qty and price.
  const all = ['item [0,1] from [*]', 'item [1,2] from [*]', 'item [0,2] from [*]', 'item [*] from [*]'].map((x) => [x]);

  it('gives the rows, words and answers a load from the facts gives', async () => {
    expect(await againstFresh(gpu)).toEqual(all);
  });

  it('works on relations in several chunks', async () => {
    // 700 rows x 5 words: several 4096-byte bindings.
    const small = await openGpu({ maxStorageBufferBindingSize: 4096 });
    try {
      expect(await againstFresh(small)).toEqual(all);
    } finally {
      small.dispose();
    }
  });

  it('packs a relation made from a wider one into as few chunks as its rows need', async () => {
    const small = await openGpu({ maxStorageBufferBindingSize: 4096 });
    const db = new Database(small, own, { project: 'device' });
    try {
      await db.run(whole);
      const r = await db.run(narrower[0]!);
      expect(r.projectedOnDevice.map((x) => x.name)).toEqual(['item']);
      const [source, made] = db.resident.map((x) => x.relation);
      // Rows of fewer words than the source's: fewer chunks of 1024 words than it takes.
      const chunks = (rel: typeof made) => leaves(rel).filter((l) => l.count > 0).length;
      expect(chunks(made!)).toBe(Math.ceil(made!.count / Math.floor(1024 / made!.width)));
      expect(chunks(made!)).toBeLessThan(chunks(source!));
    } finally {
      db.clear();
      small.dispose();
    }
  });

  it('keeps to the device memory budget: past it, the facts load as before', async () => {
    // 700 loaded rows of 2 or 3 words, sorted, fit 64 KiB; they do not fit 16 KiB three times over.
    expect(await againstFresh(gpu, 64 * 1024)).toEqual(all);
    expect(await againstFresh(gpu, 16 * 1024)).toEqual(narrower.map(() => []));
  });

  it('loads the columns of several column sets at once, for later ones to be made of them', async () => {
    const programs = [
      compile(`${items}a(k, c) <- item(k, c, _, _), k < 100.`),
      compile(`${items}b(k, q) <- item(k, _, q, _), q > 4.`),
      compile(`${items}c(c, q) <- item(_, c, q, _).`),
    ];
    const db = new Database(gpu, own, { hostCache: false, project: 'device' });
    try {
      const runs = [];
      for (const p of programs) {
        const r = await db.run(p);
        expect(r.relations).toEqual((await p.run({ gpu, factsDir: own })).relations);
        runs.push(r);
      }
      // a loads its columns; b those and its own, which b and then c are made of: the file is read twice.
      expect(runs.map((r) => r.wideLoads.map((w) => `${w.name} [${w.loadColumns}] ${w.rows}x${w.width}`))).toEqual([[], ['item [0,1,2] 700x3'], []]);
      expect(runs.map((r) => r.projectedOnDevice.map((p) => `${p.name} [${p.loadColumns}] from [${p.from}]`))).toEqual([[], ['item [0,2] from [0,1,2]'], ['item [1,2] from [0,1,2]']]);
      expect(db.fileReads).toBe(2);
    } finally {
      db.clear();
    }
  });

  it('leaves a column set whose wider load fails to its own load, which fails as a fresh one does', async () => {
    const bad = mkdtempSync(join(tmpdir(), 'vixen-db-wide-bad-'));
    writeFileSync(join(bad, 'item.csv'), '1,tools,3,2.5\n2,books,4,1.0\n');
    // Without the host cache, which would keep the first contents.
    const db = new Database(gpu, bad, { hostCache: false, project: 'device' });
    try {
      await db.run(compile(`${items}a(k, c) <- item(k, c, _, _).`));
      // The file changed since: its quantities no longer parse.
      writeFileSync(join(bad, 'item.csv'), '1,tools,three,2.5\n2,books,4,1.0\n');
      const b = compile(`${items}b(k, q) <- item(k, _, q, _).`);
      const message = await b.run({ gpu, factsDir: bad }).then(() => 'no error', (e: Error) => e.message);
      expect(message).toMatch(/item\.csv:1/);
      await expect(db.run(b)).rejects.toThrow(message);
    } finally {
      db.clear();
      rmSync(bad, { recursive: true, force: true });
    }
  });

  it('frees past maxResidentBytes the relations a run neither read nor projected from', async () => {
    const db = new Database(gpu, own, { project: 'device', maxResidentBytes: 1 });
    try {
      await db.run(whole);
      const [pre, mix] = narrower as [Program, Program];
      // Made of whole's relation, which it keeps for this run: both stay.
      const a = await db.run(pre);
      expect(a.relations).toEqual((await pre.run({ gpu, factsDir: own })).relations);
      expect(db.resident.map((r) => r.loadColumns?.join() ?? '*')).toEqual(['*', '0,1']);
      // Made of whole's relation again; pre's, which this run did not read, goes.
      const b = await db.run(mix);
      expect(b.relations).toEqual((await mix.run({ gpu, factsDir: own })).relations);
      expect(b.projectedOnDevice.map((p) => p.from?.join() ?? '*')).toEqual(['*']);
      expect(db.resident.map((r) => r.loadColumns?.join() ?? '*')).toEqual(['*', '1,2']);
      // A run on mix's relation alone lets whole's go; then pre's columns are in no resident relation: they load
      // with mix's, and pre is made of those.
      await db.run(mix);
      expect(db.resident.map((r) => r.loadColumns?.join() ?? '*')).toEqual(['1,2']);
      const c = await db.run(pre);
      expect(c.relations).toEqual(a.relations);
      expect(c.wideLoads.map((w) => w.loadColumns?.join())).toEqual(['0,1,2']);
      expect(db.resident.map((r) => r.loadColumns?.join() ?? '*')).toEqual(['0,1,2', '0,1']);
    } finally {
      db.clear();
    }
  });

  it('makes them by default on a GPU only: on a CPU adapter the host projects faster than its device sorts', async () => {
    const db = new Database(gpu, own);
    try {
      await db.run(whole);
      const r = await db.run(narrower[0]!);
      expect(r.projectedOnDevice.length > 0).toBe(!gpu.software);
      expect(r.stats.uploads.length > 0).toBe(gpu.software);
    } finally {
      db.clear();
    }
  });

  it('checks the keys a program declares on the projected rows, as a load does', async () => {
    // (cat, qty) is no key of these facts: the run stops with the repeated keys, whichever way the rows came.
    const keyed = compile(`${items}item(k, c, q, p), item(k2, c, q, p2) -> k = k2, p = p2.\nmix(k, c, q) <- item(k, c, q, _).`);
    const db = new Database(gpu, own, { project: 'device' });
    const single = new Database(gpu, own);
    try {
      await db.run(whole);
      const message = await single.run(keyed).then(() => 'no error', (e: Error) => e.message);
      expect(message).toMatch(/key/);
      await expect(db.run(keyed)).rejects.toThrow(message);
    } finally {
      db.clear();
      single.clear();
    }
  });
});
