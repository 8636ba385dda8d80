import { describe, expect, expectTypeOf, it } from 'vitest';
import type { z } from 'zod';
import { VixenError } from '@vixen/queryplan';
import { kirProgramSchema, parseKir, planToKernels, serializeKir, type KirProgram } from '../src/index.js';
import { block, clear, cmp, col, difference, lit, mapFilter, mapJoin, program, rel, transitiveClosure, union, unoptimizedKernels } from './qp-builders.js';

/** A program touching every node kind: all kernels, commands, terminators, expression kinds and scalar types. */
function everything(): KirProgram {
  const big = 2n ** 62n + 12345n;
  const plan = program(
    [
      { ...rel('item', ['int64', 'string', 'int32'], 'edb'), span: { file: 'a.logic', start: { line: 1, column: 1, offset: 0 }, end: { line: 1, column: 5, offset: 4 } } },
      rel('cheap', ['int64', 'string']),
      rel('$pair', ['int64', 'int64'], 'temp'),
      rel('other', ['int64', 'string']),
    ],
    [
      block(
        'start',
        [
          mapFilter('cheap', 'item', [col(0, 'int64'), col(1, 'string')], [
            cmp(col(2), '<', lit(10)),
            { kind: 'any', alternatives: [[cmp(col(1, 'string'), '!=', lit('junk "x"'))], [cmp(col(2), '=', lit(3)), cmp(col(0, 'int64'), '>', lit(0n))]] },
          ]),
          // Keys leading both sides: a merge join; keys elsewhere: a hash join.
          mapJoin('$pair', 'cheap', 'item', [0], [0], [col(0, 'int64'), lit(-big)], [cmp(col(2, 'int64'), '>=', lit(-(2n ** 63n)))]),
          mapJoin('$pair', 'cheap', 'item', [1], [1], [col(0, 'int64'), col(2, 'int64')]),
          union('other', 'other', 'cheap'),
          difference('other', 'other', 'cheap'),
          clear('$pair'),
        ],
        { kind: 'branch', condition: { kind: 'empty', relations: ['other', '$pair'] }, ifTrue: 'end', ifFalse: 'again' },
      ),
      block('again', [{ kind: 'copy', target: 'other', source: 'cheap' }], { kind: 'jump', target: 'end' }),
      block('end', []),
    ],
    { item: [[big, 'pen', 3], [-(2n ** 63n), '', -7], [2n ** 63n - 1n, 'ü', 2 ** 31 - 1]], other: [[0n, 'x']] },
  );
  const kir = unoptimizedKernels(plan);
  // Lowering no longer emits concat (unions merge); a launched hand-built one keeps the kind covered.
  const id = kir.kernels.length;
  kir.kernels.push({ kind: 'concat', id, left: 1, right: 3, output: 3 });
  kir.blocks.find((b) => b.label === 'again')!.commands.push({ kind: 'launch', kernel: id });
  return kir;
}

const roundTrip = (p: KirProgram): KirProgram => parseKir(JSON.parse(JSON.stringify(serializeKir(p))));

function parseError(json: unknown): string {
  try {
    parseKir(json);
  } catch (e) {
    expect(e).toBeInstanceOf(VixenError);
    return (e as VixenError).message;
  }
  throw new Error('parseKir accepted malformed input');
}

const json = (p: KirProgram): any => JSON.parse(JSON.stringify(serializeKir(p)));

