/**
 * Host driver of the fused `pipeline` kernel (codegen-wgsl kernels/pipeline.ts): copy each joined probe's build rows
 * into one buffer and build its join table and chains there (hash.ts recordBuild, with the kernel's own build pass),
 * then one probe pass over the input writes the output rows (hash.ts countedOutput: one readback, a second run
 * only when the rows outgrow one per input row; no readback in a run that may start again, nor where every probe is
 * negated, which only drops rows), or, for an aggregating pipeline, aggregates them into groups.
 * A launch records into one recorder: the builds and the probe or aggregation passes share a compute pass.
 */
import { aggregateSlotWords, groupSlotLayout, HASH_ITEMS, pipelineBuildLayouts, pipelineBuildPass, pipelineParamsAt, type KernelShaders } from '@vixen/codegen-wgsl';
import { rowProbes, type KirKernel } from '@vixen/kernel-ir';
import { VixenError, type ScalarType } from '@vixen/queryplan';
import type { GpuImpl } from './device.js';
import { ChainOverflow, countedOutput, joinTableSlots, joinTableWords, keptRowsWord, recordBuild } from './hash.js';
import type { Bound } from './recorder.js';
import { Recorder } from './recorder.js';
import { leaves } from './chunks.js';
import { acquireBound, bound, DeviceLimitError, pendingRelation, ResultLimitError, sizeOf, syncCounts, type DeviceRelation, type DeviceWord, type Size } from './relations.js';

/** Whether probe j is keyless (a negated probe asking whether its build side has any row). */
const keyless = (kernel: Extract<KirKernel, { kind: 'pipeline' }>, j: number): boolean => kernel.probes[j]!.buildKeys.length === 0;

/**
 * The rows probe j's table and chains are sized for: a keyless one's hold one row at most and no chain (codegen-wgsl
 * hash.ts), sized so whether the build side's count is exact or a pending bound, so that runs plan alike and replay.
 */
const tableRows = (kernel: Extract<KirKernel, { kind: 'pipeline' }>, j: number, build: DeviceRelation): number => (keyless(kernel, j) ? Math.min(build.count, 1) : build.count);

/**
 * Where pipelineRows packs these build sides into one buffer: per probe the word offsets of its table, chains and
 * rows, each at an offset a storage binding may start at (the build pass binds the table and chains), and the
 * words in all.
 */
export function pipelineTableOffsets(
  g: GpuImpl,
  builds: readonly DeviceRelation[],
  buildTypes: readonly (readonly ScalarType[])[],
  kernel: Extract<KirKernel, { kind: 'pipeline' }>,
): { offsets: Array<{ table: number; next: number; rows: number }>; words: number } {
  const layouts = pipelineBuildLayouts(kernel, buildTypes);
  const align = g.limits.minStorageBufferOffsetAlignment / 4;
  const aligned = (w: number): number => Math.ceil(w / align) * align;
  let words = 0;
  const offsets = builds.map((b, j) => {
    const table = words;
    const next = aligned(table + joinTableWords(tableRows(kernel, j, b), layouts[j]!.keyWords.length));
    const rows = aligned(next + tableRows(kernel, j, b));
    // A negated probe's lookups read its table's keys alone (its build pass reads the rows where they are): no copy.
    words = aligned(rows + (kernel.probes[j]!.negated ? 0 : b.count * b.width));
    return { table, next, rows };
  });
  return { offsets, words };
}

/**
 * Whether a launch on these rows builds and scans nothing: no input rows, or a build side without rows to join (a
 * negated probe's empty side keeps every row).
 */
export function launchIsEmpty(kernel: Extract<KirKernel, { kind: 'pipeline' }>, input: DeviceRelation | undefined, builds: readonly DeviceRelation[]): boolean {
  return !input || input.count === 0 || builds.some((b, j) => b.count === 0 && !kernel.probes[j]!.negated);
}

/**
 * What a pipeline launch needs besides its rows: its passes (with the lookup order chosen for this launch), the
 * kernel's constants and string tables (its pipeline pass and its filtered builds read them), and per probe the
 * device word its filtered build's kept-row count is copied to (the next launch orders its lookups by it).
 */
export interface PipelineLaunch {
  shaders: KernelShaders;
  constWords: Uint32Array;
  tables: Bound | undefined;
  keptTo: ReadonlyArray<DeviceWord | undefined>;
}

