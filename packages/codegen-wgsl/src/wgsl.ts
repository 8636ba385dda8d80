/** Shared WGSL building blocks: module header, thread indexing, typed comparisons, expression words. */
import { builtinTable, wordsOf } from '@vixen/queryplan';
import type { ArithOp, BuiltinFn, CompareOp, Expr, Predicate, ScalarType } from '@vixen/queryplan';
import { PASS_LAYOUTS, TABLES_GROUP, type PassName } from './passes.js';

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

/**
 * `code` with read-write storage binding `name` declared as atomic words (passes that update with atomics); the
 * pass contract binds it as plain read-write storage, which both declarations match.
 */
export function atomicBinding(code: string, name: string): string {
  return retypeBinding(code, 'read_write', name, 'atomic<u32>');
}

/** `code` with storage binding `name` (declared array<u32> by header) declared as an array of `element`. */
export function retypeBinding(code: string, access: 'read' | 'read_write', name: string, element: string): string {
  const plain = `var<storage, ${access}> ${name}: array<u32>;`;
  if (!code.includes(plain)) throw new Error(`internal: no binding ${name}`);
  return code.replace(plain, `var<storage, ${access}> ${name}: array<${element}>;`);
}

/** Key suffix of a pass's variant using subgroup operations (the host picks it where the device has them). */
export const SUBGROUP_VARIANT = '+subgroups';

/**
 * Workgroup-wide inclusive prefix sum, for modules whose main runs WG threads: `decls` declares
 * `sums: array<u32, WG>` and `scanSums(lid, x, sg)`, which every thread calls in uniform control flow and after
 * which sums[j] = x of threads 0..j. With subgroups, each subgroup scans in registers and one thread scans the
 * subgroup totals (3 barriers); without, a Hillis-Steele scan in workgroup memory (2 log2(WG) barriers).
 * `enable` goes first in the module, `builtins` after main's parameters, `sg` is main's argument for `sg`.
 */
export function workgroupScan(subgroups: boolean): { enable: string; builtins: string; sg: string; decls: string } {
  if (!subgroups) {
    return {
      enable: '',
      builtins: '',
      sg: 'vec2<u32>(0u, 1u)',
      decls: `var<workgroup> sums: array<u32, WG>;
fn scanSums(lid: u32, x: u32, sg: vec2<u32>) {
  sums[lid] = x;
  for (var off = 1u; off < WG; off = off * 2u) {
    workgroupBarrier();
    var y = 0u;
    if (lid >= off) { y = sums[lid - off]; }
    workgroupBarrier();
    sums[lid] = sums[lid] + y;
  }
  workgroupBarrier();
}
`,
    };
  }
  // Subgroups are taken as runs of consecutive local indices (as on every implementation of 1D workgroups);
  // at least 4 invocations each, so WG / 4 totals.
  return {
    enable: 'enable subgroups;\n',
    builtins: ', @builtin(subgroup_invocation_id) sgi: u32, @builtin(subgroup_size) sgs: u32',
    sg: 'vec2<u32>(sgi, sgs)',
    decls: `var<workgroup> sums: array<u32, WG>;
var<workgroup> subTotals: array<u32, WG / 4u>;
fn scanSums(lid: u32, x: u32, sg: vec2<u32>) {
  let incl = subgroupExclusiveAdd(x) + x;
  if (sg.x == sg.y - 1u) { subTotals[lid / sg.y] = incl; }
  workgroupBarrier();
  if (lid == 0u) {
    var run = 0u;
    for (var k = 0u; k < WG / sg.y; k = k + 1u) {
      let t = subTotals[k];
      subTotals[k] = run;
      run = run + t;
    }
  }
  workgroupBarrier();
  sums[lid] = subTotals[lid / sg.y] + incl;
  workgroupBarrier();
}
`,
  };
}

/**
 * WGSL declaring `mine`, whose bit k says that row i = base + k * WG + lid (k < items <= 32) is below n and that
 * `keep` holds (a WGSL bool over what `openRow` declares for row i: by default its first word b = i * W_IN). On a whole tile the rows are written out one
 * by one: no branch between their loads, so they are all in flight at once (in a loop with a bounds check, the
 * H100 ran 1% selections 10% slower). A `keep` with a loop of its own (a search) stays in a loop, rather than be
 * copied `items` times.
 */
