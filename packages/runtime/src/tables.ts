/**
 * String built-ins on the device (queryplan builtins.ts `table`): kernels never see characters, so once a run's
 * dictionary is final the host tabulates each (function, constants) a kernel uses over every dictionary id.
 */
import type { TableSpec } from '@vixen/codegen-wgsl';
import { builtinTable, evalBuiltin, makesStrings, type Value } from '@vixen/queryplan';
import { asciiEnd, runInWorker, StringDictionary, type EncodedFacts, type SortedStrings } from '@vixen/io';
import { MERGED_LISTS, mergeSortedLists, sortDistinctInWorkers, sortedList, sortWithIds } from './sort-strings.js';

/**
 * `strings` plus every string the substring tables (`string:substring`, Soufflé's `string:substr`) can produce
 * from them, repeatedly (a substring of a substring is one too), so that the order-preserving dictionary gives
 * every result an id. Each new string is a substring of an original one, so this ends.
 */
export function closeOverSubstrings(strings: Iterable<string>, specs: readonly TableSpec[]): Iterable<string> {
  const substrings = specs.filter((s) => makesStrings(s.fn));
  // Without substring tables there is nothing to add (the dictionary drops duplicates itself).
  if (substrings.length === 0) return strings;
  const all = new Set(strings);
  let fresh = [...all];
  while (fresh.length > 0 && substrings.length > 0) {
    const next: string[] = [];
    for (const s of fresh) {
      for (const spec of substrings) {
        const t = evalBuiltin(spec.fn, [s, ...spec.args]) as string;
        if (!all.has(t)) {
          all.add(t);
          next.push(t);
        }
      }
    }
    fresh = next;
  }
  return all;
}

/** A table's key: its function and constants. */
const specKey = (s: TableSpec): string => JSON.stringify([s.fn, ...s.args]);

/** The key of a kernel's tables (kernelTableWords' words depend on nothing else but the dictionary). */
export const tablesKey = (specs: readonly TableSpec[]): string => specs.map(specKey).join('\n');

/** The substring tables (by key) each dictionary was closed over when it was built (dictionaryFor). */
const closedOver = new WeakMap<StringDictionary, ReadonlySet<string>>();

/**
 * The order-preserving dictionary of `strings` and `lists` (sorted and distinct each: a store's column dictionaries)
 * closed over the substring tables among `specs`, and where known without lookups, `ids`: per string of `strings`
 * (an array), its id, and `listIds`: per list, each of its strings' ids. Without substring tables the lists are
 * merged (mergeSortedLists) with `strings` sorted (on workers when many), and their strings decoded only when asked
 * for; with them, every string is decoded and sorted.
 */
export async function dictionaryFor(
  strings: Iterable<string>,
  specs: readonly TableSpec[],
  lists: readonly SortedStrings[] = [],
): Promise<{ dict: StringDictionary; ids?: Uint32Array; listIds?: Uint32Array[] }> {
  const substrings = specs.some((s) => makesStrings(s.fn));
  const closed = (dict: StringDictionary): StringDictionary => {
    closedOver.set(dict, new Set(specs.filter((s) => makesStrings(s.fn)).map(specKey)));
    return dict;
  };
  if (!substrings && Array.isArray(strings) && lists.length > 0 && lists.length < MERGED_LISTS) {
    const free = await sortWithIds(strings);
    const merged = mergeSortedLists(free.sorted.length > 0 ? [sortedList(free.sorted), ...lists] : lists);
    const listIds = free.sorted.length > 0 ? merged.ids.slice(1) : merged.ids;
    const ids = free.sorted.length > 0 ? free.ids.map((rank) => merged.ids[0]![rank]!) : free.ids;
    return { dict: closed(merged.dict), ids, listIds };
  }
  const decoded = lists.flatMap((l) => Array.from({ length: l.size }, (_, i) => l.text(i)));
  if (substrings) {
    const { sorted } = await sortDistinctInWorkers([...closeOverSubstrings([...strings, ...decoded], specs)]);
    return { dict: closed(new StringDictionary(sorted, true)) };
  }
  const free = [...strings];
  if (lists.length === 0) {
    const { sorted, ids } = await sortDistinctInWorkers(free);
    const dict = closed(new StringDictionary(sorted, true));
    return ids ? { dict, ids, listIds: [] } : { dict };
  }
  // More lists than are merged: sorted with the other strings.
  const { sorted, ids } = await sortWithIds([...free, ...decoded]);
  let at = free.length;
  return { dict: closed(new StringDictionary(sorted, true)), ids: ids.subarray(0, at), listIds: lists.map((l) => ids.subarray(at, (at += l.size))) };
}

/**
 * dictionaryFor of `strings` and `lists`, whose first strings and lists are `facts`' interner's, with the facts'
 * string words rewritten to its ids: through the ids it gave, where it gave them, on the worker pool (millions of
 * rows' words, which the main thread would take seconds over).
 */
export async function dictionaryOfFacts(
  facts: EncodedFacts,
  strings: string[],
  specs: readonly TableSpec[],
  lists: readonly SortedStrings[],
): Promise<{ dict: StringDictionary; listIds?: Uint32Array[] }> {
  const { dict, ids, listIds } = await dictionaryFor(strings, specs, lists);
  await facts.remapStrings(ids && listIds ? facts.strings.idMap(ids, listIds) : dict, runInWorker);
  return listIds ? { dict, listIds } : { dict };
}

