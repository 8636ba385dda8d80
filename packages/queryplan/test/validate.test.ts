import { describe, expect, it } from 'vitest';
import { validatePlan, type QpCommand, type QpProgram } from '../src/index.js';
import { block, branchEmpty, col, halt, i32, i64, jump, rel, str, transitiveClosure } from './plans.js';

/** A plan over a(x: int32, y: int32), b(s: string), l(v: int64), t(x: int32, y: int32) running `commands`. */
function withCommands(...commands: QpCommand[]): QpProgram {
  return {
    relations: [
      rel('a', 'edb', { x: 'int32', y: 'int32' }),
      rel('b', 'edb', { s: 'string' }),
      rel('l', 'edb', { v: 'int64' }),
      rel('t', 'idb', { x: 'int32', y: 'int32' }),
    ],
    facts: {},
    entry: 'main',
    blocks: [block('main', commands, halt)],
  };
}

function messages(p: QpProgram): string[] {
  return validatePlan(p).map((d) => d.message);
}

describe('validatePlan', () => {
  it('accepts well-formed plans', () => {
    expect(validatePlan(transitiveClosure([[1, 2]]))).toEqual([]);
    const join: QpCommand = {
      kind: 'mapJoin', target: 't', left: 'a', right: 'b', leftKeys: [], rightKeys: [],
      filter: [{ kind: 'compare', op: '=', left: col(2, 'string'), right: str('k') }],
      project: [col(1), i32(3)],
    };
    expect(validatePlan(withCommands(join))).toEqual([]);
  });

  it('reports duplicate relations and undeclared references', () => {
    const p = withCommands({ kind: 'copy', target: 't', source: 'ghost' });
    p.relations.push(rel('a', 'edb', { x: 'int32' }));
    p.facts = { phantom: [[1]] };
    p.blocks[0]!.terminator = branchEmpty(['nobody'], 'main', 'main');
    const m = messages(p);
    expect(m).toContain('duplicate relation a');
    expect(m).toContain('facts for undeclared relation phantom');
    expect(m).toContain('block main, command 1 (t := copy ghost): relation ghost is not declared');
    expect(m).toContain('block main: branch condition reads undeclared relation nobody');
  });

  it('reports duplicate, missing and entry labels', () => {
    const p: QpProgram = {
      relations: [],
      facts: {},
      entry: 'start',
      blocks: [block('x', [], jump('y')), block('x', [], branchEmpty([], 'x', 'z'))],
    };
    const m = messages(p);
    expect(m).toContain('duplicate block label x');
    expect(m).toContain('entry block start does not exist');
    expect(m).toContain('block x: jump to missing block y');
    expect(m).toContain('block x: branch to missing block z');
  });

  it('checks column indices against the input (join: left arity + right arity)', () => {
    const base = { kind: 'mapJoin' as const, target: 't', left: 'a', right: 'b', leftKeys: [], rightKeys: [], filter: [] };
    expect(messages(withCommands({ ...base, project: [col(0), col(1)] }))).toEqual([]);
    expect(messages(withCommands({ ...base, project: [col(0), col(3)] }))).toEqual([
      'block main, command 1 (t := mapJoin a, b project (#0, #3)): column #3 out of range (the input has 3 columns)',
    ]);
    const mf = messages(withCommands({ kind: 'mapFilter', target: 't', source: 'a', filter: [], project: [col(0), col(-1)] }));
    expect(mf).toHaveLength(1);
    expect(mf[0]).toMatch(/^block main, command 1 \(t := mapFilter a project \(#0, #-1\)\): column #-1 out of range/);
  });

  it('checks that column annotations and constants have the right types', () => {
    const m = messages(
      withCommands({
        kind: 'mapFilter', target: 't', source: 'b',
        filter: [{ kind: 'compare', op: '=', left: col(0, 'int32'), right: i32(1) }],
        project: [i32(1.5), { kind: 'const', type: 'int64', value: 7 }],
      }),
    );
    expect(m.some((x) => x.endsWith('#0 is annotated int32 but the input column is string'))).toBe(true);
    expect(m.some((x) => x.endsWith('constant number 1.5 is not a valid int32'))).toBe(true);
    expect(m.some((x) => x.endsWith('constant number 7 is not a valid int64'))).toBe(true);
  });

  it('checks projection arity and types against the target', () => {
    expect(messages(withCommands({ kind: 'mapFilter', target: 't', source: 'a', filter: [], project: [col(0)] }))).toEqual([
      'block main, command 1 (t := mapFilter a project (#0)): projects 1 columns but t has 2',
    ]);
    expect(messages(withCommands({ kind: 'mapFilter', target: 't', source: 'a', filter: [], project: [col(0), i64(1n)] }))).toEqual([
      'block main, command 1 (t := mapFilter a project (#0, 1L)): projected column 2 is int64 but t.y is int32',
    ]);
  });

  it('checks that comparison operands have equal types', () => {
    const m = messages(
      withCommands({
        kind: 'mapFilter', target: 't', source: 'a',
        filter: [{ kind: 'compare', op: '<', left: col(0), right: str('x') }],
        project: [col(0), col(1)],
      }),
    );
    expect(m).toEqual([
      'block main, command 1 (t := mapFilter a where #0 < "x" project (#0, #1)): comparison #0 < "x" compares int32 with string',
    ]);
  });

  it('checks join key counts, ranges and types', () => {
    const base = { kind: 'mapJoin' as const, target: 't', left: 'a', right: 'l', filter: [], project: [col(0), col(1)] };
    expect(messages(withCommands({ ...base, leftKeys: [0, 1], rightKeys: [0] }))[0]).toMatch(/2 left keys but 1 right keys$/);
    expect(messages(withCommands({ ...base, leftKeys: [2], rightKeys: [1] }))).toEqual([
      'block main, command 1 (t := mapJoin a, l on l#2 = r#1 project (#0, #1)): left key #2 out of range (a has 2 columns)',
      'block main, command 1 (t := mapJoin a, l on l#2 = r#1 project (#0, #1)): right key #1 out of range (l has 1 columns)',
    ]);
    expect(messages(withCommands({ ...base, leftKeys: [0], rightKeys: [0] }))[0]).toMatch(
      /^block main, command 1 \(t := mapJoin a, l on l#0 = r#0 .*\): join key 1 pairs a#0 \(int32\) with l#0 \(int64\)$/,
    );
  });

  it('checks union, difference and copy column types', () => {
    expect(messages(withCommands({ kind: 'union', target: 't', left: 'a', right: 'b' }))).toEqual([
      'block main, command 1 (t := union a, b): column types of t (int32, int32) and b (string) differ',
    ]);
    expect(messages(withCommands({ kind: 'difference', target: 'b', left: 'b', right: 'l' }))).toEqual([
      'block main, command 1 (b := difference b, l): column types of b (string) and l (int64) differ',
    ]);
    expect(messages(withCommands({ kind: 'copy', target: 'l', source: 'a' }))).toEqual([
      'block main, command 1 (l := copy a): column types of l (int64) and a (int32, int32) differ',
    ]);
    expect(messages(withCommands({ kind: 'clear', target: 'a' }))).toEqual([]);
  });

  it('checks facts against the declared columns', () => {
    const p = withCommands();
    p.facts = { a: [[1, 2], [1], [1, 'x']], l: [[5], [5n], [2n ** 63n]] };
    expect(messages(p)).toEqual([
      'facts for a, row 2: expected 2 values, found 1',
      'facts for a, row 3: expected int32 in column 2 (y), found "x"',
      'facts for l, row 1: expected int64 in column 1 (v), found number 5',
      'facts for l, row 3: expected int64 in column 1 (v), found 9223372036854775808L',
    ]);
  });
});
