/**
 * The device's byte string sort (gpu/string-sort.ts) against io's compareBytes order: on random sets of strings the
 * same distinct strings, in the same order, and each string's position among them, as the workers' sort gives.
 */
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { asciiCount, asciiEnd, asciiList, ByteStringSort, byteSortTimes, compareBytes, sortDistinct, type AsciiStrings } from '@vixen/io';
import { mergeSortedLists, sortedList } from '../src/sort-strings.js';
import { openGpu, type Gpu } from '../src/index.js';
import { internals } from '../src/gpu/device.js';
import { byteSorter, DeviceByteStringSort } from '../src/gpu/string-sort.js';

let gpu: Gpu;
beforeAll(async () => {
  gpu = await openGpu();
});
afterAll(() => gpu?.dispose());

/** A list of strings as ByteStringSort takes them. */
function list(strings: readonly Uint8Array[]): { bytes: Uint8Array; starts: Uint32Array } {
  const starts = new Uint32Array(strings.length + 1);
  strings.forEach((s, i) => (starts[i + 1] = starts[i]! + s.length));
  const bytes = new Uint8Array(starts[strings.length]!);
  strings.forEach((s, i) => bytes.set(s, starts[i]));
  return { bytes, starts };
}

/** The distinct strings of `lists` in compareBytes order, each as a string of its bytes' codes (for messages). */
function expected(lists: ReadonlyArray<readonly Uint8Array[]>): string[] {
  const all = lists.flat().slice();
  all.sort((a, b) => compareBytes(a, 0, a.length, b, 0, b.length));
  return all.filter((s, i) => i === 0 || compareBytes(s, 0, s.length, all[i - 1]!, 0, all[i - 1]!.length) !== 0).map((s) => Array.from(s).join(','));
}

/** Each string of `sorted` as a string of its bytes' codes. */
const texts = (sorted: AsciiStrings): string[] => Array.from({ length: asciiCount(sorted) }, (_, d) => Array.from(sorted.bytes.subarray(sorted.starts[d], asciiEnd(sorted, d))).join(','));

async function check(lists: ReadonlyArray<readonly Uint8Array[]>): Promise<void> {
  const sort = new DeviceByteStringSort(gpu, 0);
  for (const l of lists) {
    const { bytes, starts } = list(l);
    sort.add(bytes, starts);
  }
  const { sorted, ranks } = await sort.finish();
  const got = texts(sorted);
  expect(got).toEqual(expected(lists));
  lists.forEach((strings, l) => expect(strings.map((_, i) => got[ranks[l]![i]!])).toEqual(strings.map((s) => Array.from(s).join(','))));
}

const utf8 = new TextEncoder();
/** Strings of few distinct bytes (so prefixes repeat), with 2- and 4-byte UTF-8 and NUL, and long shared prefixes. */
const piece = fc.constantFrom('', 'a', 'b', 'ab', '\0', 'z', '~', 'é', '\u4e2d', '\ud83d\ude00', '\uffff', 'furiously regular ', 'Customer#0000');
const aString = fc.array(piece, { maxLength: 6 }).map((p) => utf8.encode(p.join('')));

