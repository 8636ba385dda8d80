/** Small builders and hand-written QP programs shared by the queryplan tests. */
import type { BasicBlock, Column, Expr, QpCommand, QpProgram, RelationDecl, RelationKind, ScalarType, Terminator } from '../src/index.js';

export const col = (index: number, type: ScalarType = 'int32'): Expr => ({ kind: 'col', index, type });
export const i32 = (value: number): Expr => ({ kind: 'const', type: 'int32', value });
export const i64 = (value: bigint): Expr => ({ kind: 'const', type: 'int64', value });
export const str = (value: string): Expr => ({ kind: 'const', type: 'string', value });

export function rel(name: string, kind: RelationKind, cols: Record<string, ScalarType>, output = kind === 'idb'): RelationDecl {
  const columns: Column[] = Object.entries(cols).map(([n, type]) => ({ name: n, type }));
  return { name, columns, kind, output };
}

export const block = (label: string, commands: QpCommand[], terminator: Terminator): BasicBlock => ({ label, commands, terminator });
export const halt: Terminator = { kind: 'halt' };
export const jump = (target: string): Terminator => ({ kind: 'jump', target });
export const branchEmpty = (relations: string[], ifTrue: string, ifFalse: string): Terminator => ({
  kind: 'branch',
  condition: { kind: 'empty', relations },
  ifTrue,
  ifFalse,
});

const XY = { x: 'int32', y: 'int32' } as const;

/** path = transitive closure of edge, as a hand-written semi-naive loop. */
export function transitiveClosure(edges: number[][] = []): QpProgram {
  return {
    relations: [rel('edge', 'edb', XY), rel('path', 'idb', XY), rel('$delta', 'temp', XY), rel('$new', 'temp', XY)],
    facts: edges.length > 0 ? { edge: edges } : {},
    entry: 'entry',
    blocks: [
      block(
        'entry',
        [
          { kind: 'mapFilter', target: 'path', source: 'edge', filter: [], project: [col(0), col(1)] },
          { kind: 'copy', target: '$delta', source: 'path' },
        ],
        branchEmpty(['$delta'], 'exit', 'loop'),
      ),
      block(
        'loop',
        [
          {
            kind: 'mapJoin',
            target: '$new',
            left: '$delta',
            right: 'edge',
            leftKeys: [1],
            rightKeys: [0],
            filter: [],
            project: [col(0), col(3)],
          },
          { kind: 'difference', target: '$new', left: '$new', right: 'path' },
          { kind: 'union', target: 'path', left: 'path', right: '$new' },
          { kind: 'copy', target: '$delta', source: '$new' },
        ],
        branchEmpty(['$delta'], 'exit', 'loop'),
      ),
      block('exit', [], halt),
    ],
  };
}

/** The closure computed directly, for comparison. */
export function closureOf(edges: readonly (readonly number[])[]): number[][] {
  const seen = new Set<string>();
  const out: number[][] = [];
  const add = (x: number, y: number) => {
    const k = `${x},${y}`;
    if (!seen.has(k)) {
      seen.add(k);
      out.push([x, y]);
    }
  };
  for (const [x, y] of edges) add(x!, y!);
  for (let changed = true; changed; ) {
    changed = false;
    for (const [a, b] of [...out]) {
      for (const [c, d] of edges) {
        if (b === c && !seen.has(`${a},${d}`)) {
          add(a!, d!);
          changed = true;
        }
      }
    }
  }
  return out.sort((p, q) => p[0]! - q[0]! || p[1]! - q[1]!);
}
