/**
 * Vixen's answer to a benchmark query (TPC-H, SSB) against DuckDB's, value by value and row by row (both come in the
 * query's output order, where rows that tie on the ordering columns may come in either engine's order). Integers,
 * strings and dates must be equal. Decimals are exact: a DuckDB decimal with more than 4 fractional digits (products
 * of three decimals, as in Q1's sum_charge) is truncated toward zero to the 4 digits of Vixen's decimal type first.
 * Where DuckDB answers a double (averages, quotients) the Vixen value may differ by 1e-6 relative or by one unit of
 * the 4th fractional digit, since Vixen's decimal quotient is truncated there. An aggregate over no rows is one row
 * of NULLs in SQL and no row in LogiQL: those are equal.
 */
import { DECIMAL_SCALE, formatValue, type OutputOrder, type Row, type ScalarType, type Value } from '@vixen/queryplan';
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

/**
 * Why row `i` of `vixen` is not row `i` of `duck`, over `columns` (all when absent), or undefined when they agree.
 */
function rowDifference(i: number, v: Row, types: readonly ScalarType[], d: readonly DuckValue[], columns?: readonly number[]): string | undefined {
  if (d.length !== v.length) return `row ${i + 1}: vixen has ${v.length} columns, duckdb ${d.length}`;
  for (const c of columns ?? v.keys()) {
    const why = cellDifference(v[c]!, types[c]!, d[c]!);
    if (why !== undefined) return `row ${i + 1}, column ${c + 1}: ${why}`;
  }
  return undefined;
}

/**
 * Differences between rows s..e-1 of the two answers as multisets: they tie on the ordering columns, so either
 * engine may give them in any order. Rows equal at the same position are paired first (the usual case, linear).
 */
function tieGroupDifferences(s: number, e: number, vixen: readonly Row[], types: readonly ScalarType[], duck: readonly DuckValue[][]): string[] {
  const used = new Array<boolean>(e - s).fill(false);
  const unpaired: number[] = [];
  for (let i = s; i < e; i++) {
    if (rowDifference(i, vixen[i]!, types, duck[i]!) === undefined) used[i - s] = true;
    else unpaired.push(i);
  }
  const out: string[] = [];
  for (const i of unpaired) {
    let j = s;
    while (j < e && (used[j - s] || rowDifference(i, vixen[i]!, types, duck[j]!) !== undefined)) j++;
    if (j < e) used[j - s] = true;
    else out.push(rowDifference(i, vixen[i]!, types, duck[i]!)! + (e - s > 1 ? ` (nor equal to another duckdb row of rows ${s + 1}-${e}, tied on the order)` : ''));
  }
  return out;
}

/**
 * Differences between the two answers (empty when they agree), at most `maxDiffs` of them. `order` is the query's
 * declared output order (`order result by ...`): rows that tie on its keys may come in either order, so they
 * compare as a multiset, and where a limit cuts through the last tie group either engine may keep any of its rows,
 * so there only the ordering values must agree. Without `order`, rows compare position by position.
 */
export function compareAnswers(
  vixen: readonly Row[],
  types: readonly ScalarType[],
  duck: readonly DuckValue[][],
  order?: OutputOrder,
  maxDiffs = 10,
): string[] {
  const duckRows = duck.length === 1 && vixen.length === 0 && duck[0]!.every((v) => v.kind === 'null') ? [] : duck;
  const out: string[] = [];
  if (duckRows.length !== vixen.length) out.push(`vixen has ${vixen.length} rows, duckdb ${duckRows.length}`);
  const n = Math.min(vixen.length, duckRows.length);
  if (order === undefined) {
    for (let i = 0; i < n && out.length < maxDiffs; i++) {
      const why = rowDifference(i, vixen[i]!, types, duckRows[i]!);
      if (why !== undefined) out.push(why);
    }
    return out;
  }
  const keys = order.keys.map((k) => k.column);
  const cut = order.limit !== undefined && vixen.length >= order.limit;
  for (let s = 0; s < n && out.length < maxDiffs; ) {
    // Vixen's values are exact, so its rows' keys say where a tie group ends; DuckDB's must match them row by row.
    let e = s + 1;
    while (e < n && keys.every((c) => vixen[e]![c] === vixen[s]![c])) e++;
    let keysAgree = true;
    for (let i = s; i < e && out.length < maxDiffs; i++) {
      const why = rowDifference(i, vixen[i]!, types, duckRows[i]!, keys);
      if (why !== undefined) {
        out.push(why);
        keysAgree = false;
      }
    }
    if (keysAgree && !(cut && e === vixen.length)) out.push(...tieGroupDifferences(s, e, vixen, types, duckRows).slice(0, maxDiffs - out.length));
    s = e;
  }
  return out;
}