/**
 * Records, into `rec`, the copy of each joined (not negated) probe's build rows into one buffer (`hashed`) and the build of its join
 * table (of the rows its build filter keeps) and chains there, then runs `body` with it and the probe parameters
 * (per probe: mask, then the word offsets of its table, chains and rows); `body` records into `rec` and submits
 * it. Every build side has rows.
 */
async function withProbeTables<T>(
  g: GpuImpl,
  kernel: Extract<KirKernel, { kind: 'pipeline' }>,
  launch: PipelineLaunch,
  builds: readonly DeviceRelation[],
  buildTypes: readonly (readonly ScalarType[])[],
  rec: Recorder,
  body: (hashed: Bound, params: number[]) => Promise<T>,
): Promise<T> {
  const layouts = pipelineBuildLayouts(kernel, buildTypes);
  const { offsets, words } = pipelineTableOffsets(g, builds, buildTypes, kernel);
  // A pipeline without probes (a hashed aggregate) still binds a buffer there.
  const hashed = acquireBound(g, Math.max(1, words), `pipeline hash tables of ${words} words`);
  try {
    const params: number[] = [];
    for (const [j, build] of builds.entries()) {
      const at = offsets[j]!;
      const slots = joinTableSlots(tableRows(kernel, j, build));
      const keyWords = layouts[j]!.keyWords;
      params.push(slots - 1, at.table, at.next, at.rows);
      if (build.count === 0) {
        // A negated probe of no rows: an empty table (its kept-row count 0 too), which holds no key.
        rec.clear(hashed.buffer, joinTableWords(0, keyWords.length) * 4, at.table * 4);
      } else {
        if (!kernel.probes[j]!.negated) rec.copy(build.buffer!, 0, hashed.buffer, at.rows * 4, build.count * build.width * 4);
        const filtered = kernel.probes[j]!.buildFilter?.length ? { constants: launch.constWords, tables: launch.tables } : undefined;
        const table = { buffer: hashed.buffer, offset: at.table, words: joinTableWords(tableRows(kernel, j, build), keyWords.length) };
        const next = { buffer: hashed.buffer, offset: at.next, words: tableRows(kernel, j, build) };
        recordBuild(rec.using({ hashBuild: launch.shaders[pipelineBuildPass(j)]! }), { relation: build, keyWords }, table, next, filtered);
      }
      const kept = launch.keptTo[j];
      if (kept) rec.copy(hashed.buffer, (at.table + keptRowsWord(slots, keyWords.length)) * 4, kept.buffer, kept.offset, 4);
    }
    return await body(hashed, params);
  } finally {
    g.pool.release(hashed.buffer);
  }
}

/** The kernel's constants, then (vec4-aligned) the probe parameters. */
function pipelineConstants(constWords: Uint32Array, params: readonly number[]): Size[] {
  const constants: Size[] = [...constWords];
  while (constants.length < pipelineParamsAt(constWords.length)) constants.push(0);
  constants.push(...params);
  return constants;
}

/** The rows of a pipeline without aggregation. `rec` holds the launch's steps so far (launch.shaders'). */
export async function pipelineRows(
  g: GpuImpl,
  kernel: Extract<KirKernel, { kind: 'pipeline' }>,
  launch: PipelineLaunch,
  rec: Recorder,
  [input, ...builds]: DeviceRelation[],
  buildTypes: readonly (readonly ScalarType[])[],
  outWidth: number,
): Promise<DeviceRelation> {
  if (launchIsEmpty(kernel, input, builds)) return { buffer: null, count: 0, width: outWidth };
  const { shaders, constWords, tables } = launch;
  return withProbeTables(g, kernel, launch, builds, buildTypes, rec, (hashed, params) => {
    const constants = pipelineConstants(constWords, params);
    const tiles = Math.ceil(input.count / (HASH_ITEMS * g.limits.workgroupSize));
    const record = (r: Recorder, out: Bound, capacity: number, counter: Bound): void =>
      r.dispatch('pipelineProbe', [bound(input), hashed, out, counter], [sizeOf(input), capacity], tiles * g.limits.workgroupSize, constants, tables);
    // Negated probes only drop rows: at most one output row per input row.
    return countedOutput(g, outWidth, input.count, shaders, record, rec, rowProbes(kernel.probes).length === 0).catch((e: unknown) => {
      // No pipeline runs over parts of its build sides yet (a plain hash join does: hash.ts probeParts).
      if (e instanceof ChainOverflow) throw new DeviceLimitError(`a join key repeats more often than one shader invocation of a CPU adapter can walk (its loops end after 65,535 iterations)`);
      throw e;
    });
  });
}

