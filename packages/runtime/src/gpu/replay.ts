/**
 * Device work recorded once and replayed (as CUDA graphs or a prepared statement): a Trace follows a run's commands
 * as they go to the device (compute passes with their pipelines, bind groups, uniform offsets and grids, copies,
 * clears, and the host's writes: uniform arenas, a few uploaded rows), and a ReplayRecord made of it encodes them all
 * again, in the traced run's submissions, without planning a kernel. The kernels all run again on the device; the
 * uniform words the device fills from its own counts are copied in again by the traced copies, as the first time. The
 * host's writes become copies from one buffer written once, so that no write waits for a submission. The record
 * holds every buffer the trace names (BufferPool.claim) until it is released. runtime/src/replay.ts decides which
 * runs are traced and when a record may replace a run.
 */
import type { GpuImpl } from './device.js';
import type { Bound } from './recorder.js';

type Op =
  | { op: 'pass' }
  | { op: 'end' }
  | { op: 'pipeline'; pipeline: GPUComputePipeline }
  | { op: 'group'; index: number; group: GPUBindGroup; offsets?: Uint32Array }
  | { op: 'dispatch'; x: number; y: number; z: number }
  | { op: 'copy'; from: GPUBuffer; fromOffset: number; to: GPUBuffer; toOffset: number; bytes: number }
  | { op: 'clear'; buffer: GPUBuffer; offset: number; bytes: number }
  | { op: 'write'; buffer: GPUBuffer; offset: number; words: Uint32Array };

type Call = (...args: unknown[]) => unknown;

/** The commands of a run, in the order the device runs them (CommandBatch.trace while the run is traced). */
export class Trace {
  readonly ops: Op[] = [];
  /** Every buffer the commands name, bound ones included. */
  readonly buffers = new Set<GPUBuffer>();
  /** Why the run cannot be replayed, once it did something a trace cannot hold. */
  broken: string | undefined;
  /**
   * Set at the cut (end): the commands after it (the final readback's) are the run's own. Set too once the trace
   * broke: the run's later commands cost no tracing.
   */
  private done = false;
  /** Where the submission being encoded starts in `ops`: its uniform arena is written before it. */
  private submission = 0;
  /** Where each submission after the first starts in `ops`. */
  readonly submissions: number[] = [];
  /** The submission being encoded holds a command (one without is no piece of its own). */
  private encoded = false;

  /** Stops the trace: the run cannot be replayed because of `why`. */
  stop(why: string): void {
    this.broken ??= why;
    this.done = true;
  }

  /** Whether commands are still traced (not once the trace broke or was cut). */
  get tracing(): boolean {
    return !this.done;
  }

  /** `encoder`, whose commands are traced until the cut (a new submission begins). */
  encoder(encoder: GPUCommandEncoder): GPUCommandEncoder {
    this.submission = this.ops.length;
    if (this.encoded) this.submissions.push(this.submission);
    this.encoded = false;
    return this.follow(encoder, (key, f) => {
      switch (key) {
        case 'copyBufferToBuffer':
          return (...a: unknown[]) => {
            if (a.length !== 5) this.stop('a copy without offsets');
            else this.copy(a[0] as GPUBuffer, a[1] as number, a[2] as GPUBuffer, a[3] as number, a[4] as number);
            return f(...a);
          };
        case 'clearBuffer':
          return (buffer: GPUBuffer, offset = 0, bytes = buffer.size - offset) => {
            this.encoded = true;
            this.use(buffer);
            this.ops.push({ op: 'clear', buffer, offset, bytes });
            return f(buffer, offset, bytes);
          };
        case 'beginComputePass':
          return (descriptor?: GPUComputePassDescriptor) => {
            // Timestamp writes (a profile) name query sets a record does not hold.
            if (descriptor !== undefined) this.stop('a timed compute pass');
            this.encoded = true;
            this.ops.push({ op: 'pass' });
            return this.pass(f(descriptor) as GPUComputePassEncoder);
          };
        case 'finish':
          return f;
        default:
          this.stop(`a command the trace does not know (${String(key)})`);
          return f;
      }
    });
  }

  /** A host write of `data` to `buffer` at byte `offset`, queued after the commands submitted so far. */
  write(buffer: GPUBuffer, offset: number, data: Uint32Array): void {
    if (this.done) return;
    this.use(buffer);
    this.ops.push({ op: 'write', buffer, offset, words: data.slice() });
  }

  /** The uniform arena of the submission being encoded holds `words`, written before its commands run. */
  arena(buffer: GPUBuffer, words: Uint32Array): void {
    if (this.done) return;
    this.use(buffer);
    this.ops.splice(this.submission, 0, { op: 'write', buffer, offset: 0, words: words.slice() });
  }

  /** Buffers a dispatch binds (its bind group names them, and the record must hold them). */
  binds(buffers: readonly Bound[], tables?: Bound): void {
    if (this.done) return;
    for (const b of buffers) this.buffers.add(b.buffer);
    if (tables) this.buffers.add(tables.buffer);
  }

