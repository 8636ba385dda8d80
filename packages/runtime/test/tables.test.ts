/** Host side of the string built-ins: the dictionary closed over substrings, and the tables kernels read. */
import { describe, expect, it } from 'vitest';
import { sortDistinct, StringDictionary } from '@vixen/io';
import { closeOverSubstrings, kernelTableWords } from '../src/tables.js';
import { mergeSortedLists, sortedList } from '../src/sort-strings.js';

describe('string tables', () => {
  it('closes the strings over every substring call, repeatedly', () => {
    const specs = [
      { fn: 'string:substring' as const, args: [2, 3] },
      { fn: 'string:like' as const, args: ['%a%'] },
    ];
    // abcdef -> bcd -> cd -> d -> '' (each a substring from position 2 of the one before).
    expect([...closeOverSubstrings(['abcdef', 'x'], specs)].sort()).toEqual(['', 'abcdef', 'bcd', 'cd', 'd', 'x']);
    expect([...closeOverSubstrings(['abc'], [specs[1]!])]).toEqual(['abc']);
  });

  it('lays tables out after their offsets: one bit per id for tests, one word per id otherwise', () => {
    const specs = [
      { fn: 'string:like' as const, args: ['%ab'] },
      { fn: 'string:length' as const, args: [] },
      { fn: 'string:substring' as const, args: [1, 1] },
    ];
    const dict = new StringDictionary(closeOverSubstrings(['', 'ab', 'b', 'héllo', 'xab'], specs));
    const ids = dict.strings;
    expect(ids).toEqual(['', 'a', 'ab', 'b', 'h', 'héllo', 'x', 'xab']);
    const words = kernelTableWords(specs, dict);
    // Offsets: 3 header words, one word of bits for 8 ids, then 8 lengths, then 8 result ids.
    expect([...words.slice(0, 3)]).toEqual([3, 4, 12]);
    expect(words[3]).toBe((1 << 2) | (1 << 7));
    expect([...words.slice(4, 12)]).toEqual([0, 1, 2, 1, 1, 5, 1, 3]);
    expect([...words.slice(12, 20)].map((id) => ids[id])).toEqual(['', 'a', 'a', 'b', 'h', 'h', 'x', 'x']);
    expect(words).toHaveLength(20);
  });

  it('tabulates LIKE, startswith, endswith and contains over the bytes of a dictionary merged from ASCII lists, as over its strings', () => {
    const parts = ['', 'a', 'ab', 'special', 'requests', ' ', '%', 'x'];
    let seed = 5;
    const next = (n: number): number => ((seed = (Math.imul(seed, 1103515245) + 12345) >>> 0) % n);
    const strings = Array.from({ length: 3000 }, () => Array.from({ length: next(6) }, () => parts[next(parts.length)]).join(''));
    const half = sortDistinct(strings.slice(0, 1500));
    let decoded = 0;
    const lists = [half, sortDistinct(strings.slice(1000))].map((l) => {
      const list = sortedList(l);
      return { ...list, text: (i: number) => (decoded++, list.text(i)) };
    });
    const { dict } = mergeSortedLists(lists);
    expect(dict.bytes).toBeDefined();
    const byBytes = [
      ...['%special%requests%', 'ab%', '%ab', 'ab', '%', '', '%a%a%', 'special%x'].map((p) => ({ fn: 'string:like' as const, args: [p] })),
      ...['ab', '', ' x'].flatMap((p) => (['string:startswith', 'string:endswith', 'string:contains'] as const).map((fn) => ({ fn, args: [p] }))),
    ];
    // Decoded: LIKE with `_`, a pattern past ASCII.
    const byStrings = [{ fn: 'string:like' as const, args: ['a_%'] }, { fn: 'string:contains' as const, args: ['é'] }];
    const plain = new StringDictionary(strings);
    expect(plain.bytes).toBeUndefined();
    expect(kernelTableWords(byBytes, dict)).toEqual(kernelTableWords(byBytes, plain));
    expect(decoded).toBe(0);
    expect(kernelTableWords(byStrings, dict)).toEqual(kernelTableWords(byStrings, plain));
    expect(dict.strings).toEqual(plain.strings);
  });
});