describe('device byte string sort', () => {
  it('orders random strings as compareBytes does, repeats once, each string its position', async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(fc.array(aString, { maxLength: 60 }), { minLength: 1, maxLength: 3 }), async (lists) => check(lists)),
      { numRuns: 25 },
    );
  }, 120_000);

  it('sorts one string, none, empty strings only, and strings that differ past many rounds', async () => {
    await check([[utf8.encode('x')]]);
    await check([[]]);
    await check([[], [new Uint8Array(0), new Uint8Array(0)], [new Uint8Array(0)]]);
    const long = 'the quick brown fox jumps over the lazy dog, carefully and furiously '.repeat(2);
    await check([[...long].map((_, k) => utf8.encode(long + String(k % 17))).concat([utf8.encode(long), utf8.encode(long.slice(0, 50)), utf8.encode(long)])]);
  }, 60_000);

  it('sorts 20,000 comment-like strings in two lists (many radix tiles and scan blocks), and sorts running at once', async () => {
    let seed = 3;
    const next = (n: number): number => ((seed = (Math.imul(seed, 1103515245) + 12345) >>> 0) % n);
    const words = ['furiously', 'regular', 'deposits', 'carefully', 'ironic', 'accounts', 'sleep', 'blithely', 'pending', 'requests'];
    const comment = (): Uint8Array => utf8.encode(Array.from({ length: 1 + next(6) }, () => words[next(words.length)]).join(' '));
    const sorts = byteSortTimes.deviceSorts;
    await check([Array.from({ length: 12_000 }, comment), Array.from({ length: 8_000 }, comment)]);
    expect(byteSortTimes.deviceSorts).toBe(sorts + 1);
    // Sorts at once (files loaded together) share the device's buffer pool, not their buffers.
    await Promise.all([check([Array.from({ length: 3_000 }, comment)]), check([Array.from({ length: 150 }, comment)]), check([Array.from({ length: 900 }, comment)])]);
  }, 60_000);

  it('takes lists through byteSorter: the device where forced, the workers below the threshold or past a binding, the same answer', async () => {
    const strings = Array.from({ length: 500 }, (_, i) => utf8.encode(`${(i * 7919) % 263} comment ${i % 3 ? 'x' : ''}`));
    const answers = [];
    for (const sort of [byteSorter(gpu, 'device'), new DeviceByteStringSort(gpu, 1e9), new ByteStringSort()]) {
      const { bytes, starts } = list(strings);
      sort.add(bytes.subarray(0, starts[200]!), starts.subarray(0, 201));
      sort.add(bytes, starts.slice(200));
      const { sorted, ranks } = await sort.finish();
      answers.push({ sorted: texts(sorted), ranks: ranks.map((r) => Array.from(r)) });
    }
    expect(answers[0]).toEqual(answers[2]);
    expect(answers[1]).toEqual(answers[2]);
    // The device's list names its strings where the lists held them (with ends): the run's dictionary merges it with
    // another list, comparing bytes, into what sorting all of them gives.
    const device = new DeviceByteStringSort(gpu, 0);
    device.add(list(strings).bytes, list(strings).starts);
    const { sorted } = await device.finish();
    expect(sorted.ends).toBeDefined();
    const others = ['', '0 comment', '99 comment x', 'zz'];
    const decoded = strings.map((b) => Buffer.from(b).toString('latin1'));
    const { dict, ids } = mergeSortedLists([asciiList(sorted), sortedList(others)]);
    expect(dict.strings).toEqual(sortDistinct([...decoded, ...others]));
    expect(others.map((o, i) => dict.text(ids[1]![i]!))).toEqual(others);
    // A sort finished or abandoned holds no device buffer (each list's bytes are uploaded as it is added).
    const pool = internals(gpu).pool;
    const held = pool.inUseBytes;
    const abandoned = new DeviceByteStringSort(gpu, 0);
    abandoned.add(list(strings).bytes, list(strings).starts);
    await abandoned.abandon();
    expect(pool.inUseBytes).toBe(held);
    const finished = new DeviceByteStringSort(gpu, 0);
    finished.add(list(strings).bytes, list(strings).starts);
    await finished.finish();
    expect(pool.inUseBytes).toBe(held);
    expect(answers[2]!.ranks[1]).toHaveLength(300);
    // Strings past one binding of a device (here 4 KiB) go to the workers, with the same answer.
    const small = await openGpu({ maxStorageBufferBindingSize: 4096 });
    try {
      const sorts = byteSortTimes.deviceSorts;
      const sort = byteSorter(small, 'device');
      const { bytes, starts } = list(strings);
      sort.add(bytes, starts);
      const { sorted, ranks } = await sort.finish();
      expect(byteSortTimes.deviceSorts).toBe(sorts);
      expect({ sorted: texts(sorted), ranks: ranks.map((r) => Array.from(r)) }).toEqual({ ...answers[2], ranks: [[...answers[2]!.ranks[0]!, ...answers[2]!.ranks[1]!]] });
    } finally {
      small.dispose();
    }
  }, 60_000);

  it('sorts lists that fit a binding each but not together in runs that do, merged, as the workers sort them', async () => {
    // 4,000 strings (repeats across runs) in lists of 1,000: each list's bytes and rows fit 32 KiB, all of them not.
    const strings = Array.from({ length: 4000 }, (_, i) => utf8.encode(`${(i * 7919) % 1999} note ${i % 3 ? 'x' : ''}`));
    const { bytes, starts } = list(strings);
    const small = await openGpu({ maxStorageBufferBindingSize: 32 * 1024 });
    try {
      const inUse = internals(small).pool.inUseBytes;
      const sorts = byteSortTimes.deviceSorts;
      const runs = byteSorter(small, 'device');
      const workers = new ByteStringSort();
      for (let at = 0; at < strings.length; at += 1000) for (const s of [runs, workers]) s.add(bytes, starts.subarray(at, at + 1001));
      const [byRuns, byWorkers] = await Promise.all([runs.finish(), workers.finish()]);
      expect(byteSortTimes.deviceSorts - sorts).toBeGreaterThan(1);
      expect({ sorted: texts(byRuns.sorted), ranks: byRuns.ranks.map((r) => Array.from(r)) }).toEqual({ sorted: texts(byWorkers.sorted), ranks: byWorkers.ranks.map((r) => Array.from(r)) });
      expect(asciiCount(byRuns.sorted)).toBeLessThan(strings.length);
      expect(internals(small).pool.inUseBytes).toBe(inUse);
    } finally {
      small.dispose();
    }
  }, 60_000);
});
