/**
 * List scheduling: on synthetic chains, trees and random straight-line blocks the chosen order never has a higher
 * estimated peak than the original and reads every value the original order reads; on whole programs it leaves
 * results unchanged.
 */
import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import type { ScalarType } from '@vixen/queryplan';
import {
  estimatePeakBytes,
  insertFrees,
  lowerPlan,
  planToKernels,
  scheduleBlocks,
  type KirCommand,
  type KirKernel,
  type KirProgram,
  type KirVariable,
  type VarId,
} from '../src/index.js';
import { runKir } from './kir-interp.js';
import { transitiveClosure } from './qp-builders.js';

/**
 * Builds one-block programs: `edb` and `idb` relation variables plus temporaries, each with a width in columns.
 * Kernels only matter here for what they read and write, so unary ones are copies and binary ones concats.
 */
class Builder {
  readonly variables: KirVariable[] = [];
  readonly kernels: KirKernel[] = [];
  readonly commands: KirCommand[] = [];
  private readonly relations: KirProgram['relations'] = [];

  variable(name: string, width: number, kind?: 'edb' | 'idb'): VarId {
    const id = this.variables.length;
    const columns: ScalarType[] = Array.from({ length: width }, () => 'int32');
    this.variables.push({ id, name, columns, ...(kind ? { relation: name } : {}) });
    if (kind) this.relations.push({ name, kind, output: kind === 'idb', columns: columns.map((type, i) => ({ name: `c${i}`, type })) });
    return id;
  }

  launch(output: VarId, ...inputs: VarId[]): void {
    const id = this.kernels.length;
    this.kernels.push(
      inputs.length === 1
        ? { kind: 'copy', id, input: inputs[0]!, output }
        : { kind: 'concat', id, left: inputs[0]!, right: inputs[1]!, output },
    );
    this.commands.push({ kind: 'launch', kernel: id });
  }

  program(): KirProgram {
    return {
      relations: this.relations,
      relationVars: Object.fromEntries(this.variables.filter((v) => v.relation).map((v) => [v.relation!, v.id])),
      facts: {},
      variables: this.variables,
      kernels: this.kernels,
      blocks: [{ label: 'b', commands: this.commands, terminator: { kind: 'halt' } }],
      entry: 'b',
    };
  }
}

/** Estimated peaks of the block before and after scheduling (edb variables hold their facts on entry). */
function peaks(p: KirProgram): { original: number; scheduled: number; block: KirCommand[] } {
  const edb = p.variables.filter((v) => p.relations.some((r) => r.name === v.relation && r.kind === 'edb'));
  const ctx = { liveAtEnd: new Set<VarId>(), liveAtStart: new Set(edb.map((v) => v.id)) };
  const original = p.blocks[0]!.commands;
  const block = scheduleBlocks.run(p).blocks[0]!.commands;
  const order = block.map((c) => original.indexOf(c));
  return { original: estimatePeakBytes(p, original, ctx), scheduled: estimatePeakBytes(p, original, ctx, order), block };
}

/** For each launch (by kernel id): the kernel ids whose outputs it reads (-1: the value on entry). */
function readSources(p: KirProgram, commands: readonly KirCommand[]): Map<number, number[]> {
  const lastWriter = new Map<VarId, number>();
  const sources = new Map<number, number[]>();
  for (const c of commands) {
    if (c.kind !== 'launch') continue;
    const k = p.kernels[c.kernel]!;
    const inputs = k.kind === 'copy' ? [k.input] : k.kind === 'concat' ? [k.left, k.right] : [];
    sources.set(k.id, inputs.map((v) => lastWriter.get(v) ?? -1));
    lastWriter.set(k.output, k.id);
  }
  sources.set(-1, [...lastWriter.entries()].sort((a, b) => a[0] - b[0]).map(([, w]) => w));
  return sources;
}

