/** The dictionary's string sort on worker threads: the same strings, in the same order, as one thread's sort. */
import { describe, expect, it } from 'vitest';
import { sortDistinct } from '@vixen/io';
import { mergeSortedRuns, sortDistinctInWorkers } from '../src/sort-strings.js';

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

describe('mergeSortedRuns', () => {
  it('merges sorted runs and the other strings into what sortDistinct gives, with each string its id', () => {
    let seed = 11;
    const next = (n: number): number => ((seed = (Math.imul(seed, 1103515245) + 12345) >>> 0) % n);
    const units = ['', 'a', 'b', 'z', 'A', '~', '\u0080', 'é', '\u4e2d', '\ud83d\ude00', '\uffff', ' '];
    const word = (): string => Array.from({ length: next(4) }, () => units[next(units.length)]).join('');
    const strings: string[] = [];
    const runs: Array<[number, number]> = [];
    // Unsorted strings between the runs; strings repeat within and across the runs and the rest.
    for (let r = 0; r < 5; r++) {
      for (let i = next(30); i > 0; i--) strings.push(word());
      const run = sortDistinct(Array.from({ length: 200 + next(300) }, word));
      runs.push([strings.length, strings.length + run.length]);
      strings.push(...run);
    }
    const merged = mergeSortedRuns(strings, runs)!;
    expect(merged.sorted).toEqual(sortDistinct([...strings]));
    const wrong = strings.findIndex((s, i) => merged.sorted[merged.ids[i]!] !== s);
    expect(wrong).toBe(-1);
    // Runs covering too little, or too many runs, are left to the sort.
    expect(mergeSortedRuns(strings, [runs[0]!])).toBeUndefined();
    expect(mergeSortedRuns(strings, [])).toBeUndefined();
  });
});
