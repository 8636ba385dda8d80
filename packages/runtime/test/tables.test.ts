/** Host side of the string built-ins: the dictionary closed over substrings, and the tables kernels read. */
import { describe, expect, it } from 'vitest';
import { StringDictionary } from '@vixen/io';
import { closeOverSubstrings, kernelTableWords } from '../src/tables.js';

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
});
