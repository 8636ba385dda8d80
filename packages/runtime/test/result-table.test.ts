import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { compareRows, rowWords, type Row, type ScalarType } from '@vixen/queryplan';
import { encodeRows, StringDictionary } from '@vixen/io';
import { ResultTable } from '../src/result-table.js';

/** Device order: rows sorted by unsigned words, as the sort kernels leave them. */
function deviceWords(rows: Row[], types: ScalarType[], dict: StringDictionary): Uint32Array {
  const width = rowWords(types);
  const encoded = rows.map((r) => encodeRows([r], types, dict));
  encoded.sort((a, b) => {
    for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return a[i]! < b[i]! ? -1 : 1;
    return 0;
  });
  const out = new Uint32Array(encoded.length * width);
  encoded.forEach((w, i) => out.set(w, i * width));
  return out;
}

describe('ResultTable', () => {
  const types: ScalarType[] = ['int32', 'int64', 'string', 'float32'];
  const row = fc.tuple(
    fc.integer({ min: -5, max: 5 }),
    fc.bigInt({ min: -(1n << 40n), max: 1n << 40n }),
    fc.constantFrom('a', 'b', 'zz'),
    fc.constantFrom(-1.5, 0, 2.25),
  );

  it('iterates device rows in typed order, sorted or not by the device (property)', () => {
    fc.assert(
      fc.property(fc.uniqueArray(row, { selector: (r) => JSON.stringify([r[0], String(r[1]), r[2], r[3]]) }), (tuples) => {
        const rows: Row[] = tuples.map((t) => [...t]);
        const dict = new StringDictionary(['a', 'b', 'zz']);
        const table = ResultTable.fromWords(types, deviceWords(rows, types, dict), dict);
        const expected = [...rows].sort(compareRows);
        expect([...table]).toEqual(expected);
        expect(table.rows()).toEqual(expected);
        expect(table.size).toBe(rows.length);
      }),
    );
  });

  it('streams non-negative rows in device order without re-sorting', () => {
    const rows: Row[] = [[0, 5n], [1, 2n], [1, 3n], [7, 0n]];
    const t: ScalarType[] = ['int32', 'int64'];
    const dict = new StringDictionary([]);
    const table = ResultTable.fromWords(t, deviceWords(rows, t, dict), dict);
    expect([...table]).toEqual(rows);
  });

  it('applies an output order and its limit', () => {
    const rows: Row[] = [[3], [1], [2]];
    const table = ResultTable.fromRows(['int32'], rows, { keys: [{ column: 0, descending: true }], limit: 2 });
    expect(table.size).toBe(2);
    expect([...table]).toEqual([[3], [2]]);
  });
});
