import { generateKernelShaders, type KernelShaders } from '@vixen/codegen-wgsl';
import type { KirKernel, KirVariable } from '@vixen/kernel-ir';
import type { GpuImpl } from '../device.js';
import type { PipelineLaunch } from '../pipeline.js';
import type { Recorder } from '../recorder.js';
import { acquireBound, settle, type DeviceRelation, type DeviceWord } from '../relations.js';

/** A pipeline's passes with other lookup orders than its probes', by kernel and order. */
const reorderedShaders = new WeakMap<KirKernel, Map<string, KernelShaders>>();

/**
 * Per pipeline kernel, the row counts of its build sides at its last launch: device words copied from the pending
 * counts (a filtered build's: from the rows its build pass kept), which the run's next host sync reads (every run
 * ends with one), in a small pooled buffer.
 */
const buildsSeen = new WeakMap<GpuImpl, WeakMap<KirKernel, BuildCounts>>();

interface BuildCounts {
  /** Null once released (dropBuildCounts): the words a sync read keep their values. */
  buffer: GPUBuffer | null;
  words: Array<DeviceWord | undefined>;
}

/** Per device, the counts whose buffers are still held: a kernel's program may be dropped without another launch. */
const heldCounts = new WeakMap<GpuImpl, Set<BuildCounts>>();

function releaseCounts(g: GpuImpl, counts: BuildCounts): void {
  if (!counts.buffer) return;
  for (const w of counts.words) if (w && w.value === undefined) g.pending.delete(w);
  g.pool.release(counts.buffer);
  counts.buffer = null;
  heldCounts.get(g)?.delete(counts);
}

/** Releases the buffers of every pipeline's last build counts on `g` (Database.clear); the counts read stay known. */
export function dropBuildCounts(g: GpuImpl): void {
  for (const c of [...(heldCounts.get(g) ?? [])]) releaseCounts(g, c);
}

/**
 * A pipeline's passes with its lookups ordered so that the rows a lookup drops skip the rest: by the share of its
 * bound a build side keeps, least first. A pending or filtered build side is mostly a filter of a dimension,
 * bounded by the dimension's rows, so that share is about the share of probe rows whose key it holds (keys spread
 * evenly over the dimension, as foreign keys do). Its rows are known only after the launch, so the last launch's
 * count of the same kernel stands in (cardinality feedback); at a first launch those sides come first, by bound.
 * A side a sync settled keeps its bound (so a profiled run, which settles every count, orders as the others do);
 * any other settled side's bound is its count (share 1). Ties: fewer rows first (a small table also stays in cache).
 * By the share, SSB Q2.2 at SF 10 looks up the 0.8% of parts before the 20% of suppliers, and Q3.1 the days (86%)
 * last; by rows alone, every lineorder row of Q2.1 looked up all 2,557 days before the suppliers in AMERICA that
 * keep a fifth of them; TPC-H Q9 probed 8M partsupp rows for every lineitem row before the 108K green parts that
 * keep 5%. The copies of this launch's counts are recorded into `rec`.
 */
export function orderedLookups(
  g: GpuImpl,
  kernel: Extract<KirKernel, { kind: 'pipeline' }>,
  shaders: KernelShaders,
  builds: readonly DeviceRelation[],
  variables: readonly KirVariable[],
  /** The launch builds its tables (launchIsEmpty is false). */
  building: boolean,
  rec: Recorder,
): Pick<PipelineLaunch, 'shaders' | 'keptTo'> {
  let seenHere = buildsSeen.get(g);
  if (!seenHere) buildsSeen.set(g, (seenHere = new WeakMap()));
  const last = seenHere.get(kernel);
  if (last) {
    releaseCounts(g, last);
    for (const w of last.words) if (w) g.pending.delete(w);
    seenHere.delete(kernel);
  }
  // A filtered side's kept rows are counted by its build pass, which copies them into `words` (keptTo).
  const filtered = builds.map((_, j) => (kernel.probes[j]!.buildFilter?.length ?? 0) > 0);
  const rank = builds.map((b, j) => {
    if (!settle(b).pending && !filtered[j]) return { share: b.count / Math.max(1, b.bound ?? b.count), rows: b.count };
    const seen = last?.words[j]?.value;
    return seen === undefined ? { share: 0.5, rows: b.count } : { share: seen / Math.max(1, b.count), rows: seen };
  });
  let keptTo: Array<DeviceWord | undefined> = [];
  if (builds.some((b, j) => b.pending || filtered[j])) {
    const buffer = acquireBound(g, builds.length, 'build side counts').buffer;
    // A launch that builds nothing (no input rows) leaves its filtered sides' words at 0; the others' build passes
    // count into them.
    if (filtered.some(Boolean) && !building) rec.clear(buffer, 4 * builds.length);
    const words = builds.map((b, j) => {
      if (!b.pending && !filtered[j]) return undefined;
      if (!filtered[j]) rec.copy(b.pending!.buffer, b.pending!.offset, buffer, 4 * j, 4);
      const w: DeviceWord = { buffer, offset: 4 * j };
      g.pending.add(w);
      return w;
    });
    const counts = { buffer, words };
    seenHere.set(kernel, counts);
    let held = heldCounts.get(g);
    if (!held) heldCounts.set(g, (held = new Set()));
    held.add(counts);
    keptTo = words.map((w, j) => (filtered[j] ? w : undefined));
  }
  const order = builds.map((_, j) => j).sort((x, y) => rank[x]!.share - rank[y]!.share || rank[x]!.rows - rank[y]!.rows || x - y);
  if (order.every((j, i) => j === i)) return { shaders, keptTo };
  let byOrder = reorderedShaders.get(kernel);
  if (!byOrder) reorderedShaders.set(kernel, (byOrder = new Map()));
  const key = order.join();
  let passes = byOrder.get(key);
  if (!passes) byOrder.set(key, (passes = generateKernelShaders(kernel, variables, { lookupOrder: order })));
  return { shaders: passes, keptTo };
}
