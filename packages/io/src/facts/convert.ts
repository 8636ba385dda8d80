/**
 * Field text to typed values, as every facts loader converts them (file.ts, and the byte parser of parse-range.ts
 * for fields outside its fast forms).
 */
import { parseDate, parseDecimal, parseFloat32, valueHasType, type Column, type Value } from '@vixen/queryplan';

const INTEGER = /^[+-]?\d+$/;
/** A character code that may be white space to `trim` (ASCII controls and space, or past ASCII). */
const blankOrWide = (c: number): boolean => c <= 32 || c >= 127;

/**
 * The common short decimal form, at most 11 integer and 4 fractional digits, as a safe integer scaled by 10^4
 * (parseDecimal agrees on it); undefined for any other text. Character codes, not a regex: loaders call this
 * for every decimal field.
 */
export function shortDecimal(t: string): number | undefined {
  const n = t.length;
  const sign = t.charCodeAt(0);
  let i = sign === 45 || sign === 43 ? 1 : 0;
  const intStart = i;
  let v = 0;
  for (; i < n; i++) {
    const d = t.charCodeAt(i) - 48;
    if (d < 0 || d > 9) break;
    v = v * 10 + d;
  }
  const intDigits = i - intStart;
  if (intDigits < 1 || intDigits > 11) return undefined;
  let scale = 10_000;
  if (i < n) {
    if (t.charCodeAt(i) !== 46 || n - i - 1 < 1 || n - i - 1 > 4) return undefined;
    for (i++; i < n; i++) {
      const d = t.charCodeAt(i) - 48;
      if (d < 0 || d > 9) return undefined;
      v = v * 10 + d;
      scale /= 10;
    }
  }
  v *= scale;
  // `+ 0` turns -0 into 0.
  return (sign === 45 ? -v : v) + 0;
}

/**
 * The typed value of one field, or a reason it is not one. Non-string fields may have surrounding blanks.
 * Dates are YYYY-MM-DD, booleans true/false (or 1/0), decimals exact in 4 fractional digits.
 */
export function convert(text: string, col: Column): Value | { problem: string } {
  // Most fields have no blanks around them; trimming each would copy it.
  const t = text.length > 0 && (blankOrWide(text.charCodeAt(0)) || blankOrWide(text.charCodeAt(text.length - 1))) ? text.trim() : text;
  switch (col.type) {
    case 'string':
      return text;
    case 'int32':
    case 'uint32':
    case 'int64': {
      if (!INTEGER.test(t)) return { problem: '' };
      // Up to 15 characters the number is a safe integer, and encodeValue splits it without BigInt.
      if (col.type === 'int64' && t.length <= 15) return Number(t) + 0;
      // `+ 0` turns -0 into 0.
      const v = col.type === 'int64' ? BigInt(t) : Number(t) + 0;
      return valueHasType(col.type, v) ? v : { problem: ' (out of range)' };
    }
    case 'float32':
      return parseFloat32(t) ?? { problem: '' };
    case 'decimal': {
      const short = shortDecimal(t);
      if (short !== undefined) return short;
      const v = parseDecimal(t);
      if (v === undefined) return { problem: /^[+-]?\d+\.\d+$/.test(t) ? ' (more than 4 fractional digits)' : '' };
      return valueHasType('decimal', v) ? v : { problem: ' (out of range)' };
    }
    case 'boolean':
      return t === 'true' || t === '1' ? true : t === 'false' || t === '0' ? false : { problem: '' };
    case 'date': {
      const v = parseDate(t);
      if (v !== undefined) return v;
      if (/^\d{4}-\d{2}-\d{2}$/.test(t)) return { problem: ' (no such day)' };
      return { problem: /^[+-]?\d+-\d{2}-\d{2}$/.test(t) ? ' (out of range: years 0000 to 9999)' : ' (expected YYYY-MM-DD)' };
    }
  }
}

/** A field's text for a message, cut short when long (a 10 MB field must not become a 10 MB message). */
export function quoted(text: string): string {
  return text.length <= 80 ? JSON.stringify(text) : `${JSON.stringify(text.slice(0, 40))}... (${text.length} characters)`;
}
