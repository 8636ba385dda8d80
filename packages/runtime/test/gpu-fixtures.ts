/** Test helpers for the GPU kernel tests: seeded data, word encoding and plain-JS reference operators. */
import { wordsOf, type CompareOp, type Expr, type Predicate, type ScalarType } from '@vixen/queryplan';

/** Test rows: int32 -> number, int64 -> bigint, string -> its dictionary id (number). */
export type TestValue = number | bigint;
export type TestRow = TestValue[];

/** mulberry32: small seeded PRNG so failures reproduce. */
export function rng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** Values from a small domain (so joins/duplicates happen) with sign and word-boundary extremes mixed in. */
export function randomValue(r: () => number, type: ScalarType, domain: number): TestValue {
  const small = Math.floor(r() * domain) - Math.floor(domain / 2);
  switch (type) {
    case 'int32': {
      const x = r();
      if (x < 0.05) return -2147483648;
      if (x < 0.1) return 2147483647;
      return small;
    }
    case 'int64': {
      const x = r();
      if (x < 0.1) return BigInt(small) * 4294967296n + BigInt(Math.floor(r() * 4)); // hi words vary, > 2^32
      if (x < 0.15) return -(2n ** 63n);
      if (x < 0.2) return 2n ** 63n - 1n;
      return BigInt(small);
    }
    case 'string': {
      const x = r();
      if (x < 0.05) return 0xfffffff0 + Math.floor(r() * 8); // ids above 2^31: unsigned compare matters
      return Math.floor(r() * domain);
    }
    default:
      throw new Error(`test fixtures do not generate ${type}`);
  }
}

export function randomRows(r: () => number, types: readonly ScalarType[], n: number, domain: number): TestRow[] {
  return Array.from({ length: n }, () => types.map((t) => randomValue(r, t, domain)));
}

export function valueWords(type: ScalarType, v: TestValue): number[] {
  switch (type) {
    case 'int32':
      return [Number(v) >>> 0];
    case 'string':
      return [Number(v) >>> 0];
    case 'int64': {
      const u = BigInt.asUintN(64, BigInt(v));
      return [Number(u & 0xffffffffn), Number(u >> 32n)];
    }
    default:
      throw new Error(`test fixtures do not encode ${type}`);
  }
}

export function rowWordsOf(types: readonly ScalarType[], row: TestRow): number[] {
  return types.flatMap((t, i) => valueWords(t, row[i]!));
}

export function encode(types: readonly ScalarType[], rows: readonly TestRow[]): Uint32Array {
  return Uint32Array.from(rows.flatMap((r) => rowWordsOf(types, r)));
}

/** The first `rows` rows of `width` words as strings, sorted: outputs compared whatever their row order. */
export function sortedRows(words: readonly number[] | Uint32Array, width: number, rows = words.length / width): string[] {
  return Array.from({ length: rows }, (_, r) => words.slice(r * width, (r + 1) * width).join(',')).sort();
}

export function compareWords(a: readonly number[], b: readonly number[]): number {
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return a[i]! < b[i]! ? -1 : 1;
  return 0;
}

export function keyWords(types: readonly ScalarType[], row: TestRow, keys: readonly number[]): number[] {
  return keys.flatMap((k) => valueWords(types[k]!, row[k]!));
}

/** Stable sort by the key words (unsigned lexicographic), as the GPU sort orders rows. */
export function sortByKeys(types: readonly ScalarType[], rows: readonly TestRow[], keys: readonly number[]): TestRow[] {
  return rows
    .map((row, i) => ({ row, i, k: keyWords(types, row, keys) }))
    .sort((x, y) => compareWords(x.k, y.k) || x.i - y.i)
    .map((x) => x.row);
}

/** Sorted by all words and duplicate-free: the canonical form of a KIR relation variable. */
export function canonical(types: readonly ScalarType[], rows: readonly TestRow[]): TestRow[] {
  const all = types.map((_, i) => i);
  const sorted = sortByKeys(types, rows, all);
  return sorted.filter((row, i) => i === 0 || compareWords(rowWordsOf(types, row), rowWordsOf(types, sorted[i - 1]!)) !== 0);
}

/** String constants are written `s<id>` in test kernels. */
export function constValue(e: Extract<Expr, { kind: 'const' }>): TestValue {
  if (e.type === 'string') return Number(String(e.value).slice(1));
  return e.type === 'int64' ? BigInt(e.value) : Number(e.value);
}

export function constWords(consts: ReadonlyArray<Extract<Expr, { kind: 'const' }>>): Uint32Array {
  return Uint32Array.from(consts.flatMap((c) => valueWords(c.type, constValue(c))));
}

export function evalExpr(e: Expr, row: TestRow): TestValue {
  if (e.kind === 'binary' || e.kind === 'call') throw new Error('test fixtures do not evaluate arithmetic or built-ins');
  return e.kind === 'col' ? row[e.index]! : constValue(e);
}

function compareTyped(op: CompareOp, a: TestValue, b: TestValue): boolean {
  switch (op) {
    case '=':
      return a === b;
    case '!=':
      return a !== b;
    case '<':
      return a < b;
    case '<=':
      return a <= b;
    case '>':
      return a > b;
    case '>=':
      return a >= b;
  }
}

export function passes(filter: readonly Predicate[], row: TestRow): boolean {
  return filter.every((p) =>
    p.kind === 'any' ? p.alternatives.some((alt) => passes(alt, row)) : compareTyped(p.op, evalExpr(p.left, row), evalExpr(p.right, row)),
  );
}

export function projectWords(project: readonly Expr[], row: TestRow): number[] {
  return project.flatMap((e) => valueWords(e.type, evalExpr(e, row)));
}

export function projectedWidth(project: readonly Expr[]): number {
  return project.reduce((n, e) => n + wordsOf(e.type), 0);
}
