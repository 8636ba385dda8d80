import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import type { QpProgram, Row } from '@vixen/queryplan';
import {
  insertFrees,
  kernelInputs,
  kirSuccessors,
  lowerPlan,
  planToKernels,
  validateKir,
  type KirCommand,
  type KirProgram,
  type VarId,
} from '../src/index.js';
import { runKir } from './kir-interp.js';
import { block, cmp, col, cols, lit, copy, difference, mapFilter, mapJoin, program, rel, transitiveClosure, union, unoptimizedKernels } from './qp-builders.js';

const reads = (p: KirProgram, c: KirCommand): VarId[] => (c.kind === 'launch' ? kernelInputs(p.kernels[c.kernel]!) : []);
const writes = (p: KirProgram, c: KirCommand): VarId[] =>
  c.kind === 'launch' ? [p.kernels[c.kernel]!.output] : c.kind === 'clear' ? [c.var] : [];

/**
 * Independent soundness check: from every `free v`, no path through the CFG reads v before writing it.
 * Returns the offending frees as "block[index] v".
 */
function prematureFrees(p: KirProgram): string[] {
  const blocks = new Map(p.blocks.map((b) => [b.label, b]));
  const readBeforeWrite = (v: VarId, label: string, from: number, seen: Set<string>): boolean => {
    const b = blocks.get(label)!;
    for (const c of b.commands.slice(from)) {
      if (reads(p, c).includes(v)) return true;
      if (writes(p, c).includes(v)) return false;
    }
    if (b.terminator.kind === 'branch' && b.terminator.condition.vars.includes(v)) return true;
    return kirSuccessors(b.terminator).some((s) => {
      if (seen.has(s)) return false;
      seen.add(s);
      return readBeforeWrite(v, s, 0, seen);
    });
  };
  const bad: string[] = [];
  for (const b of p.blocks) {
    b.commands.forEach((c, i) => {
      if (c.kind !== 'free') return;
      for (const v of c.vars) if (readBeforeWrite(v, b.label, i + 1, new Set())) bad.push(`${b.label}[${i}] ${p.variables[v]!.name}`);
    });
  }
  return bad;
}

function freedNames(p: KirProgram, label?: string): string[] {
  return p.blocks
    .filter((b) => label === undefined || b.label === label)
    .flatMap((b) => b.commands.flatMap((c) => (c.kind === 'free' ? c.vars.map((v) => p.variables[v]!.name) : [])));
}

/** Block commands rendered compactly: kernel kind + output, or free/clear + names. */
function shape(p: KirProgram, label: string): string[] {
  const name = (v: VarId): string => p.variables[v]!.name;
  return p.blocks
    .find((b) => b.label === label)!
    .commands.map((c) => {
      switch (c.kind) {
        case 'launch': {
          const k = p.kernels[c.kernel]!;
          return `${name(k.output)} := ${k.kind}`;
        }
        case 'free':
          return `free ${c.vars.map(name).join(', ')}`;
        case 'clear':
          return `clear ${name(c.var)}`;
      }
    });
}

/** Transitive closure whose loop body joins with `$step`, a temp computed once before the loop. */
function closureWithLoopInvariantTemp(edges: Row[]): QpProgram {
  const t2 = ['int32', 'int32'] as const;
  return program(
    [rel('edge', [...t2], 'edb'), rel('path', [...t2]), rel('$step', [...t2], 'temp'), rel('$delta', [...t2], 'temp'), rel('$new', [...t2], 'temp')],
    [
      block('init', [mapFilter('$step', 'edge', cols(0, 1), [cmp(col(0), '>=', lit(-100))]), mapFilter('path', 'edge', cols(0, 1)), copy('$delta', 'path')], {
        kind: 'jump',
        target: 'loop',
      }),
      block('loop', [], { kind: 'branch', condition: { kind: 'empty', relations: ['$delta'] }, ifTrue: 'done', ifFalse: 'body' }),
      block(
        'body',
        [
          mapJoin('$new', '$delta', '$step', [1], [0], [col(0), col(3)]),
          difference('$new', '$new', 'path'),
          union('path', 'path', '$new'),
          copy('$delta', '$new'),
        ],
        { kind: 'jump', target: 'loop' },
      ),
      block('done', []),
    ],
    { edge: edges },
  );
}

