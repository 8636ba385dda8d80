import { describe, expect, it } from 'vitest';
import {
  evalArith,
  formatDate,
  formatDecimal,
  formatFloat32,
  formatValue,
  parseDate,
  parseDecimal,
  parseFloat32,
  printConst,
  valueHasType,
} from '../src/index.js';

describe('typed values', () => {
  it('decimals parse exactly and print with the fewest digits', () => {
    expect(parseDecimal('19.99')).toBe(199900n);
    expect(parseDecimal('-0.0001')).toBe(-1n);
    expect(parseDecimal('5.00000')).toBe(50000n);
    expect(parseDecimal('1.00001')).toBeUndefined();
    expect(parseDecimal('1e3')).toBeUndefined();
    expect(formatDecimal(199900n)).toBe('19.99');
    expect(formatDecimal(50000n)).toBe('5');
    expect(formatDecimal(-1n)).toBe('-0.0001');
    expect(formatDecimal(-12345n)).toBe('-1.2345');
  });

  it('dates are days since 1970-01-01 and reject impossible dates', () => {
    expect(parseDate('1970-01-01')).toBe(0);
    expect(parseDate('1969-12-31')).toBe(-1);
    expect(parseDate('2024-02-29')).toBe(19782);
    expect(parseDate('2023-02-29')).toBeUndefined();
    expect(parseDate('2024-13-01')).toBeUndefined();
    expect(parseDate('24-01-01')).toBeUndefined();
    for (const d of ['0001-01-01', '1900-02-28', '2000-02-29', '9999-12-31']) expect(formatDate(parseDate(d)!)).toBe(d);
    // Proleptic Gregorian leap rules: year 0 and 2000 are leap years, 1900 is not.
    expect(parseDate('0000-02-29')).toBe(parseDate('0000-03-01')! - 1);
    expect(parseDate('1900-02-29')).toBeUndefined();
    for (const t of [' 1994-01-01', '1994-1-01', '1994/01/01', '1994-01-0a', '+994-01-01', '1994-04-31', '1994-00-10', '1994-01-00']) {
      expect(parseDate(t)).toBeUndefined();
    }
  });

  it('days from 0000-01-01 to 9999-12-31 read back from their text', () => {
    const first = parseDate('0000-01-01')!;
    const last = parseDate('9999-12-31')!;
    // Every day of 1890..2110 (no gaps or repeats at month or year ends), a stride of 13 days elsewhere.
    const dense = [parseDate('1890-01-01')!, parseDate('2110-12-31')!];
    const wrong: number[] = [];
    for (let day = first; day <= last; day += day >= dense[0]! && day <= dense[1]! ? 1 : 13) {
      if (parseDate(formatDate(day)) !== day) wrong.push(day);
    }
    expect(wrong).toEqual([]);
  });

  it('float32 prints the shortest text that reads back to the same f32', () => {
    expect(formatFloat32(Math.fround(0.1))).toBe('0.1');
    expect(formatFloat32(Math.fround(0.1) + Math.fround(0.2))).not.toBe('0.3');
    expect(formatFloat32(Math.fround(3.4028235e38))).toBe('3.4028235e+38');
    expect(formatFloat32(16777216)).toBe('16777216');
    expect(parseFloat32('-0')).toBe(0);
    expect(Object.is(parseFloat32('-0'), -0)).toBe(false);
    expect(parseFloat32('1e39')).toBeUndefined();
    expect(valueHasType('float32', 0.1)).toBe(false);
    expect(valueHasType('float32', Math.fround(0.1))).toBe(true);
  });

  it('formats by type, and literals print as the source writes them', () => {
    expect(formatValue(199900n, 'decimal')).toBe('19.99');
    expect(formatValue(199900n, 'int64')).toBe('199900');
    expect(formatValue(0, 'date')).toBe('1970-01-01');
    expect(formatValue(true, 'boolean')).toBe('true');
    expect(printConst('decimal', 199900n)).toBe('19.99d');
    expect(printConst('uint32', 7)).toBe('7u');
    expect(printConst('date', 0)).toBe('date:parse["1970-01-01"]');
  });

  it('arithmetic wraps, truncates and rescales', () => {
    expect(evalArith('+', 'int32', 2147483647, 1)).toBe(-2147483648);
    expect(evalArith('/', 'int32', -7, 2)).toBe(-3);
    expect(evalArith('%', 'int32', -7, 2)).toBe(-1);
    expect(evalArith('-', 'uint32', 0, 1)).toBe(4294967295);
    expect(evalArith('*', 'int64', 2n ** 62n, 4n)).toBe(0n);
    expect(evalArith('/', 'int64', -(2n ** 63n), -1n)).toBe(-(2n ** 63n));
    expect(evalArith('*', 'decimal', 199900n, 9500n)).toBe(189905n);
    expect(evalArith('*', 'decimal', -25000n, 6667n)).toBe(-16667n);
    expect(evalArith('/', 'decimal', 10000n, 30000n)).toBe(3333n);
    expect(evalArith('+', 'float32', Math.fround(16777216), 1)).toBe(16777216);
    expect(Object.is(evalArith('*', 'float32', -1, 0), 0)).toBe(true);
  });
});
