import type { Row, ScalarType } from '@vixen/queryplan';
import { describe, expect, it } from 'vitest';
import { StringDictionary } from '../src/encoding.js';
import { EncodedFacts, EncodedRelation, StringInterner } from '../src/facts/encoded.js';

const types: ScalarType[] = ['int32', 'string', 'decimal', 'boolean', 'string'];
/** Enough rows to fill several chunks (a chunk holds at most 2^22 words; these rows are 6 words). */
const N = 1_500_000;
const row = (i: number): Row => [i - 7, `s${i % 1000}`, BigInt(i) * 10_001n - 5n, i % 3 === 0, `t${i % 7}`];

describe('encoded facts', () => {
  it('keeps rows across chunks and rewrites string ids to the dictionary in place', () => {
    const facts = new EncodedFacts();
    for (let i = 0; i < N; i++) facts.relation('r', types).push(row(i), facts.strings);
    const rel = facts.relations.get('r')!;
    expect(rel.count).toBe(N);
    expect(rel.pieces().length).toBeGreaterThan(1);
    expect(rel.pieces().reduce((n, p) => n + p.length, 0)).toBe(N * 6);
    const rows = facts.toRows().get('r')!;
    for (const i of [0, 1, 15, 16, 17, 699_049, 699_050, N - 1]) expect(rows[i]).toEqual(row(i));

    const dict = new StringDictionary(['a', ...facts.strings.strings]);
    facts.remapStrings(dict);
    const decoded = rel.rows(dict);
    for (const i of [0, 16, 699_050, N - 1]) expect(decoded[i]).toEqual(row(i));
    expect(() => facts.remapStrings(dict)).toThrow(/already remapped/);
  });

  it('drops the rows of a load that starts over, across chunks', () => {
    const strings = new StringInterner();
    const rel = new EncodedRelation(['int32']);
    for (let i = 0; i < 1000; i++) rel.push([i], strings);
    rel.truncate(20);
    expect(rel.count).toBe(20);
    for (let i = 0; i < 50; i++) rel.push([-i], strings);
    const values = rel.rows(strings).map((r) => r[0]);
    expect(values).toEqual([...Array.from({ length: 20 }, (_, i) => i), ...Array.from({ length: 50 }, (_, i) => -i + 0)]);
  });
});
