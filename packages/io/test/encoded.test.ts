import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import fc from 'fast-check';
import { parseDecimal, VixenError, type Row, type ScalarType } from '@vixen/queryplan';
import { describe, expect, it } from 'vitest';
import { encodeValue, StringDictionary } from '../src/encoding.js';
import { StringMap } from '../src/string-map.js';
import { EncodedFacts, EncodedRelation, StringInterner } from '../src/facts/encoded.js';
import { loadFactsFile } from '../src/facts/file.js';
import { runInWorker } from '../src/parallel/pool.js';

const types: ScalarType[] = ['int32', 'string', 'decimal', 'boolean', 'string'];
/** Enough rows to fill several chunks (a chunk holds at most 2^22 words; these rows are 6 words). */
const N = 1_500_000;
const row = (i: number): Row => [i - 7, `s${i % 1000}`, BigInt(i) * 10_001n - 5n, i % 3 === 0, `t${i % 7}`];

describe('encoded facts', () => {
  it('keeps rows across chunks and rewrites string ids to the dictionary in place', async () => {
    const facts = new EncodedFacts();
    for (let i = 0; i < N; i++) facts.relation('r', types).push(row(i), facts.strings);
    const rel = facts.relations.get('r')!;
    expect(rel.count).toBe(N);
    expect(rel.pieces().length).toBeGreaterThan(1);
    expect(rel.pieces().reduce((n, p) => n + p.length, 0)).toBe(N * 6);
    const rows = facts.toRows().get('r')!;
    for (const i of [0, 1, 15, 16, 17, 699_049, 699_050, N - 1]) expect(rows[i]).toEqual(row(i));

    const dict = new StringDictionary(['a', ...facts.strings.strings]);
    await facts.remapStrings(dict);
    const decoded = rel.rows(dict);
    for (const i of [0, 16, 699_050, N - 1]) expect(decoded[i]).toEqual(row(i));
    await expect(facts.remapStrings(dict)).rejects.toThrow(/already remapped/);
  });

  it('gives the dictionary ids of temporary ids ascending and each once, from ascending runs (merged) or not', async () => {
    // Each block ascending, as a store column's dictionary maps; past 64 blocks they are sorted instead.
    await fc.assert(
      fc.asyncProperty(fc.array(fc.array(fc.nat(1000), { maxLength: 40 }), { maxLength: 90 }), fc.boolean(), async (blocks, sortBlocks) => {
        const values = blocks.flatMap((b) => (sortBlocks ? [...b].sort((x, y) => x - y) : b));
        const facts = new EncodedFacts();
        values.forEach((_, i) => facts.strings.add(`s${i}`));
        await facts.remapStrings(Uint32Array.from(values));
        const ids = Uint32Array.from(values, (_, i) => i);
        expect(Array.from(facts.dictionaryIds(ids))).toEqual([...new Set(values)].sort((x, y) => x - y));
      }),
    );
  });

  it('gives adopted rows their loader ids\' interner ids, read or remapped on the worker pool or here', async () => {
    // Chunks of rows (int32, string, string) whose string words index a loader's own table of the interner's ids;
    // two of them past the words the pool remaps.
    const load = (): { facts: EncodedFacts; want: Row[] } => {
      const facts = new EncodedFacts();
      const rel = facts.relation('r', ['int32', 'string', 'string']);
      const want: Row[] = [];
      for (const [rows, distinct] of [[100_000, 5], [1000, 900], [90_000, 30_000]] as const) {
        const ids = Uint32Array.from({ length: distinct }, (_, i) => facts.strings.id(`v${(i * 7) % 90_001}`));
        const words = new Uint32Array(rows * 3);
        for (let r = 0; r < rows; r++) {
          words.set([r, r % distinct, (r * 13) % distinct], 3 * r);
          want.push([r, `v${((r % distinct) * 7) % 90_001}`, `v${(((r * 13) % distinct) * 7) % 90_001}`]);
        }
        rel.adopt(words, undefined, ids);
      }
      rel.push([-1, 'last', 'v0'], facts.strings);
      want.push([-1, 'last', 'v0']);
      return { facts, want };
    };
    const read = load();
    expect(read.facts.relations.get('r')!.rows(read.facts.strings)).toEqual(read.want);
    for (const run of [undefined, runInWorker]) {
      const { facts, want } = load();
      const dict = new StringDictionary(['a', ...facts.strings.strings]);
      await facts.remapStrings(dict, run);
      expect(facts.relations.get('r')!.rows(dict)).toEqual(want);
    }
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

describe('int64 and decimal without BigInt', () => {
  it('splits a safe integer into the words its BigInt has', () => {
    const none = new StringInterner();
    fc.assert(
      fc.property(fc.maxSafeInteger(), (n) => {
        const fast = new Uint32Array(2);
        const slow = new Uint32Array(2);
        encodeValue('int64', n, none, fast, 0);
        encodeValue('int64', BigInt(n), none, slow, 0);
        expect([...fast]).toEqual([...slow]);
      }),
    );
  });

  it('reads decimal and int64 text as parseDecimal and BigInt do', async () => {
    const digits = (max: number) => fc.string({ unit: fc.constantFrom(...'0123456789'), minLength: 1, maxLength: max });
    const decimal = fc
      .tuple(fc.constantFrom('', '+', '-'), digits(13), fc.option(digits(5)))
      .map(([s, i, f]) => `${s}${i}${f === null ? '' : `.${f}`}`)
      .filter((t) => parseDecimal(t) !== undefined);
    const int64 = fc.tuple(fc.constantFrom('', '+', '-'), digits(18)).map(([s, i]) => s + i);
    const lines = fc.sample(fc.tuple(decimal, int64), 2000);
    const dir = mkdtempSync(join(tmpdir(), 'vixen-decimal-'));
    try {
      const path = join(dir, 'd.csv');
      writeFileSync(path, lines.map(([d, i]) => `${d},${i}\n`).join(''));
      const rows = await loadFactsFile(path, [
        { name: 'd', type: 'decimal' },
        { name: 'i', type: 'int64' },
      ]);
      expect(rows).toEqual(lines.map(([d, i]) => [parseDecimal(d), BigInt(i)]));
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe('string dictionary size', () => {
  // Random strings, some repeated, crossing several shard boundaries of a lowered shard limit.
  const strings = Array.from({ length: 3000 }, (_, i) => `s${(i * 7919) % 2000}-${'x'.repeat(i % 5)}`);
  const distinct = [...new Set(strings)].sort();

  it('the dictionary past one Map keeps order-preserving ids for every string', () => {
    const dict = new StringDictionary(strings, false, 97);
    expect(dict.strings).toEqual(distinct);
    // Past the lookups answered by binary search, so the map (in several Maps) answers too.
    for (let round = 0; round < 3; round++) distinct.forEach((s, i) => expect(dict.id(s)).toBe(i));
    expect(dict.has('absent')).toBe(false);
  });

  it('the interner past one Map gives each string one id', () => {
    const interner = new StringInterner(61);
    const ids = strings.map((s) => interner.id(s));
    expect(interner.strings.length).toBe(distinct.length);
    strings.forEach((s, i) => expect(interner.text(ids[i]!)).toBe(s));
    expect(new Set(ids).size).toBe(distinct.length);
  });

  it('the interner holds sorted lists undecoded between strings added one at a time, and maps all their ids', () => {
    const interner = new StringInterner();
    let decoded = 0;
    const list = (texts: string[]) => ({ size: texts.length, text: (i: number) => (decoded++, texts[i]!) });
    const a = interner.add('x');
    const first = interner.addSorted(list(['b', 'c']));
    const y = interner.id('y');
    const second = interner.addSorted(list(['a', 'x', 'z']));
    const b = interner.add('b');
    expect([a, first, y, second, b]).toEqual([0, 1, 3, 4, 7]);
    expect(decoded).toBe(0);
    expect(interner.size).toBe(8);
    expect(interner.texts()).toEqual(['x', 'b', 'c', 'y', 'a', 'x', 'z', 'b']);
    // Dictionary ids of the added strings (x, y, b) and of each list's strings, in the dictionary a b c x y z.
    const map = interner.idMap(Uint32Array.of(3, 4, 1), [Uint32Array.of(1, 2), Uint32Array.of(0, 3, 5)]);
    expect([...map]).toEqual([3, 1, 2, 4, 0, 3, 5, 1]);
  });

  it('a lazy dictionary decodes only the strings asked for, and finds strings by them', () => {
    let decoded = 0;
    const dict = StringDictionary.lazy(distinct.length, (id) => (decoded++, distinct[id]!));
    expect(dict.text(5)).toBe(distinct[5]);
    expect(dict.id(distinct[1234]!)).toBe(1234);
    expect(dict.has('absent')).toBe(false);
    expect(decoded).toBeLessThan(40);
    expect(dict.strings).toEqual(distinct);
    expect(decoded).toBe(distinct.length);
    expect(() => dict.text(distinct.length)).toThrow(/out of range/);
  });

  it('a lazy dictionary asked for more strings than its Map keeps decodes each once, and all when asked', () => {
    // Past 2^20 strings decoded (StringDictionary.text), they move to an array of its size.
    const size = 2 ** 20 + 3;
    const name = (id: number): string => String(id).padStart(8, '0');
    let decoded = 0;
    const dict = StringDictionary.lazy(size, (id) => (decoded++, name(id)));
    expect(dict.size).toBe(size);
    let wrong = 0;
    // Every other string from the last down, then the others from the first up.
    for (let id = size - 1; id >= 0; id -= 2) if (dict.text(id) !== name(id)) wrong++;
    for (let id = size % 2; id < size; id += 2) if (dict.text(id) !== name(id)) wrong++;
    expect(wrong).toBe(0);
    expect(decoded).toBe(size);
    expect(dict.id(name(77))).toBe(77);
    expect(dict.strings.length).toBe(size);
    expect([dict.strings[0], dict.strings[12345], dict.strings[size - 1]]).toEqual([name(0), name(12345), name(size - 1)]);
    expect(() => dict.text(size)).toThrow(/out of range/);
  });

  it('seeks strings in order from an id below them, and misses absent ones', () => {
    const dict = new StringDictionary(distinct);
    let at = 0;
    for (const [i, s] of distinct.entries()) {
      if (i % 3 === 0) continue;
      at = dict.seek(s, at);
      expect(at).toBe(i);
    }
    expect(dict.seek('absent', 0)).toBe(-1);
    expect(dict.seek(distinct[0]!, 0)).toBe(0);
    expect(dict.seek(`${distinct.at(-1)}~`, 0)).toBe(-1);
  });

  it('more distinct strings than a run holds is a user error that says so, not V8 text', () => {
    const map = new StringMap('loading facts', 10, 25);
    for (let i = 0; i < 25; i++) map.add(`s${i}`, i);
    expect(map.get('s24')).toBe(24);
    expect(() => map.add('one more', 25)).toThrow(VixenError);
    expect(() => map.add('one more', 25)).toThrow(/loading facts: more than .* distinct strings/);
  });
});
