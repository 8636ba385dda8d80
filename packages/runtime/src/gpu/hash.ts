/**
 * Hash operators on device relations (WGSL in codegen-wgsl kernels/hash.ts and hash-aggregate.ts): a hash join
 * as build + probe, giving (probe row, build row) index pairs or chosen words of both rows, and a hash group-by.
 * Not tied to KIR kernels:
 * callers pass relations and where their key words are, and get relations back, so a planner can use them
 * (and reuse one built table across probes) without a kernel kind of its own.
 */
import {
  CHAIN_OVERFLOW,
  CPU_CHAIN_STEPS,
  GROUP_ITEMS,
  HASH_ITEMS,
  JOIN_PAIRS,
  groupRowWords,
  groupSlotWords,
  hashAggregateShaders,
  hashBuildShaders,
  hashProbeShaders,
  joinSlotWords,
  type HashAggregate,
  type HashKeyLayout,
  type JoinOutputWord,
  type KernelShaders,
} from '@vixen/codegen-wgsl';
import { internals, type Gpu, type GpuImpl } from './device.js';
import { CLAMP_PASSES, checkGuessAtSync, guessedRoom, mayGuess, memoShaders, noteTotal, Recorder, type Bound } from './recorder.js';
import { acquireBound, bound, checkResultSize, DeviceLimitError, exactCount, pendingRelation, sizeOf, submitAndSync, type DeviceRelation } from './relations.js';
import { combineGroups, leaves, mapChunks } from './chunks.js';
import { concatenate } from './kernels/concat.js';

/** A relation and the row offsets of its key words, in key order (an int64 key column is two words). */
export interface KeyedRelation {
  relation: DeviceRelation;
  keyWords: readonly number[];
}

/** A built join table; keep it to probe it many times, then releaseHashTable. */
export interface HashTable {
  /**
   * Slots (a power of two) of 1 + keyWords words, then the word that says whether any key repeats, then (a
   * filtered build) the rows kept.
   */
  table: Bound | null;
  /** Per build row: the next row + 1 with the same key, 0 at a chain's end. */
  next: Bound | null;
  slots: number;
  keyWords: number;
  /** The build side (not owned: the caller keeps it alive while probing) and the row offsets of its key words. */
  build: DeviceRelation;
  buildKeys: readonly number[];
}

/** Smallest power of two >= x (x >= 1). */
function pow2(x: number): number {
  return 2 ** Math.ceil(Math.log2(Math.max(1, x)));
}

/** Slots of the join table over `rows` build rows: load factor at most 1/2. */
export const joinTableSlots = (rows: number): number => pow2(2 * rows);

function layoutOf(k: KeyedRelation, what: string): HashKeyLayout {
  if (k.keyWords.length === 0) throw new Error(`${what}: a hash key needs at least one word`);
  return { width: k.relation.width, keyWords: k.keyWords };
}

/** Builds a join table over `build`'s key (load factor at most 1/2). One submission, no readback. */
export function buildHashTable(gpu: Gpu, build: KeyedRelation): Promise<HashTable> {
  const g = internals(gpu);
  const layout = layoutOf(build, 'hash build');
  return g.scoped('hash build', () => buildTable(g, build, memoShaders(['build', layout], () => hashBuildShaders(layout))));
}

/** Words of the join table buildTable makes for `rows` build rows of `keyWords` key words (two words after the slots). */
export function joinTableWords(rows: number, keyWords: number): number {
  return joinTableSlots(rows) * joinSlotWords(keyWords) + 2;
}

/** The word of a join table of `slots` slots that counts the rows a filtered build kept. */
export function keptRowsWord(slots: number, keyWords: number): number {
  return slots * joinSlotWords(keyWords) + 1;
}

/** A filtered build pass's uniform constants (the kernel's) and string tables. */
export interface BuildInputs {
  constants: Uint32Array;
  tables?: Bound | undefined;
}

