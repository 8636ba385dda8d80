/**
 * Scalar types and run-time values shared by every stage.
 */
export type ScalarType = 'int32' | 'int64' | 'uint32' | 'float32' | 'decimal' | 'string' | 'boolean' | 'date';

export const SCALAR_TYPES: readonly ScalarType[] = ['int32', 'int64', 'uint32', 'float32', 'decimal', 'string', 'boolean', 'date'];

/**
 * JS representation, exact for every type: int32, uint32, float32 (an exact f32 value, never -0) and date
 * (days since 1970-01-01) -> number; int64 and decimal (fixed point scaled by 10^4) -> bigint;
 * string -> string; boolean -> boolean. Printing a decimal or date needs its type: see `formatValue`.
 */
export type Value = number | bigint | string | boolean;
export type Row = Value[];

/** Decimal fixed point: values are integers scaled by 10^DECIMAL_DIGITS. */
export const DECIMAL_DIGITS = 4;
export const DECIMAL_SCALE = 10n ** BigInt(DECIMAL_DIGITS);

/** Words (u32) one value of the type takes on the device. */
export function wordsOf(type: ScalarType): number {
  switch (type) {
    case 'int32':
    case 'uint32':
    case 'float32':
    case 'string':
    case 'boolean':
    case 'date':
      return 1;
    case 'int64':
    case 'decimal':
      return 2;
  }
}

export function rowWords(types: readonly ScalarType[]): number {
  return types.reduce((n, t) => n + wordsOf(t), 0);
}

/** Typed total order used for printing: numbers numerically, strings by code unit, false < true. */
export function compareValues(a: Value, b: Value): number {
  if (typeof a === 'number' && typeof b === 'number') return a < b ? -1 : a > b ? 1 : 0;
  if (typeof a === 'string' && typeof b === 'string') return a < b ? -1 : a > b ? 1 : 0;
  if (typeof a === 'boolean' && typeof b === 'boolean') return Number(a) - Number(b);
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

/**
 * Text of a value as results print it. With its type: dates as YYYY-MM-DD, decimals with the fewest exact
 * digits (19.9900 -> 19.99), float32 as the shortest text that reads back to the same f32. Without a type,
 * the JS value as it is (enough for int32, int64, uint32, string and boolean).
 */
export function formatValue(v: Value, type?: ScalarType): string {
  switch (type) {
    case 'date':
      return formatDate(v as number);
    case 'decimal':
      return formatDecimal(v as bigint);
    case 'float32':
      return formatFloat32(v as number);
    default:
      return typeof v === 'bigint' ? v.toString() : String(v);
  }
}

/** `19.99` for 199900n: the exact value with trailing fractional zeros dropped. */
export function formatDecimal(scaled: bigint): string {
  const sign = scaled < 0n ? '-' : '';
  const abs = scaled < 0n ? -scaled : scaled;
  const frac = (abs % DECIMAL_SCALE).toString().padStart(DECIMAL_DIGITS, '0').replace(/0+$/, '');
  return `${sign}${abs / DECIMAL_SCALE}${frac === '' ? '' : `.${frac}`}`;
}

/** The shortest decimal text that `Math.fround(Number(text))` maps back to `x`. */
export function formatFloat32(x: number): string {
  if (!Number.isFinite(x) || Number.isInteger(x) && Math.abs(x) < 2 ** 24) return String(x);
  for (let p = 1; p < 17; p++) {
    const s = x.toPrecision(p);
    if (Math.fround(Number(s)) === x) return String(Number(s));
  }
  return String(x);
}

const MS_PER_DAY = 86_400_000;

/** YYYY-MM-DD of a day number (days since 1970-01-01, proleptic Gregorian). */
export function formatDate(days: number): string {
  const d = new Date(days * MS_PER_DAY);
  const y = d.getUTCFullYear();
  const year = y < 0 ? `-${String(-y).padStart(4, '0')}` : String(y).padStart(4, '0');
  return `${year}-${String(d.getUTCMonth() + 1).padStart(2, '0')}-${String(d.getUTCDate()).padStart(2, '0')}`;
}

/** Day number of a `YYYY-MM-DD` date, or undefined when the text is not a real calendar date. */
export function parseDate(text: string): number | undefined {
  const m = /^(\d{4})-(\d{2})-(\d{2})$/.exec(text);
  if (!m) return undefined;
  const [y, mo, d] = [Number(m[1]), Number(m[2]), Number(m[3])];
  const ms = Date.UTC(y, mo - 1, d);
  const back = new Date(ms);
  // Date.UTC maps years 0..99 to 1900..1999; setUTCFullYear undoes that.
  back.setUTCFullYear(y);
  if (back.getUTCFullYear() !== y || back.getUTCMonth() !== mo - 1 || back.getUTCDate() !== d) return undefined;
  return Math.round(back.getTime() / MS_PER_DAY);
}

const DECIMAL_TEXT = /^([+-]?)(\d+)(?:\.(\d+))?$/;

/** Scaled value of decimal text (`-19.99` -> -199900n); undefined when malformed or not exact in 4 digits. */
export function parseDecimal(text: string): bigint | undefined {
  const m = DECIMAL_TEXT.exec(text);
  if (!m) return undefined;
  const frac = (m[3] ?? '').replace(/0+$/, '');
  if (frac.length > DECIMAL_DIGITS) return undefined;
  const v = BigInt(m[2]!) * DECIMAL_SCALE + BigInt(frac.padEnd(DECIMAL_DIGITS, '0'));
  return m[1] === '-' ? -v : v;
}

/** The float32 value of decimal/exponent text (rounded to nearest f32, -0 as 0); undefined when malformed. */
export function parseFloat32(text: string): number | undefined {
  if (!/^[+-]?(\d+(\.\d*)?|\.\d+)([eE][+-]?\d+)?$/.test(text.trim())) return undefined;
  const v = Math.fround(Number(text)) + 0;
  return Number.isFinite(v) ? v : undefined;
}