/** Whether every substring table among `specs` finds all its results in `dict` (it was closed over them). */
export function closedUnder(dict: StringDictionary, specs: readonly TableSpec[]): boolean {
  const closed = closedOver.get(dict);
  return specs.every((s) => !makesStrings(s.fn) || (closed?.has(specKey(s)) ?? false));
}

/** A test of bytes [s, e) of `bytes`. */
type ByteTest = (bytes: Uint8Array, s: number, e: number) => boolean;

/** Whether `piece` (ASCII codes) is at byte `at` of `bytes`. */
function bytesAt(bytes: Uint8Array, at: number, piece: Uint8Array): boolean {
  for (let k = 0; k < piece.length; k++) if (bytes[at + k] !== piece[k]) return false;
  return true;
}

/** Where `piece` first lies in bytes [from, to) of `bytes`, or -1. */
function findBytes(bytes: Uint8Array, from: number, to: number, piece: Uint8Array): number {
  for (let at = from; at + piece.length <= to; at++) if (bytesAt(bytes, at, piece)) return at;
  return -1;
}

/**
 * The test of `spec` (LIKE without `_`, startswith, endswith, contains, over ASCII constants) on ASCII bytes, as
 * queryplan's evalBuiltin gives it on their strings (their code points are their bytes); undefined for the others.
 */
function byteTest(spec: TableSpec): ByteTest | undefined {
  const [arg] = spec.args;
  if (typeof arg !== 'string' || !/^[\x00-\x7f]*$/.test(arg)) return undefined;
  const piece = Buffer.from(arg, 'latin1');
  switch (spec.fn) {
    case 'string:startswith':
      return (b, s, e) => e - s >= piece.length && bytesAt(b, s, piece);
    case 'string:endswith':
      return (b, s, e) => e - s >= piece.length && bytesAt(b, e - piece.length, piece);
    case 'string:contains':
      return (b, s, e) => findBytes(b, s, e, piece) >= 0;
    case 'string:like': {
      if (arg.includes('_')) return undefined;
      // As builtins.ts likeLiteral: the pieces between the `%`s in order, the first at the start and the last at the end.
      const pieces = arg.split('%').map((p) => Buffer.from(p, 'latin1'));
      const first = pieces[0]!;
      if (pieces.length === 1) return (b, s, e) => e - s === first.length && bytesAt(b, s, first);
      const last = pieces[pieces.length - 1]!;
      const middle = pieces.slice(1, -1).filter((p) => p.length > 0);
      return (b, s, e) => {
        if (e - s < first.length + last.length || !bytesAt(b, s, first)) return false;
        let at = s + first.length;
        const end = e - last.length;
        for (const p of middle) {
          const found = findBytes(b, at, end, p);
          if (found < 0) return false;
          at = found + p.length;
        }
        return bytesAt(b, end, last);
      };
    }
    default:
      return undefined;
  }
}

/** One table's words: bit id of word id >> 5 for tests, else one word per id (a length, or a result's id). */
function tableWords(spec: TableSpec, dict: StringDictionary): Uint32Array {
  const test = dict.bytes && builtinTable(spec.fn) === 'bits' ? byteTest(spec) : undefined;
  if (test) {
    // Over the dictionary's bytes: millions of comments tested without a JS string each.
    const { lists, runIds, runLists, runEntries } = dict.bytes!;
    const bits = new Uint32Array(Math.ceil(dict.size / 32));
    for (let r = 0; r < runIds.length; r++) {
      const list = lists[runLists[r]!]!;
      const end = r + 1 < runIds.length ? runIds[r + 1]! : dict.size;
      for (let id = runIds[r]!, entry = runEntries[r]!; id < end; id++, entry++) {
        if (test(list.bytes, list.starts[entry]!, asciiEnd(list, entry))) bits[id >>> 5]! |= 1 << (id & 31);
      }
    }
    return bits;
  }
  const n = dict.strings.length;
  // One argument array for every call: tables are built over millions of ids.
  const args: Value[] = ['', ...spec.args];
  const value = (id: number): Value => {
    args[0] = dict.strings[id]!;
    return evalBuiltin(spec.fn, args);
  };
  if (builtinTable(spec.fn) === 'bits') {
    const bits = new Uint32Array(Math.ceil(n / 32));
    for (let id = 0; id < n; id++) if (value(id) === true) bits[id >>> 5]! |= 1 << (id & 31);
    return bits;
  }
  const words = new Uint32Array(n);
  for (let id = 0; id < n; id++) {
    const v = value(id);
    words[id] = typeof v === 'string' ? dict.id(v) : (v as number) >>> 0;
  }
  return words;
}

/**
 * Tables already built over a dictionary, by function and constants: kernels of one run share them, and so do the
 * runs of a Database that keep its dictionary (tabulating LIKE over 1.5M strings costs more than the query).
 */
const tabulated = new WeakMap<StringDictionary, Map<string, Uint32Array>>();

/** A kernel's tables in one buffer: word k = the offset of table k, then the tables back to back. */
export function kernelTableWords(specs: readonly TableSpec[], dict: StringDictionary): Uint32Array {
  let cache = tabulated.get(dict);
  if (!cache) tabulated.set(dict, (cache = new Map()));
  const tables = specs.map((s) => {
    const key = specKey(s);
    let t = cache.get(key);
    if (!t) cache.set(key, (t = tableWords(s, dict)));
    return t;
  });
  const out = new Uint32Array(specs.length + tables.reduce((n, t) => n + t.length, 0));
  let at = specs.length;
  tables.forEach((t, k) => {
    out[k] = at;
    out.set(t, at);
    at += t.length;
  });
  return out;
}
