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

/** Value of the ASCII digits text[from..to), or -1 when one is not a digit. */
function digitsAt(text: string, from: number, to: number): number {
  let v = 0;
  for (let i = from; i < to; i++) {
    const d = text.charCodeAt(i) - 48;
    if (d < 0 || d > 9) return -1;
    v = v * 10 + d;
  }
  return v;
}

const MONTH_DAYS = [31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31];

/**
 * Day number of a `YYYY-MM-DD` date, or undefined when the text is not a real calendar date. Integer arithmetic
 * (days from civil, proleptic Gregorian) instead of Date objects: loaders call this for every date field.
 */
export function parseDate(text: string): number | undefined {
  if (text.length !== 10 || text.charCodeAt(4) !== 45 || text.charCodeAt(7) !== 45) return undefined;
  const y = digitsAt(text, 0, 4);
  const m = digitsAt(text, 5, 7);
  const d = digitsAt(text, 8, 10);
  if (y < 0 || m < 1 || m > 12 || d < 1) return undefined;
  const leap = y % 4 === 0 && (y % 100 !== 0 || y % 400 === 0);
  if (d > MONTH_DAYS[m - 1]! + (m === 2 && leap ? 1 : 0)) return undefined;
  // Years start in March, so the leap day ends a year; 146097 days per 400-year era, 719468 from 0000-03-01.
  const yy = m <= 2 ? y - 1 : y;
  const era = Math.floor(yy / 400);
  const yoe = yy - era * 400;
  const doy = Math.floor((153 * (m > 2 ? m - 3 : m + 9) + 2) / 5) + d - 1;
  return era * 146097 + yoe * 365 + Math.floor(yoe / 4) - Math.floor(yoe / 100) + doy - 719468;
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
