/**
 * Small-delta fixpoint loops in one dispatch (issue 44): while a loop's deltas are small, one workgroup runs many of
 * its iterations inside the loop kernel (codegen-wgsl kernels/small-loop.ts, planned by kernel-ir's smallLoopPlan),
 * a few dispatches per host sync, and then hands back to the general path: the rows it derived, logged per recursive
 * relation, are sorted and merged into the relation, and the deltas it left are sorted into canonical form. The
 * general path resumes at the top of the loop's block from exactly that state: an iteration that outgrew the
 * kernel's room was undone there, so the general path runs it instead.
 */
import { rowWords } from '@vixen/queryplan';
import { concatWords } from '@vixen/io';
import { generateKernelShaders, SMALL_LOOP_STATUS, smallLoopLayout, smallLoopShaders, type KernelShaders, type SmallLoopLayout } from '@vixen/codegen-wgsl';
import type { KirKernel, KirProgram, SmallLoopPlan, VarId } from '@vixen/kernel-ir';
import type { Gpu, GpuImpl } from './gpu/device.js';
import { runKernel } from './gpu/kernels/run-kernel.js';
import { passCompiles, Recorder } from './gpu/recorder.js';
import { allocRelation, bindingBytes, releaseRelation, relationUsage, submitAndSync, type DeviceRelation } from './gpu/relations.js';

/** Most rows of the deltas on entry, and rows each variable of an iteration has room for (a GPU, a CPU adapter). */
const ENTER_ROWS = { gpu: 1024, software: 64 };
const SCRATCH_ROWS = { gpu: 8192, software: 512 };
/**
 * Rows of each relation's log on the first entry (a GPU, a CPU adapter); a full log hands back and the next entry's is
 * 8 times larger. The log's hash set (4 slots a row) is cleared on every entry.
 */
const FIRST_LOG_ROWS = { gpu: 2 ** 16, software: 2 ** 12 };
/**
 * Iterations one dispatch may run (a bound on one dispatch's time), and dispatches per host sync at most. A CPU
 * adapter's bound holds whatever paths it takes: llvmpipe ends a shader's loops after 65,535 iterations in all.
 */
const DISPATCH_ITERATIONS = { gpu: 4096, software: 256 };
const MAX_DISPATCHES_PER_SYNC = 32;

/** What one stay in the kernel did: iterations it ran (each derived rows), dispatches and the variables' new values. */
export interface SmallLoopResult {
  iterations: number;
  dispatches: number;
  values: Array<[VarId, DeviceRelation]>;
}

export class SmallLoop {
  private readonly shaders: KernelShaders;
  private readonly layout: SmallLoopLayout;
  private readonly sorts = new Map<VarId, { kernel: KirKernel; shaders: KernelShaders }>();
  private logRows: number;
  private compiles: Promise<boolean> | undefined;
  /** After deltas outgrew the kernel: iterations of the general path before trying again, and the next such wait. */
  private waitUntil = 0;
  private wait = 4;

  constructor(
    private readonly g: GpuImpl,
    private readonly program: KirProgram,
    readonly plan: SmallLoopPlan,
    private readonly programShaders: readonly KernelShaders[],
    /** Encoded constants of every kernel (executor's constWords), laid out as smallLoopConstants says. */
    private readonly constants: Uint32Array,
  ) {
    this.shaders = smallLoopShaders(plan, program);
    this.layout = smallLoopLayout(plan, program);
    this.logRows = g.software ? FIRST_LOG_ROWS.software : FIRST_LOG_ROWS.gpu;
  }

  /** Whether the adapter takes the loop kernel at all; where it does not, the loop runs on the general path. */
  available(): Promise<boolean> {
    return (this.compiles ??= passCompiles(this.g, this.shaders, 'smallLoop'));
  }

  private get scratchRows(): number {
    return this.g.software ? SCRATCH_ROWS.software : SCRATCH_ROWS.gpu;
  }

  /**
   * Whether iteration `iteration` may run in the kernel: every variable it reads has an exact count and lies in one
   * buffer on the device, the deltas are small, and the kernel's buffers fit one binding each and `spareBytes` (what
   * the run's device memory budget leaves: they copy the relations the loop reads).
   */
  ready(iteration: number, valueOf: (id: VarId) => DeviceRelation, spareBytes = Infinity): boolean {
    return this.fits(iteration, valueOf, spareBytes, false);
  }

