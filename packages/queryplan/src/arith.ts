/**
 * Arithmetic semantics shared by the reference interpreter and the checks: int32/uint32 wrap around,
 * int64 and decimal wrap at 64 bits, decimal * and / rescale exactly (truncating toward zero) and
 * float32 rounds to f32 after every operation. Division and remainder by zero yield 0 here; plans guard
 * every divisor with a `!= 0` filter first, so that value never reaches a result.
 */
import { DECIMAL_SCALE, type ScalarType, type Value } from './types.js';

export type ArithOp = '+' | '-' | '*' | '/' | '%';

export const ARITH_OPS: readonly ArithOp[] = ['+', '-', '*', '/', '%'];

/** Whether `op` is defined on `type` (float32 has no `%`: WGSL's and JS's remainders round differently). */
export function arithDefined(op: ArithOp, type: ScalarType): boolean {
  switch (type) {
    case 'int32':
    case 'int64':
    case 'uint32':
    case 'decimal':
      return true;
    case 'float32':
      return op !== '%';
    case 'string':
    case 'boolean':
    case 'date':
      return false;
  }
}

function integerOp(op: ArithOp, a: bigint, b: bigint): bigint {
  switch (op) {
    case '+':
      return a + b;
    case '-':
      return a - b;
    case '*':
      return a * b;
    case '/':
      return b === 0n ? 0n : a / b;
    case '%':
      return b === 0n ? 0n : a % b;
  }
}

export function evalArith(op: ArithOp, type: ScalarType, a: Value, b: Value): Value {
  switch (type) {
    case 'int32':
      return Number(BigInt.asIntN(32, integerOp(op, BigInt(a as number), BigInt(b as number))));
    case 'uint32':
      return Number(BigInt.asUintN(32, integerOp(op, BigInt(a as number), BigInt(b as number))));
    case 'int64':
      return BigInt.asIntN(64, integerOp(op, a as bigint, b as bigint));
    case 'decimal': {
      const x = a as bigint;
      const y = b as bigint;
      if (op === '*') return BigInt.asIntN(64, (x * y) / DECIMAL_SCALE);
      if (op === '/') return BigInt.asIntN(64, y === 0n ? 0n : (x * DECIMAL_SCALE) / y);
      return BigInt.asIntN(64, integerOp(op, x, y));
    }
    case 'float32': {
      const x = a as number;
      const y = b as number;
      const r = op === '+' ? x + y : op === '-' ? x - y : op === '*' ? x * y : y === 0 ? 0 : x / y;
      // -0 is stored as 0 so that equal values have equal words on the device.
      return Math.fround(r) + 0;
    }
    case 'string':
    case 'boolean':
    case 'date':
      throw new Error(`internal: arithmetic on ${type}`);
  }
}

/** The value 0 of a numeric type (the divisor guard compares with it). */
export function zeroOf(type: ScalarType): Value {
  switch (type) {
    case 'int64':
    case 'decimal':
      return 0n;
    default:
      return 0;
  }
}