/** buildHashTable inside a caller's scope, with the caller's shaders (a `hashBuild` pass for `build`'s layout). */
async function buildTable(g: GpuImpl, build: KeyedRelation, shaders: KernelShaders): Promise<HashTable> {
  // A pending count: the table is sized for the bound, the pass reads the count from the device.
  const n = build.relation.count;
  const K = layoutOf(build, 'hash build').keyWords.length;
  if (n === 0) return { table: null, next: null, slots: 0, keyWords: K, build: build.relation, buildKeys: build.keyWords };
  const slots = joinTableSlots(n);
  // A table past one binding for a build side within one: the join runs per part of the build side (gpu/chunks.ts).
  checkResultSize(g, joinTableWords(n, K), `hash table of ${slots} slots`);
  const table = acquireBound(g, joinTableWords(n, K), `hash table of ${slots} slots`);
  const next = acquireBound(g, n, `hash chains of ${n} rows`);
  const rec = new Recorder(g, shaders);
  recordBuild(rec, build, table, next);
  await rec.submit();
  return { table, next, slots, keyWords: K, build: build.relation, buildKeys: build.keyWords };
}

/**
 * Records the build of the join table over `build` (at least one row) into `table` (joinTableWords, cleared
 * first) and `next` (a word per row), with the recorder's `hashBuild` pass; with `filtered`, that pass has a filter
 * (a pipeline probe's build filter) and reads the kernel's constants and tables. `range` (unfiltered builds) inserts
 * only the rows from its first to before its second.
 */
export function recordBuild(rec: Recorder, build: KeyedRelation, table: Bound, next: Bound, filtered?: BuildInputs, range?: readonly [number, number]): void {
  const rows = range ? range[1] : build.relation.count;
  // The slots `table` has room for (a keyless table's are fewer than the rows': it keeps one row).
  const slots = (table.words - 2) / joinSlotWords(build.keyWords.length);
  // A filtered build counts its kept rows first, clears the slots they need, then inserts them there (codegen-wgsl
  // hash.ts keptMask): the host clears only the repeat flag and the count after the slots.
  const extra = slots * joinSlotWords(build.keyWords.length);
  if (filtered) rec.clear(table.buffer, 8, 4 * ((table.offset ?? 0) + extra));
  else rec.clear(table.buffer, table.words * 4, 4 * (table.offset ?? 0));
  const sizes = range ? [range[1], slots - 1, range[0]] : [sizeOf(build.relation), slots - 1];
  if (filtered) {
    for (const step of [0, 2]) rec.dispatch('hashBuild', [bound(build.relation), table, next], [...sizes, step], rows, filtered.constants, filtered.tables);
  }
  rec.dispatch('hashBuild', [bound(build.relation), table, next], filtered ? [...sizes, 1] : sizes, rows, filtered?.constants, filtered?.tables);
}

export function releaseHashTable(gpu: Gpu, t: HashTable): void {
  releaseTable(internals(gpu), t);
}

function releaseTable(g: GpuImpl, t: HashTable): void {
  if (t.table) g.pool.release(t.table.buffer);
  if (t.next) g.pool.release(t.next.buffer);
}

/**
 * One row of `output` words per (probe row, build row) with equal keys, in no particular order; by default the
 * pair of row indices. One probe pass writes into room for one match per probe row (all a unique-key table
 * can give) and counts the matches on the device; the count is the one readback (none in a run that may start
 * again: countedOutput), and only when it exceeds that room (repeated build keys) does the pass run again with
 * room for exactly that many.
 */
export function probeHashTable(gpu: Gpu, t: HashTable, probe: KeyedRelation, output: readonly JoinOutputWord[] = JOIN_PAIRS): Promise<DeviceRelation> {
  const g = internals(gpu);
  const layout = layoutOf(probe, 'hash probe');
  const shaders = memoShaders(['probe', layout, t.build.width, output], () => hashProbeShaders(layout, t.build.width, output));
  return g.scoped('hash probe', () => {
    if (!probe.relation.chunks) return probeTable(g, t, probe, output, shaders);
    if (output.some((o) => o.from === 'probeIndex')) throw new DeviceLimitError('probe row indices of a probe side larger than one binding (its chunks count rows from 0)');
    return mapChunks(g, probe.relation, output.length, (c) => probeTable(g, t, { ...probe, relation: c }, output, shaders));
  });
}

