/**
 * Which aggregates a device hash table computes (hash-aggregates makes them; the validator checks that a hashed
 * aggregate is one).
 */
import { wordsOf, type Aggregate, type ScalarType } from '@vixen/queryplan';

/** Whether `fn` over arguments of type `arg` can update a hash table's group with 32-bit atomics, in any row order. */
export function hashableAggregate(fn: Aggregate['fn'], arg: ScalarType | undefined): boolean {
  switch (fn) {
    case 'count':
      return true;
    case 'sum':
    case 'avg':
      return arg === 'int32' || arg === 'uint32' || arg === 'int64' || arg === 'decimal';
    case 'min':
    case 'max':
      return arg !== undefined && arg !== 'float32' && wordsOf(arg) === 1;
  }
}
