/**
 * Reuses released GPU buffers by (usage, size class) so the executor's many short-lived relations are cheap. Every
 * device buffer is created and destroyed here (the mapped staging buffers through createMapped / destroyMapped), so
 * that the bytes the device holds for Vixen are known exactly (allocatedBytes) and kept within a budget: a creation
 * past it first destroys free buffers, then asks the relievers (a Database's idle resident relations) for room.
 */
import { allocationFault, type AllocationFailure } from './device-fault.js';

/**
 * Frees at least `bytes` of device buffers it holds and can do without (by releasing them to the pool), where it can;
 * returns the bytes it released.
 */
export type Reliever = (bytes: number) => number;

/** Size classes 2^k and 1.5 * 2^k (at least 256 bytes): at most 33% slack. */
export function sizeClass(bytes: number): number {
  if (bytes <= 256) return 256;
  const p = 2 ** Math.ceil(Math.log2(bytes));
  return (p / 4) * 3 >= bytes ? (p / 4) * 3 : p;
}

/** The size class after `size` (a class): 2^k -> 1.5 * 2^k -> 2^(k+1). */
function nextClass(size: number): number {
  const p = 2 ** Math.floor(Math.log2(size));
  return size === p ? (p / 2) * 3 : 2 * p;
}

export class BufferPool {
  /**
   * Free buffers by usage, then by size: numeric keys, since acquire and release run for every scratch buffer. Each
   * list is in descending order of the buffers' numbers (see numbered), so that pop() takes the oldest buffer.
   */
  private readonly free = new Map<number, Map<number, GPUBuffer[]>>();
  /**
   * Buffers in the order the pool first saw them. Taking the oldest free buffer of a class, not the last released,
   * makes a run on resident tables get the same buffers as the run before it (each returns what it took): the
   * bind groups cached for them serve again, where a last-released choice permuted them between runs (TPC-H Q19
   * at SF 0.1 created 6.8 bind groups a run, ~47 us of host time each on llvmpipe).
   */
  private readonly numbers = new WeakMap<GPUBuffer, number>();
  private nextNumber = 0;
  private readonly pooled = new Set<GPUBuffer>();
  private pooledBytes = 0;
  /** Buffers acquire() had to create so far (pool misses): each costs an allocation and Dawn's zero fill. */
  created = 0;
  /** Bytes of the buffers it created. */
  createdBytes = 0;
  /**
   * Bytes of storage buffers handed out and not yet released (relations and kernels' scratch), and the most at once
   * since a caller last set peakInUseBytes: what a device memory budget must hold besides the pool's free buffers.
   */
  inUseBytes = 0;
  peakInUseBytes = 0;
  private readonly handedOut = new WeakSet<GPUBuffer>();
  /**
   * Bytes of every device buffer created and not yet destroyed (in use, free in the pool, doomed, mapped staging
   * buffers): what the device holds for this process, less Dawn's own. The most at once since a caller last set
   * peakAllocatedBytes.
   */
  allocatedBytes = 0;
  peakAllocatedBytes = 0;
  /**
   * Of allocatedBytes, the mapped staging buffers' (createMapped), and the most at once since a caller last set
   * peakMappedBytes: Dawn places them in the largest host-visible heap, which need not be the device's memory.
   */
  mappedBytes = 0;
  peakMappedBytes = 0;
  /**
   * Bytes destroyed since the device last finished its work: Dawn frees a destroyed buffer's memory only once the
   * commands submitted before it ran and the device ticked (see GpuImpl.reclaim).
   */
  unreclaimedBytes = 0;
  /** Most bytes of buffers a creation may bring allocatedBytes to before free buffers and relievers give room. */
  budget = Infinity;
  /** Who can give memory back under pressure (Database: idle resident relations, least recently used first). */
  readonly relievers = new Set<Reliever>();
  /** Buffers freed (free buffers destroyed, or relievers' releases) to keep creations within the budget. */
  readonly relieved = { buffers: 0, bytes: 0, relieverBytes: 0 };
  /**
   * Buffers to destroy once recorded commands that may use them are submitted (see holdDestroys); null when
   * nothing is recorded but unsubmitted, and buffers are destroyed at once.
   */
  private doomed: GPUBuffer[] | null = null;
  /**
   * Bytes of the doomed buffers: freed at the next submission, so a creation's room counts them as free. Counted as
   * held, a creation while commands are recorded found the free buffers it destroyed still over the budget and had
   * the relievers evict resident relations whose buffers were doomed too (TPC-H SF 30 on the H200: up to 20
   * relations evicted and reloaded from the host in a query, beside 58-63 GiB of free pooled buffers).
   */
  private doomedBytes = 0;