  /**
   * Whether iteration `iteration` would be `ready` but for row counts still pending on the device (a pipeline of
   * negated probes keeps its count there: a loop's rows before it often come from one): the caller resolves them,
   * one host sync, and asks again. Sized by their bounds, so a delta that may be large costs no sync.
   */
  awaitsCounts(iteration: number, valueOf: (id: VarId) => DeviceRelation, spareBytes = Infinity): boolean {
    const pending = [...this.plan.carried, ...this.layout.packed].some((v) => valueOf(v).pending !== undefined);
    return pending && this.fits(iteration, valueOf, spareBytes, true);
  }

  private fits(iteration: number, valueOf: (id: VarId) => DeviceRelation, spareBytes: number, pendingToo: boolean): boolean {
    if (iteration < this.waitUntil) return false;
    const enter = this.g.software ? ENTER_ROWS.software : ENTER_ROWS.gpu;
    const onDevice = (r: DeviceRelation): boolean => (pendingToo || !r.pending) && !r.chunks && (r.count === 0 || r.buffer !== null);
    if (!this.plan.carried.every((v) => onDevice(valueOf(v)) && valueOf(v).count <= enter)) return false;
    if (!this.layout.packed.every((v) => onDevice(valueOf(v)))) return false;
    const bytes = 4 * (this.fixedWords(valueOf) + this.rowsWords() + this.layout.controlWords + 4 * this.logRows * this.plan.recursive.length);
    const binding = this.g.limits.maxStorageBufferBindingSize;
    return this.fixedWords(valueOf) * 4 <= binding && this.rowsWords() * 4 <= binding && bytes <= spareBytes;
  }

  private fixedWords(valueOf: (id: VarId) => DeviceRelation): number {
    const head = 2 * this.layout.packed.length + this.plan.carried.length + 1;
    return this.layout.packed.reduce((n, v) => n + valueOf(v).count * valueOf(v).width, head);
  }

  private rowsWords(): number {
    return this.scratchRows * this.layout.rowsWords + this.logRows * this.layout.logWords;
  }

