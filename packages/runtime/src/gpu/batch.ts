/**
 * The command encoder that recorders and readbacks encode into, submitted by flush(). While `defer` is set (a KIR
 * run), kernels' commands accumulate across launches and go to the queue in one submission when the host must
 * wait (a readback), must write a buffer (queue.writeBuffer runs at once, ahead of unsubmitted commands), once
 * they hold MAX_DISPATCHES, or after a kernel over many rows (the executor's EARLY_SUBMIT_ROWS): a submission,
 * its command buffer and its uniform upload cost tens of microseconds of host time each on a GPU.
 * The uniforms of all dispatches of a submission share one arena, written just before it is submitted unless it
 * holds those words already.
 */
import type { BufferPool } from './pool.js';
import type { Trace } from './replay.js';

/** Uniform arena of one submission (at least; one recorder needing more gets a larger one). */
const ARENA_BYTES = 64 * 1024;

/**
 * Dispatches after which a deferred batch is submitted at the end of a recorder's submit, so the device runs
 * them while the host encodes the next kernels (Dawn also records a submission's native commands only at
 * submit): kernels of many passes (sorts, scans) go at once as before; the few passes of small kernels wait
 * for company, which costs the device at most a few short passes' time at the next readback.
 */
const MAX_DISPATCHES = 8;

export class CommandBatch {
  /** Runs deferring submission (see the file comment; runs may overlap); with none, every recorder's submit() flushes. */
  private deferring = 0;
  private encoder: GPUCommandEncoder | null = null;
  /** An encoder made while the host waited for the device (prepare), for the next commands(). */
  private spare: GPUCommandEncoder | null = null;
  private arena: GPUBuffer | null = null;
  /** Host copy of the arena's first `used` bytes. */
  private uniforms = new Uint32Array(ARENA_BYTES / 4);
  private used = 0;
  private dispatches = 0;
  /** The words each arena held after the last submission that used it, where no command wrote it (see flush). */
  private readonly arenaWords = new WeakMap<GPUBuffer, Uint32Array>();
  /** Commands of this submission copy device words into its arena (Recorder fills). */
  private arenaCopied = false;
  /** Encoders opened so far. */
  opened = 0;
  /** Dispatches encoded so far (the loop statistics count them per iteration). */
  dispatched = 0;
  /** Submissions so far. */
  submitted = 0;
  /**
   * Host milliseconds spent in Dawn handing submissions over so far (the arena's writeBuffer, finish, submit): on
   * a GPU Dawn records a submission's native commands there, apart from the JavaScript that encoded them.
   */
  submitMilliseconds = 0;
  /** While a run is traced for replay (gpu/replay.ts): its commands and the host's writes go there too. */
  trace: Trace | null = null;

  constructor(
    private readonly device: GPUDevice,
    private readonly pool: BufferPool,
  ) {}

  /** The open encoder, opened if none is: what is encoded runs at the next flush. */
  commands(): GPUCommandEncoder {
    if (!this.encoder) {
      this.opened += 1;
      const encoder = this.spare ?? this.device.createCommandEncoder();
      this.encoder = this.trace?.tracing ? this.trace.encoder(encoder) : encoder;
      this.spare = null;
      // Buffers released from now on may be used by what gets encoded before the flush.
      this.pool.holdDestroys();
    }
    return this.encoder;
  }

  /**
   * `bytes` of uniforms for this submission's dispatches: the arena, the byte offset of the room and the host
   * words to fill (written to the arena at flush). Flushes first when the arena has no room left.
   */
  uniformRoom(bytes: number): { arena: GPUBuffer; offset: number; words: Uint32Array } {
    if (this.arena && this.used + bytes > this.arena.size) this.flush();
    this.commands();
    if (!this.arena) {
      this.arena = this.pool.acquire(Math.max(ARENA_BYTES, bytes), GPUBufferUsage.UNIFORM | GPUBufferUsage.COPY_DST);
      if (this.uniforms.byteLength < this.arena.size) this.uniforms = new Uint32Array(this.arena.size / 4);
    }
    const offset = this.used;
    this.used += bytes;
    return { arena: this.arena, offset, words: this.uniforms };
  }

  /**
   * Makes the next submission's encoder now: called when the host is about to wait for the device, so that the
   * next run's first commands do not wait for it (createCommandEncoder took 9 us of host time on the H100).
   */
  prepare(): void {
    if (!this.encoder && !this.spare) this.spare = this.device.createCommandEncoder();
  }

  /** Commands just encoded copy device words into the arena: after the submission it holds other words than the host's. */
  copiesIntoArena(): void {
    this.arenaCopied = true;
  }

  /** Defers submission until the matching endDeferring(). */
  beginDeferring(): void {
    this.deferring += 1;
  }

  /** Ends one beginDeferring(), submitting what is encoded. */
  endDeferring(): void {
    this.deferring -= 1;
    this.flush();
  }

  /** Counts `n` dispatches just encoded; submits unless deferring (and short of MAX_DISPATCHES). */
  encoded(n: number): void {
    this.dispatches += n;
    this.dispatched += n;
    if (this.deferring === 0 || this.dispatches >= MAX_DISPATCHES) this.flush();
  }

  /** Counts `n` dispatches encoded outside recorders (a replay, gpu/replay.ts), submitting nothing. */
  counted(n: number): void {
    this.dispatched += n;
  }

  /** The uniform arena of the open submission and its words so far, if it has one (written when it is submitted). */
  openArena(): { arena: GPUBuffer; words: Uint32Array } | undefined {
    return this.encoder && this.arena && this.used > 0 ? { arena: this.arena, words: this.uniforms.subarray(0, this.used / 4) } : undefined;
  }

  /** Submits what is encoded (none: nothing to do). */
  flush(): void {
    const encoder = this.encoder;
    if (!encoder) return;
    const start = performance.now();
    const arena = this.arena;
    if (arena && this.used > 0) {
      const n = this.used / 4;
      const words = this.uniforms;
      // Traced whether written or not: a replay writes them whatever the arena holds.
      this.trace?.arena(arena, words.subarray(0, n));
      // Runs at queue time, ahead of the command buffer: its copies of device words into the arena win. An arena
      // that holds these words already (a resident query run again: same sizes, same pooled arena) is not written:
      // a writeBuffer took 23 us of host time on the H100.
      const held = this.arenaWords.get(arena);
      let same = held !== undefined && held.length >= n;
      for (let i = 0; same && i < n; i++) same = words[i] === held![i];
      if (!same) this.device.queue.writeBuffer(arena, 0, words, 0, n);
      if (this.arenaCopied) this.arenaWords.delete(arena);
      // The arena's words past these are as they were: a long enough copy is updated in place, not made again.
      else if (held !== undefined && held.length >= n) {
        if (!same) held.set(words.subarray(0, n));
      } else this.arenaWords.set(arena, words.slice(0, n));
    }
    this.encoder = null;
    this.arena = null;
    this.used = 0;
    this.dispatches = 0;
    this.arenaCopied = false;
    this.device.queue.submit([encoder.finish()]);
    this.submitted += 1;
    this.submitMilliseconds += performance.now() - start;
    // Later submissions run after this one, so the arena may be handed out again right away.
    if (arena) this.pool.release(arena);
    this.pool.destroysReleased();
  }

  /** Forgets what is encoded (the device is going away). */
  drop(): void {
    this.encoder = null;
    this.spare = null;
    this.arena = null;
    this.used = 0;
    this.dispatches = 0;
    this.arenaCopied = false;
  }
}
