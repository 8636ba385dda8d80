import type { Expr, Predicate, ScalarType } from '@vixen/queryplan';
import { columnWords, filterCode, type ColumnResolver } from '../wgsl.js';
import { selectShaders } from './compaction.js';
import type { KernelShaders } from '../index.js';

/** One select pass: project(row) of the rows passing the filter, in input order. */
export function mapFilterShaders(
  inputTypes: readonly ScalarType[],
  filter: readonly Predicate[],
  project: readonly Expr[],
  constOffsets: ReadonlyMap<Expr, number>,
  constWords: number,
): KernelShaders {
  const keepOf = (cols: ColumnResolver): string => filterCode(filter, cols, constOffsets);
  const keep = keepOf((c) => columnWords('inp', 'b', inputTypes, c));
  return selectShaders({ pass: 'select', inputs: ['inp'], inputTypes, keep, keepOf, helpers: '', project, constOffsets, constWords });
}