/** Workgroups of an aggregating pass at most: each strides over tiles and adds its own table's groups once. */
const AGGREGATE_WORKGROUPS = 1024;

/** Groups a first table has room for when the kernel has not run before. */
const FIRST_GROUPS = 2 ** 12;

/** Groups each aggregating kernel found last time, and the rows it read then: the next table is sized for them. */
const groupsSeen = new WeakMap<KirKernel, { groups: number; rows: number }>();

/**
 * The groups to size a table for: as many as last time, or more in proportion where the kernel reads more rows
 * than then. A loop's aggregate reads more rows in some iterations than in others (a lattice loop's first
 * iteration, of a run after another, meets every edge where the last one met a few), and a table sized for fewer
 * groups fills, reads every row again and syncs with the host.
 */
function expectedGroups(seen: { groups: number; rows: number } | undefined, rows: number): number | undefined {
  if (seen === undefined) return undefined;
  return rows > seen.rows ? Math.ceil((seen.groups * rows) / Math.max(1, seen.rows)) : seen.groups;
}

/** The salt each aggregating kernel last ran with (one no key word met): the next run starts with it. */
const saltsSeen = new WeakMap<KirKernel, number>();

/** Kernels that aggregate the same rows as another (its sides exchanged, run-kernel.ts), to that one. */
const groupsKernel = new WeakMap<KirKernel, KirKernel>();

/**
 * `kernel` aggregates the rows `as` does: they share the groups and salt seen, so a run may launch either (by sizes
 * that differ from run to run) and still guess from the last.
 */
export function sameGroups(kernel: KirKernel, as: KirKernel): void {
  groupsKernel.set(kernel, as);
}

/**
 * An aggregating pipeline (codegen-wgsl kernels/pipeline.ts aggregateModules): one pass over the input (each of
 * its chunks: the table outlives them) into a group table, one pass writing the groups; the one readback is the
 * group count and the flags that make it run again: on a larger table when the groups outgrow it, with another
 * salt when a key word met the salt (neither happens without group-by columns: then, unless a decimal sum could
 * overflow, there is no readback). A decimal sum or average outside the 64-bit range is an error. Groups that
 * outgrow the largest table one binding holds throw a ResultLimitError (runKernel then sorts the rows instead).
 * A kernel that ran before, in a run that may start again (GpuImpl.guessing), reads nothing back either: its
 * table is sized for the groups it found last time, the count stays pending and the flags are a Guess that the
 * run's next sync checks. The host then queues the work after it while the device aggregates.
 */
