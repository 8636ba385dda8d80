/**
 * List scheduling: within each block, reorders commands to lower the peak of live device memory, respecting the
 * data dependencies between them (read-after-write, write-after-read and write-after-write on variables), so
 * every order it picks computes the same values. Runs before insert-frees, which then frees each temporary right
 * after its new last use.
 *
 * Row counts are unknown at compile time, so the cost model counts every variable as one row of its width: a
 * kernel allocates its output, and a freeable variable dies after its last read in the block unless it is live
 * after the block. The greedy step takes, among the ready commands, the one that frees the most net bytes (then
 * the one with the smallest transient peak, then the earliest in the original order). Greedy choices can lose
 * to the original order, so a block keeps its original order unless the schedule's estimated peak is lower.
 */
import { rowWords } from '@vixen/queryplan';
import type { KirBlock, KirCommand, KirProgram, VarId } from '../ir.js';
import { commandUseDef, freeableVariable, liveIn, liveOutSets, terminatorUses } from '../analysis/liveness.js';
import type { KirPass } from '../compile.js';

/** What the cost model needs to know about a block's surroundings. */
export interface BlockContext {
  /** Variables read after the block's commands (its live-out plus what its terminator reads). */
  liveAtEnd: ReadonlySet<VarId>;
  /** Variables holding values on entry that the block reads. */
  liveAtStart: ReadonlySet<VarId>;
}

/** Variables `c` writes or kills (a free ends a value as surely as a write replaces it). */
function writes(p: KirProgram, c: KirCommand): VarId[] {
  return c.kind === 'free' ? c.vars : commandUseDef(p, c).defs;
}

/**
 * Simulates the cost model over a block's commands, by index into the original order. Each value is a version of a
 * variable: the index of the command that wrote it, or -1 for its value on entry. Dependencies keep every read on
 * the version it reads in the original order, so a value ends after its last read when it is not the variable's
 * final version, or when the variable is freeable and not live after the block.
 */
class MemoryModel {
  /** Variable -> version it holds (only variables holding bytes). */
  private readonly held = new Map<VarId, number>();
  private readonly readsLeft = new Map<string, number>();
  /** Per command: the (variable, version) pairs it reads. */
  private readonly reads: Array<Array<[VarId, number]>>;
  private readonly defs: VarId[][];
  private readonly finalVersion = new Map<VarId, number>();
  private readonly keepFinal: (v: VarId) => boolean;
  bytes = 0;
  peak = 0;

  constructor(
    private readonly p: KirProgram,
    private readonly commands: readonly KirCommand[],
    ctx: BlockContext,
  ) {
    const freeable = freeableVariable(p);
    this.keepFinal = (v) => !freeable(v) || ctx.liveAtEnd.has(v);
    const version = new Map<VarId, number>();
    this.reads = [];
    this.defs = [];
    commands.forEach((c, i) => {
      const read = commandUseDef(p, c).uses.map((v): [VarId, number] => [v, version.get(v) ?? -1]);
      for (const [v, ver] of read) this.readsLeft.set(`${v}@${ver}`, (this.readsLeft.get(`${v}@${ver}`) ?? 0) + 1);
      const defs = writes(p, c);
      for (const v of defs) version.set(v, i);
      this.reads.push(read);
      this.defs.push(defs);
    });
    for (const [v, ver] of version) this.finalVersion.set(v, ver);
    for (const v of ctx.liveAtStart) this.held.set(v, -1);
    for (const v of this.held.keys()) this.bytes += this.width(v);
    this.peak = this.bytes;
  }

  private width(v: VarId): number {
    return rowWords(this.p.variables[v]?.columns ?? []) * 4;
  }

  private kept(v: VarId, version: number): boolean {
    return (this.finalVersion.get(v) ?? -1) === version && this.keepFinal(v);
  }

  /** Reads of a value left once command `i` has run. */
  private readsAfter(i: number, v: VarId, version: number): number {
    const own = this.reads[i]!.filter(([u, ver]) => u === v && ver === version).length;
    return (this.readsLeft.get(`${v}@${version}`) ?? 0) - own;
  }

  /** Variables that start holding bytes, and those that stop, when command `i` runs. */
  private effect(i: number): { added: VarId[]; freed: VarId[] } {
    const c = this.commands[i]!;
    const freed = new Set(this.defs[i]!.filter((v) => this.held.has(v)));
    const added: VarId[] = [];
    if (c.kind === 'launch') {
      const out = this.p.kernels[c.kernel]!.output;
      if (this.readsAfter(i, out, i) > 0 || this.kept(out, i)) added.push(out);
    }
    for (const [v, ver] of this.reads[i]!) {
      if (this.held.get(v) === ver && this.readsAfter(i, v, ver) === 0 && !this.kept(v, ver)) freed.add(v);
    }
    return { added, freed: [...freed] };
  }

