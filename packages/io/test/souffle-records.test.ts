/** Soufflé records and ADT values in `.input` lines, read into the front end's flattened columns. */
import { describe, expect, test } from 'vitest';
import type { PrintLayout } from '@vixen/frontend';
import type { ScalarType } from '@vixen/queryplan';
import { RecordFieldError, souffleRecordFields } from '../src/facts/souffle-records.js';

const value: PrintLayout = { kind: 'value' };
/** `[x: number, s: symbol]` */
const pair: PrintLayout = { kind: 'record', fields: [value, value] };
/** `A {p: [x: number, s: symbol]} | B {} | C {n: number}` */
const adt: PrintLayout = { kind: 'adt', branches: [{ name: 'A', fields: [pair] }, { name: 'B', fields: [] }, { name: 'C', fields: [value] }] };
const pairTypes: ScalarType[] = ['int32', 'int32', 'string'];
const adtTypes: ScalarType[] = ['int32', 'int32', 'int32', 'string', 'int32'];

describe('souffleRecordFields', () => {
  test('records, nil and nested values become their columns', () => {
    expect(souffleRecordFields(['[1, a]', '7'], '\t', [pair, value], [...pairTypes, 'int32'])).toEqual(['1', '1', 'a', '7']);
    expect(souffleRecordFields([' nil '], '\t', [pair], pairTypes)).toEqual(['0', '0', '']);
    expect(souffleRecordFields(['[ -2 ,"x\\"y]"]'], '\t', [pair], pairTypes)).toEqual(['1', '-2', 'x"y]']);
  });

  test('branches take their index and leave the others at their defaults', () => {
    expect(souffleRecordFields(['$A([3, b])'], '\t', [adt], adtTypes)).toEqual(['0', '1', '3', 'b', '0']);
    expect(souffleRecordFields(['$B'], '\t', [adt], adtTypes)).toEqual(['1', '0', '0', '', '0']);
    expect(souffleRecordFields(['$C(9)'], '\t', [adt], adtTypes)).toEqual(['2', '0', '0', '', '9']);
  });

  test('a record split at a delimiter inside it is joined again', () => {
    expect(souffleRecordFields(['[1', ' a]', '7'], ',', [pair, value], [...pairTypes, 'int32'])).toEqual(['1', '1', 'a', '7']);
  });

  test('malformed values name the field', () => {
    const problem = (fields: string[], layout: PrintLayout[], types: ScalarType[]): string => {
      try {
        souffleRecordFields(fields, '\t', layout, types);
      } catch (e) {
        expect(e).toBeInstanceOf(RecordFieldError);
        return `${(e as RecordFieldError).field}: ${(e as Error).message}`;
      }
      return 'no error';
    };
    expect(problem(['[1 a]'], [pair], pairTypes)).toBe("0: expected ',', found 'a'");
    expect(problem(['[1, a'], [pair], pairTypes)).toBe("0: expected one of ',', ']' after the symbol");
    expect(problem(['$D(1)'], [adt], adtTypes)).toBe('0: expected a branch ($A, $B, $C), found $D');
    expect(problem(['[1, a] x'], [pair], pairTypes)).toBe('0: unexpected text after the value: x');
    expect(problem(['[1, a]', '2'], [pair], pairTypes)).toBe('1: expected 1 fields, found 2');
  });
});
