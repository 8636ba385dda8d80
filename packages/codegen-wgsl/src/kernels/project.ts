/**
 * Projection: a mapFilter without a filter keeps every row, so input row i's projection is output row i. One
 * thread per row, no tile scan and no look-back (the select pass's cost over a copy): rows are read and written as
 * vectors of their words (vectorRows), as a copy kernel moves them.
 */
import type { Expr, Predicate, ScalarType } from '@vixen/queryplan';
import type { KernelShaders } from '../passes.js';
import { exprWords, header, retypeBinding, threadMain, vectorRows, vectorType, vectorWidth } from '../wgsl.js';

/** Whether a mapFilter runs as a projection pass: no filter, and rows of at least one word in and out. */
export function isProjection(inputTypes: readonly ScalarType[], filter: readonly Predicate[], outWords: number): boolean {
  return filter.length === 0 && outWords > 0 && inputTypes.length > 0;
}

export function projectShaders(inputTypes: readonly ScalarType[], project: readonly Expr[], constOffsets: ReadonlyMap<Expr, number>, constWords: number): KernelShaders {
  const { load, column, binding } = vectorRows('inp', inputTypes);
  const words = project.flatMap((e) => exprWords(e, column, constOffsets));
  // The output row as whole vectors too, so a pending output's count word after the rows is never written.
  const V = vectorWidth(words.length);
  const vec = vectorType(V);
  const stores = Array.from({ length: words.length / V }, (_, q) => {
    const value = V === 1 ? words[q]! : `${vec}(${words.slice(q * V, (q + 1) * V).join(', ')})`;
    return `  outp[i * ${words.length / V}u + ${q}u] = ${value};`;
  }).join('\n');
  const code = `${header('project', ['inp', 'outp'], constWords)}${threadMain(`  if (i >= u[0].x) { return; }
  ${load}
${stores}`)}`;
  return { project: retypeBinding(binding(code), 'read_write', 'outp', vec) };
}