  /** Bytes command `i` allocates while it runs (its output coexists with everything held). */
  allocated(i: number): number {
    const c = this.commands[i]!;
    return c.kind === 'launch' ? this.width(this.p.kernels[c.kernel]!.output) : 0;
  }

  /** Change of held bytes once command `i` has run. */
  netChange(i: number): number {
    const { added, freed } = this.effect(i);
    return added.reduce((n, v) => n + this.width(v), 0) - freed.reduce((n, v) => n + this.width(v), 0);
  }

  run(i: number): void {
    this.peak = Math.max(this.peak, this.bytes + this.allocated(i));
    const { added, freed } = this.effect(i);
    for (const v of freed) {
      this.held.delete(v);
      this.bytes -= this.width(v);
    }
    for (const v of added) {
      this.held.set(v, i);
      this.bytes += this.width(v);
    }
    for (const [v, ver] of this.reads[i]!) this.readsLeft.set(`${v}@${ver}`, this.readsLeft.get(`${v}@${ver}`)! - 1);
    this.peak = Math.max(this.peak, this.bytes);
  }
}

/** Estimated peak bytes of running `order` (indices into `commands`; default: their own order). */
export function estimatePeakBytes(
  p: KirProgram,
  commands: readonly KirCommand[],
  ctx: BlockContext,
  order: readonly number[] = commands.map((_, i) => i),
): number {
  const model = new MemoryModel(p, commands, ctx);
  for (const i of order) model.run(i);
  return model.peak;
}

/** predecessors[j]: indices i < j that command j must follow (RAW, WAR, WAW on some variable). */
function dependencies(p: KirProgram, commands: readonly KirCommand[]): Array<Set<number>> {
  return commands.map((cj, j) => {
    const readsJ = commandUseDef(p, cj).uses;
    const writesJ = writes(p, cj);
    const preds = new Set<number>();
    for (let i = 0; i < j; i++) {
      const ci = commands[i]!;
      const readsI = commandUseDef(p, ci).uses;
      const writesI = writes(p, ci);
      const conflict =
        writesI.some((v) => readsJ.includes(v) || writesJ.includes(v)) || readsI.some((v) => writesJ.includes(v));
      if (conflict) preds.add(i);
    }
    return preds;
  });
}

/** A dependency-respecting order of `commands` (indices) chosen greedily by the cost model. */
export function scheduleCommands(p: KirProgram, commands: readonly KirCommand[], ctx: BlockContext): number[] {
  const preds = dependencies(p, commands);
  const followers = commands.map((): number[] => []);
  preds.forEach((ps, j) => ps.forEach((i) => followers[i]!.push(j)));
  /** Unscheduled predecessors per command; -1 once scheduled. */
  const waiting = preds.map((ps) => ps.size);
  const model = new MemoryModel(p, commands, ctx);
  const order: number[] = [];
  while (order.length < commands.length) {
    let best = -1;
    let bestKey: [number, number] = [Infinity, Infinity];
    for (let i = 0; i < commands.length; i++) {
      if (waiting[i] !== 0) continue;
      const key: [number, number] = [model.netChange(i), model.bytes + model.allocated(i)];
      if (key[0] < bestKey[0] || (key[0] === bestKey[0] && key[1] < bestKey[1])) {
        best = i;
        bestKey = key;
      }
    }
    waiting[best] = -1;
    for (const j of followers[best]!) waiting[j]! -= 1;
    model.run(best);
    order.push(best);
  }
  return order;
}

export const scheduleBlocks = { name: 'schedule-blocks', required: true, run } satisfies KirPass;

function run(p: KirProgram): KirProgram {
  const liveOut = liveOutSets(p);
  const blocks = p.blocks.map((b): KirBlock => {
    const liveAtEnd = new Set([...liveOut.get(b.label)!, ...terminatorUses(b.terminator)]);
    const ctx: BlockContext = { liveAtEnd, liveAtStart: liveIn(p, b, liveOut.get(b.label)!) };
    const order = scheduleCommands(p, b.commands, ctx);
    const better = estimatePeakBytes(p, b.commands, ctx, order) < estimatePeakBytes(p, b.commands, ctx);
    return better ? { ...b, commands: order.map((i) => b.commands[i]!) } : b;
  });
  return { ...p, blocks };
}
