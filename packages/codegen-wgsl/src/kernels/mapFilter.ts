import type { Expr, Predicate, ScalarType } from '@vixen/queryplan';
import { columnWords, filterCode } from '../wgsl.js';
import { flagsPass, scatterPass } from './compaction.js';
import type { KernelShaders } from '../index.js';

/** flags = filter(row); scan; scatter project(row). */
export function mapFilterShaders(
  inputTypes: readonly ScalarType[],
  filter: readonly Predicate[],
  project: readonly Expr[],
  constOffsets: ReadonlyMap<Expr, number>,
  constWords: number,
): KernelShaders {
  const keep = filterCode(filter, (c) => columnWords('inp', 'b', inputTypes, c), constOffsets);
  return {
    flags: flagsPass(inputTypes, keep, '', constWords),
    scatter: scatterPass(inputTypes, project, constOffsets, constWords),
  };
}
