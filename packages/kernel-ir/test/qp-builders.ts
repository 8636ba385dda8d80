/** Small builders for hand-written query plans in tests. */
import type {
  BasicBlock,
  CompareOp,
  Expr,
  Predicate,
  QpCommand,
  QpProgram,
  RelationDecl,
  RelationKind,
  Row,
  ScalarType,
  Terminator,
  Value,
} from '@vixen/queryplan';
import { insertFrees, lowerPlan, scheduleBlocks, type KirProgram, type LowerOptions } from '../src/index.js';

export function rel(name: string, types: ScalarType[], kind: RelationKind = 'idb', output = kind !== 'temp'): RelationDecl {
  return { name, columns: types.map((type, i) => ({ name: `c${i}`, type })), kind, output };
}

export const col = (index: number, type: ScalarType = 'int32'): Expr => ({ kind: 'col', index, type });

export function lit(value: Value, type?: ScalarType): Expr {
  const t: ScalarType = type ?? (typeof value === 'bigint' ? 'int64' : typeof value === 'string' ? 'string' : 'int32');
  return { kind: 'const', type: t, value };
}

export const cmp = (left: Expr, op: CompareOp, right: Expr): Predicate => ({ kind: 'compare', op, left, right });

export const cols = (...indices: number[]): Expr[] => indices.map((i) => col(i));

export function block(label: string, commands: QpCommand[], terminator: Terminator = { kind: 'halt' }): BasicBlock {
  return { label, commands, terminator };
}

export function program(relations: RelationDecl[], blocks: BasicBlock[], facts: Record<string, Row[]> = {}): QpProgram {
  return { relations, facts, blocks, entry: blocks[0]!.label };
}

export const mapFilter = (target: string, source: string, project: Expr[], filter: Predicate[] = []): QpCommand => ({
  kind: 'mapFilter',
  target,
  source,
  filter,
  project,
});

export const mapJoin = (
  target: string,
  left: string,
  right: string,
  leftKeys: number[],
  rightKeys: number[],
  project: Expr[],
  filter: Predicate[] = [],
): QpCommand => ({ kind: 'mapJoin', target, left, right, leftKeys, rightKeys, filter, project });

export const union = (target: string, left: string, right: string): QpCommand => ({ kind: 'union', target, left, right });
export const difference = (target: string, left: string, right: string): QpCommand => ({
  kind: 'difference',
  target,
  left,
  right,
});
export const copy = (target: string, source: string): QpCommand => ({ kind: 'copy', target, source });
export const clear = (target: string): QpCommand => ({ kind: 'clear', target });

/**
 * Semi-naive transitive closure: path := edge; loop { new := delta ⋈ edge − path; path ∪= new; delta := new }.
 */
export function transitiveClosure(edges: Row[]): QpProgram {
  return program(
    [rel('edge', ['int32', 'int32'], 'edb'), rel('path', ['int32', 'int32']), rel('$delta_path', ['int32', 'int32'], 'temp'), rel('$new_path', ['int32', 'int32'], 'temp')],
    [
      block('init', [mapFilter('path', 'edge', cols(0, 1)), copy('$delta_path', 'path')], { kind: 'jump', target: 'loop' }),
      block('loop', [], { kind: 'branch', condition: { kind: 'empty', relations: ['$delta_path'] }, ifTrue: 'done', ifFalse: 'body' }),
      block(
        'body',
        [
          mapJoin('$new_path', '$delta_path', 'edge', [1], [0], cols(0, 3)),
          difference('$new_path', '$new_path', 'path'),
          union('path', 'path', '$new_path'),
          copy('$delta_path', '$new_path'),
        ],
        { kind: 'jump', target: 'loop' },
      ),
      block('done', []),
    ],
    { edge: edges },
  );
}

/** What planToKernels gives without the KIR optimizations: every kernel kind lowering emits stays visible. */
export function unoptimizedKernels(plan: QpProgram, options: LowerOptions = {}): KirProgram {
  return insertFrees.run(scheduleBlocks.run(lowerPlan(plan, options)));
}