  /**
   * Buffers replay records hold (gpu/replay.ts), by how many hold them: their other holder's release() keeps them out
   * of the pool (noted in `letGo`) until the last record lets them go (unclaim).
   */
  private readonly claims = new Map<GPUBuffer, number>();
  private readonly letGo = new Set<GPUBuffer>();
  /** Buffers destroyed (or doomed to be): a record must not hold one. */
  private readonly destroyed = new WeakSet<GPUBuffer>();

  /** Buffers the device refused to create (invalid): never pooled. */
  private readonly invalid = new WeakSet<GPUBuffer>();
  /** Refusals not yet taken (takeFailure), and the creations whose error scopes are still being popped. */
  private failures: AllocationFailure[] = [];
  private readonly checking = new Set<Promise<void>>();

  /**
   * A test knob (VIXEN_REFUSE_BUFFER, dawn.ts): the first buffer asked for while the activity contains this text asks
   * the device for `bytes` (past its memory or its largest buffer), which it refuses, so a real device fault is
   * injected where a test wants one.
   */
  refuseWhile: { activity: string; bytes: number } | undefined;

  constructor(
    private readonly device: GPUDevice,
    private readonly maxBufferSize: number,
    /** Bytes of free buffers kept for reuse; beyond this, released buffers are destroyed. */
    private readonly maxPooledBytes: number,
    /** What the run is doing now (GpuImpl.activity): a refused buffer is reported with it. */
    private readonly activity: () => string = () => '',
  ) {}

  /**
   * A buffer of at least `bytes` (contents undefined): a free one of the same size class, else the smallest free
   * one up to twice that size (sizes drift between fixpoint iterations), else a new one. New large buffers are
   * expensive: the driver allocates and Dawn zero-fills them.
   */
  acquire(bytes: number, usage: GPUBufferUsageFlags): GPUBuffer {
    const refuse = this.refuseWhile;
    if (refuse !== undefined && this.activity().includes(refuse.activity)) {
      this.refuseWhile = undefined;
      return this.acquire(refuse.bytes, usage);
    }
    const buffer = this.take(bytes, usage);
    if (usage & GPUBufferUsage.STORAGE) {
      this.handedOut.add(buffer);
      this.inUseBytes += buffer.size;
      this.peakInUseBytes = Math.max(this.peakInUseBytes, this.inUseBytes);
    }
    return buffer;
  }

  private take(bytes: number, usage: GPUBufferUsageFlags): GPUBuffer {
    let size = sizeClass(bytes);
    if (size > this.maxBufferSize) size = Math.ceil(bytes / 4) * 4;
    const bySize = this.free.get(usage);
    if (bySize) {
      // The classes up to twice the size: at most three lists to look at.
      for (let s = size; s <= 2 * size; s = nextClass(s)) {
        const reused = bySize.get(s)?.pop();
        if (reused) {
          this.pooled.delete(reused);
          this.pooledBytes -= reused.size;
          return reused;
        }
      }
    }
    return this.create(size, usage);
  }

  /**
   * A new buffer, inside error scopes of its own (see checked). Pool misses are rare and cost an allocation and a
   * zero fill, so two more scopes do not show.
   */
  private create(size: number, usage: GPUBufferUsageFlags): GPUBuffer {
    this.created += 1;
    this.createdBytes += size;
    this.makeRoom(size);
    const buffer = this.checked({ size, usage });
    this.numbered(buffer);
    return buffer;
  }

  /**
   * `device.createBuffer(descriptor)` inside error scopes: a buffer the device cannot allocate (or larger than its
   * limit) is recorded with its size and the activity that asked for it, so that the run's error names them rather
   * than the invalid-buffer errors its later uses raise, and it never serves again: destroyed if it sits in the
   * pool by the time the device says so, refused (see `refused`) by the long-lived holders of buffers made here
   * (mapped reads, the staging ring). A creation Dawn refuses at once (a mapping it cannot make) throws the fault.
   */
  checked(descriptor: GPUBufferDescriptor): GPUBuffer {
    const activity = this.activity();
    this.device.pushErrorScope('out-of-memory');
    this.device.pushErrorScope('validation');
    let buffer: GPUBuffer;
    try {
      buffer = this.device.createBuffer(descriptor);
    } catch (e) {
      // dawn.node throws a RangeError where it cannot map a buffer at creation; its scopes go (popped at once: a stack).
      void Promise.all([this.device.popErrorScope(), this.device.popErrorScope()]).catch(() => undefined);
      throw allocationFault({ bytes: descriptor.size, activity, kind: 'out-of-memory', detail: e instanceof Error ? e.message : String(e) }, 0, this.maxBufferSize);
    }
    this.counted(buffer.size);
    const validation = this.device.popErrorScope();
    const oom = this.device.popErrorScope();
    const check: Promise<void> = Promise.all([oom, validation]).then(
      ([o, v]) => {
        this.checking.delete(check);
        const error = o ?? v;
        if (!error) return;
        this.invalid.add(buffer);
        // Released before the device answered (a load's chunk buffers go back as soon as its commands are queued).
        if (this.pooled.has(buffer)) {
          this.unpool(buffer);
          this.destroy(buffer);
        }
        this.failures.push({ bytes: descriptor.size, activity, kind: o ? 'out-of-memory' : 'validation', detail: error.message });
      },
      () => void this.checking.delete(check),
    );
    this.checking.add(check);
    return buffer;
  }

