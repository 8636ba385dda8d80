/**
 * Records a kernel's dispatches and copies, then encodes them into the device's command batch. Uniform blocks
 * (sizes + constants) of all dispatches of a submission share one buffer bound with dynamic offsets. Pipelines are
 * compiled once per (pass, WGSL text, workgroup size) and cached on the device.
 */
import { CHAIN_OVERFLOW, CHAIN_STEPS, COUNT_CLAMP, CPU_CHAIN_STEPS, generateKernelShaders, PASS_LAYOUTS, SUBGROUP_VARIANT, TABLES_GROUP, uniformVec4s, type KernelShaders, type PassName } from '@vixen/codegen-wgsl';
import { kernelInputs, type KirKernel, type KirVariable } from '@vixen/kernel-ir';
import type { GpuImpl } from './device.js';
import { bindingBytes, relationUsage, type DeviceWord, type GuessingRun, type Size } from './relations.js';

/**
 * A storage binding: a buffer and how many u32 words of it the pass sees. With `offset` (in words; 4 * offset a
 * multiple of the device's minStorageBufferOffsetAlignment) the binding is exactly words offset.. offset + words - 1,
 * so that two writable bindings of one buffer may share a dispatch (Dawn rejects overlapping ones); without it the
 * whole buffer.
 */
export interface Bound {
  buffer: GPUBuffer;
  words: number;
  offset?: number;
}

type Step = (
  | {
      kind: 'dispatch';
      pass: PassName;
      pipeline: Promise<GPUComputePipeline>;
      buffers: Bound[];
      uniform: Uint32Array;
      /** Uniform words the device fills from device words (pending counts, masks): (word index, source). */
      fills: Array<{ index: number; word: DeviceWord }>;
      threads: number;
      tables: Bound | undefined;
    }
  | { kind: 'copy'; from: GPUBuffer; fromOffset: number; to: GPUBuffer; toOffset: number; bytes: number }
  | { kind: 'clear'; buffer: GPUBuffer; offset: number; bytes: number }
) & {
  /** What bufferUses found, kept: passOrder, slots and encodeFills each ask for every step. */
  uses?: BufferUses;
};

export interface PassLayout {
  group: GPUBindGroupLayout;
  /** Group TABLES_GROUP, for a pass run with string built-in tables. */
  tables?: GPUBindGroupLayout;
  pipeline: GPUPipelineLayout;
}

function layoutFor(g: GpuImpl, pass: PassName, withTables: boolean): PassLayout {
  const key = withTables ? `${pass}+tables` : pass;
  const cached = g.layouts.get(key);
  if (cached) return cached;
  const group = g.device.createBindGroupLayout({
    label: pass,
    entries: PASS_LAYOUTS[pass].map((kind, binding): GPUBindGroupLayoutEntry => ({
      binding,
      visibility: GPUShaderStage.COMPUTE,
      buffer:
        kind === 'read' ? { type: 'read-only-storage' } : kind === 'write' ? { type: 'storage' } : { type: 'uniform', hasDynamicOffset: true },
    })),
  });
  if (!withTables) {
    const layout = { group, pipeline: g.device.createPipelineLayout({ bindGroupLayouts: [group] }) };
    g.layouts.set(key, layout);
    return layout;
  }
  const tables = g.device.createBindGroupLayout({
    label: `${pass} tables`,
    entries: [{ binding: 0, visibility: GPUShaderStage.COMPUTE, buffer: { type: 'read-only-storage' } }],
  });
  // Groups 0 and TABLES_GROUP (= 1).
  const layout = { group, tables, pipeline: g.device.createPipelineLayout({ bindGroupLayouts: [group, tables] }) };
  g.layouts.set(key, layout);
  return layout;
}

async function compile(g: GpuImpl, pass: PassName, code: string, withTables: boolean): Promise<GPUComputePipeline> {
  const module = g.device.createShaderModule({ label: pass, code });
  try {
    return await g.compiling(
      g.device.createComputePipelineAsync({
        label: pass,
        layout: layoutFor(g, pass, withTables).pipeline,
        // A CPU adapter ends an invocation's loops after 65,535 iterations: hash probes bound their chain walks there.
        compute: { module, entryPoint: 'main', constants: { WG: g.limits.workgroupSize, ...(g.cpuAdapter && code.includes(`override ${CHAIN_STEPS}`) ? { [CHAIN_STEPS]: CPU_CHAIN_STEPS } : {}) } },
      }),
    );
  } catch (e) {
    const info = await module.getCompilationInfo();
    const errors = info.messages.filter((m) => m.type === 'error').map((m) => `${m.lineNum}:${m.linePos}: ${m.message}`);
    throw new Error(`compiling WGSL pass ${pass} failed: ${errors.length ? errors.join('; ') : (e as Error).message}`);
  }
}

