import { describe, expect, it } from 'vitest';
import { planToDot, printPlan, type QpProgram } from '../src/index.js';
import { block, col, halt, i32, i64, rel, str, transitiveClosure } from './plans.js';

describe('printPlan', () => {
  it('prints declarations, fact counts and blocks', () => {
    const text = printPlan(transitiveClosure([[1, 2], [2, 3]]));
    const lines = text.split('\n');
    expect(lines).toContain('relation edge(x: int32, y: int32) edb');
    expect(lines).toContain('relation path(x: int32, y: int32) idb output');
    expect(lines).toContain('relation $delta(x: int32, y: int32) temp');
    expect(lines).toContain('facts edge: 2 rows');
    expect(lines).toContain('entry entry');
    expect(text).toContain(
      [
        'block entry:',
        '  path := mapFilter edge project (#0, #1)',
        '  $delta := copy path',
        '  branch empty($delta) ? exit : loop',
      ].join('\n'),
    );
    expect(text).toContain(
      [
        'block loop:',
        '  $new := mapJoin $delta, edge on l#1 = r#0 project (#0, #3)',
        '  $new := difference $new, path',
        '  path := union path, $new',
      ].join('\n'),
    );
    expect(text).toContain('block exit:\n  halt\n');
  });

  it('prints filters, typed constants, products, clear and jump', () => {
    const p: QpProgram = {
      relations: [rel('e', 'edb', { a: 'int32', b: 'int64', c: 'string' }), rel('o', 'idb', { a: 'int32', c: 'string' }, false)],
      facts: { e: [[1, 2n, 'x']] },
      entry: 'b0',
      blocks: [
        block(
          'b0',
          [
            {
              kind: 'mapFilter', target: 'o', source: 'e',
              filter: [
                { kind: 'compare', op: '!=', left: col(0), right: i32(5) },
                { kind: 'compare', op: '<=', left: col(1, 'int64'), right: i64(-5n) },
                { kind: 'compare', op: '=', left: col(2, 'string'), right: str('a "q"') },
              ],
              project: [col(0), str('k')],
            },
            { kind: 'mapJoin', target: 'o', left: 'o', right: 'o', leftKeys: [], rightKeys: [], filter: [], project: [col(0), col(3, 'string')] },
            { kind: 'clear', target: 'o' },
          ],
          { kind: 'jump', target: 'b1' },
        ),
        block('b1', [], halt),
      ],
    };
    const lines = printPlan(p).split('\n');
    expect(lines).toContain('relation o(a: int32, c: string) idb');
    expect(lines).toContain('facts e: 1 row');
    expect(lines).toContain('  o := mapFilter e where #0 != 5 and #1 <= -5L and #2 = "a \\"q\\"" project (#0, "k")');
    expect(lines).toContain('  o := mapJoin o, o project (#0, #3)');
    expect(lines).toContain('  o := clear');
    expect(lines).toContain('  jump b1');
  });
});

describe('planToDot', () => {
  it('emits one record node per block and labelled branch edges', () => {
    const dot = planToDot(transitiveClosure());
    expect(dot.startsWith('digraph')).toBe(true);
    expect(dot.trimEnd().endsWith('}')).toBe(true);
    expect(dot).toContain('node [shape=record');
    const nodes = dot.split('\n').filter((l) => /^ {2}"[^"]+" \[label=/.test(l));
    expect(nodes).toHaveLength(3);
    expect(dot).toMatch(/"entry" \[label="\{block entry:\|path := mapFilter edge project \(#0, #1\)\\l\$delta := copy path\\l\|branch empty\(\$delta\) \? exit : loop\\l\}", style=bold\];/);
    expect(dot).toContain('"entry" -> "exit" [label="true"];');
    expect(dot).toContain('"entry" -> "loop" [label="false"];');
    expect(dot).toContain('"loop" -> "loop" [label="false"];');
    expect(dot).toContain('"exit" [label="{block exit:|halt\\l}"];');
  });

  it('escapes record syntax and quotes inside labels', () => {
    const p: QpProgram = {
      relations: [rel('s', 'edb', { v: 'string' })],
      facts: {},
      entry: 'b',
      blocks: [
        block(
          'b',
          [{ kind: 'mapFilter', target: 's', source: 's', filter: [{ kind: 'compare', op: '<', left: col(0, 'string'), right: str('{|}\\') }], project: [col(0, 'string')] }],
          { kind: 'jump', target: 'b' },
        ),
      ],
    };
    const dot = planToDot(p);
    // The string constant prints as "{|}\\" (JSON), then each of " { | } \ is backslash-escaped for DOT.
    expect(dot).toContain('#0 \\< \\"\\{\\|\\}\\\\\\\\\\"');
    expect(dot).toContain('"b" -> "b";');
    // Every unescaped quote pairs up on every line.
    for (const line of dot.split('\n')) expect(line.replace(/\\./g, '').split('"').length % 2).toBe(1);
  });
});
