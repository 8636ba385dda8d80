/**
 * Host driver of the fused `pipeline` kernel (codegen-wgsl kernels/pipeline.ts): build each probe's join table
 * (hash.ts buildTable, with the kernel's own build pass), copy tables, chains and build rows into one buffer,
 * then one probe pass over the input writes the output rows (hash.ts countedOutput: one readback, a second run
 * only when the rows outgrow one per input row), or, for an aggregating pipeline, aggregates them into groups.
 */
import { aggregateSlotWords, groupSlotLayout, HASH_ITEMS, pipelineBuildLayouts, pipelineBuildPass, pipelineParamsAt, type KernelShaders } from '@vixen/codegen-wgsl';
import type { KirKernel } from '@vixen/kernel-ir';
import { VixenError, type ScalarType } from '@vixen/queryplan';
import type { GpuImpl } from './device.js';
import { buildTable, countedOutput, joinTableWords, keptRowsWord, releaseTable, type HashTable } from './hash.js';
import type { Bound } from './recorder.js';
import { Recorder } from './recorder.js';
import { leaves } from './chunks.js';
import { acquireBound, bound, pendingRelation, ResultLimitError, sizeOf, syncCounts, type DeviceRelation, type DeviceWord, type Size } from './relations.js';

/** Words pipelineRows packs into one buffer for these build sides: each one's table, chains and rows. */
export function pipelineTableWords(builds: readonly DeviceRelation[], buildTypes: readonly (readonly ScalarType[])[], kernel: Extract<KirKernel, { kind: 'pipeline' }>): number {
  const layouts = pipelineBuildLayouts(kernel, buildTypes);
  return builds.reduce((n, b, j) => n + joinTableWords(b.count, layouts[j]!.keyWords.length) + b.count + b.count * b.width, 0);
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
 * Builds each probe's join table (of the build rows its build filter keeps) and packs tables, chains and build
 * rows into one buffer (`hashed`), then runs `body` with it and the probe parameters (per probe: mask, then the
 * word offsets of its table, chains and rows).
 */
async function withProbeTables<T>(
  g: GpuImpl,
  kernel: Extract<KirKernel, { kind: 'pipeline' }>,
  launch: PipelineLaunch,
  builds: readonly DeviceRelation[],
  buildTypes: readonly (readonly ScalarType[])[],
  body: (hashed: Bound, params: number[]) => Promise<T>,
): Promise<T> {
  const layouts = pipelineBuildLayouts(kernel, buildTypes);
  const built: HashTable[] = [];
  let hashed: Bound | undefined;
  try {
    for (const [j, build] of builds.entries()) {
      const filtered = kernel.probes[j]!.buildFilter?.length ? { constants: launch.constWords, tables: launch.tables } : undefined;
      built.push(await buildTable(g, { relation: build, keyWords: layouts[j]!.keyWords }, { hashBuild: launch.shaders[pipelineBuildPass(j)]! }, filtered));
    }
    // Per probe: its table (with the repeated-key word), chains, build rows, back to back; the offsets go to the pass.
    const params: number[] = [];
    let words = 0;
    for (const [j, t] of built.entries()) {
      params.push(t.slots - 1, words, words + t.table!.words, words + t.table!.words + t.next!.words);
      words += t.table!.words + t.next!.words + builds[j]!.count * builds[j]!.width;
    }
    // A pipeline without probes (a hashed aggregate) still binds a buffer there.
    hashed = acquireBound(g, Math.max(1, words), `pipeline hash tables of ${words} words`);
    const copies = new Recorder(g, {});
    for (const [j, t] of built.entries()) {
      const kept = launch.keptTo[j];
      if (kept) copies.copy(t.table!.buffer, keptRowsWord(t.slots, t.keyWords) * 4, kept.buffer, kept.offset, 4);
      copies.copy(t.table!.buffer, 0, hashed.buffer, params[4 * j + 1]! * 4, t.table!.words * 4);
      copies.copy(t.next!.buffer, 0, hashed.buffer, params[4 * j + 2]! * 4, t.next!.words * 4);
      copies.copy(builds[j]!.buffer!, 0, hashed.buffer, params[4 * j + 3]! * 4, builds[j]!.count * builds[j]!.width * 4);
    }
    await copies.submit();
    return await body(hashed, params);
  } finally {
    for (const t of built) releaseTable(g, t);
    if (hashed) g.pool.release(hashed.buffer);
  }
}

/** The kernel's constants, then (vec4-aligned) the probe parameters. */
function pipelineConstants(constWords: Uint32Array, params: readonly number[]): Size[] {
  const constants: Size[] = [...constWords];
  while (constants.length < pipelineParamsAt(constWords.length)) constants.push(0);
  constants.push(...params);
  return constants;
}

export async function pipelineRows(
  g: GpuImpl,
  kernel: Extract<KirKernel, { kind: 'pipeline' }>,
  launch: PipelineLaunch,
  [input, ...builds]: DeviceRelation[],
  buildTypes: readonly (readonly ScalarType[])[],
  outWidth: number,
): Promise<DeviceRelation> {
  if (!input || input.count === 0 || builds.some((b) => b.count === 0)) return { buffer: null, count: 0, width: outWidth };
  const { shaders, constWords, tables } = launch;
  return withProbeTables(g, kernel, launch, builds, buildTypes, (hashed, params) => {
    const constants = pipelineConstants(constWords, params);
    const tiles = Math.ceil(input.count / (HASH_ITEMS * g.limits.workgroupSize));
    return countedOutput(g, outWidth, input.count, shaders, (rec, out, capacity, counter) =>
      rec.dispatch('pipelineProbe', [bound(input), hashed, out, counter], [sizeOf(input), capacity], tiles * g.limits.workgroupSize, constants, tables),
    );
  });
}

/** Workgroups of an aggregating pass at most: each strides over tiles and adds its own table's groups once. */
const AGGREGATE_WORKGROUPS = 1024;

/** Groups a first table has room for when the kernel has not run before. */
const FIRST_GROUPS = 2 ** 12;

/** Groups each aggregating kernel found last time: the next run's first table is sized for them. */
const groupsSeen = new WeakMap<KirKernel, number>();

/** The salt each aggregating kernel last ran with (one no key word met): the next run starts with it. */
const saltsSeen = new WeakMap<KirKernel, number>();

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
  [input, ...builds]: DeviceRelation[],
  projectTypes: readonly ScalarType[],
  buildTypes: readonly (readonly ScalarType[])[],
  outWidth: number,
): Promise<DeviceRelation> {
  const { shaders, constWords, tables } = launch;
  const empty: DeviceRelation = { buffer: null, count: 0, width: outWidth };
  const parts = leaves(input);
  if (parts.length === 0 || builds.some((b) => b.count === 0)) return empty;
  const { slotWords } = groupSlotLayout(kernel.aggregate!, projectTypes);
  const rows = parts.reduce((n, c) => n + c.count, 0);
  return withProbeTables(g, kernel, launch, builds, buildTypes, async (hashed, params) => {
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
      const seen = groupsSeen.get(kernel);
      const run = g.guessing;
      const guess = mayRunAgain && run !== null && seen !== undefined;
      let room = mayRunAgain ? Math.max(1, Math.min(rows, seen ?? FIRST_GROUPS, maxSlots / 2)) : 1;
      let salt = saltsSeen.get(kernel) ?? 0x5bd1e995;
      for (;;) {
        // At most half the slots hold groups: linear probing stays short.
        const slots = Math.min(maxSlots, 2 ** Math.ceil(Math.log2(2 * room)));
        room = Math.min(room, slots / 2);
        if (room < 1) throw new ResultLimitError(`a group table slot of ${slotWords} words`);
        const table = acquireBound(g, slots * slotWords, `group table of ${slots} slots`);
        let out: Bound | undefined;
        try {
          out = acquireBound(g, room * outWidth + 1, `output of ${room} groups x ${outWidth} words`);
          const rec = new Recorder(g, shaders);
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
                  if (saltHit) saltsSeen.set(kernel, nextSalt(salt));
                  const held = !(full || saltHit || overflow);
                  // Failed: the run starts again without this guess, whose readback then sizes the table (or reports
                  // the overflow).
                  if (held) groupsSeen.set(kernel, groups!);
                  else groupsSeen.delete(kernel);
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
            saltsSeen.set(kernel, salt);
            continue;
          }
          if (full) {
            if (slots === maxSlots) throw new ResultLimitError(`more than ${room} groups in a group table of ${slots} slots`);
            room *= 16;
            continue;
          }
          if (overflow) throw new VixenError({ severity: 'error', message: `decimal overflow: a decimal sum or average (kernel ${kernel.id}) is outside the 64-bit decimal range` });
          groupsSeen.set(kernel, groups!);
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