/** probeHashTable inside a caller's scope, with the caller's shaders (a `hashProbe` pass for these layouts). */
async function probeTable(g: GpuImpl, t: HashTable, probe: KeyedRelation, output: readonly JoinOutputWord[], shaders: KernelShaders): Promise<DeviceRelation> {
  const layout = layoutOf(probe, 'hash probe');
  if (layout.keyWords.length !== t.keyWords) throw new Error(`hash probe: ${layout.keyWords.length} key words against a table of ${t.keyWords}`);
  // A pending count: tiles and room for the bound, the pass reads the count; the readback resolves it.
  const n = probe.relation.count;
  const width = output.length;
  const empty: DeviceRelation = { buffer: null, count: 0, width };
  const { table, next } = t;
  if (n === 0 || !table || !next) return empty;
  try {
    return await probeRows(g, t, table, next, probe, width, shaders);
  } catch (e) {
    if (!(e instanceof ChainOverflow)) throw e;
    return probeParts(g, t, table, probe, width, shaders);
  }
}

/** The probe pass's output over `table` and `next` (countedOutput). */
function probeRows(g: GpuImpl, t: HashTable, table: Bound, next: Bound, probe: KeyedRelation, width: number, shaders: KernelShaders): Promise<DeviceRelation> {
  const n = probe.relation.count;
  const tiles = Math.ceil(n / (HASH_ITEMS * g.limits.workgroupSize));
  return countedOutput(g, width, n, shaders, (rec, out, capacity, counter) =>
    rec.dispatch('hashProbe', [bound(probe.relation), bound(t.build), table, next, out, counter], [sizeOf(probe.relation), t.slots - 1, capacity], tiles * g.limits.workgroupSize),
  );
}

/** A probe thread's chains passed CHAIN_STEPS (CPU adapters: codegen-wgsl hash.ts). */
export class ChainOverflow extends Error {}

/**
 * probeRows where a CPU adapter's probe threads met chains longer than CHAIN_STEPS allows: the build rows in parts
 * of CPU_CHAIN_STEPS / HASH_ITEMS rows, so that no chain is longer than that, each built into a table of its own and
 * probed; the parts' outputs concatenated. Slow (a probe of every probe row per part), and only for such skew.
 */
async function probeParts(g: GpuImpl, t: HashTable, like: Bound, probe: KeyedRelation, width: number, shaders: KernelShaders): Promise<DeviceRelation> {
  const n = await exactCount(g, t.build);
  const rows = CPU_CHAIN_STEPS / HASH_ITEMS;
  const layout: HashKeyLayout = { width: t.build.width, keyWords: t.buildKeys };
  const builds = memoShaders(['build', layout], () => hashBuildShaders(layout));
  const table = acquireBound(g, like.words, `hash table of ${t.slots} slots`);
  const outs: DeviceRelation[] = [];
  let next: Bound | undefined;
  try {
    next = acquireBound(g, n, `hash chains of ${n} rows`);
    for (let first = 0; first < n; first += rows) {
      const rec = new Recorder(g, builds);
      recordBuild(rec, { relation: t.build, keyWords: t.buildKeys }, table, next, undefined, [first, Math.min(n, first + rows)]);
      await rec.submit();
      outs.push(await probeRows(g, t, table, next, probe, width, shaders));
    }
    let total = 0;
    for (const o of outs) total += await exactCount(g, o);
    checkResultSize(g, total * width, `output of ${total} rows x ${width} words`);
    return await concatenate(g, outs, width);
  } finally {
    g.pool.release(table.buffer);
    if (next) g.pool.release(next.buffer);
    for (const o of outs) if (o.buffer) g.pool.release(o.buffer);
  }
}

/**
 * Rows of `width` words a pass appends at an atomic counter (counting, not writing, rows at or past `capacity`),
 * `record`ed with room for `rows` rows at first (one match per input row). In a run that may start again
 * (GpuImpl.guessing) that room is a guess: the counter, clamped to the room, becomes the output's pending count
 * and the counter is a Guess the run's next sync checks, so the host goes on without a round trip. Otherwise the
 * counter is the one readback, and only when it exceeds that room does the pass run again with room for exactly
 * that many. A pass that writes at most a row per input row (`atMostRows`) has its exact room: its count stays pending.
 */