/** Compiled pipelines once their compiles resolve, by the promise pipelineFor handed out: submit() need not wait. */
const compiled = new WeakMap<Promise<GPUComputePipeline>, GPUComputePipeline>();

/**
 * Keyed first by the WGSL text itself, whose hash V8 computes once per string: a key concatenated with the text
 * was rehashed in full at every dispatch.
 */
function pipelineFor(g: GpuImpl, pass: PassName, code: string, withTables: boolean): Promise<GPUComputePipeline> {
  let variants = g.pipelines.get(code);
  if (!variants) g.pipelines.set(code, (variants = new Map()));
  // The workgroup size is the device's, like the cache: pass and layout name a variant.
  const key = withTables ? `${pass}+tables` : pass;
  let p = variants.get(key);
  if (!p) {
    const compiling = compile(g, pass, code, withTables);
    p = compiling;
    variants.set(key, p);
    p.then((pipeline) => compiled.set(compiling, pipeline), () => undefined);
    // A failed compile is reported to its caller; retrying later recompiles.
    p.catch(() => variants.delete(key));
  }
  return p;
}

/** The WGSL a dispatch of `pass` runs: its subgroup variant where the device has subgroups and the kernel one. */
const passCode = (g: GpuImpl, shaders: KernelShaders, pass: PassName): string | undefined =>
  (g.subgroups ? shaders[`${pass}${SUBGROUP_VARIANT}`] : undefined) ?? shaders[pass];

/**
 * Starts compiling every pass of `shaders` (the variant dispatch() runs) without waiting, so that passes encoded
 * later find their pipelines compiled or compiling: a file parse's passes compile together while its first chunk is
 * read, not each when its dispatch comes; `passes`: only those (default: all). A pass that fails to compile is
 * reported by its dispatch (pipelineFor forgets a failed compile).
 */
export function precompile(g: GpuImpl, shaders: KernelShaders, passes: readonly PassName[] = Object.keys(shaders) as PassName[]): void {
  for (const pass of passes) {
    const code = pass.endsWith(SUBGROUP_VARIANT) ? undefined : passCode(g, shaders, pass);
    if (code !== undefined) pipelineFor(g, pass, code, false).catch(() => undefined);
  }
}

/**
 * Whether pass `pass` of `shaders` compiles on this device: for passes that are an optimization, which an adapter
 * that refuses them skips instead of failing the run. Shader module errors go to an error scope of its own, so the
 * run's scopes see none.
 */
export async function passCompiles(g: GpuImpl, shaders: KernelShaders, pass: PassName): Promise<boolean> {
  const code = shaders[pass];
  if (code === undefined) return false;
  g.device.pushErrorScope('validation');
  const compiled = pipelineFor(g, pass, code, false).then(
    () => true,
    () => false,
  );
  const error = await g.device.popErrorScope();
  return (await compiled) && error === null;
}

/**
 * Passes by what they are generated from (any JSON value, bigints too: a kernel's int64 and decimal constants):
 * generating them again costs more host time than a small kernel takes on a GPU (hashAggregateShaders 47 us,
 * hashProbeShaders 60 us on the development machine). Cleared once it holds MEMO_SHADERS: callers use few layouts.
 */
const memo = new Map<string, KernelShaders>();
const MEMO_SHADERS = 256;

/** A bigint as JSON: its digits and `n` (a constant's type, beside it in the kernel, tells it from a string). */
const bigintAsText = (_: string, v: unknown): unknown => (typeof v === 'bigint' ? `${v}n` : v);

export function memoShaders(from: unknown, make: () => KernelShaders): KernelShaders {
  const key = JSON.stringify(from, bigintAsText);
  let shaders = memo.get(key);
  if (!shaders) {
    if (memo.size >= MEMO_SHADERS) memo.clear();
    shaders = make();
    memo.set(key, shaders);
  }
  return shaders;
}

