/**
 * The Gpu over a WebGPU device and the per-device state shared by the drivers (pipeline cache, buffer pool,
 * error tracking). Device errors are turned into thrown Errors: every kernel runs inside error scopes, stray
 * errors are recorded by onuncapturederror (never printed) and fail the next call, and device loss is remembered.
 */
import { CommandBatch } from './batch.js';
import { allocationFault, DeviceFault, deviceErrorFault, lostFault } from './device-fault.js';
import { BufferPool } from './pool.js';
import { dropIdleReads, keptReadBytes } from './mapped-reads.js';
import type { LaunchPart, PassLayout } from './recorder.js';
import { PassTimer } from './timing.js';
import type { DeviceWord, Guess, GuessingRun } from './relations.js';

export interface GpuLimits {
  /** Workgroup size the generated `override WG` is set to (256 where allowed, else 128). */
  readonly workgroupSize: number;
  readonly maxStorageBufferBindingSize: number;
  readonly maxBufferSize: number;
  readonly maxComputeWorkgroupsPerDimension: number;
  readonly minUniformBufferOffsetAlignment: number;
  readonly minStorageBufferOffsetAlignment: number;
}

export interface Gpu {
  device: GPUDevice;
  adapterName: string;
  /** 'vulkan' or 'opengles' (Dawn), or 'webgpu' (a browser's own). */
  backend: string;
  /**
   * Takes the paths tuned for a CPU adapter (host projections and parses of small files, string sorts on workers,
   * smaller thresholds): a CPU adapter unless opened with GpuOptions.gpuPaths.
   */
  software: boolean;
  /**
   * The adapter is a CPU implementation (llvmpipe, SwiftShader, lavapipe) rather than a GPU, whatever paths it
   * takes: its shaders' loops end after 65,535 iterations in all and its workgroups are run a few at a time.
   */
  cpuAdapter: boolean;
  /** The device has the 'subgroups' feature: passes with a subgroup variant run that. */
  subgroups: boolean;
  limits: GpuLimits;
  dispose(): void;
}

export interface GpuOptions {
  backend?: 'auto' | 'vulkan' | 'opengles';
  /** Use at most this many bytes per storage binding (below the device's limit): tests of big-relation handling. */
  maxStorageBufferBindingSize?: number;
  /** Use subgroup operations where the adapter has them (default true); false runs the fallbacks everywhere. */
  subgroups?: boolean;
  /**
   * Bytes of device memory everything Vixen keeps on this device may take: runs, loads, resident relations, free
   * buffers kept for reuse (default: the device's free memory less a margin, where the host can tell it). Also the
   * budget of a run that names none (RunOptions.maxDeviceMemory). Tests and benches simulate a smaller device so.
   */
  maxDeviceMemory?: number;
  /**
   * On a CPU adapter, take the paths a GPU takes (software false) where they do not depend on a GPU's loops and
   * scheduling (cpuAdapter stays true): tests and benches run the H200's code paths on llvmpipe so. No effect on a
   * GPU. VIXEN_GPU_PATHS=1 sets it for the CLI and the benches.
   */
  gpuPaths?: boolean;
}

const SOFTWARE_ADAPTER = /swiftshader|llvmpipe|lavapipe|softpipe|software/i;

/** CPU adapters (SwiftShader, llvmpipe, lavapipe) are not worth preferring Vulkan over GL for. */
export function isRealGpu(adapter: GPUAdapter): boolean {
  const info = adapter.info as GPUAdapterInfo & { type?: string };
  if (info.type === 'cpu' || info.isFallbackAdapter) return false;
  return ![info.vendor, info.architecture, info.device, info.description].some((s) => SOFTWARE_ADAPTER.test(s ?? ''));
}

function describe(adapter: GPUAdapter, backend: string): string {
  const { vendor, architecture, device, description } = adapter.info;
  const parts = [vendor, architecture, device, description].filter((s) => s && s.length > 0);
  return `${[...new Set(parts)].join(' ')} (${backend})`;
}

/**
 * The Gpu on `adapter` of `instance`, whichever WebGPU implementation made them: Dawn in Node (dawn.ts), or a
 * browser's `navigator.gpu`. Asks for the adapter's own limits (the defaults are far below a GPU's). `memoryBudget`:
 * the default device memory budget, where the host can tell the device's memory (WebGPU does not; dawn.ts asks).
 */