export async function pipelineAggregateRows(
  g: GpuImpl,
  kernel: Extract<KirKernel, { kind: 'pipeline' }>,
  launch: PipelineLaunch,
  /** The launch's steps so far (launch.shaders'): the first aggregation records there too. */
  launchSteps: Recorder,
  [input, ...builds]: DeviceRelation[],
  projectTypes: readonly ScalarType[],
  buildTypes: readonly (readonly ScalarType[])[],
  outWidth: number,
): Promise<DeviceRelation> {
  const { shaders, constWords, tables } = launch;
  const empty: DeviceRelation = { buffer: null, count: 0, width: outWidth };
  const parts = leaves(input);
  if (launchIsEmpty(kernel, input, builds)) return empty;
  const { slotWords } = groupSlotLayout(kernel.aggregate!, projectTypes);
  const rows = parts.reduce((n, c) => n + c.count, 0);
  const seenAs = groupsKernel.get(kernel) ?? kernel;
  return withProbeTables(g, kernel, launch, builds, buildTypes, launchSteps, async (hashed, params) => {
    let steps: Recorder | undefined = launchSteps;
    const constants = pipelineConstants(constWords, params);
    const meta = acquireBound(g, 4, 'group-by flags');
    /** Until a Guess takes the flags (the sync checking it releases them). */
    let metaHeld = true;
    // Without group-by columns nothing makes the pass run again (no key meets the salt, one group fits any table)
    // nor fail (no decimal sum or average, the 128-bit ones): no readback, the group count stays pending.
    const mayRunAgain = kernel.aggregate!.groupBy.length > 0 || kernel.aggregate!.aggregates.some((a) => aggregateSlotWords(a, a.column === undefined ? undefined : projectTypes[a.column]) === 4);
    try {
      // The largest table one binding holds, whose room (half its slots) of output rows fits one too; more groups
      // than that run sorted (runKernel).
      const maxSlots = 2 ** Math.floor(Math.log2(g.limits.maxStorageBufferBindingSize / 4 / Math.max(slotWords, outWidth / 2)));
      const seen = groupsSeen.get(seenAs);
      const run = g.guessing;
      const guess = mayRunAgain && run !== null && seen !== undefined;
      let room = mayRunAgain ? Math.max(1, Math.min(rows, expectedGroups(seen, rows) ?? FIRST_GROUPS, maxSlots / 2)) : 1;
      let salt = saltsSeen.get(seenAs) ?? 0x5bd1e995;
      for (;;) {
        // At most half the slots hold groups: linear probing stays short.
        const slots = Math.min(maxSlots, 2 ** Math.ceil(Math.log2(2 * room)));
        room = Math.min(room, slots / 2);
        if (room < 1) throw new ResultLimitError(`a group table slot of ${slotWords} words`);
        const table = acquireBound(g, slots * slotWords, `group table of ${slots} slots`);
        let out: Bound | undefined;
        try {
          out = acquireBound(g, room * outWidth + 1, `output of ${room} groups x ${outWidth} words`);
          const rec = steps ?? new Recorder(g, shaders);
          steps = undefined;
          rec.clear(table.buffer, table.words * 4);
          rec.clear(meta.buffer, 16);
          const wg = g.limits.workgroupSize;
          for (const part of parts) {
            const tiles = Math.ceil(part.count / (HASH_ITEMS * wg));
            rec.dispatch('pipelineAggregate', [bound(part), hashed, table, meta], [sizeOf(part), slots - 1, salt, room], Math.min(tiles, AGGREGATE_WORKGROUPS) * wg, constants, tables);
          }
          rec.dispatch('pipelineGroups', [table, out, meta], [slots, salt, room], slots);
          if (!mayRunAgain || guess) {
            // One group at most, or as many as last time: the count stays on the device, in the word after the
            // rows (pendingRelation).
            rec.copy(meta.buffer, 0, out.buffer, room * outWidth * 4, 4);
            await rec.submit();
            const result = pendingRelation(g, out.buffer, room, outWidth);
            out = undefined;
            if (guess) {
              g.guesses.push({
                buffer: meta.buffer,
                words: 4,
                run: run!,
                holds: ([groups, full, saltHit, overflow]) => {
                  if (saltHit) saltsSeen.set(seenAs, nextSalt(salt));
                  const held = !(full || saltHit || overflow);
                  // Failed: the run starts again without this guess, whose readback then sizes the table (or reports
                  // the overflow).
                  if (held) groupsSeen.set(seenAs, { groups: groups!, rows });
                  else groupsSeen.delete(seenAs);
                  return held;
                },
              });
              metaHeld = false;
            }
            return result;
          }
          await rec.submit();
          const [groups, full, saltHit, overflow] = (await syncCounts(g, [{ buffer: meta.buffer, offset: 0, words: 4 }]))[0]!;
          if (saltHit) {
            salt = nextSalt(salt);
            saltsSeen.set(seenAs, salt);
            continue;
          }
          if (full) {
            if (slots === maxSlots) throw new ResultLimitError(`more than ${room} groups in a group table of ${slots} slots`);
            // Each pass that finds its table full reads every row again, so grow to room for a quarter of the rows
            // at once where that is more: a loop's aggregate may meet far more groups than last time (a lattice
            // loop's first iteration, sized by the last iteration of the run before, would grow 16-fold a pass).
            // Up to 2^20 rows, room for all of them at least: that table is small, and another pass costs more. (A
            // pipeline's probes may give more rows, and groups, than it scans: the room always grows.)
            room = Math.max(room * 16, rows <= 2 ** 20 ? rows : Math.ceil(rows / 4));
            continue;
          }
          if (overflow) throw new VixenError({ severity: 'error', message: `decimal overflow: a decimal sum or average (kernel ${kernel.id}) is outside the 64-bit decimal range` });
          groupsSeen.set(seenAs, { groups: groups!, rows });
          if (groups === 0) return empty;
          const result: DeviceRelation = { buffer: out.buffer, count: groups!, width: outWidth };
          out = undefined;
          return result;
        } finally {
          g.pool.release(table.buffer);
          if (out) g.pool.release(out.buffer);
        }
      }
    } finally {
      if (metaHeld) g.pool.release(meta.buffer);
    }
  });
}

/** The salt to try after `salt` met a key word. */
const nextSalt = (salt: number): number => (Math.imul(salt, 0x9e3779b1) + 1) >>> 0;
