/**
 * Facts given through the API as columns (`{ columns: [...] }`, typed arrays or plain arrays): the same answers as
 * the same facts given as rows, on the GPU and the reference interpreter, through Program.run and a Database; bad
 * columns get a message naming the relation, the column and what it takes.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { VixenError, type Row } from '@vixen/queryplan';
import { compile, Database, openGpu, type Gpu } from '../src/index.js';

const SOURCE = `
item(k, q, price, big, cost, who, ok, day) -> int32(k), uint32(q), float32(price), int64(big), decimal(cost), string(who), boolean(ok), date(day).
edge(x, y) -> int32(x), int32(y).
path(x, y) <- edge(x, y).
path(x, z) <- path(x, y), edge(y, z).
cheap(who, k, price, big, cost, day) <- item(k, q, price, big, cost, who, true, day), q > 3.
total[who] = t <- agg<<t = sum(q)>> item(_, q, _, _, _, who, _, _).
`;
// Reads two of item's eight columns: the others are pruned after checking.
const NARROW = `
item(k, q, price, big, cost, who, ok, day) -> int32(k), uint32(q), float32(price), int64(big), decimal(cost), string(who), boolean(ok), date(day).
keys(k, who) <- item(k, _, _, _, _, who, _, _), k < 30.
`;

const N = 57;
const names = ['ann', 'bo', 'cy', 'dee', ''];
const k = Int32Array.from({ length: N }, (_, i) => (i * 7) % 50 - 10);
const q = Uint32Array.from({ length: N }, (_, i) => (i % 9 === 0 ? 4294967295 : i % 7));
const price = Float64Array.from({ length: N }, (_, i) => (i === 3 ? -0 : i / 3 - 5));
const big = BigInt64Array.from({ length: N }, (_, i) => BigInt(i - 20) * 123456789012345n);
const cost = BigInt64Array.from({ length: N }, (_, i) => BigInt(i * 12345));
const who = Array.from({ length: N }, (_, i) => names[i % names.length]!);
const ok = Array.from({ length: N }, (_, i) => i % 3 !== 0);
const day = Int32Array.from({ length: N }, (_, i) => 19000 + i);
const itemColumns = [k, q, price, big, cost, who, ok, day];
const itemRows: Row[] = Array.from({ length: N }, (_, i) => [k[i]!, q[i]!, price[i]!, big[i]!, cost[i]!, who[i]!, ok[i]!, day[i]!]);
// Duplicates and a cycle.
const x = Int32Array.from([1, 2, 3, 3, 5, 1]);
const y = Int32Array.from([2, 3, 1, 1, 6, 2]);
const edgeRows: Row[] = [...x].map((v, i) => [v, y[i]!]);

let gpu: Gpu;
beforeAll(async () => {
  gpu = await openGpu();
});
afterAll(() => gpu?.dispose());

const message = (f: () => unknown): string => {
  try {
    f();
  } catch (e) {
    expect(e).toBeInstanceOf(VixenError);
    return (e as VixenError).message;
  }
  throw new Error('accepted bad facts');
};
const rejection = async (p: Promise<unknown>): Promise<string> => {
  try {
    await p;
  } catch (e) {
    expect(e).toBeInstanceOf(VixenError);
    return (e as VixenError).message;
  }
  throw new Error('accepted bad facts');
};

describe('facts given as columns', () => {
  it('give the answers of the same facts as rows, on the GPU and the interpreter', async () => {
    const program = compile(SOURCE);
    const byRows = { item: itemRows, edge: edgeRows };
    const byColumns = { item: { columns: itemColumns }, edge: { columns: [x, y] } };
    const expected = await program.interpret({ facts: byRows });
    expect(expected.get('cheap')!.length).toBeGreaterThan(5);
    expect(expected.get('path')!.length).toBe(10);
    expect(await program.interpret({ facts: byColumns })).toEqual(expected);
    const run = await program.run({ gpu, facts: byColumns });
    expect(run.relations).toEqual((await program.run({ gpu, facts: byRows })).relations);
    expect(run.relations).toEqual(expected);
    // Plain arrays of values, and a Float32Array, are columns too.
    const plain = { item: { columns: [[...k], [...q], Float32Array.from(price), [...big], [...cost], who, ok, [...day]] }, edge: { columns: [[...x], [...y]] } };
    expect((await program.run({ gpu, facts: plain })).relations).toEqual(expected);
  });

  it('keep only the columns a program reads, after checking them all', async () => {
    const program = compile(NARROW);
    const expected = await program.interpret({ facts: { item: itemRows } });
    expect(expected.get('keys')!.length).toBeGreaterThan(5);
    expect((await program.run({ gpu, facts: { item: { columns: itemColumns } } })).relations).toEqual(expected);
    const bad = itemColumns.map((c, i) => (i === 2 ? Int32Array.from(k) : c));
    expect(await rejection(program.run({ gpu, facts: { item: { columns: bad } } }))).toBe(
      'facts for item, column 3 (price): a float32 column takes a Float32Array, a Float64Array or an array of numbers, found Int32Array',
    );
  });

  it('load into a Database and stay resident', async () => {
    const program = compile(SOURCE);
    const db = new Database(gpu, '.', { facts: { item: { columns: itemColumns }, edge: { columns: [x, y] } } });
    try {
      const expected = await program.interpret({ facts: { item: itemRows, edge: edgeRows } });
      expect((await db.run(program)).relations).toEqual(expected);
      const again = await db.run(program);
      expect(again.relations).toEqual(expected);
      expect(again.stats.uploads).toEqual([]);
      expect(db.resident.map((r) => r.name).sort()).toEqual(['edge', 'item']);
    } finally {
      db.clear();
    }
  });

  it('that do not fit get a message naming the relation, the column and what it takes', async () => {
    const program = compile(SOURCE);
    const run = (edge: unknown) => program.run({ gpu, facts: { edge: edge as Row[] } });
    expect(await rejection(run({ columns: [x, Float64Array.from(y)] }))).toBe(
      'facts for edge, column 2 (y): an int32 column takes an Int32Array or an array of numbers, found Float64Array',
    );
    expect(await rejection(run({ columns: [x, [1, 2, 3, 4, 5, 'six']] }))).toBe('facts for edge, column 2 (y), row 6: expected int32, found string "six"');
    expect(await rejection(run({ columns: [x] }))).toBe('facts for edge: expected 2 columns, found 1');
    expect(await rejection(run({ columns: [x, y.subarray(1)] }))).toBe('invalid run options: facts.edge.columns.1: expected 6 values (as columns.0), found 5');
    expect(await rejection(run({ columns: [x, 'y'] }))).toBe('invalid run options: facts.edge.columns.1: expected an array or a typed array, received string');
    expect(await rejection(run({ cols: [x, y] }))).toBe('invalid run options: facts.edge: expected an array of rows or { columns: [...] }, one array per column');
    expect(message(() => new Database(gpu, '.', { facts: { edge: { columns: [x, new DataView(y.buffer)] } } } as never))).toBe(
      'invalid Database options: facts.edge.columns.1: expected an array or a typed array, received object',
    );
    // How a store is read (DatabaseOptions.storeReads): whole bytes per read and reads in flight.
    expect(message(() => new Database(gpu, '.', { storeReads: { pieceBytes: 2 ** 20, inFlight: 0 } }))).toMatch(/^invalid Database options: storeReads\.inFlight: /);
    expect(await rejection(program.interpret({ facts: { item: { columns: itemColumns.map((c, i) => (i === 7 ? Uint32Array.from(day) : c)) } } }))).toBe(
      'facts for item, column 8 (day): a date column takes an Int32Array (days since 1970-01-01) or an array of numbers, found Uint32Array',
    );
  });
});
