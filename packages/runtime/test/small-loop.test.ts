/** Which loops run small-delta iterations inside one dispatch (kernel-ir smallLoopPlan), and the fallback when an adapter refuses the kernel. */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { smallLoopPlan, type KirProgram } from '@vixen/kernel-ir';
import { smallLoopShaders } from '@vixen/codegen-wgsl';
import { compile, openGpu, type Gpu } from '../src/index.js';
import { internals } from '../src/gpu/device.js';
import { passCompiles } from '../src/gpu/recorder.js';

const example = (name: string): KirProgram =>
  compile(readFileSync(join(import.meta.dirname, '..', '..', '..', 'examples', 'graphs', `${name}.logic`), 'utf8'), { filename: `${name}.logic` }).kir;
const loopOf = (p: KirProgram): string => p.blocks.find((b) => b.terminator.kind === 'branch' && b.terminator.ifFalse === b.label)!.label;
const planOf = (p: KirProgram) => smallLoopPlan(p, loopOf(p), new Set([loopOf(p)]));
/** Edges, blocked nodes and cut edges, and the paths from each edge's source; a rule after it recurses on them. */
const NEGATED = `e(x, y) -> int32(x), int32(y). blocked(x) -> int32(x). cut(x, y) -> int32(x), int32(y).
  e(1, 2). e(2, 3). e(3, 4). e(4, 1). e(2, 5). e(5, 6). blocked(5). cut(3, 4). open(x, y) <- e(x, y).`;

describe('smallLoopPlan', () => {
  it('reach: a join with the edges, an insert that writes the delta itself (sorts and copies read in place)', () => {
    const p = example('reach');
    const plan = planOf(p)!;
    expect(plan.steps.map((s) => s.kind)).toEqual(['join', 'insert']);
    expect(plan.invariants.map((v) => p.variables[v]!.name)).toEqual(['edge']);
    expect(plan.recursive.map((v) => p.variables[v]!.name)).toEqual(['reach']);
    expect(plan.carried.map((v) => p.variables[v]!.name)).toEqual(['$delta_reach']);
  });

  it('count-up: mutual recursion of a and b, each with its insert and delta', () => {
    const p = example('count-up');
    const plan = planOf(p)!;
    expect(plan.recursive.map((v) => p.variables[v]!.name)).toEqual(['a', 'b']);
    expect(plan.carried.map((v) => p.variables[v]!.name).sort()).toEqual(['$delta_a', '$delta_b']);
    expect(plan.steps.filter((s) => s.kind === 'insert')).toHaveLength(2);
  });

  it("negation in recursion: an anti-join's pipeline is a map whose rows miss binary-searched invariant relations", () => {
    const p = compile(`${NEGATED} open(x, z) <- open(x, y), e(y, z), !blocked(z), !cut(y, z).`).kir;
    const plan = planOf(p)!;
    const map = plan.steps.find((s) => s.kind === 'map');
    expect(map?.kind === 'map' && map.absent?.map((a) => [p.variables[a.right]!.name, a.rightKeys])).toEqual([
      ['blocked', [0]],
      ['cut', [0, 1]],
    ]);
    // A key that is not a prefix of the negated relation's columns (its first one filtered by the constant): its
    // order does not sort it by the key.
    expect(planOf(compile(`${NEGATED} open(x, z) <- open(x, y), e(y, z), !cut(3, z).`).kir)).toBeUndefined();
  });

  it('refuses loops that join a relation they grow, loops of several blocks and aggregating loops', () => {
    // path(x, z) <- path(x, y), path(y, z): the join reads path, which the loop changes.
    expect(planOf(example('tc-nonlinear'))).toBeUndefined();
    const reach = example('reach');
    expect(smallLoopPlan(reach, loopOf(reach), new Set([loopOf(reach), 'other']))).toBeUndefined();
    expect(planOf(example('sssp'))).toBeUndefined();
  });
});

describe('the loop kernel on the device', () => {
  let gpu: Gpu;
  beforeAll(async () => {
    gpu = await openGpu();
  });
  afterAll(() => gpu?.dispose());

  it('compiles here; a pass the adapter refuses is reported as such and leaves the device usable', { timeout: 60_000 }, async () => {
    const p = example('count-up');
    const g = internals(gpu);
    expect(await passCompiles(g, smallLoopShaders(planOf(p)!, p), 'smallLoop')).toBe(true);
    expect(await passCompiles(g, { smallLoop: 'fn main( {' }, 'smallLoop')).toBe(false);
    const r = await compile(readFileSync(join(import.meta.dirname, '..', '..', '..', 'examples', 'graphs', 'count-up.logic'), 'utf8')).run({
      gpu,
      facts: { start: [[0]], bound: [[30]], c: [[1]], d: [[1]] },
    });
    expect(r.relations.get('a')).toHaveLength(31);
    expect(r.stats.loops[0]!.inKernel).toBeGreaterThan(0);
  });

  it("runs a loop's negated probes in the kernel, as the reference interpreter answers", { timeout: 60_000 }, async () => {
    // Rows before the loop come from a pipeline of negated probes, whose count stays pending: resolved on entry.
    const program = compile(`${NEGATED} start(x, y) <- e(x, y), !cut(x, y). open(x, z) <- start(x, z). open(x, z) <- open(x, y), e(y, z), !blocked(z), !cut(y, z).`);
    const r = await program.run({ gpu });
    expect(Object.fromEntries(r.relations)).toEqual(Object.fromEntries(await program.interpret()));
    expect(r.relations.get('open')!.length).toBeGreaterThan(5);
    expect(r.stats.loops[0]!.inKernel).toBeGreaterThan(0);
  });
});
