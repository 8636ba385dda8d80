/**
 * Semi-join pushdown across rules (frontend lower/push-semi-joins.ts): a temporary that one rule reads, joined there
 * on its key with a filtered dimension, keeps only the rows that join can match (TPC-H Q7's order nations, Q2's
 * per-part minimum). The plan gains the key sets; the answers on the device equal the reference interpreter's on
 * the program compiled without the pushdown (every relation an output).
 */
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { compile, openGpu, type Gpu } from '@vixen/runtime';
import { printPlan } from '@vixen/queryplan';

const DIMENSION = `
dim(k, n) -> int32(k), string(n).
dim(k, n), dim(k, n2) -> n = n2.
dim(1, "A"). dim(2, "B"). dim(3, "A"). dim(4, "C").
`;
const PROGRAM = `${DIMENSION}
cust(c, k) -> int32(c), int32(k).
cust(10, 1). cust(11, 2). cust(12, 3). cust(13, 5). cust(14, 1).
ord(o, c, x) -> int32(o), int32(c), int32(x).
ord(100, 10, 5). ord(101, 11, 7). ord(102, 12, 9). ord(103, 13, 11). ord(104, 14, 5). ord(105, 10, 5).
gift(o, k, x) -> int32(o), int32(k), int32(x).
gift(200, 3, 1). gift(201, 4, 2).
placed(o, k, x) <- ord(o, c, x), cust(c, k).
placed(o, k, x) <- gift(o, k, x).
spent[k] = s <- agg<<s = sum(x)>> placed(o, k, x).
result(n, s) <- dim(k, n), n = "A", spent[k] = s.
`;

let gpu: Gpu;
beforeAll(async () => {
  gpu = await openGpu();
});
afterAll(() => gpu?.dispose());

const semiJoins = (source: string, outputs?: string[], disable?: string[]): string[] =>
  compile(source, { ...(outputs ? { outputs } : {}), ...(disable ? { passes: { disable } } : {}) })
    .plan!.relations.map((r) => r.name)
    .filter((n) => n.startsWith('$semijoin_'));

describe('semi-join pushdown across rules', () => {
  test('restricts a read-once temporary and, through its aggregate, the join it sums; answers unchanged', async () => {
    const program = compile(PROGRAM, { outputs: ['result'] });
    expect(semiJoins(PROGRAM, ['result'])).toEqual(['$semijoin_spent_0', '$semijoin_placed_1']);
    // A named pass: switched off, the plan has no key sets.
    expect(semiJoins(PROGRAM, ['result'], ['push-semi-joins'])).toEqual([]);
    expect(() => compile(PROGRAM, { outputs: ['result'], passes: { printAfter: ['push-semi-joins'], onPrint: () => {} } })).toThrow(
      /pass push-semi-joins rewrites rules, which have no printer/,
    );
    // Both rules of placed read the key set first (their smallest input): the join starts from the key set.
    const text = printPlan(program.plan!);
    expect(text).toMatch(/mapJoin \$semijoin_placed_1, cust on/);
    expect(text).toMatch(/mapJoin \$semijoin_placed_1, gift/);
    const whole = await compile(PROGRAM).interpret();
    // Two dimension rows pass the filter; a sum counting a key set's row twice, or missing one, would differ.
    expect(whole.get('result')!.length).toBe(2);
    const onGpu = await program.run({ gpu, outputs: ['result'] });
    expect(onGpu.relations.get('result')).toEqual(whole.get('result'));
  });

  test('leaves outputs, twice-read relations and joins on a column that is not a key alone', () => {
    // Every derived relation is an output unless the caller names the outputs.
    expect(semiJoins(PROGRAM)).toEqual([]);
    // placed read back: only spent is restricted, and the key set stops there.
    expect(semiJoins(PROGRAM, ['result', 'placed'])).toEqual(['$semijoin_spent_0']);
    // placed read by a second rule.
    expect(semiJoins(`${PROGRAM}other(o) <- placed(o, _, 5).\n`, ['result', 'other'])).toEqual(['$semijoin_spent_0']);
    // Without the dimension's key, the filtered rows may be many per key: nothing is pushed.
    const unkeyed = PROGRAM.replace('dim(k, n), dim(k, n2) -> n = n2.\n', '');
    expect(semiJoins(unkeyed, ['result'])).toEqual([]);
  });

  test('a scan or aggregate of one table is not restricted: the reader probes its rows anyway', () => {
    const scan = `${DIMENSION}
ord(o, k, x) -> int32(o), int32(k), int32(x).
ord(100, 1, 5). ord(101, 2, 7).
spent[k] = s <- agg<<s = sum(x)>> ord(o, k, x).
result(n, s) <- dim(k, n), n = "A", spent[k] = s.
`;
    expect(semiJoins(scan, ['result'])).toEqual([]);
  });
});
