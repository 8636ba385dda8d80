import { parse } from 'csv-parse/sync';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { NeedsCsvParse, splitRecords, type SplitRecord } from '../src/facts/records.js';

/** csv-parse configured as facts/file.ts configures it; undefined when it rejects the text. */
function csvParse(text: string, delimiter: string, quoting: boolean): string[][] | undefined {
  try {
    return parse(text, {
      delimiter,
      quote: quoting ? '"' : false,
      record_delimiter: ['\r\n', '\n'],
      relax_column_count: true,
      skip_empty_lines: false,
    }) as string[][];
  } catch {
    return undefined;
  }
}

/** The splitter's records, fed `text` in pieces cut at `cuts` as file.ts feeds it chunks; undefined on NeedsCsvParse. */
function split(text: string, cuts: number[], delimiter: string, quoting: boolean): SplitRecord[] | undefined {
  const out: SplitRecord[] = [];
  let pending = '';
  let last = 0;
  try {
    for (const cut of [...new Set(cuts)].sort((a, b) => a - b)) {
      pending += text.slice(last, cut);
      last = cut;
      pending = pending.slice(splitRecords(pending, 0, false, delimiter, quoting, (r) => out.push(r)));
    }
    splitRecords(pending + text.slice(last), 0, true, delimiter, quoting, (r) => out.push(r));
    return out;
  } catch (e) {
    if (e instanceof NeedsCsvParse) return undefined;
    throw e;
  }
}

const texts = fc.string({ unit: fc.constantFrom('a', 'b', ',', '|', '"', '\n', '\r', ' ', 'é'), maxLength: 40 });

describe('fast record splitter', () => {
  for (const [name, delimiter, quoting] of [
    ['CSV', ',', true],
    ['unquoted |', '|', false],
    ['unquoted multi-character delimiter', '||', false],
  ] as const) {
    it(`splits as csv-parse does (${name}), whatever the chunking`, () => {
      fc.assert(
        fc.property(texts, fc.array(fc.nat(40)), (text, cuts) => {
          const expected = csvParse(text, delimiter, quoting);
          const got = split(text, cuts.filter((c) => c <= text.length), delimiter, quoting);
          if (expected === undefined) {
            // Text csv-parse rejects must reach it, for its messages.
            expect(got).toBeUndefined();
            return;
          }
          // The splitter may leave well-formed text to csv-parse only where quotes are involved.
          if (got === undefined) {
            expect(quoting && text.includes('"')).toBe(true);
            return;
          }
          expect(got.map((r) => r.fields)).toEqual(expected);
          expect(got.reduce((n, r) => n + r.chars, 0)).toBe(text.length);
          // Lines: one per record plus the newlines inside quoted fields.
          const newlines = (s: string): number => s.split('\n').length - 1;
          expect(got.reduce((n, r) => n + r.lines, 0)).toBe(
            got.length + got.reduce((n, r) => n + r.fields.reduce((m, f) => m + newlines(f), 0), 0),
          );
        }),
        { numRuns: 3000 },
      );
    });
  }

  it('gives raw text without the record delimiter', () => {
    const records: SplitRecord[] = [];
    splitRecords('a,"b\r\nc"\r\nd\n', 0, true, ',', true, (r) => records.push(r));
    expect(records.map((r) => [r.raw, r.chars, r.lines])).toEqual([
      ['a,"b\r\nc"', 10, 2],
      ['d', 2, 1],
    ]);
  });
});
