/** Shared WGSL building blocks: module header, thread indexing, typed comparisons, expression words. */
import { wordsOf } from '@vixen/queryplan';
import type { CompareOp, Expr, Predicate, ScalarType } from '@vixen/queryplan';
import { PASS_LAYOUTS, type PassName } from './passes.js';

/** Vec4s of the uniform array: sizes plus `constWords` constant words. */
export function uniformVec4s(constWords: number): number {
  return 1 + Math.ceil(constWords / 4);
}

/**
 * Module prologue: bindings named `names` (in PASS_LAYOUTS order, the uniform is always `u`),
 * the workgroup-size override and helpers. Unused helpers cost nothing.
 */
export function header(pass: PassName, names: readonly string[], constWords = 0): string {
  const kinds = PASS_LAYOUTS[pass];
  if (kinds.length !== names.length + 1) throw new Error(`internal: pass ${pass} binds ${kinds.length} buffers`);
  const decls = kinds.map((kind, i) => {
    switch (kind) {
      case 'read':
        return `@group(0) @binding(${i}) var<storage, read> ${names[i]}: array<u32>;`;
      case 'write':
        return `@group(0) @binding(${i}) var<storage, read_write> ${names[i]}: array<u32>;`;
      case 'uniform':
        return `@group(0) @binding(${i}) var<uniform> u: array<vec4<u32>, ${uniformVec4s(constWords)}>;`;
    }
  });
  return `// vixen pass: ${pass}
override WG: u32 = 256u;
${decls.join('\n')}

// -1, 0, 1 as unsigned a <, =, > b.
fn cmpU(a: u32, b: u32) -> i32 {
  return select(select(0, 1, a > b), -1, a < b);
}

// Signed 64-bit comparison of (lo, hi) word pairs: hi as i32, then lo as u32.
fn cmpI64(alo: u32, ahi: u32, blo: u32, bhi: u32) -> i32 {
  let a = bitcast<i32>(ahi);
  let b = bitcast<i32>(bhi);
  if (a != b) { return select(1, -1, a < b); }
  return cmpU(alo, blo);
}
`;
}

/** Entry point over a 1D thread range laid out on a (possibly 2D) grid; `i` is the thread index. */
export function threadMain(body: string): string {
  return `
@compute @workgroup_size(WG)
fn main(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
  let i = gid.x + gid.y * nwg.x * WG;
${body}
}
`;
}

/** WGSL expressions for the words of column `index` of a row of `types` starting at word `base`. */
export function columnWords(buffer: string, base: string, types: readonly ScalarType[], index: number): string[] {
  if (index < 0 || index >= types.length) throw new Error(`internal: column ${index} out of range (${types.length} columns)`);
  let offset = 0;
  for (let c = 0; c < index; c++) offset += wordsOf(types[c]!);
  return Array.from({ length: wordsOf(types[index]!) }, (_, w) => `${buffer}[${base} + ${offset + w}u]`);
}

/** WGSL expressions for constant word `offset` onwards (uniform vec4 1 is word 0). */
export function constantWords(offset: number, type: ScalarType): string[] {
  return Array.from({ length: wordsOf(type) }, (_, w) => {
    const k = offset + w;
    return `u[${1 + (k >> 2)}u][${k & 3}u]`;
  });
}

/** Resolves a column index to its word expressions (the row the expression reads). */
export type ColumnResolver = (index: number) => string[];

export function exprWords(e: Expr, cols: ColumnResolver, constOffsets: ReadonlyMap<Expr, number>): string[] {
  switch (e.kind) {
    case 'col':
      return cols(e.index);
    case 'const': {
      const offset = constOffsets.get(e);
      if (offset === undefined) throw new Error('internal: constant without a params slot');
      return constantWords(offset, e.type);
    }
  }
}

/** Typed comparison: int32 signed, int64 signed 64-bit, string as u32 dictionary ids. */
export function compareCode(op: CompareOp, type: ScalarType, a: string[], b: string[]): string {
  const wop = op === '=' ? '==' : op;
  switch (type) {
    case 'int32':
      return `(bitcast<i32>(${a[0]}) ${wop} bitcast<i32>(${b[0]}))`;
    case 'string':
      return `(${a[0]} ${wop} ${b[0]})`;
    case 'int64':
      if (op === '=') return `(${a[0]} == ${b[0]} && ${a[1]} == ${b[1]})`;
      if (op === '!=') return `(${a[0]} != ${b[0]} || ${a[1]} != ${b[1]})`;
      return `(cmpI64(${a[0]}, ${a[1]}, ${b[0]}, ${b[1]}) ${wop} 0)`;
  }
}

/** Conjunction of predicates as one WGSL bool expression (`true` when empty). */
export function filterCode(filter: readonly Predicate[], cols: ColumnResolver, constOffsets: ReadonlyMap<Expr, number>): string {
  if (filter.length === 0) return 'true';
  return filter
    .map((p) => {
      if (p.left.type !== p.right.type) throw new Error(`internal: comparison of ${p.left.type} with ${p.right.type}`);
      return compareCode(p.op, p.left.type, exprWords(p.left, cols, constOffsets), exprWords(p.right, cols, constOffsets));
    })
    .join(' && ');
}

/** Statements writing the projected words at `out[base + k]`. */
export function projectCode(project: readonly Expr[], out: string, base: string, cols: ColumnResolver, constOffsets: ReadonlyMap<Expr, number>): string {
  const words = project.flatMap((e) => exprWords(e, cols, constOffsets));
  return words.map((w, k) => `    ${out}[${base} + ${k}u] = ${w};`).join('\n');
}

/** Body of `fn name(a: u32, b: u32) -> i32` comparing word lists unsigned-lexicographically. */
export function lexCompareFn(name: string, pairs: ReadonlyArray<readonly [string, string]>): string {
  const steps = pairs.map(([x, y]) => `  c = cmpU(${x}, ${y});\n  if (c != 0) { return c; }`).join('\n');
  return `
fn ${name}(a: u32, b: u32) -> i32 {
  var c = 0;
${steps}
  return c;
}
`;
}
