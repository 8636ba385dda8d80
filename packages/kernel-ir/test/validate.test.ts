import { describe, expect, it } from 'vitest';
import { validateKir, type KirKernel, type KirProgram } from '../src/index.js';
import { block, cols, mapJoin, program, rel, transitiveClosure, unoptimizedKernels } from './qp-builders.js';

const valid = (): KirProgram => unoptimizedKernels(transitiveClosure([[1, 2], [2, 3]]));

/** A valid program, changed by `edit` (on a deep copy), then validated; returns the messages. */
function messagesAfter(edit: (p: KirProgram) => void, base: KirProgram = valid()): string[] {
  const p = structuredClone(base);
  edit(p);
  return validateKir(p).map((d) => d.message);
}

function kernelOfKind<K extends KirKernel['kind']>(p: KirProgram, kind: K): Extract<KirKernel, { kind: K }> {
  return p.kernels.find((k) => k.kind === kind) as Extract<KirKernel, { kind: K }>;
}

describe('validateKir', () => {
  it('accepts lowered programs', () => {
    expect(validateKir(valid())).toEqual([]);
    expect(validateKir(structuredClone(valid()))).toEqual([]);
  });

  it('reports kernel ids that are not their index', () => {
    expect(messagesAfter((p) => (p.kernels[2]!.id = 5))).toEqual(['kernel 2 (sort): id is 5, expected its index 2']);
  });

  it('reports launches of missing kernels, bad variable ids and unknown labels', () => {
    expect(messagesAfter((p) => p.blocks[0]!.commands.push({ kind: 'launch', kernel: 99 }))).toEqual([
      "block 'init', command 2: launches kernel 99, which does not exist",
    ]);
    expect(messagesAfter((p) => p.blocks[0]!.commands.push({ kind: 'free', vars: [42] }))).toEqual([
      "block 'init', command 2: variable 42 does not exist",
    ]);
    expect(messagesAfter((p) => (kernelOfKind(p, 'copy').input = -1))).toEqual(['kernel 1 (copy): variable -1 does not exist']);
    expect(messagesAfter((p) => (p.blocks[2]!.terminator = { kind: 'jump', target: 'nowhere' }))).toEqual([
      "block 'body' terminator: jumps to unknown block 'nowhere'",
    ]);
    expect(messagesAfter((p) => (p.entry = 'start'))).toEqual(["entry block 'start' does not exist"]);
  });

  it('checks expression columns and types against the input variable', () => {
    expect(
      messagesAfter((p) => {
        const join = kernelOfKind(p, 'mergeJoin');
        join.project = [{ kind: 'col', index: 9, type: 'int32' }, { kind: 'col', index: 1, type: 'int64' }];
      }),
    ).toEqual([
      'kernel 3 (mergeJoin): column #9 out of range for 4 input columns',
      'kernel 3 (mergeJoin): column #1 has type int32, expression says int64',
      'kernel 3 (mergeJoin): projects (int32, int64) into a variable of (int32, int32)',
    ]);
    expect(
      messagesAfter((p) => {
        kernelOfKind(p, 'mapFilter').filter = [
          { kind: 'compare', op: '<', left: { kind: 'col', index: 0, type: 'int32' }, right: { kind: 'const', type: 'int64', value: 3 } },
        ];
      }),
    ).toEqual([
      'kernel 0 (mapFilter): constant 3 is not a valid int64',
      'kernel 0 (mapFilter): compares int32 with int64',
    ]);
  });

  it('requires equal column types for concat and difference, and in and out of sort', () => {
    const mixed = (p: KirProgram): void => {
      p.variables[2]!.columns = ['int32', 'string'];
      p.relations[2]!.columns[1]!.type = 'string';
    };
    const msgs = messagesAfter(mixed);
    expect(msgs).toContain('kernel 1 (copy): column types differ: (int32, int32) vs (int32, string)');
    expect(msgs).toContain('kernel 2 (sort): column types differ: (int32, string) vs (int32, int32)');
    expect(
      messagesAfter((p) => {
        p.variables.push({ id: p.variables.length, name: 'odd', columns: ['int32'] });
        kernelOfKind(p, 'difference').right = p.variables.length - 1;
      }),
    ).toEqual(['kernel 6 (difference): column types differ: (int32, int32) vs (int32) vs (int32, int32)']);
    expect(messagesAfter((p) => (kernelOfKind(p, 'sort').keys = [2]))).toEqual(['kernel 2 (sort): key #2 out of range for 2 columns']);
  });

  it('requires hashJoin keys to pair up and its projection to match the output', () => {
    const plan = program(
      [rel('r', ['int32', 'string'], 'edb'), rel('s', ['string', 'int32'], 'edb'), rel('t', ['int32', 'int32'])],
      [block('b', [mapJoin('t', 'r', 's', [1], [0], [cols(0)[0]!, { kind: 'col', index: 3, type: 'int32' }])])],
    );
    const base = unoptimizedKernels(plan, { joinStrategy: 'hash' });
    expect(validateKir(base)).toEqual([]);
    expect(messagesAfter((p) => (kernelOfKind(p, 'hashJoin').probeKeys = [0]), base)).toEqual([
      'kernel 0 (hashJoin): key pair 0 joins build #0 (string) with probe #0 (int32)',
    ]);
    expect(messagesAfter((p) => ((kernelOfKind(p, 'hashJoin').buildKeys = []), (kernelOfKind(p, 'hashJoin').probeKeys = [])), base)).toEqual([
      'kernel 0 (hashJoin): a hash join needs at least one key',
    ]);
    expect(messagesAfter((p) => (kernelOfKind(p, 'hashJoin').project[1] = { side: 'build', column: 0 }), base)).toEqual([
      'kernel 0 (hashJoin): projects (int32, string) into a variable of (int32, int32)',
    ]);
    expect(messagesAfter((p) => (kernelOfKind(p, 'hashJoin').project[1] = { side: 'probe', column: 7 }), base)).toEqual([
      'kernel 0 (hashJoin): output column 1 reads probe #7, out of range',
    ]);
  });

  it('requires mergeJoin keys to pair up with equal types', () => {
    const plan = program(
      [rel('r', ['int32', 'string'], 'edb'), rel('s', ['string', 'int32'], 'edb'), rel('t', ['int32', 'int32'])],
      [block('b', [mapJoin('t', 'r', 's', [1], [0], [cols(0)[0]!, { kind: 'col', index: 3, type: 'int32' }])])],
    );
    const base = unoptimizedKernels(plan, { joinStrategy: 'sort-merge' });
    expect(validateKir(base)).toEqual([]);
    expect(messagesAfter((p) => (kernelOfKind(p, 'mergeJoin').rightKeys = [1]), base)).toEqual([
      'kernel 1 (mergeJoin): key pair 0 joins left #1 (string) with right #1 (int32)',
    ]);
    expect(messagesAfter((p) => (kernelOfKind(p, 'mergeJoin').rightKeys = []), base)).toEqual([
      'kernel 1 (mergeJoin): 1 left keys but 0 right keys',
    ]);
  });

  it('checks variables against relations, and facts against columns', () => {
    expect(messagesAfter((p) => (p.variables[1]!.columns = ['int32']))).toContain(
      "variable 1 (path) has columns (int32), relation 'path' has (int32, int32)",
    );
    expect(messagesAfter((p) => (p.relationVars['path'] = 0))).toEqual(["relation 'path' maps to variable 0, which does not hold it"]);
    expect(messagesAfter((p) => (p.variables[5]!.name = 'path'))).toEqual(["two variables are named 'path'"]);
    expect(
      messagesAfter((p) => {
        p.facts['edge'] = [[1, 2n], [1]];
        p.facts['ghost'] = [];
      }),
    ).toEqual([
      "fact 0 of 'edge': value 2 in column 1 is not a valid int32",
      "fact 1 of 'edge': 1 values, relation has 2 columns",
      "facts for unknown relation 'ghost'",
    ]);
  });
});
