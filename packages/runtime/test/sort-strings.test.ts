/** The dictionary's string sort on worker threads: the same strings, in the same order, as one thread's sort. */
import { describe, expect, it } from 'vitest';
import { asciiEnd, asciiList, ByteStringSort, dictionaryRun, sortByteStrings, sortDistinct } from '@vixen/io';
import { MERGED_LISTS, mergeSortedLists, sortDistinctInWorkers, sortedList } from '../src/sort-strings.js';
import { dictionaryFor } from '../src/tables.js';

describe('sortDistinctInWorkers', () => {
  it('sorts and drops duplicates as one thread does, over prefixes of every kind', async () => {
    let seed = 7;
    const next = (n: number): number => ((seed = (Math.imul(seed, 1103515245) + 12345) >>> 0) % n);
    // First units ASCII and not, one-unit strings, empty strings, units past 127 second, surrogate pairs, repeats.
    const units = ['', 'a', 'b', 'z', 'A', '~', '\u007f', '\u0080', 'é', '\u4e2d', '\ud83d\ude00', '\uffff', ' '];
    const strings: string[] = [];
    for (let i = 0; i < (1 << 20) + 5000; i++) {
      let s = '';
      for (let k = next(5); k > 0; k--) s += units[next(units.length)]!;
      strings.push(i % 3 === 0 ? s : s + (next(100_000) % 7919));
    }
    const want = sortDistinct([...strings]);
    expect(want.length).toBeGreaterThan(100_000);
    const { sorted: got, ids } = await sortDistinctInWorkers([...strings]);
    // Compared one by one: a failing toEqual would diff a million strings, for minutes, on the thread that times out
    // tests (a full suite once hung here at 100% CPU).
    expect(got.length).toBe(want.length);
    const at = got.findIndex((s, i) => s !== want[i]);
    expect(at === -1 ? null : { at, got: got[at], want: want[at] }).toBeNull();
    // Each string's id is its position among the sorted ones.
    expect(ids?.length).toBe(strings.length);
    const wrong = strings.findIndex((s, i) => got[ids![i]!] !== s);
    expect(wrong === -1 ? null : { at: wrong, string: strings[wrong], id: ids![wrong] }).toBeNull();
  }, 120_000);
});

describe('sortByteStrings', () => {
  for (const count of [3000, (1 << 17) + 77]) {
    it(`sorts ${count} ASCII strings as bytes as sortDistinct does, each with its position (${count < 1 << 16 ? 'one thread' : 'workers'})`, async () => {
      let seed = 5;
      const next = (n: number): number => ((seed = (Math.imul(seed, 1103515245) + 12345) >>> 0) % n);
      // Long shared prefixes (past several 3-byte digits), strings that end where others go on, empty ones, NUL and
      // DEL bytes, repeats near and far.
      const units = ['', 'a', 'b', 'ab', 'abc', '\u0000', '\u007f', 'Customer#0000', ' ', 'z'];
      const strings = Array.from({ length: count }, (_, i) => {
        let s = '';
        for (let k = next(6); k > 0; k--) s += units[next(units.length)]!;
        return i % 5 === 0 ? s : s + (next(50_000) % 997);
      });
      const bytes = Buffer.from(strings.join(''), 'latin1');
      const starts = new Uint32Array(count + 1);
      strings.forEach((s, i) => (starts[i + 1] = starts[i]! + s.length));
      const want = sortDistinct([...strings]);
      const { sorted, rank } = await sortByteStrings(bytes, starts);
      const list = asciiList(sorted);
      expect(list.size).toBe(want.length);
      const at = want.findIndex((s, i) => list.text(i) !== s);
      expect(at === -1 ? null : { at, got: list.text(at), want: want[at] }).toBeNull();
      const wrong = strings.findIndex((s, i) => list.text(rank[i]!) !== s);
      expect(wrong === -1 ? null : { at: wrong, string: strings[wrong], rank: rank[wrong] }).toBeNull();
    }, 120_000);
  }
});

describe('ByteStringSort', () => {
  it('sorts several lists into one, with repeats across them and a prefix most strings share, each string its position', async () => {
    let seed = 9;
    const next = (n: number): number => ((seed = (Math.imul(seed, 1103515245) + 12345) >>> 0) % n);
    // A list past the workers' threshold, small ones, an empty one; names that share 12 bytes as TPC-H's do.
    const lists = [70_000, 3, 0, 40_000].map((count) =>
      Array.from({ length: count }, () => (next(4) === 0 ? `Customer#${String(next(30_000)).padStart(9, '0')}` : `${'furiously '.slice(next(9))}${next(5000)}`)),
    );
    const sort = new ByteStringSort();
    for (const list of lists) {
      const starts = new Uint32Array(list.length + 1);
      list.forEach((s, i) => (starts[i + 1] = starts[i]! + s.length));
      sort.add(Buffer.from(list.join(''), 'latin1'), starts);
    }
    const { sorted, ranks } = await sort.finish();
    const want = sortDistinct(lists.flat());
    const list = asciiList(sorted);
    expect(list.size).toBe(want.length);
    const at = want.findIndex((s, i) => list.text(i) !== s);
    expect(at === -1 ? null : { at, got: list.text(at), want: want[at] }).toBeNull();
    lists.forEach((strings, l) => {
      const wrong = strings.findIndex((s, i) => list.text(ranks[l]![i]!) !== s);
      expect(wrong === -1 ? null : { list: l, at: wrong, string: strings[wrong] }).toBeNull();
    });
  }, 120_000);
});