describe('insertFrees', () => {
  it('frees each temporary right after its last use, in a straight line', () => {
    const plan = program(
      [rel('r', ['int32', 'int32'], 'edb'), rel('s', ['int32', 'int32'], 'edb'), rel('t', ['int32', 'int32'])],
      [block('b', [mapJoin('t', 'r', 's', [1], [1], cols(0, 2))])],
    );
    const kir = planToKernels(plan, { joinStrategy: 'sort-merge' });
    expect(shape(kir, 'b')).toEqual([
      '%k3 := sort',
      '%k4 := sort',
      '%k5 := mergeJoin',
      'free %k3, %k4',
      '%k6 := sort',
      'free %k5',
      't := unique',
      'free %k6',
    ]);
    expect(validateKir(kir)).toEqual([]);
  });

  it('frees a QP temp relation after its last read, and a value nobody reads right after it is written', () => {
    const plan = program(
      [rel('r', ['int32'], 'edb'), rel('$a', ['int32'], 'temp'), rel('$b', ['int32'], 'temp'), rel('out', ['int32'])],
      [block('b', [copy('$a', 'r'), copy('$b', 'r'), copy('out', '$a'), union('out', 'out', '$a')])],
    );
    const kir = unoptimizedKernels(plan);
    expect(shape(kir, 'b')).toEqual([
      '$a := copy',
      '$b := copy',
      'free $b',
      'out := copy',
      '%k4 := merge',
      'free $a',
      'out := unique',
      'free %k4',
    ]);
  });

  it('never frees variables of edb/idb relations', () => {
    for (const kir of [planToKernels(transitiveClosure([[1, 2]])), planToKernels(closureWithLoopInvariantTemp([[1, 2]]))]) {
      const kept = kir.relations.filter((r) => r.kind !== 'temp').map((r) => r.name);
      expect(freedNames(kir).filter((n) => kept.includes(n))).toEqual([]);
    }
  });

  it('keeps a value read on the next loop iteration, and frees it on the loop exit', () => {
    const kir = planToKernels(transitiveClosure([[1, 2]]));
    // $delta_path is read by the loop header's branch: the body frees only the old value, after its last
    // read and before the copy that writes the next one.
    const body = shape(kir, 'body');
    const lastRead = body.indexOf('%k4 := sort');
    expect(body[lastRead + 1]).toBe('free $delta_path');
    expect(body.slice(lastRead + 2)).toContain('$delta_path := copy');
    expect(body.at(-1)).toBe('free $new_path');
    expect(shape(kir, 'done')).toEqual(['free $delta_path']);
    expect(shape(kir, 'loop')).toEqual([]);
    expect(prematureFrees(kir)).toEqual([]);
  });

  it('does not free inside a loop a value computed before it and read on every iteration', () => {
    const kir = planToKernels(closureWithLoopInvariantTemp([[1, 2], [2, 3]]));
    expect(freedNames(kir, 'init')).not.toContain('$step');
    expect(freedNames(kir, 'body')).not.toContain('$step');
    expect(freedNames(kir, 'done')).toEqual(['$step', '$delta']);
    expect(prematureFrees(kir)).toEqual([]);
    const run = runKir(kir);
    expect(run.relations.get('path')).toEqual([[1, 2], [1, 3], [2, 3]]);
    expect(run.heldAtHalt.filter((n) => n.startsWith('%') || n.startsWith('$'))).toEqual([]);
  });

  it('is idempotent', () => {
    const once = planToKernels(transitiveClosure([[1, 2]]));
    expect(insertFrees.run(once)).toEqual(once);
    const lowered = lowerPlan(transitiveClosure([[1, 2]]));
    expect(insertFrees.run(insertFrees.run(lowered))).toEqual(insertFrees.run(lowered));
  });

  it('preserves results, frees nothing early and leaks no temporary (random graphs)', () => {
    const edge = fc.tuple(fc.integer({ min: -3, max: 6 }), fc.integer({ min: -3, max: 6 }));
    fc.assert(
      fc.property(fc.array(edge, { maxLength: 14 }), (edges) => {
        for (const plan of [transitiveClosure(edges), closureWithLoopInvariantTemp(edges)]) {
          const kir = planToKernels(plan);
          expect(validateKir(kir)).toEqual([]);
          expect(prematureFrees(kir)).toEqual([]);
          const run = runKir(kir);
          expect(run.relations.get('path')).toEqual(closure(edges));
          expect(runKir(lowerPlan(plan)).relations.get('path')).toEqual(closure(edges));
          expect(run.heldAtHalt.filter((n) => n.startsWith('%') || n.startsWith('$'))).toEqual([]);
        }
      }),
      { numRuns: 60 },
    );
  });
});

/** Reference transitive closure, sorted numerically. */
function closure(edges: Array<[number, number]>): Row[] {
  const set = new Set(edges.map(([a, b]) => `${a},${b}`));
  for (let grown = true; grown; ) {
    grown = false;
    for (const p of [...set]) {
      const [a, b] = p.split(',').map(Number);
      for (const [c, d] of edges) {
        if (c === b && !set.has(`${a},${d}`)) {
          set.add(`${a},${d}`);
          grown = true;
        }
      }
    }
  }
  return [...set].map((s) => s.split(',').map(Number)).sort((x, y) => x[0]! - y[0]! || x[1]! - y[1]!);
}
