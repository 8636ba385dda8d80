/** The answer comparison: rows tied on the query's ordering columns may come in either engine's order. */
import { join } from 'node:path';
import { expect, it } from 'vitest';
import type { OutputOrder, Row, ScalarType } from '@vixen/queryplan';
import { compareAnswers } from '../src/answers.js';
import type { DuckValue } from '../src/tbl-duckdb.js';
import { resultOrder } from '../src/tbl-suite.js';
import { compileTpchQuery } from '../src/tpch/bench.js';

const queriesDir = join(import.meta.dirname, '..', '..', '..', 'examples', 'tpch');

// As TPC-H Q11: (partkey, value) ordered by value desc; DuckDB's value is a decimal of scale 2, Vixen's of scale 4.
const types: ScalarType[] = ['int32', 'decimal'];
const byValueDesc: OutputOrder = { keys: [{ column: 1, descending: true }] };
const vixenRow = (pk: number, cents: number): Row => [pk, BigInt(cents) * 100n];
const duckRow = (pk: number, cents: number): DuckValue[] => [
  { kind: 'int', value: BigInt(pk) },
  { kind: 'decimal', value: BigInt(cents), scale: 2 },
];
const vixen = [vixenRow(10, 9000), vixenRow(7, 5000), vixenRow(8, 5000), vixenRow(3, 1000)];

it('takes Q11 order from the program: rows tied on value, swapped, are equal (the SF 0.3 rows 2874/2875 case)', () => {
  const order = resultOrder(compileTpchQuery(queriesDir, 11));
  expect(order).toEqual(byValueDesc);
  const duck = [duckRow(10, 9000), duckRow(8, 5000), duckRow(7, 5000), duckRow(3, 1000)];
  expect(compareAnswers(vixen, types, duck, order)).toEqual([]);
  // Without a declared order the rows compare position by position, so the swap is a difference.
  expect(compareAnswers(vixen, types, duck)).toEqual(['row 2, column 1: vixen 7 != duckdb 8', 'row 3, column 1: vixen 8 != duckdb 7']);
});

it('reports different rows within a tie group', () => {
  const duck = [duckRow(10, 9000), duckRow(8, 5000), duckRow(9, 5000), duckRow(3, 1000)];
  expect(compareAnswers(vixen, types, duck, byValueDesc)).toEqual(['row 2, column 1: vixen 7 != duckdb 8 (nor equal to another duckdb row of rows 2-3, tied on the order)']);
});

it('reports a different order across values that do not tie', () => {
  const duck = [duckRow(7, 5000), duckRow(8, 5000), duckRow(10, 9000), duckRow(3, 1000)];
  expect(compareAnswers(vixen, types, duck, byValueDesc)).toEqual([
    'row 1, column 2: vixen 90 != duckdb 5000e-2',
    'row 3, column 2: vixen 50 != duckdb 9000e-2',
  ]);
  // Decimal values still compare exactly: one cent off is a difference, not a tie.
  const off = [duckRow(10, 9000), duckRow(7, 5000), duckRow(8, 5001), duckRow(3, 1000)];
  expect(compareAnswers(vixen, types, off, byValueDesc)).toEqual(['row 3, column 2: vixen 50 != duckdb 5001e-2']);
});

it('at a limit that cuts through the last tie group, either engine may keep any of its rows', () => {
  const limit3: OutputOrder = { ...byValueDesc, limit: 3 };
  const cut = vixen.slice(0, 3);
  // Three rows tie on 50.00; each engine kept a different two of them.
  expect(compareAnswers(cut, types, [duckRow(10, 9000), duckRow(4, 5000), duckRow(8, 5000)], limit3)).toEqual([]);
  // Only the ordering values count there: a different value is still a difference.
  expect(compareAnswers(cut, types, [duckRow(10, 9000), duckRow(7, 5000), duckRow(4, 4000)], limit3)).toEqual(['row 3, column 2: vixen 50 != duckdb 4000e-2']);
  // Tie groups before the cut still compare as multisets, and without a cut the last group does too.
  const limit4: OutputOrder = { ...byValueDesc, limit: 4 };
  expect(compareAnswers(vixen, types, [duckRow(11, 9000), duckRow(8, 5000), duckRow(7, 5000), duckRow(3, 1000)], limit4)).toEqual(['row 1, column 1: vixen 10 != duckdb 11']);
  const under = vixen.slice(0, 3);
  expect(compareAnswers(under, types, [duckRow(10, 9000), duckRow(4, 5000), duckRow(8, 5000)], { ...byValueDesc, limit: 10 })).toEqual([
    'row 2, column 1: vixen 7 != duckdb 4 (nor equal to another duckdb row of rows 2-3, tied on the order)',
  ]);
});