describe('mergeSortedLists', () => {
  let seed = 11;
  const next = (n: number): number => ((seed = (Math.imul(seed, 1103515245) + 12345) >>> 0) % n);
  const word = (units: readonly string[]) => (): string => Array.from({ length: next(4) }, () => units[next(units.length)]).join('');
  /** Sorted lists of words that repeat within and across lists, and loose strings (repeats, any order). */
  const lists = (units: readonly string[]): { lists: string[][]; loose: string[] } => ({
    lists: Array.from({ length: 5 }, () => sortDistinct(Array.from({ length: 200 + next(300) }, word(units)))),
    loose: Array.from({ length: 100 }, word(units)),
  });

  for (const [kind, units] of [
    ['ASCII, compared as bytes', ['', 'a', 'b', 'z', 'A', '~', ' ', '\u007f', '0']],
    ['not ASCII, decoded', ['', 'a', 'b', 'z', 'A', '~', '\u0080', 'é', '\u4e2d', '\ud83d\ude00', '\uffff', ' ']],
  ] as const) {
    it(`merges lists into what sortDistinct gives, with each string its id: ${kind}`, async () => {
      const { lists: sorted, loose } = lists(units);
      let decoded = 0;
      const sortedStrings = sorted.map((l) => {
        const list = sortedList(l);
        return { ...list, text: (i: number) => (decoded++, list.text(i)) };
      });
      expect(sortedStrings.every((l) => l.ascii !== undefined)).toBe(kind.startsWith('ASCII'));
      const want = sortDistinct([...sorted.flat(), ...loose]);
      const { dict, ids, listIds } = await dictionaryFor(loose, [], sortedStrings);
      // Byte comparisons decode nothing until the dictionary is read.
      if (kind.startsWith('ASCII')) expect(decoded).toBe(0);
      expect(dict.size).toBe(want.length);
      expect(dict.strings).toEqual(want);
      expect(loose.findIndex((s, i) => dict.text(ids![i]!) !== s)).toBe(-1);
      sorted.forEach((l, k) => expect(l.findIndex((s, i) => dict.text(listIds![k]![i]!) !== s)).toBe(-1));
      expect(dict.id(want[7]!)).toBe(7);
      expect(dict.has('not there at all')).toBe(false);
      if (!kind.startsWith('ASCII')) return;
      // Each id's bytes where its run of the merged lists says (tables over every id read them so).
      const b = dict.bytes!;
      const at = (id: number): string => {
        const r = dictionaryRun(b, id);
        const list = b.lists[b.runLists[r]!]!;
        const entry = b.runEntries[r]! + id - b.runIds[r]!;
        return Buffer.from(list.bytes.subarray(list.starts[entry]!, asciiEnd(list, entry))).toString('latin1');
      };
      expect(want.findIndex((s, id) => at(id) !== s)).toBe(-1);
      expect(b.runIds.length).toBeLessThan(want.length);
    });
  }

  it('merges lists alone, and sorts more lists than it merges', async () => {
    const { lists: sorted } = lists(['a', 'b', 'c', 'é']);
    const merged = mergeSortedLists(sorted.map(sortedList));
    expect(merged.dict.strings).toEqual(sortDistinct(sorted.flat()));
    // Long runs of one list between the other's few strings (a column's names and a program's constants).
    const long = sortDistinct(Array.from({ length: 50_000 }, (_, i) => `name ${i * 7}`));
    const few = ['', 'name 35', 'name 4', 'name 99999', 'zz'];
    const runs = mergeSortedLists([sortedList(long), sortedList(few)]);
    expect(runs.dict.strings).toEqual(sortDistinct([...long, ...few]));
    expect([0, 1].every((k) => [long, few][k]!.every((t, i) => runs.dict.text(runs.ids[k]![i]!) === t))).toBe(true);
    const many = Array.from({ length: MERGED_LISTS + 1 }, (_, i) => sortedList([`s${i}`, `t${i % 3}`]));
    const { dict, listIds } = await dictionaryFor([], [], many);
    expect(dict.strings).toEqual(sortDistinct(many.flatMap((l) => [l.text(0), l.text(1)])));
    expect(listIds!.every((ids, k) => dict.text(ids[0]!) === many[k]!.text(0) && dict.text(ids[1]!) === many[k]!.text(1))).toBe(true);
  });
});
