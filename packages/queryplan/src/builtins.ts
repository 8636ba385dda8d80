/**
 * Scalar built-in functions (LANGUAGE.md "Built-ins are functional predicates"): date parts and arithmetic,
 * and casts between numeric types. Each has fixed argument and result types; `evalBuiltin` is the reference
 * semantics the device code follows. Casts wrap like arithmetic (int64 -> int32 keeps the low 32 bits),
 * decimal -> integer truncates toward zero, float32 -> int32 truncates and saturates (NaN gives 0).
 */
import { DECIMAL_SCALE, type ScalarType, type Value } from './types.js';

export interface BuiltinSignature {
  args: ScalarType[];
  result: ScalarType;
}

export const BUILTINS = {
  'date:year': { args: ['date'], result: 'int32' },
  'date:month': { args: ['date'], result: 'int32' },
  'date:day': { args: ['date'], result: 'int32' },
  'date:add_days': { args: ['date', 'int32'], result: 'date' },
  'int32:from_int64': { args: ['int64'], result: 'int32' },
  'int32:from_uint32': { args: ['uint32'], result: 'int32' },
  'int32:from_decimal': { args: ['decimal'], result: 'int32' },
  'int32:from_float32': { args: ['float32'], result: 'int32' },
  'int64:from_int32': { args: ['int32'], result: 'int64' },
  'int64:from_uint32': { args: ['uint32'], result: 'int64' },
  'int64:from_decimal': { args: ['decimal'], result: 'int64' },
  'uint32:from_int32': { args: ['int32'], result: 'uint32' },
  'uint32:from_int64': { args: ['int64'], result: 'uint32' },
  'decimal:from_int32': { args: ['int32'], result: 'decimal' },
  'decimal:from_int64': { args: ['int64'], result: 'decimal' },
  'float32:from_int32': { args: ['int32'], result: 'float32' },
} as const satisfies Record<string, BuiltinSignature>;

export type BuiltinFn = keyof typeof BUILTINS;

export function isBuiltin(name: string): name is BuiltinFn {
  return Object.hasOwn(BUILTINS, name);
}

const MS_PER_DAY = 86_400_000;

export function evalBuiltin(fn: BuiltinFn, args: readonly Value[]): Value {
  const [a, b] = args;
  switch (fn) {
    case 'date:year':
      return new Date((a as number) * MS_PER_DAY).getUTCFullYear();
    case 'date:month':
      return new Date((a as number) * MS_PER_DAY).getUTCMonth() + 1;
    case 'date:day':
      return new Date((a as number) * MS_PER_DAY).getUTCDate();
    case 'date:add_days':
      return ((a as number) + (b as number)) | 0;
    case 'int32:from_int64':
      return Number(BigInt.asIntN(32, a as bigint));
    case 'int32:from_uint32':
      return (a as number) | 0;
    case 'int32:from_decimal':
      return Number(BigInt.asIntN(32, (a as bigint) / DECIMAL_SCALE));
    case 'int32:from_float32': {
      const x = a as number;
      return Number.isNaN(x) ? 0 : Math.max(-(2 ** 31), Math.min(2 ** 31 - 1, Math.trunc(x))) + 0;
    }
    case 'int64:from_int32':
    case 'int64:from_uint32':
      return BigInt(a as number);
    case 'int64:from_decimal':
      return (a as bigint) / DECIMAL_SCALE;
    case 'uint32:from_int32':
      return (a as number) >>> 0;
    case 'uint32:from_int64':
      return Number(BigInt.asUintN(32, a as bigint));
    case 'decimal:from_int32':
      return BigInt(a as number) * DECIMAL_SCALE;
    case 'decimal:from_int64':
      return BigInt.asIntN(64, (a as bigint) * DECIMAL_SCALE);
    case 'float32:from_int32':
      return Math.fround(a as number);
  }
}
