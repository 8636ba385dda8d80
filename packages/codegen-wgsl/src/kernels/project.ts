/**
 * Projection: a mapFilter without a filter keeps every row, so input row i's projection is output row i. One
 * thread per row, no tile scan and no look-back (the select pass's cost over a copy): rows are read and written as
 * vectors of their words (vectorRows), as a copy kernel moves them.
 */
import type { Expr, Predicate, ScalarType } from '@vixen/queryplan';
import type { KernelShaders } from '../index.js';
import { exprWords, header, threadMain, vectorRows } from '../wgsl.js';

/** Whether a mapFilter runs as a projection pass: no filter, and rows of at least one word in and out. */
export function isProjection(inputTypes: readonly ScalarType[], filter: readonly Predicate[], outWords: number): boolean {
  return filter.length === 0 && outWords > 0 && inputTypes.length > 0;
}

export function projectShaders(inputTypes: readonly ScalarType[], project: readonly Expr[], constOffsets: ReadonlyMap<Expr, number>, constWords: number): KernelShaders {
  const { load, column, binding } = vectorRows('inp', inputTypes);
  const words = project.flatMap((e) => exprWords(e, column, constOffsets));
  const W = words.length;
  // The output row as W / V stores of vec<V>u32, V the largest of 4, 2, 1 dividing W (whole rows, so a pending
  // output's count word after the rows is never written).
  const V = W % 4 === 0 ? 4 : W % 2 === 0 ? 2 : 1;
  const vec = V === 1 ? 'u32' : `vec${V}<u32>`;
  const stores = Array.from({ length: W / V }, (_, q) => {
    const value = V === 1 ? words[q]! : `${vec}(${words.slice(q * V, (q + 1) * V).join(', ')})`;
    return `  outp[i * ${W / V}u + ${q}u] = ${value};`;
  }).join('\n');
  const plain = 'var<storage, read_write> outp: array<u32>;';
  const code = binding(`${header('project', ['inp', 'outp'], constWords)}${threadMain(`  if (i >= u[0].x) { return; }
  ${load}
${stores}`)}`);
  if (!code.includes(plain)) throw new Error('internal: no binding outp');
  return { project: code.replace(plain, `var<storage, read_write> outp: array<${vec}>;`) };
}
