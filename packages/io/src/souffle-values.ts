/**
 * Values as Soufflé writes them (floats, records, ADTs), apart from the files they go to (souffle-output.ts), so
 * that a browser shows them too.
 */
import { layoutWidth, type PrintLayout } from '@vixen/frontend';
import { formatValue, type RelationDecl, type Row, type ScalarType, type Value } from '@vixen/queryplan';

/**
 * C++'s `ostream << float` at precision 9 (`%.9g`: shortest of fixed and exponent form, zeros trimmed), or at
 * `digits` (Soufflé prints floats inside records at the stream's default, 6).
 */
export function formatSouffleFloat(x: number, digits = 9): string {
  if (Number.isNaN(x)) return 'nan';
  if (!Number.isFinite(x)) return x > 0 ? 'inf' : '-inf';
  if (x === 0) return Object.is(x, -0) ? '-0' : '0';
  const [mantissa, exp] = x.toExponential(digits - 1).split('e') as [string, string];
  const e = Number(exp);
  const trim = (s: string): string => (s.includes('.') ? s.replace(/0+$/, '').replace(/\.$/, '') : s);
  if (e < -4 || e >= digits) return `${trim(mantissa)}e${e < 0 ? '-' : '+'}${String(Math.abs(e)).padStart(2, '0')}`;
  return trim(x.toFixed(digits - 1 - e));
}

export function souffleValue(v: Value, type: ScalarType | undefined): string {
  return type === 'float32' ? formatSouffleFloat(v as number) : formatValue(v, type);
}

/**
 * The attribute at column `at` of `row` as Soufflé prints it: `nil`, `[1, a]`, `$A(1)`, `$B`; values inside
 * records print as its record writer prints them (floats at the stream's default precision).
 */
export function souffleAttribute(l: PrintLayout, row: Row, at: number, types: readonly (ScalarType | undefined)[], inRecord: boolean): string {
  switch (l.kind) {
    case 'value':
      return inRecord && types[at] === 'float32' ? formatSouffleFloat(row[at] as number, 6) : souffleValue(row[at]!, types[at]);
    case 'record': {
      if (Number(row[at]) === 0) return 'nil';
      const fields: string[] = [];
      let next = at + 1;
      for (const f of l.fields) {
        fields.push(souffleAttribute(f, row, next, types, true));
        next += layoutWidth(f);
      }
      return `[${fields.join(', ')}]`;
    }
    case 'adt': {
      const taken = Number(row[at]);
      let next = at + 1;
      for (const b of l.branches.slice(0, taken)) next += b.fields.reduce((n, f) => n + layoutWidth(f), 0);
      const branch = l.branches[taken]!;
      const fields: string[] = [];
      for (const f of branch.fields) {
        fields.push(souffleAttribute(f, row, next, types, true));
        next += layoutWidth(f);
      }
      return fields.length === 0 ? `$${branch.name}` : `$${branch.name}(${fields.join(', ')})`;
    }
  }
}

/**
 * A relation with record attributes seen one column per declared attribute (tables, JSON, CSV): record and ADT
 * attributes become string columns holding what Soufflé prints (`[1, a]`), named as declared.
 */
export function souffleRecordView(decl: RelationDecl, layout: readonly PrintLayout[]): { decl: RelationDecl; row: (r: Row) => Row } {
  const types = decl.columns.map((c) => c.type);
  const starts: number[] = [];
  let at = 0;
  for (const l of layout) {
    starts.push(at);
    at += layoutWidth(l);
  }
  // Flattened columns are named `<attribute>$<k>` (records.ts).
  const columns = layout.map((l, i) => {
    const c = decl.columns[starts[i]!]!;
    return l.kind === 'value' ? c : { name: c.name.replace(/\$0$/, ''), type: 'string' as const };
  });
  const row = (r: Row): Row => layout.map((l, i) => (l.kind === 'value' ? r[starts[i]!]! : souffleAttribute(l, r, starts[i]!, types, false)));
  return { decl: { ...decl, columns }, row };
}