describe('serializeKir / parseKir', () => {
  it('covers every node kind in the fixture', () => {
    const p = everything();
    expect(new Set(p.kernels.map((k) => k.kind))).toEqual(new Set(['mapFilter', 'sort', 'unique', 'mergeJoin', 'hashJoin', 'difference', 'concat', 'merge', 'copy']));
    expect(new Set(p.blocks.flatMap((b) => b.commands.map((c) => c.kind)))).toEqual(new Set(['launch', 'free', 'clear']));
    expect(new Set(p.blocks.map((b) => b.terminator.kind))).toEqual(new Set(['branch', 'jump', 'halt']));
  });

  it('round-trips through JSON text, int64 constants and facts included', () => {
    for (const p of [everything(), unoptimizedKernels(transitiveClosure([[1, 2], [2, 3]]))]) {
      const back = roundTrip(p);
      expect(back).toEqual(p);
      expect(roundTrip(back)).toEqual(p);
    }
    // What the KIR optimizations add: the entry assumption and the record of fused kernels.
    expect(planToKernels(transitiveClosure([[1, 2]])).emptyOnEntry).toEqual(['path', '$delta_path', '$new_path']);
    const base = everything();
    const fused: KirProgram = { ...base, emptyOnEntry: ['other'], kernels: base.kernels.map((k) => (k.kind === 'mapFilter' ? { ...k, fused: [3, 5] } : k)) };
    expect(fused.kernels.some((k) => k.kind === 'mapFilter' && k.fused)).toBe(true);
    expect(roundTrip(fused)).toEqual(fused);
    const back = roundTrip(everything());
    expect(back.facts['item']![0]![0]).toBe(2n ** 62n + 12345n);
    expect(back.facts['item']![1]![0]).toBe(-(2n ** 63n));
  });

  it('round-trips the rules kernels came from, and still reads programs without them', () => {
    const base = everything();
    const rules = [{ file: 'a.logic', line: 3, text: 'cheap(i, n) <- item(i, n, p), p < 10' }];
    const withRules: KirProgram = { ...base, kernels: base.kernels.map((k) => ({ ...k, rules })) };
    expect(roundTrip(withRules)).toEqual(withRules);
    expect(roundTrip(base).kernels.every((k) => k.rules === undefined)).toBe(true);
  });

  it("round-trips a pipeline whose probe filters its build side (a dimension's select taken in)", () => {
    const plan = program(
      [
        rel('fact', ['int32', 'int32'], 'edb'),
        rel('dim', ['int32', 'int32', 'int32'], 'edb'),
        rel('$f', ['int32', 'int32'], 'temp'),
        rel('$c', ['int32', 'int32'], 'temp'),
        rel('out', ['int32', 'int32']),
      ],
      [
        block('b', [
          mapFilter('$f', 'fact', [col(0), col(1)], [cmp(col(0), '>', lit(0))]),
          mapFilter('$c', 'dim', [col(0), col(2)], [cmp(col(1), '!=', lit(0))]),
          mapJoin('out', '$f', '$c', [1], [0], [col(0), col(3)]),
        ]),
      ],
      { fact: [[1, 7]], dim: [[7, 1, 70]] },
    );
    const kir = planToKernels(plan, { joinStrategy: 'hash' });
    expect(kir.kernels.some((k) => k.kind === 'pipeline' && k.probes.some((pr) => pr.buildFilter?.length === 1))).toBe(true);
    expect(roundTrip(kir)).toEqual(kir);
  });

  it('writes int64 values as decimal strings next to their type', () => {
    const out = json(everything());
    expect(out.facts.item[0]).toEqual([String(2n ** 62n + 12345n), 'pen', 3]);
    const join = out.kernels.find((k: { kind: string }) => k.kind === 'mergeJoin');
    expect(join.project[1]).toEqual({ kind: 'const', type: 'int64', value: String(-(2n ** 62n + 12345n)) });
    expect(() => JSON.stringify(serializeKir(everything()))).not.toThrow();
  });

  it('has a schema whose output is the KirProgram type', () => {
    expectTypeOf<z.output<typeof kirProgramSchema>>().toEqualTypeOf<KirProgram>();
  });

  it('rejects malformed input with the path of each problem', () => {
    const bad = json(everything());
    const sortAt = bad.kernels.findIndex((k: { kind: string }) => k.kind === 'sort');
    delete bad.kernels[sortAt].keys;
    bad.blocks[0].commands[0].kind = 'explode';
    bad.variables[1].columns[0] = 'float99';
    const message = parseError(bad);
    expect(message).toContain(`kernels.${sortAt}.keys: Invalid input: expected array`);
    expect(message).toContain('blocks.0.commands.0.kind: ');
    expect(message).toContain('variables.1.columns.0: ');
    expect(message.split('\n')).toHaveLength(3);
  });

  it('rejects bad int64 strings, bad int32 values and unknown fields', () => {
    const bad = json(everything());
    bad.facts.item[1][0] = '12x';
    bad.facts.item[2][0] = String(2n ** 63n);
    bad.facts.item[2][2] = 2 ** 31;
    bad.kernels[0].surprise = true;
    const message = parseError(bad);
    expect(message).toContain('facts.item.1.0: expected an int64 as a decimal string');
    expect(message).toContain('facts.item.2.0: int64 out of range');
    expect(message).toMatch(/facts\.item\.2\.2: /);
    expect(message).toMatch(/kernels\.0: .*surprise/);
  });

  it('rejects an int64 constant written as a number, and non-objects', () => {
    const bad = json(everything());
    const join = bad.kernels.findIndex((k: { kind: string }) => k.kind === 'mergeJoin');
    bad.kernels[join].project[1].value = 5;
    expect(parseError(bad)).toContain(`kernels.${join}.project.1.value: `);
    expect(parseError(42)).toMatch(/^\(root\): /);
    expect(parseError(null)).toMatch(/^\(root\): /);
  });

  it('rejects an any-predicate of fewer than two alternatives', () => {
    const bad = json(everything());
    const select = bad.kernels.findIndex((k: { kind: string }) => k.kind === 'mapFilter');
    bad.kernels[select].filter[1].alternatives.pop();
    expect(parseError(bad)).toContain(`kernels.${select}.filter.1.alternatives: `);
  });

  it('runs the structural validator after the schema', () => {
    const bad = json(everything());
    bad.blocks[0].commands.push({ kind: 'launch', kernel: 999 });
    expect(parseError(bad)).toContain('launches kernel 999, which does not exist');
  });
});