/**
 * The passes of a kernel the runtime makes up (a load's sort, unique and kept-columns projection, a key check's),
 * by the kernel and its variables' columns: a run on resident tables loads its inline facts every time, and
 * generating those passes took more host time than the rest of TPC-H Q19's run (1.4 ms on the development machine).
 */
export function madeUpShaders(kernel: KirKernel, variables: readonly KirVariable[]): KernelShaders {
  const columns = [...kernelInputs(kernel), kernel.output].map((id) => variables.find((v) => v.id === id)!.columns);
  return memoShaders({ kernel, columns }, () => generateKernelShaders(kernel, variables));
}

/** The countClamp pass, for recorders of any kernel's passes (Recorder.using): an output sized by a guess. */
export const CLAMP_PASSES: KernelShaders = { countClamp: COUNT_CLAMP };

/**
 * Guessed output sizes that failed, per pass set (a kernel's shaders): each failure costs the whole run again (it
 * starts over without guesses), so passes whose guesses failed twice read their sizes back instead.
 */
const missedGuesses = new WeakMap<KernelShaders, number>();

/** Whether `shaders`' passes may size an output by a guess (see missedGuesses). */
export const mayGuess = (shaders: KernelShaders): boolean => (missedGuesses.get(shaders) ?? 0) < 2;

/** Notes whether a guess of `shaders`' passes held, for mayGuess; returns `held`. */
export function guessHeld(shaders: KernelShaders, held: boolean): boolean {
  if (!held) missedGuesses.set(shaders, (missedGuesses.get(shaders) ?? 0) + 1);
  return held;
}

/**
 * Per pass set (a join's or pipeline's shaders), the rows its last output needed and the input rows it had then:
 * the room of its next guess.
 */
const totalsSeen = new WeakMap<KernelShaders, { total: number; rows: number }>();

/**
 * The rows `shaders`' output may need on `rows` input rows, where a sync read an earlier total: that total, in
 * proportion where the input has more rows now (a kernel run per chunk of a relation past one binding meets
 * chunks of several sizes in one run, the largest after the smallest).
 */
function expectedTotal(shaders: KernelShaders, rows: number): number | undefined {
  const seen = totalsSeen.get(shaders);
  if (seen === undefined) return undefined;
  return rows > seen.rows ? Math.ceil((seen.total * rows) / Math.max(1, seen.rows)) : seen.total;
}

/**
 * The room to guess for an output expected to need `total` rows: an eighth more, and more still for small totals,
 * whose counts vary most between chunks and runs (TPC-H Q19's second probe found 22, 17 and 14 rows in the chunks
 * of one SF 0.05 run past 10 MiB bindings).
 */
export const roomFor = (total: number): number => total + (total >>> 3) + Math.ceil(4 * Math.sqrt(total)) + 16;

/**
 * The room a guess gives `shaders`' output on `rows` input rows, at most `most`: what it needed last time and more
 * (roomFor), where a sync read a total of it; else a row per input row.
 */
export function guessedRoom(shaders: KernelShaders, rows: number, most = Infinity): number {
  const seen = expectedTotal(shaders, rows);
  return Math.max(1, Math.min(seen === undefined ? rows : roomFor(seen), most));
}

/**
 * Launches of one kernel over the parts of a side it joins, split where its tables pass one binding (gpu/chunks.ts),
 * and the share of that side the current launch covers. Their totals are noted as one: their sum, against the input
 * rows weighed by the shares (the input rows where each part met the same ones), so a later launch over the whole
 * side, its rooms smaller, expects all of its rows; a launch never split notes its own total, so a fixpoint's probe
 * of a side that grows is not given room in proportion to that side.
 */
export interface LaunchPart {
  share: number;
  sums: Map<KernelShaders, { total: number; rows: number }>;
}

/**
 * A split of a joined side into parts (within the current part, where a part is split again): what runs `fn` as the
 * part of `share` of the side.
 */
export function splitSide(g: GpuImpl): <T>(share: number, fn: () => Promise<T>) => Promise<T> {
  const outer = g.part;
  const sums = outer?.sums ?? new Map<KernelShaders, { total: number; rows: number }>();
  return async (share, fn) => {
    const before = g.part;
    g.part = { share: (outer?.share ?? 1) * share, sums };
    try {
      return await fn();
    } finally {
      g.part = before;
    }
  };
}