export async function openDevice(
  instance: GPU,
  adapter: GPUAdapter,
  backend: string,
  options: Pick<GpuOptions, 'maxStorageBufferBindingSize' | 'subgroups' | 'gpuPaths'> = {},
  memoryBudget?: number,
): Promise<Gpu> {
  const a = adapter.limits;
  const workgroupSize = a.maxComputeInvocationsPerWorkgroup >= 256 && a.maxComputeWorkgroupSizeX >= 256 ? 256 : 128;
  const wanted: GPUFeatureName[] = ['subgroups', 'timestamp-query'];
  const device = await adapter.requestDevice({
    requiredFeatures: wanted.filter((f) => adapter.features.has(f) && (f !== 'subgroups' || options.subgroups !== false)),
    requiredLimits: {
      maxComputeWorkgroupSizeX: a.maxComputeWorkgroupSizeX,
      maxComputeInvocationsPerWorkgroup: a.maxComputeInvocationsPerWorkgroup,
      maxStorageBuffersPerShaderStage: a.maxStorageBuffersPerShaderStage,
      maxStorageBufferBindingSize: a.maxStorageBufferBindingSize,
      maxBufferSize: a.maxBufferSize,
      maxComputeWorkgroupsPerDimension: a.maxComputeWorkgroupsPerDimension,
    },
  });
  const d = device.limits;
  const cpuAdapter = !isRealGpu(adapter);
  return new GpuImpl(instance, device, describe(adapter, backend), backend, cpuAdapter && options.gpuPaths !== true, cpuAdapter, memoryBudget, {
    workgroupSize,
    maxStorageBufferBindingSize: Math.min(d.maxStorageBufferBindingSize, options.maxStorageBufferBindingSize ?? Infinity),
    maxBufferSize: d.maxBufferSize,
    maxComputeWorkgroupsPerDimension: d.maxComputeWorkgroupsPerDimension,
    minUniformBufferOffsetAlignment: d.minUniformBufferOffsetAlignment,
    minStorageBufferOffsetAlignment: d.minStorageBufferOffsetAlignment,
  });
}

/** Counters of GpuImpl.work. */
export interface DeviceWork {
  copies: number;
  copyBytes: number;
  clears: number;
  clearBytes: number;
  readbacks: number;
}

/** GpuImpl.work and the pool's created bytes now: workSince tells what was done after. */
export function workMark(g: GpuImpl): RunWork {
  return { ...g.work, createdBytes: g.pool.createdBytes };
}

/** No device work (a counter's start). */
export function noWork(): RunWork {
  return { copies: 0, copyBytes: 0, clears: 0, clearBytes: 0, readbacks: 0, createdBytes: 0 };
}

/** The device work done since `mark` (workMark). */
export function workSince(g: GpuImpl, mark: RunWork): RunWork {
  const now = workMark(g);
  return {
    copies: now.copies - mark.copies,
    copyBytes: now.copyBytes - mark.copyBytes,
    clears: now.clears - mark.clears,
    clearBytes: now.clearBytes - mark.clearBytes,
    readbacks: now.readbacks - mark.readbacks,
    createdBytes: now.createdBytes - mark.createdBytes,
  };
}

/** A run's device work besides its compute passes (ExecuteStats.work): GpuImpl.work, and the bytes of buffers created. */
export interface RunWork extends DeviceWork {
  createdBytes: number;
}

/** What `fn` returned or threw: scoped work settles its error scopes before either goes to its caller. */
async function outcome<T>(fn: () => Promise<T>): Promise<{ ok: true; value: T } | { ok: false; error: unknown }> {
  try {
    return { ok: true, value: await fn() };
  } catch (error) {
    return { ok: false, error };
  }
}

/** The error scopes around scoped work, pushed in this order. */
const SCOPE_FILTERS: readonly GPUErrorFilter[] = ['validation', 'out-of-memory', 'internal'];

/** The Gpu handed out by openGpu, with the state the drivers share. */
export class GpuImpl implements Gpu {
  /** Compiled pipelines by WGSL text, then by pass and bind layout (see pipelineFor; one workgroup size per device). */
  readonly pipelines = new Map<string, Map<string, Promise<GPUComputePipeline>>>();
  readonly layouts = new Map<string, PassLayout>();
  /**
   * Bind groups by layout and buffers (each bound whole): creating one costs ~20 µs of host time on a GPU, more
   * than most dispatches, and a fixpoint binds the same pooled buffers again and again. Cleared when large;
   * destroyed buffers never come back, so their stale entries are never hit.
   */
  readonly bindGroups = new Map<string, GPUBindGroup>();
  private readonly bufferIds = new WeakMap<GPUBuffer, number>();
  private nextBufferId = 0;