export async function countedOutput(
  g: GpuImpl,
  width: number,
  rows: number,
  shaders: KernelShaders,
  record: (rec: Recorder, out: Bound, capacity: number, counter: Bound) => void,
  /** Where the first run records (the caller's steps before it: they go to the device together); default a new recorder. */
  first?: Recorder,
  /** The pass writes at most one row per input row (a pipeline whose probes are all negated): no room to outgrow. */
  atMostRows = false,
): Promise<DeviceRelation> {
  const empty: DeviceRelation = { buffer: null, count: 0, width };
  const counter = acquireBound(g, 1, 'output counter');
  let counterHeld = true;
  try {
    // Room for one row per input row, or as many rows as one binding holds.
    const most = Math.floor((g.limits.maxStorageBufferBindingSize - 4) / (4 * width));
    let capacity = Math.max(1, Math.min(rows, most));
    const run = g.guessing;
    if (run !== null && mayGuess(shaders)) {
      // Room for what it needed last time (in proportion to its input rows) and more (roomFor): later passes size their work by this bound, and a
      // selective probe needs far less than a row per input row (a sort of TPC-H Q17's 123 matches took 490 ms on
      // llvmpipe over room for the 59,822 probe rows). A row per input row where it has not run before.
      capacity = guessedRoom(shaders, rows, most);
      checkResultSize(g, width * capacity + 1, `output of ${capacity} rows x ${width} words`);
      const out = acquireBound(g, width * capacity + 1, `output of ${capacity} rows x ${width} words`);
      const rec = first ?? new Recorder(g, shaders);
      rec.clear(counter.buffer, 4);
      record(rec, { buffer: out.buffer, words: width * capacity }, capacity, counter);
      rec.using(CLAMP_PASSES).dispatch('countClamp', [out], [{ buffer: counter.buffer, offset: 0 }, capacity, width * capacity], 1);
      await rec.submit();
      checkGuessAtSync(g, run, counter.buffer, shaders, capacity, rows);
      counterHeld = false;
      return pendingRelation(g, out.buffer, capacity, width);
    }
    if (atMostRows && rows <= most) {
      // The counter never passes the room: it becomes the output's pending count, with no readback. (A run that
      // guesses takes the guess above: its room, sized by the last run's rows, is tighter for the passes after.)
      checkResultSize(g, width * capacity + 1, `output of ${capacity} rows x ${width} words`);
      const out = acquireBound(g, width * capacity + 1, `output of ${capacity} rows x ${width} words`);
      const rec = first ?? new Recorder(g, shaders);
      rec.clear(counter.buffer, 4);
      record(rec, { buffer: out.buffer, words: width * capacity }, capacity, counter);
      rec.copy(counter.buffer, 0, out.buffer, width * capacity * 4, 4);
      await rec.submit();
      return pendingRelation(g, out.buffer, capacity, width);
    }
    for (;;) {
      checkResultSize(g, width * capacity, `output of ${capacity} rows x ${width} words`);
      const out = acquireBound(g, width * capacity, `output of ${capacity} rows x ${width} words`);
      const rec = first ?? new Recorder(g, shaders);
      first = undefined;
      rec.clear(counter.buffer, 4);
      record(rec, out, capacity, counter);
      const total = (await submitAndSync(g, rec, [{ buffer: counter.buffer, offset: 0, words: 1 }]))[0]![0]!;
      if (total >= CHAIN_OVERFLOW) {
        g.pool.release(out.buffer);
        throw new ChainOverflow();
      }
      if (total <= capacity) {
        // Once a launch (a part's total is summed with the other parts': splitSide).
        noteTotal(g, shaders, total, rows);
        if (total > 0) return { buffer: out.buffer, count: total, width };
        g.pool.release(out.buffer);
        return empty;
      }
      g.pool.release(out.buffer);
      capacity = total;
    }
  } finally {
    if (counterHeld) g.pool.release(counter.buffer);
  }
}

/**
 * A whole hash join inside the caller's scope (the KIR hashJoin kernel's driver): build, probe, release, with
 * the kernel's generated shaders (both passes).
 */
export async function hashJoinRows(g: GpuImpl, build: KeyedRelation, probe: KeyedRelation, output: readonly JoinOutputWord[], shaders: KernelShaders): Promise<DeviceRelation> {
  const t = await buildTable(g, build, shaders);
  try {
    return await probeTable(g, t, probe, output, shaders);
  } finally {
    releaseTable(g, t);
  }
}

/** Build on `build`, probe with `probe`, release the table: rows of `output` (default index pairs) per match. */
export async function hashJoin(gpu: Gpu, build: KeyedRelation, probe: KeyedRelation, output: readonly JoinOutputWord[] = JOIN_PAIRS): Promise<DeviceRelation> {
  const t = await buildHashTable(gpu, build);
  try {
    return await probeHashTable(gpu, t, probe, output);
  } finally {
    releaseHashTable(gpu, t);
  }
}

