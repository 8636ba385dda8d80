import type { Expr, Predicate, ScalarType } from '@vixen/queryplan';
import { columnWords, filterCode } from '../wgsl.js';
import { countPass, scatterPass } from './compaction.js';
import type { KernelShaders } from '../index.js';

/** Tile counts of rows passing the filter; scan; scatter project(row) in input order. */
export function mapFilterShaders(
  inputTypes: readonly ScalarType[],
  filter: readonly Predicate[],
  project: readonly Expr[],
  constOffsets: ReadonlyMap<Expr, number>,
  constWords: number,
): KernelShaders {
  const keep = filterCode(filter, (c) => columnWords('inp', 'b', inputTypes, c), constOffsets);
  return {
    flags: countPass('flags', ['inp'], inputTypes, keep, '', constWords),
    scatter: scatterPass(inputTypes, project, constOffsets, constWords),
  };
}
