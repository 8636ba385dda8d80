/**
 * Facts text given on the page (typed in, pasted, or a dropped `.csv`, `.tsv`, `.facts` or `.tbl` file) into API
 * rows of a relation: split by csv-parse as io's host parser splits those formats, each field converted by io's
 * `convert` (the same rules and messages as `--facts`). A bad field is a VixenError naming the file, line and column.
 * A dropped `.parquet` file is read by io's Parquet decoder (`parquetRows`), as `--facts` reads one.
 */
// The browser build: it brings its own Buffer, which a page lacks.
import { parse } from 'csv-parse/browser/esm/sync';
import { convert, factsColumns, quoted } from '@vixen/io';
import { VixenError, type RelationDecl, type Row } from '@vixen/queryplan';

/** The relation a facts file is for, and its delimiter: `edge.csv` is edge, comma-separated. */
export function factsFileRelation(file: string): { relation: string; delimiter: string } | undefined {
  const m = /^([^/\\]+)\.(csv|tsv|facts|tbl)$/i.exec(file);
  if (!m) return undefined;
  const ext = m[2]!.toLowerCase();
  return { relation: m[1]!, delimiter: ext === 'csv' ? ',' : ext === 'tbl' ? '|' : '\t' };
}

/** The relation a Parquet facts file is for: `edge.parquet` is edge. */
export function parquetFileRelation(file: string): string | undefined {
  return /^([^/\\]+)\.parquet$/i.exec(file)?.[1];
}

export function parseFacts(file: string, text: string, rel: RelationDecl): Row[] {
  const kind = factsFileRelation(file);
  if (!kind) throw new VixenError({ severity: 'error', message: `${file}: facts files are named <relation>.csv, .tsv, .facts or .tbl` });
  const columns = factsColumns(rel);
  const records = parse(text.replace(/^\uFEFF/, ''), {
    delimiter: kind.delimiter,
    // .tbl lines end in a delimiter; tab-separated facts quote nothing.
    quote: kind.delimiter === ',' ? '"' : false,
    relax_column_count: true,
    skip_empty_lines: true,
    info: true,
  }) as unknown as { record: string[]; info: { lines: number } }[];
  return records.map(({ record, info }) => {
    const fields = kind.delimiter === '|' && record[record.length - 1] === '' ? record.slice(0, -1) : record;
    const at = `${file}:${info.lines}`;
    if (fields.length !== columns.length) {
      throw new VixenError({ severity: 'error', message: `${at}: expected ${columns.length} fields for ${rel.name}, found ${fields.length}` });
    }
    return fields.map((f, c) => {
      const v = convert(f, columns[c]!);
      if (typeof v === 'object' && v !== null && 'problem' in v) throw new VixenError({ severity: 'error', message: `${at}: expected ${columns[c]!.type} in column ${c + 1} (${columns[c]!.name}) of ${rel.name}, found ${quoted(f)}${v.problem}` });
      // convert gives a decimal in the short form as its scaled number (encodeValue's fast path); API rows take a bigint.
      return columns[c]!.type === 'decimal' && typeof v === 'number' ? BigInt(v) : v;
    });
  });
}
