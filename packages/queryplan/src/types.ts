/**
 * Scalar types and run-time values shared by every stage.
 * The foundation slice carries int32, int64 and string; the full dialect adds the rest of LANGUAGE.md.
 */
export type ScalarType = 'int32' | 'int64' | 'string';

export const SCALAR_TYPES: readonly ScalarType[] = ['int32', 'int64', 'string'];

/** JS representation: int32 -> number, int64 -> bigint, string -> string. */
export type Value = number | bigint | string;
export type Row = Value[];

/** Words (u32) one value of the type takes on the device. */
export function wordsOf(type: ScalarType): number {
  switch (type) {
    case 'int32':
    case 'string':
      return 1;
    case 'int64':
      return 2;
  }
}

export function rowWords(types: readonly ScalarType[]): number {
  return types.reduce((n, t) => n + wordsOf(t), 0);
}

/** Typed total order used for printing: numbers numerically, strings by code unit. */
export function compareValues(a: Value, b: Value): number {
  if (typeof a === 'string' && typeof b === 'string') return a < b ? -1 : a > b ? 1 : 0;
  const x = typeof a === 'bigint' ? a : BigInt(a as number);
  const y = typeof b === 'bigint' ? b : BigInt(b as number);
  return x < y ? -1 : x > y ? 1 : 0;
}

export function compareRows(a: readonly Value[], b: readonly Value[]): number {
  for (let i = 0; i < a.length; i++) {
    const c = compareValues(a[i]!, b[i]!);
    if (c !== 0) return c;
  }
  return a.length - b.length;
}

export function formatValue(v: Value): string {
  return typeof v === 'bigint' ? v.toString() : String(v);
}