  private pass(pass: GPUComputePassEncoder): GPUComputePassEncoder {
    return this.follow(pass, (key, f) => {
      switch (key) {
        case 'setPipeline':
          return (pipeline: GPUComputePipeline) => {
            this.ops.push({ op: 'pipeline', pipeline });
            return f(pipeline);
          };
        case 'setBindGroup':
          return (index: number, group: GPUBindGroup, offsets?: Uint32Array | number[], start = 0, length?: number) => {
            const own = offsets === undefined ? undefined : Uint32Array.from(offsets).subarray(start, length === undefined ? undefined : start + length);
            this.ops.push({ op: 'group', index, group, ...(own && own.length > 0 ? { offsets: own } : {}) });
            return offsets === undefined ? f(index, group) : f(index, group, offsets, start, length ?? offsets.length - start);
          };
        case 'dispatchWorkgroups':
          return (x: number, y = 1, z = 1) => {
            this.ops.push({ op: 'dispatch', x, y, z });
            return f(x, y, z);
          };
        case 'end':
          return () => {
            this.ops.push({ op: 'end' });
            return f();
          };
        default:
          this.stop(`a compute pass command the trace does not know (${String(key)})`);
          return f;
      }
    });
  }

  /**
   * `target` with its methods traced by `traced(key, method)` until the cut: a Proxy, so that a method the trace does
   * not know still runs (and stops the trace) instead of failing the run.
   */
  private follow<T extends object>(target: T, traced: (key: string | symbol, f: Call) => unknown): T {
    return new Proxy(target, {
      get: (t, key) => {
        const value: unknown = Reflect.get(t, key);
        if (typeof value !== 'function') return value;
        const f = (value as Call).bind(t) as Call;
        return this.done ? f : traced(key, f);
      },
    });
  }

  private copy(from: GPUBuffer, fromOffset: number, to: GPUBuffer, toOffset: number, bytes: number): void {
    this.encoded = true;
    // A mapped buffer is a readback (a host sync) or an upload through a staging ring: the host takes part.
    if ((from.usage | to.usage) & (GPUBufferUsage.MAP_READ | GPUBufferUsage.MAP_WRITE)) this.stop('a readback or mapped upload before the final one');
    this.use(from);
    this.use(to);
    this.ops.push({ op: 'copy', from, fromOffset, to, toOffset, bytes });
  }

  private use(buffer: GPUBuffer): void {
    this.buffers.add(buffer);
  }

  /**
   * The cut (the final readback comes next): the open submission's uniform arena and its words (CommandBatch.openArena),
   * if any, are written before it; commands from now on are not traced.
   */
  end(openArena: { arena: GPUBuffer; words: Uint32Array } | undefined): void {
    if (openArena) this.arena(openArena.arena, openArena.words);
    this.done = true;
  }

  /**
   * What the commands so far do, buffers aside: each command's kind and sizes, its pipeline, and a hash of the words
   * the host wrote (uniforms hold the sizes a run planned by). Equal for two runs that planned alike.
   */
  plan(): string {
    const parts: string[] = [];
    let hash = 0x811c9dc5;
    for (const o of this.ops) {
      switch (o.op) {
        case 'pass':
        case 'end':
          parts.push(o.op);
          break;
        case 'pipeline':
          parts.push(`p${pipelineId(o.pipeline)}`);
          break;
        case 'group':
          parts.push(`g${o.index}:${o.offsets?.join(',') ?? ''}`);
          break;
        case 'dispatch':
          parts.push(`d${o.x},${o.y},${o.z}`);
          break;
        case 'copy':
          parts.push(`c${o.fromOffset},${o.toOffset},${o.bytes}`);
          break;
        case 'clear':
          parts.push(`z${o.offset},${o.bytes}`);
          break;
        case 'write':
          parts.push(`w${o.offset},${o.words.length}`);
          for (const w of o.words) hash = Math.imul(hash ^ w, 0x01000193) >>> 0;
          break;
      }
    }
    return `${parts.join(' ')} #${hash}`;
  }
}

const pipelineIds = new WeakMap<GPUComputePipeline, number>();
let nextPipelineId = 0;

function pipelineId(p: GPUComputePipeline): number {
  let id = pipelineIds.get(p);
  if (id === undefined) pipelineIds.set(p, (id = nextPipelineId++));
  return id;
}

/** Records alive per device, for the memory they hold (replayBytes) and to free it when memory is needed. */
const alive = new WeakMap<GpuImpl, Set<ReplayRecord>>();

/** Bytes of buffers replay records on `g` hold that nothing else does: they count against a run's memory budget. */
export function replayBytes(g: GpuImpl): number {
  let n = 0;
  for (const r of alive.get(g) ?? []) n += r.bytes;
  return n;
}

/** Releases every replay record on `g` (a run needs the memory): their runs plan their kernels again. */
export function releaseReplays(g: GpuImpl): void {
  for (const r of [...(alive.get(g) ?? [])]) r.release();
}