function note(shaders: KernelShaders, total: number, rows: number, part: LaunchPart | null): void {
  if (!part) {
    totalsSeen.set(shaders, { total, rows });
    return;
  }
  const sum = part.sums.get(shaders) ?? { total: 0, rows: 0 };
  sum.total += total;
  sum.rows += rows * part.share;
  part.sums.set(shaders, sum);
  totalsSeen.set(shaders, { ...sum });
}

/** Notes the rows `shaders`' output needed on `rows` input rows (read at a sync, once a launch), for expectedTotal. */
export function noteTotal(g: GpuImpl, shaders: KernelShaders, total: number, rows: number): void {
  note(shaders, total, rows, g.part);
}

/**
 * Leaves a guessed room to the run's next sync: the total in `counter`'s first word must not pass `room` (else the
 * run starts again without guesses); it is noted with the input's `rows` either way. `wraps`: the second word is
 * set where the total wrapped past 32 bits (a join's scanWrapped), which fails the guess and notes nothing.
 */
export function checkGuessAtSync(g: GpuImpl, run: GuessingRun, counter: GPUBuffer, shaders: KernelShaders, room: number, rows: number, wraps = false): void {
  const part = g.part;
  g.guesses.push({
    buffer: counter,
    words: wraps ? 2 : 1,
    run,
    holds: ([total, wrapped]) => {
      // A hash probe whose chains passed CHAIN_STEPS (CPU adapters) wrote nothing: run again without the guess.
      if (wrapped || total! >= CHAIN_OVERFLOW) return guessHeld(shaders, false);
      note(shaders, total!, rows, part);
      return guessHeld(shaders, total! <= room);
    },
  });
}

export class Recorder {
  constructor(
    readonly g: GpuImpl,
    private readonly shaders: KernelShaders,
    private readonly steps: Step[] = [],
    private readonly temporaries: GPUBuffer[] = [],
  ) {}

  /**
   * A recorder of other shaders whose steps go where this one's go: either's submit() encodes them all, in one
   * compute pass where they do not conflict (see passOrder).
   */
  using(shaders: KernelShaders): Recorder {
    return new Recorder(this.g, shaders, this.steps, this.temporaries);
  }

  /** A scratch storage buffer of `words` u32, returned to the pool after submit(). */
  scratch(words: number): Bound {
    const buffer = this.g.pool.acquire(bindingBytes(words), relationUsage());
    this.temporaries.push(buffer);
    return { buffer, words };
  }

  /**
   * One thread per index in [0, threads); `sizes` fills uniform vec4 0 (a pending count is copied in on the
   * device, so `threads` must cover its bound and the pass must ignore threads past it), `constants` the vec4s
   * after it (device words too);
   * `tables` (a kernel's string built-in tables) is bound as group TABLES_GROUP. Runs the pass's `+subgroups`
   * variant instead where there is one and the device has subgroups.
   */
  dispatch(
    pass: PassName,
    buffers: Bound[],
    sizes: readonly Size[],
    threads: number,
    constants: Uint32Array | readonly Size[] = new Uint32Array(0),
    tables?: Bound,
  ): void {
    const code = passCode(this.g, this.shaders, pass);
    if (code === undefined) throw new Error(`internal: no WGSL for pass ${pass}`);
    if (threads === 0) return;
    const uniform = new Uint32Array(4 * uniformVec4s(constants.length));
    const fills: Array<{ index: number; word: DeviceWord }> = [];
    for (let i = 0; i < sizes.length + constants.length; i++) {
      const index = i < sizes.length ? i : 4 + i - sizes.length;
      const s = i < sizes.length ? sizes[i]! : constants[i - sizes.length]!;
      if (typeof s === 'number') uniform[index] = s;
      else if (s.value !== undefined) uniform[index] = s.value;
      else fills.push({ index, word: s });
    }
    this.steps.push({ kind: 'dispatch', pass, pipeline: pipelineFor(this.g, pass, code, tables !== undefined), buffers, uniform, fills, threads, tables });
  }

  copy(from: GPUBuffer, fromOffset: number, to: GPUBuffer, toOffset: number, bytes: number): void {
    if (bytes > 0) this.steps.push({ kind: 'copy', from, fromOffset, to, toOffset, bytes });
  }

  /** Zeroes `bytes` (rounded up to a multiple of 4) of `buffer` from byte `offset` (a multiple of 4). */
  clear(buffer: GPUBuffer, bytes: number, offset = 0): void {
    if (bytes > 0) this.steps.push({ kind: 'clear', buffer, offset, bytes: Math.ceil(bytes / 4) * 4 });
  }