describe('scheduleBlocks', () => {
  it('finishes one chain before starting the next when interleaving them costs memory', () => {
    const b = new Builder();
    const e = b.variable('e', 1, 'edb');
    const [t1, t2, u1, u2] = ['t1', 't2', 'u1', 'u2'].map((n) => b.variable(n, 4));
    const [o1, o2] = ['o1', 'o2'].map((n) => b.variable(n, 1, 'idb'));
    b.launch(t1!, e);
    b.launch(u1!, e);
    b.launch(t2!, t1!);
    b.launch(u2!, u1!);
    b.launch(o1!, t2!);
    b.launch(o2!, u2!);
    const p = b.program();
    const { original, scheduled, block } = peaks(p);
    // Bytes: e, plus three temporaries at once when interleaved; e, o1 and two temporaries when not.
    expect(original).toBe(4 + 3 * 16);
    expect(scheduled).toBe(4 + 4 + 2 * 16);
    const outputs = block.map((c) => (c.kind === 'launch' ? p.variables[p.kernels[c.kernel]!.output]!.name : c.kind));
    expect(outputs).toEqual(['t1', 't2', 'o1', 'u1', 'u2', 'o2']);
  });

  it('evaluates a join tree depth-first: never worse than breadth-first, and strictly better here', () => {
    const b = new Builder();
    const leaves = Array.from({ length: 8 }, (_, i) => b.variable(`e${i}`, 1, 'edb'));
    // Breadth-first: all leaf copies (wide temporaries), then pairwise concats level by level.
    let level = leaves.map((e, i) => {
      const t = b.variable(`l0_${i}`, 3);
      b.launch(t, e);
      return t;
    });
    for (let depth = 1; level.length > 1; depth++) {
      const next: VarId[] = [];
      for (let i = 0; i < level.length; i += 2) {
        const t = b.variable(`l${depth}_${i / 2}`, 3);
        b.launch(t, level[i]!, level[i + 1]!);
        next.push(t);
      }
      level = next;
    }
    b.launch(b.variable('out', 3, 'idb'), level[0]!);
    const p = b.program();
    const { original, scheduled, block } = peaks(p);
    expect(scheduled).toBeLessThan(original);
    expect(readSources(p, block)).toEqual(readSources(p, p.blocks[0]!.commands));
  });

  it('on random straight-line blocks, never raises the estimated peak and keeps every read on its original value', () => {
    const width = fc.integer({ min: 1, max: 4 });
    const launch = fc.record({ toRelation: fc.boolean(), output: fc.nat(), inputs: fc.array(fc.nat(), { minLength: 1, maxLength: 2 }) });
    const spec = fc.record({
      edb: fc.array(width, { minLength: 1, maxLength: 3 }),
      temps: fc.array(width, { minLength: 1, maxLength: 6 }),
      idb: fc.array(width, { minLength: 1, maxLength: 2 }),
      launches: fc.array(launch, { minLength: 1, maxLength: 14 }),
    });
    fc.assert(
      fc.property(spec, ({ edb, temps, idb, launches }) => {
        const b = new Builder();
        const written = edb.map((w, i) => b.variable(`e${i}`, w, 'edb'));
        const tempVars = temps.map((w, i) => b.variable(`t${i}`, w));
        const idbVars = idb.map((w, i) => b.variable(`o${i}`, w, 'idb'));
        for (const l of launches) {
          // Outputs may overwrite a variable already written or read: write-after-read/write hazards.
          const pool = l.toRelation ? idbVars : tempVars;
          const output = pool[l.output % pool.length]!;
          b.launch(output, ...l.inputs.map((i) => written[i % written.length]!));
          written.push(output);
        }
        const p = b.program();
        const { original, scheduled, block } = peaks(p);
        expect(scheduled).toBeLessThanOrEqual(original);
        expect(readSources(p, block)).toEqual(readSources(p, p.blocks[0]!.commands));
      }),
      { numRuns: 300, seed: 42 },
    );
  });

  it('leaves the results of whole programs unchanged', () => {
    const plan = transitiveClosure([
      [1, 2],
      [2, 3],
      [3, 4],
      [4, 2],
      [5, 1],
    ]);
    const scheduled = runKir(planToKernels(plan));
    const unscheduled = runKir(insertFrees.run(lowerPlan(plan)));
    expect(scheduled.relations).toEqual(unscheduled.relations);
    expect(scheduled.relations.get('path')!.length).toBe(16);
  });
});