/** Groups beyond which the first table is too small (and the group-by runs again on a bigger one). */
export const HASH_GROUPS = 2 ** 16;

/**
 * Groups `input` by its key words: one row per distinct key, the key words then each aggregate's words
 * (see HashAggregate), in no particular order. Insert and emit are one submission; the readback is the group
 * count (and whether the table filled up: more than HASH_GROUPS groups, then it runs again, sized by rows).
 */
export function hashGroupBy(gpu: Gpu, input: KeyedRelation, aggregates: readonly HashAggregate[]): Promise<DeviceRelation> {
  const g = internals(gpu);
  const layout = layoutOf(input, 'hash group-by');
  const outWidth = groupRowWords(layout, aggregates);
  const shaders = memoShaders(['group-by', layout, aggregates], () => hashAggregateShaders(layout, aggregates));
  return g.scoped('hash group-by', async () => {
    if (!input.relation.chunks) return groupBy(g, input, aggregates, outWidth, shaders);
    // One-word keys are the slots' own words: every chunk updates one table, and its groups are the output.
    if (layout.keyWords.length === 1) {
      try {
        return await groupBy(g, input, aggregates, outWidth, shaders);
      } catch (e) {
        if (!(e instanceof DeviceLimitError)) throw e;
      }
    }
    // Per chunk, then the partial groups combined.
    return combineGroups(g, input.relation, layout.keyWords.length, aggregates, (c) => groupBy(g, { ...input, relation: c }, aggregates, outWidth, shaders));
  });
}

/**
 * hashGroupBy of one buffer, or of the chunks of a relation keyed by one word (whose slots need no row of theirs
 * to emit a group), inside the caller's scope.
 */
async function groupBy(g: GpuImpl, input: KeyedRelation, aggregates: readonly HashAggregate[], outWidth: number, shaders: KernelShaders): Promise<DeviceRelation> {
  const n = await exactCount(g, input.relation);
  if (n === 0) return { buffer: null, count: 0, width: outWidth };
  const parts = leaves(input.relation).filter((p) => p.count > 0);
  const meta = acquireBound(g, 2, 'group-by counters');
  try {
    // At most slots / 2 groups: linear probing stays short. Rows past one binding may still have few groups: the
    // first table is at most the largest one binding holds.
    const most = 2 ** Math.floor(Math.log2(g.limits.maxStorageBufferBindingSize / 4 / groupSlotWords(aggregates) - 1));
    let slots = Math.min(pow2(2 * Math.min(n, HASH_GROUPS)), Math.max(2, most));
    for (;;) {
      // One slot more than probed: one-word keys keep the key KEY_SALT there.
      const table = acquireBound(g, (slots + 1) * groupSlotWords(aggregates), `group table of ${slots} slots`);
      const rows = Math.min(n, slots);
      const out = acquireBound(g, rows * outWidth, `group-by output of ${rows} rows`);
      const rec = new Recorder(g, shaders);
      rec.clear(table.buffer, table.words * 4);
      rec.clear(meta.buffer, 8);
      for (const part of parts) {
        const tiles = Math.ceil(part.count / (GROUP_ITEMS * g.limits.workgroupSize));
        rec.dispatch('groupInsert', [bound(part), table, meta], [part.count, slots - 1, slots / 2], tiles * g.limits.workgroupSize);
      }
      rec.dispatch('groupEmit', [bound(parts[0]!), table, out], [slots + 1], slots + 1);
      const [groups, full] = (await submitAndSync(g, rec, [{ buffer: meta.buffer, offset: 0, words: 2 }]).finally(() => g.pool.release(table.buffer)))[0]!;
      if (full === 0) return { buffer: out.buffer, count: groups!, width: outWidth };
      g.pool.release(out.buffer);
      if (slots >= 2 * n) throw new Error(`internal: group table of ${slots} slots filled by ${n} rows`);
      // Grow by steps rather than to 2n at once: more groups than the first table holds rarely means as many as rows.
      slots = Math.min(pow2(2 * n), slots * 8);
    }
  } finally {
    g.pool.release(meta.buffer);
  }
}