/**
 * A trace made replayable: its buffers held, its host writes turned into copies from one buffer. It is submitted
 * where the traced run's submissions began (the last piece with the readback's copies): the device runs the first
 * kernels while the host encodes the next, as in the traced run (on the H200 at TPC-H SF 1, one submission for all
 * of Q12's 44 dispatches took 1.7 ms a run against 1.5 for the planned run's 7 submissions, whose host work was 0.5
 * ms more).
 */
export class ReplayRecord {
  private released = false;

  private constructor(
    private readonly g: GpuImpl,
    private readonly ops: readonly Op[],
    /** Where each submission after the first starts in `ops`. */
    private readonly submissions: readonly number[],
    private readonly held: readonly GPUBuffer[],
    /** Holds the host writes' words, or null when there were none. */
    private readonly constants: GPUBuffer | null,
    /** Bytes of buffers only the record holds (the constants included). */
    readonly bytes: number,
    readonly dispatches: number,
  ) {
    let set = alive.get(g);
    if (!set) alive.set(g, (set = new Set()));
    set.add(this);
  }

  /**
   * The record of `trace`, ended (Trace.end), holding its buffers and `extra` (the outputs' and guesses', which the
   * readback reads); or why it cannot be replayed. Synchronous, and made at the cut, so that no other work takes one
   * of the buffers from the pool before the record holds them.
   */
  static make(g: GpuImpl, trace: Trace, extra: Iterable<GPUBuffer>): ReplayRecord | string {
    if (trace.broken) return trace.broken;
    const held: GPUBuffer[] = [];
    let bytes = 0;
    for (const b of new Set([...trace.buffers, ...extra])) {
      const claimed = g.pool.claim(b);
      if (!claimed) {
        for (const h of held) g.pool.unclaim(h);
        return 'a buffer it used was destroyed during the run';
      }
      held.push(b);
      if (claimed === 'own') bytes += b.size;
    }
    const writes = trace.ops.filter((o) => o.op === 'write');
    const total = writes.reduce((n, w) => n + w.words.byteLength, 0);
    let constants: GPUBuffer | null = null;
    let ops: Op[] = trace.ops;
    if (total > 0) {
      constants = g.pool.acquire(total, GPUBufferUsage.COPY_SRC | GPUBufferUsage.COPY_DST);
      bytes += constants.size;
      const words = new Uint32Array(total / 4);
      let at = 0;
      ops = trace.ops.map((o) => {
        if (o.op !== 'write') return o;
        words.set(o.words, at / 4);
        const copy: Op = { op: 'copy', from: constants!, fromOffset: at, to: o.buffer, toOffset: o.offset, bytes: o.words.byteLength };
        at += o.words.byteLength;
        return copy;
      });
      // Nothing encoded yet reads it: written at once, ahead of the open submission.
      g.device.queue.writeBuffer(constants, 0, words);
    }
    return new ReplayRecord(g, ops, trace.submissions, held, constants, bytes, ops.filter((o) => o.op === 'dispatch').length);
  }

  /** Whether release() was called (by its owner, or because a run needed the memory). */
  get live(): boolean {
    return !this.released;
  }

  /**
   * Encodes the recorded commands into the device's command batch, submitting each piece but the last (the readback
   * joins it).
   */
  encode(): void {
    const batch = this.g.batch;
    let encoder = batch.commands();
    let pass: GPUComputePassEncoder | undefined;
    let next = 0;
    for (let i = 0; i < this.ops.length; i++) {
      if (i === this.submissions[next]) {
        next++;
        batch.flush();
        encoder = batch.commands();
      }
      const o = this.ops[i]!;
      switch (o.op) {
        case 'pass':
          pass = encoder.beginComputePass();
          break;
        case 'end':
          pass!.end();
          break;
        case 'pipeline':
          pass!.setPipeline(o.pipeline);
          break;
        case 'group':
          if (o.offsets) pass!.setBindGroup(o.index, o.group, o.offsets, 0, o.offsets.length);
          else pass!.setBindGroup(o.index, o.group);
          break;
        case 'dispatch':
          pass!.dispatchWorkgroups(o.x, o.y, o.z);
          break;
        case 'copy':
          encoder.copyBufferToBuffer(o.from, o.fromOffset, o.to, o.toOffset, o.bytes);
          break;
        case 'clear':
          encoder.clearBuffer(o.buffer, o.offset, o.bytes);
          break;
        case 'write':
          throw new Error('internal: a replay record holds a host write');
      }
    }
    batch.counted(this.dispatches);
  }

  /** Lets the record's buffers go (back to the pool once nothing else holds them). */
  release(): void {
    if (this.released) return;
    this.released = true;
    alive.get(this.g)?.delete(this);
    for (const b of this.held) this.g.pool.unclaim(b);
    if (this.constants) this.g.pool.release(this.constants);
  }
}
