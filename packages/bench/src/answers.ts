/**
 * Vixen's answer to a benchmark query (TPC-H, SSB) against DuckDB's, value by value and row by row (both come in the query's
 * output order). Integers, strings and dates must be equal. Decimals are exact: a DuckDB decimal with more than
 * 4 fractional digits (products of three decimals, as in Q1's sum_charge) is truncated toward zero to the
 * 4 digits of Vixen's decimal type first. Where DuckDB answers a double (averages, quotients) the Vixen value
 * may differ by 1e-6 relative or by one unit of the 4th fractional digit, since Vixen's decimal quotient is
 * truncated there. An aggregate over no rows is one row of NULLs in SQL and no row in LogiQL: those are equal.
 */
import { DECIMAL_SCALE, formatValue, type Row, type ScalarType, type Value } from '@vixen/queryplan';
import type { DuckValue } from './tbl-duckdb.js';

function showDuck(v: DuckValue): string {
  switch (v.kind) {
    case 'null':
      return 'NULL';
    case 'int':
    case 'double':
    case 'string':
      return String(v.value);
    case 'decimal':
      return `${v.value}e-${v.scale}`;
    case 'date':
      return formatValue(v.days, 'date');
  }
}

/** Why `duck` is not `vixen` (of Vixen type `type`), or undefined when they agree. */
function cellDifference(vixen: Value, type: ScalarType, duck: DuckValue): string | undefined {
  const bad = `vixen ${formatValue(vixen, type)} != duckdb ${showDuck(duck)}`;
  switch (type) {
    case 'int32':
    case 'int64':
    case 'uint32':
      return duck.kind === 'int' && duck.value === BigInt(vixen as number | bigint) ? undefined : bad;
    case 'string':
      return duck.kind === 'string' && duck.value === vixen ? undefined : bad;
    case 'date':
      return duck.kind === 'date' && duck.days === vixen ? undefined : bad;
    case 'boolean':
      return bad;
    case 'decimal': {
      const v = vixen as bigint;
      if (duck.kind === 'int') return duck.value * DECIMAL_SCALE === v ? undefined : bad;
      if (duck.kind === 'decimal') {
        const digits = 4 - duck.scale;
        const scaled = digits >= 0 ? duck.value * 10n ** BigInt(digits) : duck.value / 10n ** BigInt(-digits);
        return scaled === v ? undefined : bad;
      }
      if (duck.kind === 'double') {
        const x = Number(v) / Number(DECIMAL_SCALE);
        return Math.abs(x - duck.value) <= Math.max(1e-6 * Math.abs(duck.value), 1e-4) ? undefined : bad;
      }
      return bad;
    }
    case 'float32': {
      const x = vixen as number;
      if (duck.kind !== 'double' && duck.kind !== 'int') return bad;
      const d = Number(duck.value);
      return Math.abs(x - d) <= 1e-6 * Math.max(1, Math.abs(d)) ? undefined : bad;
    }
  }
}

/** Differences between the two answers (empty when they agree), at most `limit` of them. */
export function compareAnswers(vixen: readonly Row[], types: readonly ScalarType[], duck: readonly DuckValue[][], limit = 10): string[] {
  const duckRows = duck.length === 1 && vixen.length === 0 && duck[0]!.every((v) => v.kind === 'null') ? [] : duck;
  const out: string[] = [];
  if (duckRows.length !== vixen.length) out.push(`vixen has ${vixen.length} rows, duckdb ${duckRows.length}`);
  for (let i = 0; i < Math.min(vixen.length, duckRows.length) && out.length < limit; i++) {
    const v = vixen[i]!;
    const d = duckRows[i]!;
    if (d.length !== v.length) {
      out.push(`row ${i + 1}: vixen has ${v.length} columns, duckdb ${d.length}`);
      continue;
    }
    for (let c = 0; c < v.length; c++) {
      const why = cellDifference(v[c]!, types[c]!, d[c]!);
      if (why !== undefined) {
        out.push(`row ${i + 1}, column ${c + 1}: ${why}`);
        break;
      }
    }
  }
  return out;
}