  /** Whether the device refused `buffer` (known once its creation's scopes are popped). */
  refused(buffer: GPUBuffer): boolean {
    return this.invalid.has(buffer);
  }

  /**
   * Room for `bytes` more within the budget: free buffers destroyed, oldest first, then what relievers release (and
   * the pool then frees). Never fails: a creation past the budget is tried (the device may hold it), and a refusal
   * is reported as one (takeFailure).
   */
  private makeRoom(bytes: number): void {
    const over = (): number => this.liveBytes + bytes - this.budget;
    if (over() <= 0) return;
    this.shed(over());
    for (const relieve of this.relievers) {
      if (over() <= 0) return;
      this.relieved.relieverBytes += relieve(over());
      this.shed(over());
    }
  }

  /** Destroys free buffers, oldest first, until allocatedBytes is at most `bytes` or none is left. */
  trimTo(bytes: number): void {
    this.shed(this.liveBytes - bytes);
  }

  /** Bytes allocated and not doomed: what the device holds once the recorded commands are submitted. */
  get liveBytes(): number {
    return this.allocatedBytes - this.doomedBytes;
  }

  /** Destroys free buffers, oldest first, until `bytes` are freed or none is left. */
  private shed(bytes: number): void {
    let freed = 0;
    for (const old of this.pooled) {
      if (freed >= bytes) break;
      freed += old.size;
      this.relieved.buffers++;
      this.relieved.bytes += old.size;
      this.unpool(old);
      this.destroy(old);
    }
  }

  private counted(bytes: number): void {
    this.allocatedBytes += bytes;
    this.peakAllocatedBytes = Math.max(this.peakAllocatedBytes, this.allocatedBytes);
  }

  /**
   * A buffer mapped at creation (staging: MAP_WRITE | COPY_SRC), counted with the others: on a GPU whose memory the
   * host can map (resizable BAR), Dawn may place it in device memory. Never pooled; destroyMapped destroys it.
   */
  createMapped(size: number): GPUBuffer {
    this.makeRoom(size);
    this.mappedBytes += size;
    this.peakMappedBytes = Math.max(this.peakMappedBytes, this.mappedBytes);
    return this.checked({ size, usage: GPUBufferUsage.MAP_WRITE | GPUBufferUsage.COPY_SRC, mappedAtCreation: true });
  }

  /** Destroys a buffer of createMapped (once: a second call is ignored). */
  destroyMapped(buffer: GPUBuffer): void {
    if (this.destroyed.has(buffer)) return;
    this.destroyed.add(buffer);
    this.mappedBytes -= buffer.size;
    this.freed(buffer);
    buffer.destroy();
  }

  private freed(buffer: GPUBuffer): void {
    this.allocatedBytes -= buffer.size;
    this.unreclaimedBytes += buffer.size;
  }

  /**
   * The first buffer the device refused since the last call, if any: once every creation so far is checked when
   * `wait`, else among those checked already (a host sync need not wait for the scopes of the others).
   */
  async takeFailure(wait = true): Promise<AllocationFailure | undefined> {
    while (wait && this.checking.size > 0) await Promise.all(this.checking);
    const first = this.failures[0];
    this.failures = [];
    return first;
  }