  /** A number naming `buffer` in bind group keys. */
  bufferId(buffer: GPUBuffer): number {
    let id = this.bufferIds.get(buffer);
    if (id === undefined) this.bufferIds.set(buffer, (id = this.nextBufferId++));
    return id;
  }
  readonly pool: BufferPool;
  /** The encoder recorders and readbacks share (see CommandBatch). */
  readonly batch: CommandBatch;
  /** Bytes copied back to the host so far (counts, key masks, downloaded relations). */
  readbackBytes = 0;
  /** Host round trips that read counts, key masks, flags or small outputs so far (syncCounts; not chunked downloads). */
  hostSyncs = 0;
  /** Milliseconds the host spent waiting for the device to hand back mapped readbacks so far (see waitFor). */
  waitMilliseconds = 0;
  /**
   * Device work that no compute pass's timestamps cover, so far: buffer copies and clears the recorders encoded, and
   * readbacks (each a host round trip, host syncs among them). With the pool's creations (BufferPool.created), what a
   * profile's kernel times leave out of a run's wall time.
   */
  readonly work: DeviceWork = { copies: 0, copyBytes: 0, clears: 0, clearBytes: 0, readbacks: 0 };
  /**
   * Compute pipelines compiled so far, and the wall time in which at least one was compiling (see compiling): a
   * first run's load compiles its parse, sort and key check passes, which `vixen bench load` tells apart.
   */
  readonly compiled = { pipelines: 0, milliseconds: 0 };
  private compilesPending = 0;
  private compilingSince = 0;
  /** Row counts on the device no sync has read yet (relations alive with `pending`). */
  readonly pending = new Set<DeviceWord>();
  /** Guesses the next sync checks (see Guess). */
  readonly guesses: Guess[] = [];
  /** The run kernels guess for: set while it is the only run in progress (a guess must be its run's). */
  guessing: GuessingRun | null = null;
  /** The part of a joined side the kernel now launched runs over, where the side was split (recorder.ts splitSide). */
  part: LaunchPart | null = null;
  /** Program runs in progress on this device (executor.ts). */
  runsInProgress = 0;
  /**
   * What the device is working on, for the errors it reports (a kernel and the relation it computes, or a load);
   * the executor sets it before each step, and a buffer the device refuses is reported with it.
   */
  activity = '';
  /** Bytes of relations the current run holds on the device (the executor's count), for out-of-memory errors. */
  heldBytes = 0;
  /**
   * Most bytes of storage buffers in use (BufferPool.inUseBytes) once a merge join's output of more than a few rows
   * is allocated (executor.ts: the device memory budget): a room by a bound or a guess past it is not taken, and an
   * exact count past it and `spillableBytes` (which the executor can spill once the kernel is done) throws
   * OutputRoomError.
   */
  storageCap = Infinity;
  spillableBytes = 0;
  /** Why the device is unusable (lost, or an internal error); every later call throws it. */
  private failure: DeviceFault | null = null;
  /**
   * An out-of-memory or validation error of work outside any error scope: the next call throws it, once (the
   * device itself goes on; what the failed work left in caches is dropped, see fail).
   */
  private stray: DeviceFault | null = null;
  private lost = false;
  /** Times compute passes while a profile asks for device times (see startTiming). */
  timer: PassTimer | null = null;
  /** Tail of the chain serializing scoped work (see serial). */
  private tail: Promise<unknown> = Promise.resolve();
  /** The first GPU error of the scoped work so far, once its scopes are popped (see scoped). */
  private unsettled: Promise<DeviceFault | undefined> = Promise.resolve(undefined);
  /** Open run scopes (runScoped); while there are any, scoped() pushes no scopes. */
  private runScopes = 0;
  private readonly lostSignal: Promise<never>;
  readonly subgroups: boolean;