  /**
   * A bind group of `buffers` at bindings 0.. (storage buffers bound whole: passes take their sizes from the
   * uniform, never from arrayLength, and pooled buffers are often larger than their rows), then the uniform
   * arena (`uniformBytes` per dispatch, dynamic offset) when given; cached per device. Built without arrays on a
   * hit: it runs for every dispatch.
   */
  private bindGroup(layoutKey: string, layout: GPUBindGroupLayout, buffers: readonly Bound[], arena?: GPUBuffer, uniformBytes = 0): GPUBindGroup {
    const g = this.g;
    let key = `${layoutKey}|${uniformBytes}|`;
    for (const b of buffers) key += b.offset === undefined ? `${g.bufferId(b.buffer)},` : `${g.bufferId(b.buffer)}@${b.offset}+${b.words},`;
    if (arena) key += g.bufferId(arena);
    let group = g.bindGroups.get(key);
    if (group) return group;
    const maxBinding = g.limits.maxStorageBufferBindingSize;
    const entries: GPUBindGroupEntry[] = buffers.map(({ buffer, words, offset }, binding) => ({
      binding,
      resource:
        offset === undefined
          ? { buffer, offset: 0, size: Math.min(buffer.size, maxBinding - (maxBinding % 4)) }
          : { buffer, offset: offset * 4, size: Math.max(4, words * 4) },
    }));
    if (arena) entries.push({ binding: buffers.length, resource: { buffer: arena, offset: 0, size: uniformBytes } });
    group = g.device.createBindGroup({ layout, entries });
    if (g.bindGroups.size >= 8192) g.bindGroups.clear();
    g.bindGroups.set(key, group);
    return group;
  }

  /** Workgroups in x for `threads` threads (then as many rows of them as needed): 2D when one dimension is not enough. */
  private gridX(threads: number): number {
    const groups = Math.ceil(threads / this.g.limits.workgroupSize);
    const max = this.g.limits.maxComputeWorkgroupsPerDimension;
    const x = Math.min(groups, max);
    if (Math.ceil(groups / x) > max) throw new Error(`dispatch of ${threads} threads exceeds the device's workgroup grid`);
    return x;
  }