export function tileKeepMask(keep: string, items: number, keepLoops = false, openRow = 'let b = i * W_IN; '): string {
  const wholeTile = keepLoops
    ? ''
    : `if (base + TILE <= n) {
${Array.from({ length: items }, (_, k) => `    { let i = base + ${k}u * WG + lid; ${openRow}mine = mine | select(0u, ${2 ** k}u, ${keep}); }`).join('\n')}
  } else `;
  return `  var mine = 0u;
  ${wholeTile}{
    for (var k = 0u; k < ${items}u; k = k + 1u) {
      let i = base + k * WG + lid;
      var keep = false;
      if (i < n) {
        ${openRow}keep = ${keep};
      }
      mine = mine | select(0u, 1u << k, keep);
    }
  }`;
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

/**
 * Rows of `types` read as vectors: a row of W words as W / V loads of vec<V>u32 (V = 4, 2 or 1, the largest that
 * divides W), so a thread's row is one 16-byte load where it can be, not W strided 4-byte ones (which cost the
 * H100's L1 four times the requests). `load` declares the row's registers r0.. from row index i of `buffer`
 * (bound by `binding`), `column` reads a column from them.
 */
export function vectorRows(buffer: string, types: readonly ScalarType[]): { load: string; column: ColumnResolver; binding(code: string): string } {
  const W = types.reduce((n, t) => n + wordsOf(t), 0);
  const V = vectorWidth(W);
  const vec = vectorType(V);
  const load = Array.from({ length: W / V }, (_, q) => `let r${q} = ${buffer}[i * ${W / V}u + ${q}u];`).join(' ') + ' ';
  const column: ColumnResolver = (c) => {
    if (c < 0 || c >= types.length) throw new Error(`internal: column ${c} out of range (${types.length} columns)`);
    const offset = types.slice(0, c).reduce((n, t) => n + wordsOf(t), 0);
    return Array.from({ length: wordsOf(types[c]!) }, (_, w) => (V === 1 ? `r${offset + w}` : `r${Math.floor((offset + w) / V)}.${'xyzw'[(offset + w) % V]}`));
  };
  const binding = (code: string): string => retypeBinding(code, 'read', buffer, vec);
  return { load, column, binding };
}

/** Words of the vectors a row of W words moves as: the largest of 4, 2, 1 that divides W (so rows are whole vectors). */
export function vectorWidth(W: number): number {
  return W % 4 === 0 ? 4 : W % 2 === 0 ? 2 : 1;
}

/** WGSL type of a vector of V words. */
export function vectorType(V: number): string {
  return V === 1 ? 'u32' : `vec${V}<u32>`;
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

/**
 * WGSL value of `e`: a u32 (its bits) for one-word types, a vec2<u32> (lo, hi) for int64 and decimal.
 * Arithmetic calls helpers that `withArithHelpers` appends to the modules using them.
 */
export function exprValue(e: Expr, cols: ColumnResolver, constOffsets: ReadonlyMap<Expr, number>): string {
  if (e.kind === 'binary' && e.op === '*' && e.type === 'decimal') {
    // A decimal times a whole constant k (TPC-H Q1's p * 100) is exactly the 64-bit product by k: no division.
    const k = wholeDecimal(e.right);
    if (k !== undefined) return `mul64(${exprValue(e.left, cols, constOffsets)}, ${k})`;
    const j = wholeDecimal(e.left);
    if (j !== undefined) return `mul64(${exprValue(e.right, cols, constOffsets)}, ${j})`;
  }
  if (e.kind === 'binary') return arithCode(e.op, e.type, exprValue(e.left, cols, constOffsets), exprValue(e.right, cols, constOffsets));
  if (e.kind === 'call') {
    const table = builtinTable(e.fn);
    if (!table) return builtinCode(e.fn, e.args.map((a) => exprValue(a, cols, constOffsets)));
    const slot = constOffsets.get(e);
    if (slot === undefined) throw new Error(`internal: ${e.fn} call without a table`);
    return `${table === 'bits' ? 'tableBit' : 'tableWord'}(${slot}u, ${exprValue(e.args[0]!, cols, constOffsets)})`;
  }
  const words = exprWords(e, cols, constOffsets);
  return words.length === 1 ? words[0]! : `vec2<u32>(${words.join(', ')})`;
}

/**
 * The WGSL vec2 of k where `e` is the decimal constant k, a whole number (its value scaled by 10^4 a multiple of
 * 10^4): mulDec(a, k * 10^4) truncates nothing, and its low 64 bits are those of a * k.
 */
function wholeDecimal(e: Expr): string | undefined {
  if (e.kind !== 'const' || e.type !== 'decimal') return undefined;
  const scaled = BigInt(e.value as bigint | number);
  if (scaled % 10000n !== 0n) return undefined;
  const k = BigInt.asUintN(64, scaled / 10000n);
  return `vec2<u32>(${k & 0xffffffffn}u, ${k >> 32n}u)`;
}

/**
 * WGSL expressions for the words of `e`. `constOffsets` gives each constant its word offset in the uniform
 * and each table built-in call the index of its table in the pass's `tbl` binding.
 */
export function exprWords(e: Expr, cols: ColumnResolver, constOffsets: ReadonlyMap<Expr, number>): string[] {
  switch (e.kind) {
    case 'col':
      return cols(e.index);
    case 'const': {
      const offset = constOffsets.get(e);
      if (offset === undefined) throw new Error('internal: constant without a params slot');
      return constantWords(offset, e.type);
    }
    case 'binary':
    case 'call': {
      const v = exprValue(e, cols, constOffsets);
      return wordsOf(e.type) === 1 ? [v] : [`(${v}).x`, `(${v}).y`];
    }
  }
}

/** One arithmetic operation on WGSL values of `type` (see exprValue); semantics as `evalArith`. */
function arithCode(op: ArithOp, type: ScalarType, a: string, b: string): string {
  switch (type) {
    case 'int32':
    case 'uint32': {
      // Two's complement: +, - and * give the same bits signed or unsigned, wrapping.
      if (op === '+' || op === '-' || op === '*') return `(${a} ${op} ${b})`;
      const signed = type === 'int32' ? 'I32' : 'U32';
      return `${op === '/' ? 'div' : 'rem'}${signed}(${a}, ${b})`;
    }
    case 'float32': {
      const name = { '+': 'addF32', '-': 'subF32', '*': 'mulF32', '/': 'divF32', '%': undefined }[op];
      if (!name) throw new Error('internal: float32 has no %');
      return `${name}(${a}, ${b})`;
    }
    case 'int64':
    case 'decimal': {
      const name = {
        '+': 'add64',
        '-': 'sub64',
        '*': type === 'decimal' ? 'mulDec' : 'mul64',
        '/': type === 'decimal' ? 'divDec' : 'divI64',
        '%': 'remI64',
      }[op];
      return `${name}(${a}, ${b})`;
    }
    case 'string':
    case 'boolean':
    case 'date':
      throw new Error(`internal: arithmetic on ${type}`);
  }
}

/** A scalar built-in on WGSL values (see exprValue); semantics as `evalBuiltin`. */
function builtinCode(fn: BuiltinFn, [a, b]: string[]): string {
  const ext = (v: string) => `vec2<u32>(${v}, select(0u, 0xffffffffu, (${v} >> 31u) != 0u))`;
  switch (fn) {
    case 'date:year':
      return `civilDate(${a}).x`;
    case 'date:month':
      return `civilDate(${a}).y`;
    case 'date:day':
      return `civilDate(${a}).z`;
    case 'date:add_days':
      return `(${a} + ${b})`;
    case 'int32:from_int64':
    case 'uint32:from_int64':
      return `(${a}).x`;
    case 'int32:from_uint32':
    case 'uint32:from_int32':
      return a!;
    case 'int32:from_decimal':
      return `divI64(${a}, vec2<u32>(10000u, 0u)).x`;
    case 'int32:from_float32':
      return `f32ToI32(${a})`;
    case 'int64:from_int32':
      return ext(a!);
    case 'int64:from_uint32':
      return `vec2<u32>(${a}, 0u)`;
    case 'int64:from_decimal':
      return `divI64(${a}, vec2<u32>(10000u, 0u))`;
    case 'decimal:from_int32':
      return `mul64(${ext(a!)}, vec2<u32>(10000u, 0u))`;
    case 'decimal:from_int64':
      return `mul64(${a}, vec2<u32>(10000u, 0u))`;
    case 'float32:from_int32':
      return `canonF32(f32(bitcast<i32>(${a})))`;
    case 'int32:band':
      return `(${a} & ${b})`;
    case 'int32:bor':
      return `(${a} | ${b})`;
    case 'int32:bxor':
      return `(${a} ^ ${b})`;
    case 'int32:bshl':
      return `(${a} << (${b} & 31u))`;
    case 'int32:bshr':
      return `bitcast<u32>(bitcast<i32>(${a}) >> (${b} & 31u))`;
    case 'int32:bshru':
      return `(${a} >> (${b} & 31u))`;
    case 'int32:bnot':
      return `(~${a})`;
    case 'int32:land':
      return `select(0u, 1u, ${a} != 0u && ${b} != 0u)`;
    case 'int32:lor':
      return `select(0u, 1u, ${a} != 0u || ${b} != 0u)`;
    case 'int32:lxor':
      return `select(0u, 1u, (${a} != 0u) != (${b} != 0u))`;
    case 'int32:lnot':
      return `select(0u, 1u, ${a} == 0u)`;
    case 'string:length':
    case 'string:substring':
    case 'string:substr':
    case 'string:like':
    case 'string:startswith':
    case 'string:endswith':
    case 'string:byte_length':
    case 'string:contains':
    case 'string:matches':
    case 'string:to_int32':
      throw new Error(`internal: ${fn} is looked up in a table, not computed`);
  }
}

/** Arithmetic helpers by name: WGSL source and the helpers it calls. */
const ARITH_HELPERS: Record<string, { deps: string[]; code: string }> = {
  divI32: {
    deps: [],
    code: `fn divI32(a: u32, b: u32) -> u32 {
  if (b == 0u) { return 0u; }
  return bitcast<u32>(bitcast<i32>(a) / bitcast<i32>(b));
}`,
  },
  remI32: {
    deps: [],
    code: `fn remI32(a: u32, b: u32) -> u32 {
  if (b == 0u) { return 0u; }
  return bitcast<u32>(bitcast<i32>(a) % bitcast<i32>(b));
}`,
  },
  divU32: { deps: [], code: `fn divU32(a: u32, b: u32) -> u32 { return select(a / max(b, 1u), 0u, b == 0u); }` },
  remU32: { deps: [], code: `fn remU32(a: u32, b: u32) -> u32 { return select(a % max(b, 1u), 0u, b == 0u); }` },
  // -0 is stored as 0 so that equal values have equal words.
  canonF32: { deps: [], code: `fn canonF32(x: f32) -> u32 { return select(bitcast<u32>(x), 0u, x == 0.0); }` },
  addF32: { deps: ['canonF32'], code: `fn addF32(a: u32, b: u32) -> u32 { return canonF32(bitcast<f32>(a) + bitcast<f32>(b)); }` },
  subF32: { deps: ['canonF32'], code: `fn subF32(a: u32, b: u32) -> u32 { return canonF32(bitcast<f32>(a) - bitcast<f32>(b)); }` },
  mulF32: { deps: ['canonF32'], code: `fn mulF32(a: u32, b: u32) -> u32 { return canonF32(bitcast<f32>(a) * bitcast<f32>(b)); }` },
  divF32: {
    deps: ['canonF32'],
    code: `fn divF32(a: u32, b: u32) -> u32 {
  let y = bitcast<f32>(b);
  if (y == 0.0) { return 0u; }
  return canonF32(bitcast<f32>(a) / y);
}`,
  },
  add64: {
    deps: [],
    code: `fn add64(a: vec2<u32>, b: vec2<u32>) -> vec2<u32> {
  let lo = a.x + b.x;
  return vec2<u32>(lo, a.y + b.y + select(0u, 1u, lo < a.x));
}`,
  },
  neg64: { deps: ['add64'], code: `fn neg64(a: vec2<u32>) -> vec2<u32> { return add64(~a, vec2<u32>(1u, 0u)); }` },
  sub64: { deps: ['add64', 'neg64'], code: `fn sub64(a: vec2<u32>, b: vec2<u32>) -> vec2<u32> { return add64(a, neg64(b)); }` },
  // Unsigned 32 x 32 -> 64 product from 16-bit halves.
  mulWide: {
    deps: [],
    code: `fn mulWide(a: u32, b: u32) -> vec2<u32> {
  let a0 = a & 0xffffu;
  let a1 = a >> 16u;
  let b0 = b & 0xffffu;
  let b1 = b >> 16u;
  let p00 = a0 * b0;
  let p01 = a0 * b1;
  let p10 = a1 * b0;
  let mid = (p00 >> 16u) + (p01 & 0xffffu) + (p10 & 0xffffu);
  return vec2<u32>((p00 & 0xffffu) | (mid << 16u), a1 * b1 + (p01 >> 16u) + (p10 >> 16u) + (mid >> 16u));
}`,
  },
  mul64: {
    deps: ['mulWide'],
    code: `fn mul64(a: vec2<u32>, b: vec2<u32>) -> vec2<u32> {
  let p = mulWide(a.x, b.x);
  return vec2<u32>(p.x, p.y + a.x * b.y + a.y * b.x);
}`,
  },
  // 128-bit unsigned values are vec4<u32>, least significant word first.
  add128: {
    deps: [],
    code: `fn add128(a: vec4<u32>, b: vec4<u32>) -> vec4<u32> {
  let x = a.x + b.x;
  let c0 = select(0u, 1u, x < a.x);
  let y0 = a.y + b.y;
  let y = y0 + c0;
  let c1 = select(0u, 1u, y0 < a.y) + select(0u, 1u, y < y0);
  let z0 = a.z + b.z;
  let z = z0 + c1;
  let c2 = select(0u, 1u, z0 < a.z) + select(0u, 1u, z < z0);
  return vec4<u32>(x, y, z, a.w + b.w + c2);
}`,
  },
  mulU128: {
    deps: ['mulWide', 'add128'],
    code: `fn mulU128(a: vec2<u32>, b: vec2<u32>) -> vec4<u32> {
  let ll = mulWide(a.x, b.x);
  let lh = mulWide(a.x, b.y);
  let hl = mulWide(a.y, b.x);
  let hh = mulWide(a.y, b.y);
  let r = add128(vec4<u32>(ll.x, ll.y, hh.x, hh.y), vec4<u32>(0u, lh.x, lh.y, 0u));
  return add128(r, vec4<u32>(0u, hl.x, hl.y, 0u));
}`,
  },
  // Restoring long division, one quotient bit per step from n's highest nonzero word; d != 0. Divisors below
  // 2^16 (decimal scaling by 10^4, most averages) take divmodSmall instead: 8 native divisions, not 128 steps.
  divmodU128: {
    deps: ['add128', 'divmodSmall'],
    code: `struct DivMod128 { q: vec4<u32>, r: vec4<u32> }
fn shl128(a: vec4<u32>, bit: u32) -> vec4<u32> {
  return vec4<u32>((a.x << 1u) | bit, (a.y << 1u) | (a.x >> 31u), (a.z << 1u) | (a.y >> 31u), (a.w << 1u) | (a.z >> 31u));
}
fn geU128(a: vec4<u32>, b: vec4<u32>) -> bool {
  if (a.w != b.w) { return a.w > b.w; }
  if (a.z != b.z) { return a.z > b.z; }
  if (a.y != b.y) { return a.y > b.y; }
  return a.x >= b.x;
}
fn divmodU128(n: vec4<u32>, d: vec4<u32>) -> DivMod128 {
  if ((d.y | d.z | d.w) == 0u && d.x < 65536u) { return divmodSmall(n, d.x); }
  var q = vec4<u32>(0u);
  var r = vec4<u32>(0u);
  let negD = add128(~d, vec4<u32>(1u, 0u, 0u, 0u));
  // Steps above n's highest nonzero word would shift in zeros only.
  let top = select(select(select(31u, 63u, n.y != 0u), 95u, n.z != 0u), 127u, n.w != 0u);
  for (var i = top; i < 128u; i = i - 1u) {
    r = shl128(r, (n[i >> 5u] >> (i & 31u)) & 1u);
    q = shl128(q, 0u);
    if (geU128(r, d)) {
      r = add128(r, negD);
      q.x = q.x | 1u;
    }
  }
  return DivMod128(q, r);
}`,
  },
  // n / d and n % d for 0 < d < 2^16, by 16-bit digits: a remainder (< d) and the next digit fit one u32.
  divmodSmall: {
    deps: [],
    code: `fn divmodSmall(n: vec4<u32>, d: u32) -> DivMod128 {
  var q = vec4<u32>(0u);
  var r = 0u;
  for (var k = 3u; k < 4u; k = k - 1u) {
    let hi = (r << 16u) | (n[k] >> 16u);
    let qh = hi / d;
    r = hi - qh * d;
    let lo = (r << 16u) | (n[k] & 0xffffu);
    let ql = lo / d;
    r = lo - ql * d;
    q[k] = (qh << 16u) | ql;
  }
  return DivMod128(q, vec4<u32>(r, 0u, 0u, 0u));
}`,
  },
  // String built-ins look up the kernel's tables (constants.ts TableSpec; word k of tbl = table k's offset), bound
  // as group 1 by the passes that use them (passes.ts TABLES_GROUP).
  tables: { deps: [], code: `@group(${TABLES_GROUP}) @binding(0) var<storage, read> tbl: array<u32>;` },
  tableWord: { deps: ['tables'], code: `fn tableWord(k: u32, id: u32) -> u32 { return tbl[tbl[k] + id]; }` },
  tableBit: { deps: ['tables'], code: `fn tableBit(k: u32, id: u32) -> u32 { return (tbl[tbl[k] + (id >> 5u)] >> (id & 31u)) & 1u; }` },
  // Proleptic Gregorian (year, month, day) of a day number (days since 1970-01-01), after H. Hinnant.
  civilDate: {
    deps: [],
    code: `fn civilDate(d: u32) -> vec3<u32> {
  let z = bitcast<i32>(d) + 719468;
  let era = select(z, z - 146096, z < 0) / 146097;
  let doe = z - era * 146097;
  let yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
  let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
  let mp = (5 * doy + 2) / 153;
  let day = doy - (153 * mp + 2) / 5 + 1;
  let month = select(mp - 9, mp + 3, mp < 10);
  let year = yoe + era * 400 + select(0, 1, month <= 2);
  return vec3<u32>(bitcast<u32>(year), bitcast<u32>(month), bitcast<u32>(day));
}`,
  },
  // Truncation toward zero, saturating; NaN gives 0.
  f32ToI32: {
    deps: [],
    code: `fn f32ToI32(a: u32) -> u32 {
  let x = bitcast<f32>(a);
  if (x != x) { return 0u; }
  if (x >= 2147483647.0) { return 0x7fffffffu; }
  if (x <= -2147483648.0) { return 0x80000000u; }
  return bitcast<u32>(i32(x));
}`,
  },
  // Signed 128-bit values (aggregation accumulators): sign extension, negation, range check, 128 x 32 product.
  ext128: {
    deps: [],
    code: `fn ext128(a: vec2<u32>) -> vec4<u32> {
  let s = select(0u, 0xffffffffu, (a.y >> 31u) != 0u);
  return vec4<u32>(a.x, a.y, s, s);
}`,
  },
  fits64: {
    deps: [],
    code: `fn fits64(a: vec4<u32>) -> bool {
  let s = select(0u, 0xffffffffu, (a.y >> 31u) != 0u);
  return a.z == s && a.w == s;
}`,
  },
  neg128: { deps: ['add128'], code: `fn neg128(a: vec4<u32>) -> vec4<u32> { return add128(~a, vec4<u32>(1u, 0u, 0u, 0u)); }` },
  mul128Small: {
    deps: ['mulWide', 'add128'],
    code: `fn mul128Small(a: vec4<u32>, m: u32) -> vec4<u32> {
  let p0 = mulWide(a.x, m);
  let p1 = mulWide(a.y, m);
  let p2 = mulWide(a.z, m);
  let p3 = mulWide(a.w, m);
  return add128(vec4<u32>(p0.x, p0.y, p2.x, p2.y), vec4<u32>(0u, p1.x, p1.y, p3.x));
}`,
  },
  // Decimal average of a signed 128-bit sum (scaled by 10^4 first for integer sums), truncated toward zero:
  // (lo, hi, 1 when the quotient does not fit 64 bits).
  avgDec: {
    deps: ['neg128', 'mul128Small', 'divmodU128'],
    code: `fn avgDec(sum: vec4<u32>, count: u32, scale: bool) -> vec3<u32> {
  let neg = (sum.w >> 31u) != 0u;
  var a = select(sum, neg128(sum), neg);
  if (scale) { a = mul128Small(a, 10000u); }
  let q = divmodU128(a, vec4<u32>(count, 0u, 0u, 0u)).q;
  let over = q.z != 0u || q.w != 0u || (q.y >> 31u) != 0u;
  let r = select(q, neg128(q), neg);
  return vec3<u32>(r.x, r.y, select(0u, 1u, over));
}`,
  },
  abs64: {
    deps: ['neg64'],
    code: `fn isNeg64(a: vec2<u32>) -> bool { return (a.y >> 31u) != 0u; }
fn abs64(a: vec2<u32>) -> vec2<u32> { return select(a, neg64(a), isNeg64(a)); }`,
  },
  divI64: {
    deps: ['abs64', 'divmodU128'],
    code: `fn divI64(a: vec2<u32>, b: vec2<u32>) -> vec2<u32> {
  if (b.x == 0u && b.y == 0u) { return vec2<u32>(0u); }
  let q = divmodU128(vec4<u32>(abs64(a), 0u, 0u), vec4<u32>(abs64(b), 0u, 0u)).q.xy;
  return select(q, neg64(q), isNeg64(a) != isNeg64(b));
}`,
  },
  remI64: {
    deps: ['abs64', 'divmodU128'],
    code: `fn remI64(a: vec2<u32>, b: vec2<u32>) -> vec2<u32> {
  if (b.x == 0u && b.y == 0u) { return vec2<u32>(0u); }
  let r = divmodU128(vec4<u32>(abs64(a), 0u, 0u), vec4<u32>(abs64(b), 0u, 0u)).r.xy;
  return select(r, neg64(r), isNeg64(a));
}`,
  },
  // Decimals are scaled by 10^4: a * b / 10^4 and a * 10^4 / b, exact through 128 bits, truncated toward zero.
  // The division by 10^4 takes 16-bit digits with a constant divisor, which compilers turn into multiplications
  // (divmodU128's path divides by a run-time value: TPC-H Q1's four products a row cost more than its reads), of
  // the product's nonzero words only; operands whose magnitudes fit 32 bits (prices, rates) take one of mulU128's
  // four partial products, a product of one such operand two.
  mulDec: {
    deps: ['abs64', 'mulU128', 'div10k'],
    code: `fn mulDec(a: vec2<u32>, b: vec2<u32>) -> vec2<u32> {
  // Non-negative operands (most: prices, rates) need no magnitudes nor a negated quotient.
  if (((a.y | b.y) >> 31u) == 0u) { return mulDecMagnitudes(a, b); }
  let q = mulDecMagnitudes(abs64(a), abs64(b));
  return select(q, neg64(q), isNeg64(a) != isNeg64(b));
}
fn mulDecMagnitudes(a: vec2<u32>, b: vec2<u32>) -> vec2<u32> {
  // y: the operand with the smaller high word.
  let small = a.y < b.y;
  let x = select(a, b, small);
  let y = select(b, a, small);
  // A rate (y below 2^16: 1 - discount, 1 + tax) times x below 2^48: three 16 x 32-bit partial products, exact in
  // 64 bits.
  if (y.y == 0u && y.x < 65536u && x.y < 65536u) {
    let a0 = (x.x & 0xffffu) * y.x;
    let a1 = (x.x >> 16u) * y.x;
    let lo = a0 + (a1 << 16u);
    let q1 = divTop10k((a1 >> 16u) + x.y * y.x + select(0u, 1u, lo < a0));
    return vec2<u32>(divDigits10k(q1.y, lo).x, q1.x);
  }
  if (x.y == 0u) {
    let p = mulWide(x.x, y.x);
    let q1 = divTop10k(p.y);
    return vec2<u32>(divDigits10k(q1.y, p.x).x, q1.x);
  }
  if (y.y == 0u) {
    let ll = mulWide(x.x, y.x);
    let hl = mulWide(x.y, y.x);
    let mid = ll.y + hl.x;
    let q2 = divTop10k(hl.y + select(0u, 1u, mid < ll.y));
    let q1 = divDigits10k(q2.y, mid);
    return vec2<u32>(divDigits10k(q1.y, ll.x).x, q1.x);
  }
  return div10k(mulU128(x, y));
}`,
  },
  // The low 64 bits of n / 10^4, one word at a time from the top (divTop10k: the top word, (quotient, remainder);
  // divDigits10k: remainder r < 10^4 carried in), by 16-bit digits: the remainder and the next digit fit a u32.
  div10k: {
    deps: [],
    code: `fn divTop10k(w: u32) -> vec2<u32> {
  let q = w / 10000u;
  return vec2<u32>(q, w - q * 10000u);
}
fn divDigits10k(r: u32, w: u32) -> vec2<u32> {
  let hi = (r << 16u) | (w >> 16u);
  let qh = hi / 10000u;
  let lo = ((hi - qh * 10000u) << 16u) | (w & 0xffffu);
  let ql = lo / 10000u;
  return vec2<u32>((qh << 16u) | ql, lo - ql * 10000u);
}
fn div10k(n: vec4<u32>) -> vec2<u32> {
  let q3 = divTop10k(n.w);
  let q2 = divDigits10k(q3.y, n.z);
  let q1 = divDigits10k(q2.y, n.y);
  return vec2<u32>(divDigits10k(q1.y, n.x).x, q1.x);
}`,
  },
  divDec: {
    deps: ['abs64', 'mulU128', 'divmodU128'],
    code: `fn divDec(a: vec2<u32>, b: vec2<u32>) -> vec2<u32> {
  if (b.x == 0u && b.y == 0u) { return vec2<u32>(0u); }
  let q = divmodU128(mulU128(abs64(a), vec2<u32>(10000u, 0u)), vec4<u32>(abs64(b), 0u, 0u)).q.xy;
  return select(q, neg64(q), isNeg64(a) != isNeg64(b));
}`,
  },
};

/** Appends the arithmetic helpers `src` calls (and theirs); WGSL functions may be declared after use. */
export function withArithHelpers(src: string): string {
  const needed = new Set<string>();
  const visit = (name: string): void => {
    if (needed.has(name)) return;
    needed.add(name);
    for (const d of ARITH_HELPERS[name]!.deps) visit(d);
  };
  for (const name of Object.keys(ARITH_HELPERS)) if (new RegExp(`\\b${name}\\(`).test(src)) visit(name);
  if (needed.size === 0) return src;
  // Declaration order of the table keeps the output deterministic.
  const code = Object.keys(ARITH_HELPERS).filter((n) => needed.has(n)).map((n) => ARITH_HELPERS[n]!.code);
  return `${src}\n// arithmetic helpers\n${code.join('\n')}\n`;
}

/**
 * Typed comparison: int32 and date signed, uint32, boolean and string (dictionary ids) unsigned, float32 as
 * f32, int64 and decimal signed 64-bit.
 */
export function compareCode(op: CompareOp, type: ScalarType, a: string[], b: string[]): string {
  const wop = op === '=' ? '==' : op;
  switch (type) {
    case 'int32':
    case 'date':
      return `(bitcast<i32>(${a[0]}) ${wop} bitcast<i32>(${b[0]}))`;
    case 'uint32':
    case 'boolean':
    case 'string':
      return `(${a[0]} ${wop} ${b[0]})`;
    case 'float32':
      return `(bitcast<f32>(${a[0]}) ${wop} bitcast<f32>(${b[0]}))`;
    case 'int64':
    case 'decimal':
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
      if (p.kind === 'any') return `(${p.alternatives.map((alt) => `(${filterCode(alt, cols, constOffsets)})`).join(' || ')})`;
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

/** The countClamp pass (PASS_LAYOUTS.countClamp): any kernel's driver may add it to its passes. */
export const COUNT_CLAMP = `${header('countClamp', ['data'])}
${threadMain(`  if (i == 0u) { data[u[0].z] = min(u[0].x, u[0].y); }`)}`;

/** The appendRows pass (PASS_LAYOUTS.appendRows): parts with pending counts concatenated without a host sync. */
export const APPEND_ROWS = `${header('appendRows', ['input', 'output'])}
${threadMain(`  if (i < u[0].x * u[0].z) { output[u[0].y * u[0].z + i] = input[i]; }
  if (i == 0u) { output[u[0].w] = u[0].y + u[0].x; }`)}`;