  constructor(
    /** Kept so the instance outlives the device. */
    readonly instance: GPU,
    readonly device: GPUDevice,
    readonly adapterName: string,
    readonly backend: string,
    readonly software: boolean,
    readonly cpuAdapter: boolean,
    /**
     * Device memory a run's relations may hold when the run names no budget (RunOptions.maxDeviceMemory): the
     * device's memory less a margin, or undefined where nothing reports it (gpu/device-memory.ts).
     */
    readonly memoryBudget: number | undefined,
    readonly limits: GpuLimits,
  ) {
    // Reallocating (and zeroing) a large buffer costs far more than the kernels that fill it: on a GPU, keep
    // enough free memory pooled for a fixpoint's working set at 2^28 rows; on a CPU adapter it is host memory.
    this.subgroups = device.features.has('subgroups');
    // Past one binding a fixpoint's working set is larger: up to half the memory budget (makeRoom trims the pool first).
    this.pool = new BufferPool(device, limits.maxBufferSize, cpuAdapter ? 256 * 2 ** 20 : Math.max(16 * 2 ** 30, (memoryBudget ?? 0) / 2), () => this.activity);
    this.pool.budget = memoryBudget ?? Infinity;
    // Read buffers kept for the next load go first under pressure: a load maps new ones at a small cost.
    this.pool.relievers.add(() => {
      const kept = keptReadBytes(this);
      dropIdleReads(this);
      return kept - keptReadBytes(this);
    });
    this.batch = new CommandBatch(device, this.pool);
    this.lostSignal = device.lost.then((info) => {
      this.lost = true;
      this.failure ??= lostFault(info.reason, this.activity, info.message || 'no message');
      throw this.failure;
    });
    // Nobody awaits lostSignal unless a call is in flight; keep its rejection from being "unhandled".
    this.lostSignal.catch(() => undefined);
    device.onuncapturederror = (ev) => {
      // Handled: dawn.node prints an event nobody cancels ("validation:" and Dawn's text) on the process's stdout.
      ev.preventDefault();
      const kind = ev.error instanceof GPUOutOfMemoryError ? 'out-of-memory' : ev.error instanceof GPUValidationError ? 'validation' : 'internal';
      const fault = deviceErrorFault(kind, this.activity, ev.error.message);
      if (kind === 'internal') this.failure ??= fault;
      else this.stray ??= fault;
    };
  }

  /** Starts timing compute passes with timestamp queries; false when the device has no 'timestamp-query'. */
  startTiming(): boolean {
    if (!this.device.features.has('timestamp-query')) return false;
    this.timer ??= new PassTimer(this.device);
    return true;
  }

  stopTiming(): void {
    this.timer?.destroy();
    this.timer = null;
  }

  /**
   * queue.writeBuffer, after submitting the commands encoded so far: the write runs at queue time, so it would
   * otherwise overtake them (and clobber a pooled buffer they still read).
   */
  writeBuffer(buffer: GPUBuffer, offset: number, data: Uint32Array): void {
    this.batch.flush();
    this.batch.trace?.write(buffer, offset, data);
    // With lib.dom (the page's type check) writeBuffer takes no views of shared memory; these never are.
    this.device.queue.writeBuffer(buffer, offset, data as Uint32Array<ArrayBuffer>);
  }

  /** Resolves once every command encoded so far has run on the device. */
  idle(): Promise<undefined> {
    this.batch.flush();
    return this.device.queue.onSubmittedWorkDone();
  }

  /**
   * Lets Dawn free the memory of buffers destroyed since the device last finished its work: it frees a buffer once
   * the commands submitted before its destruction ran, at a device tick (which waiting for the queue gives). A load or
   * run about to need much memory calls it after freeing much, so that the device has it back.
   */
  async reclaim(): Promise<void> {
    if (this.pool.unreclaimedBytes === 0) return;
    this.pool.unreclaimedBytes = 0;
    await this.waitFor(this.idle());
  }

  dispose(): void {
    if (this.lost) return;
    this.batch.drop();
    this.stopTiming();
    this.failure ??= lostFault('destroyed', '', 'GPU device was disposed');
    this.pool.dispose();
    this.pipelines.clear();
    this.layouts.clear();
    this.bindGroups.clear();
    this.device.destroy();
  }

  /** The device runs nothing more (lost, disposed, or an internal error): a new one is needed. */
  get failed(): boolean {
    return this.failure !== null;
  }

  /** Throws if the device is gone or an earlier error went uncaught. */
  check(): void {
    if (this.failure) throw this.failure;
    if (this.stray) throw this.fail(this.stray);
  }