  /**
   * Encodes the steps into the device's command batch (see CommandBatch), which submits them unless a KIR run
   * defers submission. Dispatches with the same uniform words and fills share one arena slot while no step in
   * between writes the fills' sources (a sort's histogram and scatter passes of one digit, say). Each slot's
   * words filled from device words are copied into the arena between compute passes; the copies for later
   * slots are hoisted into the same break where no step in between writes their source, so a run of
   * dispatches with pending sizes stays one compute pass.
   */
  async submit(): Promise<void> {
    const g = this.g;
    if (this.steps.length === 0) {
      for (const t of this.temporaries) g.pool.release(t);
      this.temporaries.length = 0;
      return;
    }
    const ordered = passOrder(this.steps);
    if (ordered !== this.steps) this.steps.splice(0, ordered.length, ...ordered);
    const dispatches = this.steps.filter((s) => s.kind === 'dispatch');
    // Compiled already (a run on resident tables): no wait, no turn of the event loop.
    const ready = dispatches.map((s) => compiled.get(s.pipeline));
    const pipelines = ready.every((p) => p !== undefined) ? (ready as GPUComputePipeline[]) : await Promise.all(dispatches.map((s) => s.pipeline));
    const slotOf = this.slots();
    const align = g.limits.minUniformBufferOffsetAlignment;
    /** Arena byte offset by slot (slots are numbered by their first dispatch, in order). */
    const offsets: number[] = [];
    /** The uniform words of each slot. */
    const uniforms: Uint32Array[] = [];
    let bytes = 0;
    dispatches.forEach((s, k) => {
      if (slotOf[k] !== offsets.length) return;
      offsets.push(bytes);
      uniforms.push(s.uniform);
      bytes += Math.ceil(s.uniform.byteLength / align) * align;
    });
    const batch = g.batch;
    let arena: GPUBuffer | undefined;
    if (dispatches.length > 0) {
      const room = batch.uniformRoom(bytes);
      arena = room.arena;
      offsets.forEach((offset, slot) => {
        offsets[slot] = room.offset + offset;
        room.words.set(uniforms[slot]!, offsets[slot]! / 4);
      });
    }
    const encoder = batch.commands();
    const dynamicOffset = new Uint32Array(1);
    let pass: GPUComputePassEncoder | null = null;
    let pipeline: GPUComputePipeline | null = null;
    let k = 0;
    /** Slots before this one have their fills encoded. */
    let filled = 0;
    for (let i = 0; i < this.steps.length; i++) {
      const s = this.steps[i]!;
      if (s.kind === 'copy' || s.kind === 'clear') {
        pass?.end();
        pass = null;
        if (s.kind === 'copy') {
          encoder.copyBufferToBuffer(s.from, s.fromOffset, s.to, s.toOffset, s.bytes);
          g.work.copies += 1;
          g.work.copyBytes += s.bytes;
        } else {
          encoder.clearBuffer(s.buffer, s.offset, s.bytes);
          g.work.clears += 1;
          g.work.clearBytes += s.bytes;
        }
        continue;
      }
      const slot = slotOf[k]!;
      if (slot >= filled && s.fills.length > 0) {
        pass?.end();
        pass = null;
        filled = this.encodeFills(encoder, i, k, slotOf, offsets, arena!);
      }
      if (!pass) {
        const timestampWrites = g.timer?.passWrites();
        pass = encoder.beginComputePass(timestampWrites ? { timestampWrites } : undefined);
        pipeline = null;
      }
      const layout = layoutFor(g, s.pass, s.tables !== undefined);
      // A pass keeps its pipeline between dispatches: each call into Dawn costs host time (a sort's digit passes
      // run one pipeline several times in a row).
      if (pipelines[k] !== pipeline) pass.setPipeline((pipeline = pipelines[k]!));
      dynamicOffset[0] = offsets[slot]!;
      batch.trace?.binds(s.buffers, s.tables);
      pass.setBindGroup(0, this.bindGroup(s.tables ? `${s.pass}+tables` : s.pass, layout.group, s.buffers, arena!, s.uniform.byteLength), dynamicOffset, 0, 1);
      if (s.tables && layout.tables) pass.setBindGroup(TABLES_GROUP, this.bindGroup(`${s.pass} tables`, layout.tables, [s.tables]));
      const x = this.gridX(s.threads);
      pass.dispatchWorkgroups(x, Math.ceil(Math.ceil(s.threads / g.limits.workgroupSize) / x));
      k++;
    }
    pass?.end();
    // Later commands run after these, so the scratch buffers may be handed out again right away.
    for (const t of this.temporaries) g.pool.release(t);
    this.steps.length = 0;
    this.temporaries.length = 0;
    batch.encoded(dispatches.length);
  }

  /**
   * The arena slot of each dispatch: a new one, numbered in order, unless an earlier dispatch has the same
   * uniform words and fills and no step from it on wrote a fill source (the copied words still hold).
   */
  private slots(): number[] {
    const slotOf: number[] = [];
    /** Indices (in `steps`) of the first dispatches of the slots later dispatches may share, and those slots. */
    const open: number[] = [];
    const openSlot: number[] = [];
    /** Open slots with fills: only those can be closed. */
    let openFills = 0;
    let slots = 0;
    for (let i = 0; i < this.steps.length; i++) {
      const s = this.steps[i]!;
      if (s.kind === 'dispatch') {
        let j = 0;
        while (j < open.length && !sameUniform(this.steps[open[j]!] as Dispatch, s)) j++;
        if (j < open.length) slotOf.push(openSlot[j]!);
        else {
          open.push(i);
          openSlot.push(slots);
          slotOf.push(slots++);
          if (s.fills.length > 0) openFills++;
        }
      }
      if (openFills === 0) continue;
      // Slots whose fill sources this step writes are closed.
      const written = bufferUses(s).writes;
      for (let j = open.length - 1; j >= 0; j--) {
        if (!(this.steps[open[j]!] as Dispatch).fills.some((f) => written.includes(f.word.buffer))) continue;
        open.splice(j, 1);
        openSlot.splice(j, 1);
        openFills--;
      }
    }
    return slotOf;
  }