  /**
   * Runs iterations in the kernel from the current state, at most `most`, and hands back. `stop` is asked after each
   * host sync that finds the kernel still going, with the iterations run so far (the run's time limit): true hands
   * back there. A log holds at most `maxTuples` less its relation's rows, so the iteration that would pass the limit
   * runs on the general path, which stops the run naming the kernel as it would without the loop kernel.
   */
  async run(
    gpu: Gpu,
    valueOf: (id: VarId) => DeviceRelation,
    iteration: number,
    limits: { most: number; maxTuples?: number | undefined; stop: (iterations: number) => boolean },
  ): Promise<SmallLoopResult> {
    const most = limits.most;
    const g = this.g;
    const { plan, layout } = this;
    const width = (v: VarId): number => rowWords(this.program.variables[v]!.columns);
    const tcap = this.scratchRows;
    const lcap = this.logRows;
    // The fixed buffer: packed relations' offsets and rows, the deltas' rows on entry, then the relations' rows.
    const head = new Uint32Array(2 * layout.packed.length + plan.carried.length + 1);
    let at = head.length;
    const packed = layout.packed.map((v, j) => {
      const rel = valueOf(v);
      head[2 * j] = at;
      head[2 * j + 1] = rel.count;
      const here = at;
      at += rel.count * rel.width;
      return { rel, at: here };
    });
    plan.carried.forEach((v, c) => (head[2 * layout.packed.length + c] = valueOf(v).count));
    const room = plan.recursive.map((v) => (limits.maxTuples ?? Infinity) - valueOf(v).count);
    head[head.length - 1] = Math.max(0, Math.min(lcap, ...room));
    const fixed = g.pool.acquire(bindingBytes(at), relationUsage());
    const rows = g.pool.acquire(bindingBytes(this.rowsWords()), relationUsage());
    const controlWords = layout.controlWords + 4 * lcap * plan.recursive.length;
    const control = g.pool.acquire(bindingBytes(controlWords), relationUsage());
    try {
      g.writeBuffer(fixed, 0, head);
      const rec = new Recorder(g, this.shaders);
      for (const p of packed) if (p.rel.count > 0) rec.copy(p.rel.buffer!, 0, fixed, p.at * 4, p.rel.count * p.rel.width * 4);
      plan.carried.forEach((v, c) => {
        const rel = valueOf(v);
        if (rel.count > 0) rec.copy(rel.buffer!, 0, rows, tcap * layout.carriedAt[c]! * 4, rel.count * rel.width * 4);
      });
      rec.clear(control, controlWords * 4);
      const perDispatch = g.cpuAdapter ? DISPATCH_ITERATIONS.software : DISPATCH_ITERATIONS.gpu;
      const bind = [
        { buffer: fixed, words: at },
        { buffer: rows, words: this.rowsWords() },
        { buffer: control, words: controlWords },
      ];
      let dispatches = 0;
      let perSync = 1;
      let words: Uint32Array;
      let recorder = rec;
      let before = 0;
      for (;;) {
        for (let d = 0; d < perSync; d++) recorder.dispatch('smallLoop', bind, [perDispatch, most, tcap, lcap], g.limits.workgroupSize, this.constants);
        dispatches += perSync;
        [words] = (await submitAndSync(g, recorder, [{ buffer: control, offset: 0, words: layout.controlWords }])) as [Uint32Array];
        // A sync whose dispatches ran no iteration and left the kernel going would repeat forever: hand back instead.
        if (words[0] !== SMALL_LOOP_STATUS.running || limits.stop(words[1]!) || words[1] === before) break;
        before = words[1]!;
        perSync = Math.min(MAX_DISPATCHES_PER_SYNC, 2 * perSync);
        recorder = new Recorder(g, this.shaders);
      }
      const status = words[0]!;
      const iterations = words[1]!;
      if (status === SMALL_LOOP_STATUS.overflow) {
        // A full log grows for the next entry, unless it was full at the tuple limit: then the general path runs the
        // iteration that passes it. Deltas that outgrew the kernel (or a log that cannot grow) wait on the general
        // path a while.
        const logFull = (words[3]! & 2) !== 0;
        const grown = 8 * lcap;
        const fits = tcap * layout.rowsWords + grown * layout.logWords <= g.limits.maxStorageBufferBindingSize / 4;
        if (logFull && lcap >= Math.min(...room)) this.wait = 4;
        else if (logFull && fits) this.logRows = grown;
        else {
          this.waitUntil = iteration + iterations + this.wait;
          this.wait = Math.min(1024, 2 * this.wait);
        }
      } else this.wait = 4;
      const values: Array<[VarId, DeviceRelation]> = [];
      // Rows of the rows buffer into a relation of their own (row order as the kernel left them).
      const extract = async (wordAt: number, count: number, w: number): Promise<DeviceRelation> => {
        const rel = allocRelation(g, count, w);
        if (count > 0) {
          const copy = new Recorder(g, {});
          copy.copy(rows, wordAt * 4, rel.buffer!, 0, count * w * 4);
          await copy.submit();
        }
        return rel;
      };
      for (const [r, v] of plan.recursive.entries()) {
        const n = words[layout.logControl[r]!]!;
        if (n === 0) continue;
        const log = await extract(tcap * layout.rowsWords + lcap * layout.logAt[r]!, n, width(v));
        const sorted = await this.sorted(gpu, v, log);
        const merge = this.program.kernels[plan.merges[r]!]!;
        const merged = await runKernel(gpu, merge, this.programShaders[merge.id]!, [valueOf(v), sorted], new Uint32Array(0), this.program.variables);
        if (sorted !== merged) releaseRelation(gpu, sorted);
        values.push([v, merged]);
      }
      for (const [c, v] of plan.carried.entries()) {
        const slot = words[layout.carriedControl[c]!]!;
        const n = words[layout.carriedControl[c]! + 1]!;
        const w = width(v);
        values.push([v, await this.sorted(gpu, v, await extract(tcap * (layout.carriedAt[c]! + slot * w), n, w))]);
      }
      return { iterations, dispatches, values };
    } finally {
      g.pool.release(fixed);
      g.pool.release(rows);
      g.pool.release(control);
    }
  }

  /** `rel` (rows of variable `v`, duplicate-free) sorted by all columns: canonical, as the general path keeps it. */
  private async sorted(gpu: Gpu, v: VarId, rel: DeviceRelation): Promise<DeviceRelation> {
    if (rel.count <= 1) return { ...rel, canonical: true };
    let sort = this.sorts.get(v);
    if (!sort) {
      const columns = this.program.variables[v]!.columns;
      const merge = this.program.kernels[this.plan.merges[0]!]!;
      // Numbered as the loop's first merge kernel, for the scope that names a failing kernel.
      const kernel: KirKernel = { kind: 'sort', id: merge.id, input: v, output: v, keys: columns.map((_, c) => c) };
      sort = { kernel, shaders: generateKernelShaders(kernel, this.program.variables) };
      this.sorts.set(v, sort);
    }
    const out = await runKernel(gpu, sort.kernel, sort.shaders, [rel], new Uint32Array(0), this.program.variables);
    if (out !== rel) releaseRelation(gpu, rel);
    return { ...out, canonical: true };
  }
}

/** The loop kernel's constants: the plan's kernels' encoded constants one after another (smallLoopConstants). */
export function smallLoopConstantWords(plan: SmallLoopPlan, constWords: readonly Uint32Array[]): Uint32Array {
  return concatWords(plan.kernels.map((k) => constWords[k]!));
}