  /** `p`, a pipeline being compiled, counted in `compiled`. */
  async compiling<T>(p: Promise<T>): Promise<T> {
    if (this.compilesPending++ === 0) this.compilingSince = performance.now();
    try {
      return await p;
    } finally {
      this.compiled.pipelines++;
      if (--this.compilesPending === 0) this.compiled.milliseconds += performance.now() - this.compilingSince;
    }
  }

  /** Resolves with `p`, or rejects as soon as the device is lost (so waits on the GPU never hang). */
  orLost<T>(p: Promise<T>): Promise<T> {
    return Promise.race([p, this.lostSignal]);
  }

  /** `orLost(p)`, its wait counted in waitMilliseconds: the time a run's host work stood still for the device. */
  async waitFor<T>(p: Promise<T>): Promise<T> {
    const start = performance.now();
    this.batch.prepare();
    try {
      return await this.orLost(p);
    } finally {
      this.waitMilliseconds += performance.now() - start;
    }
  }

  /**
   * Runs `fn` alone, inside validation / out-of-memory / internal error scopes; a GPU error becomes an
   * Error naming `what`. When `fn` throws, the scopes are awaited first (a GPU error wins over what `fn` threw,
   * which is usually a consequence); otherwise they settle in the background and `settle()` reports them:
   * awaiting three scope pops per kernel cost more host time than most kernels take on a GPU. Inside a run
   * scope (runScoped) `fn` pushes no scopes of its own: the run's scopes catch its errors.
   */
  scoped<T>(what: string, fn: () => Promise<T>): Promise<T> {
    return this.serial(async () => {
      this.check();
      if (this.runScopes > 0) return fn();
      this.pushScopes();
      const result = await outcome(fn);
      const errors = this.popScopes(what);
      if (!result.ok) {
        // An earlier scope's error is the cause (on the H100 a relation buffer that could not be created surfaced
        // as a later copy's 'invalid due to a previous error'), so the first error of all scopes wins here too.
        const error = (await this.orLost(this.unsettled)) ?? (await this.orLost(errors));
        // The work failed and is abandoned: the device stays usable (a shader that does not compile breaks nothing).
        if (error !== undefined) throw this.fail(await this.cause(error, result.error), false);
        throw result.error;
      }
      // The first error of all scopes so far wins; never rejects, so it cannot go unhandled.
      const earlier = this.unsettled;
      this.unsettled = earlier.then(async (first) => first ?? (await errors));
      this.check();
      return result.value;
    });
  }

  /**
   * Runs `fn` (a program run: many kernels) inside one set of error scopes, which the scoped() work it starts
   * shares: pushing, popping and settling three scopes cost about 27 us of host time per kernel on the H100, more
   * than most kernels take there. Resolves only once the scopes are popped, so a GPU error of the run (or of
   * scoped work before it) rejects the run, naming `what`, instead of handing out its results; it also fails the
   * device, as settle() does. Other callers' scoped work that runs meanwhile shares the run's scopes too.
   */
  async runScoped<T>(what: string, fn: (endScopes: () => void) => Promise<T>): Promise<T> {
    // Pushed and popped in turn with scoped work, so that the scopes on the device's stack nest.
    await this.serial(() => {
      if (this.runScopes++ === 0) this.pushScopes();
    });
    let early: Promise<DeviceFault | undefined> | undefined;
    /**
     * Pops the scopes now when this is the only run scope open: the run calls it once its last commands are
     * submitted, so that the pops settle while the host waits for its readback. Scoped work is serialized, so no
     * other caller's is in flight inside the run; scoped work after this pushes scopes of its own.
     */
    const endScopes = (): void => {
      if (early !== undefined || this.runScopes !== 1) return;
      this.runScopes = 0;
      early = this.popScopes(what);
    };
    const result = await outcome(() => fn(endScopes));
    try {
      // Wrapped: the chain must not wait for the pops to settle.
      const { errors } = early
        ? { errors: early }
        : await this.serial(() => ({ errors: --this.runScopes === 0 ? this.popScopes(what) : Promise.resolve<DeviceFault | undefined>(undefined) }));
      const error = (await this.orLost(this.unsettled)) ?? (await this.orLost(errors));
      // A refused buffer explains the run's failure (and a run that stopped on its own error may have met one).
      const refused = await this.cause(undefined, result.ok ? undefined : result.error);
      if (refused ?? error) throw this.fail((refused ?? error)!);
      if (!result.ok) throw result.error;
      this.check();
      return result.value;
    } finally {
      // What it did is over: a later fault outside any run must not name it.
      if (this.runScopes === 0) this.activity = '';
    }
  }