  /**
   * Returns a buffer for reuse, evicting the longest-pooled buffers beyond the byte budget. Safe while GPU work
   * using it is queued or recorded: later commands run after it, and destroying waits for recorded ones' submit.
   */
  release(buffer: GPUBuffer): void {
    if (this.pooled.has(buffer) || this.letGo.has(buffer)) throw new Error('internal: GPU buffer released twice');
    if (this.claims.has(buffer)) {
      // A record holds it: it stays in use (and counted) until the record lets it go.
      this.letGo.add(buffer);
      return;
    }
    if (this.handedOut.delete(buffer)) this.inUseBytes -= buffer.size;
    // Past the budget a free buffer only takes memory a creation will want.
    const cap = this.freeCap();
    if (buffer.size > cap || this.invalid.has(buffer) || this.allocatedBytes > this.budget) {
      this.destroy(buffer);
      return;
    }
    for (const old of this.pooled) {
      if (this.pooledBytes + buffer.size <= cap) break;
      this.unpool(old);
      this.destroy(old);
    }
    let bySize = this.free.get(buffer.usage);
    if (!bySize) this.free.set(buffer.usage, (bySize = new Map()));
    let list = bySize.get(buffer.size);
    if (!list) bySize.set(buffer.size, (list = []));
    // Into descending order of numbers (a binary search: a fixpoint may pool many buffers of one class).
    const n = this.numbered(buffer);
    let lo = 0;
    let hi = list.length;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (this.numbers.get(list[mid]!)! > n) lo = mid + 1;
      else hi = mid;
    }
    list.splice(lo, 0, buffer);
    this.pooled.add(buffer);
    this.pooledBytes += buffer.size;
  }

  /**
   * Most bytes of free buffers to keep: maxPooledBytes, within a budget at most half of what the buffers in use (a
   * Database's resident relations among them) leave, and at least an eighth of it. Free buffers that the budget's
   * edge must destroy are freed by Dawn only at a later device tick, while the creation that wanted them needs the
   * memory at once (the SF 30 run kept 58-63 GiB free beside 18-34 GiB resident, with a cap of half the budget).
   */
  private freeCap(): number {
    return Math.min(this.maxPooledBytes, Math.max(this.budget / 8, (this.budget - this.inUseBytes) / 2));
  }

  /** Takes a free buffer out of its list. */
  private unpool(buffer: GPUBuffer): void {
    const list = this.free.get(buffer.usage)!.get(buffer.size)!;
    list.splice(list.indexOf(buffer), 1);
    this.pooled.delete(buffer);
    this.pooledBytes -= buffer.size;
  }

  /**
   * A replay record holds `buffer` (gpu/replay.ts) until it calls unclaim: a free one is taken out of the pool (in use,
   * by the record: 'own'); one handed out or held by another record ('shared') goes back to the pool only once its holder and every record let
   * it go. False for a buffer destroyed or refused, which no record can hold.
   */
  claim(buffer: GPUBuffer): 'own' | 'shared' | false {
    if (this.destroyed.has(buffer) || this.invalid.has(buffer)) return false;
    const n = this.claims.get(buffer) ?? 0;
    this.claims.set(buffer, n + 1);
    if (!this.pooled.has(buffer)) return 'shared';
    this.unpool(buffer);
    this.letGo.add(buffer);
    if (buffer.usage & GPUBufferUsage.STORAGE) {
      this.handedOut.add(buffer);
      this.inUseBytes += buffer.size;
      this.peakInUseBytes = Math.max(this.peakInUseBytes, this.inUseBytes);
    }
    return 'own';
  }

  /** A record lets `buffer` go (see claim). */
  unclaim(buffer: GPUBuffer): void {
    const n = this.claims.get(buffer)! - 1;
    if (n > 0) {
      this.claims.set(buffer, n);
      return;
    }
    this.claims.delete(buffer);
    if (this.letGo.delete(buffer)) this.release(buffer);
  }

  /** `buffer`'s number in the order the pool first saw it (given now if it has none). */
  private numbered(buffer: GPUBuffer): number {
    let n = this.numbers.get(buffer);
    if (n === undefined) this.numbers.set(buffer, (n = this.nextNumber++));
    return n;
  }

  /**
   * From now until destroysReleased(), buffers the pool evicts are kept alive: commands recorded but not yet
   * submitted may use them, and submitting a destroyed buffer is an error.
   */
  holdDestroys(): void {
    this.doomed ??= [];
  }

  /** The recorded commands were submitted: destroys what holdDestroys kept. */
  destroysReleased(): void {
    const doomed = this.doomed;
    this.doomed = null;
    this.doomedBytes = 0;
    for (const b of doomed ?? []) {
      this.freed(b);
      b.destroy();
    }
  }

  private destroy(buffer: GPUBuffer): void {
    this.destroyed.add(buffer);
    if (this.doomed) {
      this.doomed.push(buffer);
      this.doomedBytes += buffer.size;
    } else {
      this.freed(buffer);
      buffer.destroy();
    }
  }

  /** Bytes of free buffers kept for reuse. */
  get freeBytes(): number {
    return this.pooledBytes;
  }

  /** Trims that destroyed free buffers, whose sizes later runs create again. */
  trims = 0;

  /** Destroys every pooled buffer: device memory for a run near its budget (see executor.ts makeRoom). */
  trim(): void {
    if (this.pooled.size > 0) this.trims += 1;
    for (const b of this.pooled) this.destroy(b);
    this.pooled.clear();
    this.free.clear();
    this.pooledBytes = 0;
  }

  dispose(): void {
    this.trim();
    this.destroysReleased();
  }
}
