/**
 * Aggregate semantics shared by the type checks, the reference interpreter and the device kernels' tests.
 * - count() is int32.
 * - sum keeps its argument's type and wraps like `+` (int32, uint32, int64; float32 rounds after every
 *   addition, in row order), except decimal: decimal sums are exact and a sum outside the 64-bit decimal
 *   range is a run-time error.
 * - min and max work on every type (strings by text, false < true).
 * - avg of an integer or decimal is a decimal (exact sum / count, truncated toward zero; out of range is a
 *   run-time error); avg of float32 is float32 (sum / count rounded to f32).
 */
import type { AggregateFn } from './ir.js';
import { evalArith } from './arith.js';
import { VixenError } from './diagnostics.js';
import { compareValues, DECIMAL_SCALE, type ScalarType, type Value } from './types.js';

export const AGGREGATE_FNS: readonly AggregateFn[] = ['count', 'sum', 'min', 'max', 'avg'];

const SUMMABLE: ReadonlySet<ScalarType> = new Set(['int32', 'int64', 'uint32', 'float32', 'decimal']);

/** Result type of `fn` over values of `arg` (undefined for count), or undefined when `fn` does not apply. */
export function aggregateType(fn: AggregateFn, arg: ScalarType | undefined): ScalarType | undefined {
  switch (fn) {
    case 'count':
      return 'int32';
    case 'min':
    case 'max':
      return arg;
    case 'sum':
      return arg !== undefined && SUMMABLE.has(arg) ? arg : undefined;
    case 'avg':
      if (arg === undefined || !SUMMABLE.has(arg)) return undefined;
      return arg === 'float32' ? 'float32' : 'decimal';
  }
}

const I64_MIN = -(2n ** 63n);
const I64_MAX = 2n ** 63n - 1n;

function checkedDecimal(v: bigint, what: string): bigint {
  if (v < I64_MIN || v > I64_MAX) {
    throw new VixenError({ severity: 'error', message: `decimal overflow: ${what} is outside the 64-bit decimal range` });
  }
  return v;
}

/**
 * Value of `fn` over `values` (non-empty; the argument column of a group's rows, in order) of type `arg`.
 * `what` names the aggregate in run-time errors.
 */
export function evalAggregate(fn: AggregateFn, arg: ScalarType | undefined, values: readonly Value[], count: number, what: string): Value {
  switch (fn) {
    case 'count':
      return Number(BigInt.asIntN(32, BigInt(count)));
    case 'min':
      return values.reduce((a, b) => (compareValues(b, a) < 0 ? b : a));
    case 'max':
      return values.reduce((a, b) => (compareValues(b, a) > 0 ? b : a));
    case 'sum':
      if (arg === 'decimal') return checkedDecimal(values.reduce((a: bigint, b) => a + (b as bigint), 0n), `the decimal sum (${what})`);
      return values.slice(1).reduce((a, b) => evalArith('+', arg!, a, b), values[0]!);
    case 'avg': {
      if (arg === 'float32') return Math.fround(values.slice(1).reduce((a, b) => evalArith('+', 'float32', a, b), values[0]!) as number / count) + 0;
      const exact = values.reduce((a: bigint, b) => a + BigInt(b as number | bigint), 0n);
      const scaled = arg === 'decimal' ? exact : exact * DECIMAL_SCALE;
      return checkedDecimal(scaled / BigInt(count), `the average (${what})`);
    }
  }
}
