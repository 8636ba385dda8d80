import { rowWords, type Expr, type Predicate, type ScalarType } from '@vixen/queryplan';
import { columnWords, filterCode, type ColumnResolver } from '../wgsl.js';
import { selectShaders } from './compaction.js';
import { isProjection, projectShaders } from './project.js';
import type { KernelShaders } from '../passes.js';

/**
 * project(row) of the rows passing the filter, in input order: one select pass, or, without a filter, one
 * projection pass (isProjection).
 */
export function mapFilterShaders(
  inputTypes: readonly ScalarType[],
  filter: readonly Predicate[],
  project: readonly Expr[],
  constOffsets: ReadonlyMap<Expr, number>,
  constWords: number,
): KernelShaders {
  if (isProjection(inputTypes, filter, rowWords(project.map((e) => e.type)))) return projectShaders(inputTypes, project, constOffsets, constWords);
  const keepOf = (cols: ColumnResolver): string => filterCode(filter, cols, constOffsets);
  const keep = keepOf((c) => columnWords('inp', 'b', inputTypes, c));
  return selectShaders({ pass: 'select', inputs: ['inp'], inputTypes, keep, keepOf, helpers: '', project, constOffsets, constWords });
}