  /**
   * Copies the device-filled uniform words of dispatch `k` (step `i`) into the arena, and those of the slots
   * after it up to the first one whose source buffer some step from `i` on writes (it must see that write).
   * Returns the first slot whose fills are not encoded.
   */
  private encodeFills(encoder: GPUCommandEncoder, i: number, k: number, slotOf: readonly number[], offsets: readonly number[], arena: GPUBuffer): number {
    let next = slotOf[k]!;
    /** Buffers the steps from dispatch `k` on, before step `i`, may write (linear: a sort records hundreds). */
    const written = new Set<GPUBuffer>();
    for (; i < this.steps.length; i++) {
      const s = this.steps[i]!;
      if (s.kind === 'dispatch') {
        const slot = slotOf[k++]!;
        // A later dispatch of an earlier slot: its words are copied already.
        if (slot === next) {
          if (s.fills.some((f) => written.has(f.word.buffer))) break;
          for (const f of s.fills) encoder.copyBufferToBuffer(f.word.buffer, f.word.offset, arena, offsets[slot]! + 4 * f.index, 4);
          if (s.fills.length > 0) this.g.batch.copiesIntoArena();
          next++;
        }
      }
      for (const b of bufferUses(s).writes) written.add(b);
    }
    return next;
  }
}

type Dispatch = Extract<Step, { kind: 'dispatch' }>;

/**
 * The steps in an order that needs fewer compute passes: a copy or clear (each ends a pass) moves ahead of or
 * behind the dispatches it does not conflict with, so that the dispatches around it share a pass (a pipeline's
 * table builds, aggregation and group listing, say, with the clears before them and the count copies after).
 * Phases alternate, copies and clears (even) then dispatches (odd); each step goes to the first phase of its kind
 * not before that of any earlier step it conflicts with (one writes a buffer the other uses), and steps keep their
 * recorded order within a phase, so steps that conflict keep their order. Linear in the steps and their buffers (a
 * sort records hundreds). Returns `steps` itself when the order stays.
 */
function passOrder(steps: Step[]): Step[] {
  let dispatched = false;
  let between = false;
  let gain = false;
  for (const s of steps) {
    if (s.kind !== 'dispatch') between ||= dispatched;
    else if (between) {
      gain = true;
      break;
    } else dispatched = true;
  }
  if (!gain) return steps;
  /** Per buffer, the latest phase of a step that wrote it and of one that read it. */
  const written = new Map<GPUBuffer, number>();
  const read = new Map<GPUBuffer, number>();
  const phases = steps.map((s) => {
    const { reads, writes } = bufferUses(s);
    let after = 0;
    for (const b of reads) after = Math.max(after, written.get(b) ?? 0);
    for (const b of writes) after = Math.max(after, written.get(b) ?? 0, read.get(b) ?? 0);
    const phase = after + ((after & 1) !== (s.kind === 'dispatch' ? 1 : 0) ? 1 : 0);
    for (const b of reads) read.set(b, Math.max(read.get(b) ?? 0, phase));
    for (const b of writes) written.set(b, Math.max(written.get(b) ?? 0, phase));
    return phase;
  });
  if (phases.every((p, i) => i === 0 || p >= phases[i - 1]!)) return steps;
  return steps.map((s, i) => ({ s, p: phases[i]!, i })).sort((a, b) => a.p - b.p || a.i - b.i).map((x) => x.s);
}

interface BufferUses {
  reads: GPUBuffer[];
  writes: GPUBuffer[];
}

/** The buffers a step reads and writes (a dispatch reads its fills' sources and string tables too), found once. */
function bufferUses(s: Step): BufferUses {
  return (s.uses ??= findUses(s));
}

function findUses(s: Step): BufferUses {
  if (s.kind === 'copy') return { reads: [s.from], writes: [s.to] };
  if (s.kind === 'clear') return { reads: [], writes: [s.buffer] };
  const kinds = PASS_LAYOUTS[s.pass];
  const uses: BufferUses = { reads: s.fills.map((f) => f.word.buffer), writes: [] };
  for (let j = 0; j < s.buffers.length; j++) (kinds[j] === 'write' ? uses.writes : uses.reads).push(s.buffers[j]!.buffer);
  if (s.tables) uses.reads.push(s.tables.buffer);
  return uses;
}

/** Same uniform words, host and device-filled. */
function sameUniform(a: Dispatch, b: Dispatch): boolean {
  if (a.uniform.length !== b.uniform.length || a.fills.length !== b.fills.length) return false;
  for (let i = 0; i < a.uniform.length; i++) if (a.uniform[i] !== b.uniform[i]) return false;
  return a.fills.every((f, i) => f.index === b.fills[i]!.index && f.word.buffer === b.fills[i]!.word.buffer && f.word.offset === b.fills[i]!.word.offset);
}
