/** Passes shared by the compacting kernels (mapFilter, unique, difference): keep flags and the scatter. */
import { rowWords } from '@vixen/queryplan';
import type { Expr, ScalarType } from '@vixen/queryplan';
import { columnWords, header, projectCode, threadMain } from '../wgsl.js';

/** `flags` pass: flags[i] = keep (a WGSL bool over input row i at word `b`), flags[n] = 0. */
export function flagsPass(inputTypes: readonly ScalarType[], keep: string, helpers: string, constWords: number): string {
  return `${header('flags', ['inp', 'flags'], constWords)}
const W_IN: u32 = ${rowWords(inputTypes)}u;
${helpers}${threadMain(`  let n = u[0].x;
  if (i > n) { return; }
  if (i == n) { flags[i] = 0u; return; }
  let b = i * W_IN;
  flags[i] = select(0u, 1u, ${keep});`)}`;
}

/** `scatter` pass: row i, when kept (offsets step), is written as project(row i) at row offsets[i]. */
export function scatterPass(inputTypes: readonly ScalarType[], project: readonly Expr[], constOffsets: ReadonlyMap<Expr, number>, constWords: number): string {
  const outWords = project.reduce((n, e) => n + rowWords([e.type]), 0);
  const body = projectCode(project, 'outp', 'ob', (c) => columnWords('inp', 'b', inputTypes, c), constOffsets);
  return `${header('scatter', ['inp', 'offs', 'outp'], constWords)}
const W_IN: u32 = ${rowWords(inputTypes)}u;
const W_OUT: u32 = ${outWords}u;
${threadMain(`  if (i >= u[0].x) { return; }
  let o = offs[i];
  if (offs[i + 1u] == o) { return; }
  let b = i * W_IN;
  let ob = o * W_OUT;
${body}`)}`;
}

/** Projection copying every column: the scatter of unique and difference. */
export function identity(types: readonly ScalarType[]): Expr[] {
  return types.map((type, index) => ({ kind: 'col', index, type }));
}

/** Word pairs (buffer a row at `a` vs buffer b row at `b`) over all `width` words. */
export function rowPairs(bufA: string, bufB: string, width: number): Array<[string, string]> {
  return Array.from({ length: width }, (_, k): [string, string] => [`${bufA}[a * ${width}u + ${k}u]`, `${bufB}[b * ${width}u + ${k}u]`]);
}