  /** Runs `step` after the scoped work started before it (error scopes are a per-device stack). */
  private serial<T>(step: () => T | Promise<T>): Promise<T> {
    const next = this.tail.then(step, step);
    this.tail = next.catch(() => undefined);
    return next;
  }

  private pushScopes(): void {
    for (const f of SCOPE_FILTERS) this.device.pushErrorScope(f);
  }

  /**
   * Pops what pushScopes() pushed: a fault for the first error of the scopes (out of memory first), naming the
   * activity when the popping started (else `what`), or undefined.
   */
  private popScopes(what: string): Promise<DeviceFault | undefined> {
    const activity = this.activity || what;
    const pops = [...SCOPE_FILTERS].reverse().map((f) => this.device.popErrorScope().then((e) => (e ? { f, e } : undefined)));
    return Promise.all(pops).then(
      (es) => {
        const found = es.filter((e) => e !== undefined);
        const first = found.find((e) => e.f === 'out-of-memory') ?? found[0];
        return first ? deviceErrorFault(first.f, activity, found.map((e) => `${e.f}: ${e.e.message}`).join('; ')) : undefined;
      },
      (e: unknown) => deviceErrorFault('internal', activity, e instanceof Error ? e.message : String(e)),
    );
  }

  /** The fault of the first buffer the device refused since the last check, if any (see BufferPool.takeFailure). */
  private async refusal(wait = true): Promise<DeviceFault | undefined> {
    const f = await this.pool.takeFailure(wait);
    return f && allocationFault(f, this.heldBytes, this.limits.maxBufferSize);
  }

  /**
   * The refused buffer behind a failure, else the fault work threw (settle() found it during the work: it is more
   * specific than the errors its consequences raised in the scopes), else `error`.
   */
  private async cause<E extends DeviceFault | undefined>(error: E, thrown: unknown): Promise<DeviceFault | E> {
    return (await this.refusal()) ?? (thrown instanceof DeviceFault ? thrown : error);
  }

  /**
   * Records `fault` and returns it. Running out of memory or a validation error leaves the device usable (WebGPU
   * errors make only the objects involved invalid): the run's buffers are freed, and whatever the device may have
   * refused is dropped from what outlives the run (purge), so the next run can use it. An internal error fails it.
   */
  private fail(fault: DeviceFault, failsDevice = fault.failsDevice): DeviceFault {
    if (failsDevice) this.failure ??= fault;
    // Reported once: later work is not blamed for it (nor for the stray errors it explains).
    this.unsettled = Promise.resolve(undefined);
    this.stray = null;
    this.purge();
    return fault;
  }

  /**
   * Drops what outlives a run and may hold an object the device refused during a faulted one: free pooled buffers,
   * cached bind groups, idle kept read buffers and the words in refused buffers the next sync would read (refused
   * ones are also left out where they are checked: pool.ts `checked`). Resident relations come only from runs that
   * ended without a fault.
   */
  private purge(): void {
    this.pool.trim();
    this.bindGroups.clear();
    dropIdleReads(this);
    // Counts and guesses the faulted run left for the next sync, in a buffer the device refused: copying them
    // would fail that sync too.
    for (const w of this.pending) if (this.pool.refused(w.buffer)) this.pending.delete(w);
    for (const q of this.guesses.filter((q) => this.pool.refused(q.buffer))) {
      this.guesses.splice(this.guesses.indexOf(q), 1);
      this.pool.release(q.buffer);
    }
  }

  /** Throws the first GPU error of any scoped work so far (its message names the work). */
  async settle(): Promise<void> {
    this.check();
    const error = await this.orLost(this.unsettled);
    // Waiting for every creation's scopes would cost each host sync; the run's end waits for them (runScoped).
    const refused = await this.refusal(error !== undefined);
    if (refused ?? error) throw this.fail((refused ?? error)!);
  }
}

export function internals(gpu: Gpu): GpuImpl {
  if (!(gpu instanceof GpuImpl)) throw new Error('not a Gpu opened by openGpu()');
  return gpu;
}
