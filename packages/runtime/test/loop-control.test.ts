/** Which fixpoint loops run several iterations per host decision (loop-control.ts batchableLoop). */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { KirKernel, KirProgram } from '@vixen/kernel-ir';
import { compile } from '../src/index.js';
import { batchableLoop } from '../src/loop-control.js';

const reach = compile(readFileSync(join(import.meta.dirname, '..', '..', '..', 'examples', 'graphs', 'reach.logic'), 'utf8'), { filename: 'reach.logic' }).kir;
const loop = 'loop_reach';

/** `program` with the kernel writing relation `reach` in the loop replaced by `make(that kernel)`. */
function withReachWriter(program: KirProgram, make: (k: Extract<KirKernel, { kind: 'merge' }>) => KirKernel): KirProgram {
  const block = program.blocks.find((b) => b.label === loop)!;
  const id = block.commands.flatMap((c) => (c.kind === 'launch' ? [c.kernel] : [])).find((k) => program.kernels[k]!.kind === 'merge')!;
  return { ...program, kernels: program.kernels.map((k) => (k.id === id ? make(k as Extract<KirKernel, { kind: 'merge' }>) : k)) };
}

describe('batchableLoop', () => {
  it('takes a semi-naive loop of joins, sorts, differences and a merge into its relation', () => {
    expect(batchableLoop(reach, loop, new Set([loop]))).toBe(true);
  });

  it('refuses a loop of several blocks, a relation assigned other than by merging into it, and a non-monotone kernel', () => {
    expect(batchableLoop(reach, loop, new Set([loop, 'other']))).toBe(false);
    expect(batchableLoop(withReachWriter(reach, (m) => ({ kind: 'copy', id: m.id, input: m.right, output: m.output })), loop, new Set([loop]))).toBe(false);
    const aggregate = withReachWriter(reach, (m) => ({ kind: 'aggregate', id: m.id, input: m.right, output: m.output, groupBy: [0], aggregates: [] }));
    expect(batchableLoop(aggregate, loop, new Set([loop]))).toBe(false);
  });

  it('takes a lattice loop whose aggregate groups rows (sssp: no rows in, none out), not one that aggregates all rows', () => {
    const sssp = compile(readFileSync(join(import.meta.dirname, '..', '..', '..', 'examples', 'graphs', 'sssp.logic'), 'utf8'), { filename: 'sssp.logic' }).kir;
    const label = sssp.blocks.find((b) => b.terminator.kind === 'branch' && b.terminator.ifFalse === b.label)!.label;
    expect(batchableLoop(sssp, label, new Set([label]))).toBe(true);
    // Without group columns an aggregate of no rows is a row: an iteration after the stop would derive it.
    const ungrouped: KirProgram = {
      ...sssp,
      kernels: sssp.kernels.map((k) => (k.kind === 'pipeline' && k.aggregate ? { ...k, aggregate: { ...k.aggregate, groupBy: [] } } : k)),
    };
    expect(batchableLoop(ungrouped, label, new Set([label]))).toBe(false);
  });
});
