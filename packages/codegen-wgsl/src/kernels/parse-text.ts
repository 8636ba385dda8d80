/**
 * Facts text parsed on the device (runtime gpu/parse-text.ts drives it). A chunk of whole lines is bound as u32
 * words (bytes little-endian); the passes:
 * - CSV only: parseQuotes counts each segment's quotes, and a scan gives the quotes before each segment, so a byte
 *   knows whether it lies inside a quoted field;
 * - parseCount: each thread counts the record ends (a newline ending a non-empty line, outside quotes) of its
 *   PARSE_SEGMENT_BYTES bytes, and flags a NUL byte or invalid UTF-8, which the device leaves to the host;
 * - an exclusive scan of the counts (scan.ts) gives each segment's first record;
 * - parseEnds: each thread writes its record ends at those offsets;
 * - parseRows: one thread per record splits it at the delimiter (CSV: quoted fields too), checks the field count and
 *   converts the kept columns into the relation's row words; string fields become (start, end) byte spans;
 * - parseIntern / parseStringIds (parseInternShaders): the distinct strings of the chunk, found by hashing the
 *   spans' bytes, and each string field's distinct index in its row word; parseStrings later maps those indices to
 *   dictionary ids;
 * - parseSpanLengths, a scan, parseGather: the distinct strings' bytes back to back, so the host reads back only
 *   those and decodes them as one string (slicing each from it costs far less than a decode per string).
 * The segment passes read their words through workgroup memory (segmentMain), coalesced.
 * Conversions take the forms io's convert.ts takes, exactly (integers of up to 18 digits, the short decimal form,
 * YYYY-MM-DD dates, booleans): any other field (blanks around it, a long number, anything malformed) sets the state
 * flag, and the host parses the whole file instead, so its messages and its rarer forms stay the host's.
 */
import { rowWords, type ScalarType } from '@vixen/queryplan';
import { SCAN_ADD, scanBlock } from '../scan.js';
import { atomicBinding, header, SUBGROUP_VARIANT, threadMain } from '../wgsl.js';

/** Bytes a segment pass thread reads (a multiple of 4). */
export const PARSE_SEGMENT_BYTES = 64;

export interface TextLayout {
  /** The field delimiter, one ASCII byte. */
  delimiter: number;
  /** CSV: RFC 4180 quoted fields (no quote in an unquoted one). */
  quoting: boolean;
  /** TPC-H `.tbl`: one delimiter may end a line. */
  trailingDelimiter: boolean;
  /** Every column of the file. */
  types: readonly ScalarType[];
  /** The columns converted (ascending indices into `types`): the output row's columns, in order. */
  kept: readonly number[];
}

const BYTES = `
fn byteAt(p: u32) -> u32 {
  return (text[p >> 2u] >> ((p & 3u) * 8u)) & 0xffu;
}

// Whether the newline at p ends a non-empty line (not "" nor a lone "\\r": the host skips those).
fn endsRecord(p: u32) -> bool {
  if (p == 0u) { return false; }
  let prev = byteAt(p - 1u);
  if (prev == 10u) { return false; }
  if (prev == 13u) { return p >= 2u && byteAt(p - 2u) != 10u; }
  return true;
}
`;

/** Words of a segment. */
const SEGMENT_WORDS = PARSE_SEGMENT_BYTES / 4;

/**
 * Entry point of the segment passes, thread i on segment i: the workgroup first loads its segments' words into
 * workgroup memory, each load instruction reading consecutive words across the threads (a thread reading its own
 * segment would read words SEGMENT_WORDS apart from its neighbours'); word c of segment r lies at r * SEGMENT_WORDS
 * + (c + r) % SEGMENT_WORDS, so the threads' reads of their j-th words spread over the banks (16 KiB at 256 threads,
 * the default limit: no room for padding). Then `guard` (may return), `init`, `body` for each byte `b` at `p` of
 * the segment, `after`. With `quoting`, `inq` says whether `p` lies inside a CSV quoted field (from the quotes
 * before the segment, `quotes[i]`, and those in it before `p`).
 */
function segmentMain(guard: string, init: string, body: string, after: string, quoting = false): string {
  const W = SEGMENT_WORDS;
  return `
override TILE: u32 = ${W}u * WG;
var<workgroup> tile: array<u32, TILE>;

@compute @workgroup_size(WG)
fn main(@builtin(local_invocation_index) lid: u32, @builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
  let block = wid.x + wid.y * nwg.x;
  let n = u[0].x;
  let words = (n + 3u) >> 2u;
  let first = block * WG * ${W}u;
  for (var k = 0u; k < ${W}u; k = k + 1u) {
    let at = k * WG + lid;
    let w = first + at;
    let r = at / ${W}u;
    tile[r * ${W}u + ((at + r) % ${W}u)] = select(0u, text[min(w, words - 1u)], w < words);
  }
  workgroupBarrier();
  let i = block * WG + lid;
${guard}
${init}
  let s = i * ${PARSE_SEGMENT_BYTES}u;
  let e = min(s + ${PARSE_SEGMENT_BYTES}u, n);${quoting ? '\n  var inq = (quotes[i] & 1u) == 1u;' : ''}
  for (var j = 0u; j < ${W}u; j = j + 1u) {
    let word = tile[lid * ${W}u + ((j + lid) % ${W}u)];
    for (var k = 0u; k < 4u; k = k + 1u) {
      let p = s + j * 4u + k;
      let b = (word >> (k * 8u)) & 0xffu;
      if (p < e) {${quoting ? '\n        if (b == 34u) { inq = !inq; }' : ''}
${body}
      }
    }
  }
${after}
}
`;
}

/** A newline at `p` that ends a record: a non-empty line's, outside quotes. */
const recordEnd = (quoting: boolean): string => `b == 10u && ${quoting ? '!inq && ' : ''}endsRecord(p)`;

/** CSV: the quotes of each segment to quotes[i] (quotes[segments] = 0), scanned into each segment's quotes before it. */
function quotesPass(): string {
  return `${header('parseQuotes', ['text', 'quotes'])}${segmentMain(
    `  if (i > u[0].y) { return; }
  if (i == u[0].y) { quotes[i] = 0u; return; }`,
    '  var c = 0u;',
    `        if (b == 34u) { c = c + 1u; }`,
    '  quotes[i] = c;',
  )}`;
}

/**
 * UTF-8 as the host's isUtf8 takes it (no overlong forms, surrogates or code points past U+10FFFF): each lead byte
 * checks its continuation bytes, each continuation byte that a lead before it reaches it.
 */
const UTF8 = `
fn leadLength(c: u32) -> u32 {
  if (c >= 0xc2u && c <= 0xdfu) { return 2u; }
  if (c >= 0xe0u && c <= 0xefu) { return 3u; }
  if (c >= 0xf0u && c <= 0xf4u) { return 4u; }
  return 0u;
}

// Whether the byte b (past ASCII) at p of the n bytes belongs to a well-formed sequence.
fn utf8At(p: u32, b: u32, n: u32) -> bool {
  if ((b & 0xc0u) == 0x80u) {
    for (var k = 1u; k <= 3u && k <= p; k = k + 1u) {
      let c = byteAt(p - k);
      if ((c & 0xc0u) != 0x80u) { return leadLength(c) > k; }
    }
    return false;
  }
  let len = leadLength(b);
  if (len == 0u || p + len > n) { return false; }
  let c1 = byteAt(p + 1u);
  var lo = 0x80u;
  var hi = 0xbfu;
  if (b == 0xe0u) { lo = 0xa0u; } else if (b == 0xedu) { hi = 0x9fu; } else if (b == 0xf0u) { lo = 0x90u; } else if (b == 0xf4u) { hi = 0x8fu; }
  if (c1 < lo || c1 > hi) { return false; }
  for (var k = 2u; k < len; k = k + 1u) {
    if ((byteAt(p + k) & 0xc0u) != 0x80u) { return false; }
  }
  return true;
}
`;

function countPass(quoting: boolean): string {
  // Bytes past ASCII are rare in most facts: they set state[2] (the host then decodes strings as UTF-8) and are
  // checked here, as the chunk never passed through the host.
  const code = `${header('parseCount', ['text', 'quotes', 'counts', 'state'])}${BYTES}${UTF8}${segmentMain(
    `  if (i > u[0].y) { return; }
  if (i == u[0].y) { counts[i] = 0u; return; }`,
    '  var c = 0u;',
    `        if (${recordEnd(quoting)}) { c = c + 1u; }
        if (b == 0u) { atomicOr(&state[0], 1u); }
        if (b >= 0x80u) {
          atomicOr(&state[2], 1u);
          if (!utf8At(p, b, n)) { atomicOr(&state[0], 1u); }
        }`,
    '  counts[i] = c;',
    quoting,
  )}`;
  return atomicBinding(code, 'state');
}

function endsPass(quoting: boolean): string {
  return `${header('parseEnds', ['text', 'quotes', 'offsets', 'ends'])}${BYTES}${segmentMain(
    '  if (i >= u[0].y) { return; }',
    '  var at = offsets[i];',
    `        if (${recordEnd(quoting)}) { if (at < u[0].z) { ends[at] = p; } at = at + 1u; }`,
    '',
    quoting,
  )}`;
}

/** Field conversions: each returns its words and whether the field was in a form the device takes (z / y). */
const CONVERSIONS = `
// v * 10 + d on a (lo, hi) pair; callers keep v below 10^18.
fn mul10add(v: vec2<u32>, d: u32) -> vec2<u32> {
  let a = v.x << 3u;
  let b = v.x << 1u;
  let lo = a + b;
  var carry = (v.x >> 29u) + (v.x >> 31u) + select(0u, 1u, lo < a);
  let lo2 = lo + d;
  carry = carry + select(0u, 1u, lo2 < lo);
  return vec2<u32>(lo2, v.y * 10u + carry);
}

fn neg64(v: vec2<u32>) -> vec2<u32> {
  let lo = ~v.x + 1u;
  return vec2<u32>(lo, ~v.y + select(0u, 1u, lo == 0u));
}

// A field with blanks at either end: the host trims it (convert.ts), the device leaves it to the host.
fn blankEdge(s: u32, e: u32) -> bool {
  if (e <= s) { return false; }
  let a = byteAt(s);
  let z = byteAt(e - 1u);
  return a <= 32u || a >= 127u || z <= 32u || z >= 127u;
}

// 1 to 18 ASCII digits in [s, e): (lo, hi, ok).
fn digits18(s: u32, e: u32) -> vec3<u32> {
  if (e <= s || e - s > 18u) { return vec3<u32>(0u, 0u, 0u); }
  var v = vec2<u32>(0u, 0u);
  for (var p = s; p < e; p = p + 1u) {
    let d = byteAt(p) - 48u;
    if (d > 9u) { return vec3<u32>(0u, 0u, 0u); }
    v = mul10add(v, d);
  }
  return vec3<u32>(v, 1u);
}

// Leading sign: (first digit, 1 if '-').
fn signOf(s: u32, e: u32) -> vec2<u32> {
  if (e <= s) { return vec2<u32>(s, 0u); }
  let b = byteAt(s);
  if (b == 45u) { return vec2<u32>(s + 1u, 1u); }
  if (b == 43u) { return vec2<u32>(s + 1u, 0u); }
  return vec2<u32>(s, 0u);
}

fn convInt32(s: u32, e: u32) -> vec2<u32> {
  if (blankEdge(s, e)) { return vec2<u32>(0u, 0u); }
  let sg = signOf(s, e);
  let v = digits18(sg.x, e);
  let limit = select(0x7fffffffu, 0x80000000u, sg.y == 1u);
  if (v.z == 0u || v.y != 0u || v.x > limit) { return vec2<u32>(0u, 0u); }
  return vec2<u32>(select(v.x, 0u - v.x, sg.y == 1u), 1u);
}

fn convUint32(s: u32, e: u32) -> vec2<u32> {
  if (blankEdge(s, e)) { return vec2<u32>(0u, 0u); }
  let sg = signOf(s, e);
  let v = digits18(sg.x, e);
  // "-0" is 0; any other negative is out of range.
  if (v.z == 0u || v.y != 0u || (sg.y == 1u && v.x != 0u)) { return vec2<u32>(0u, 0u); }
  return vec2<u32>(v.x, 1u);
}

fn convInt64(s: u32, e: u32) -> vec3<u32> {
  if (blankEdge(s, e)) { return vec3<u32>(0u, 0u, 0u); }
  let sg = signOf(s, e);
  let v = digits18(sg.x, e);
  if (v.z == 0u) { return v; }
  return vec3<u32>(select(v.xy, neg64(v.xy), sg.y == 1u), 1u);
}

// convert.ts's shortDecimal: 1 to 11 integer digits, then optionally '.' and 1 to 4 digits; scaled by 10^4.
fn convDecimal(s: u32, e: u32) -> vec3<u32> {
  if (blankEdge(s, e)) { return vec3<u32>(0u, 0u, 0u); }
  let sg = signOf(s, e);
  var p = sg.x;
  var v = vec2<u32>(0u, 0u);
  while (p < e) {
    let d = byteAt(p) - 48u;
    if (d > 9u) { break; }
    v = mul10add(v, d);
    p = p + 1u;
  }
  let intDigits = p - sg.x;
  if (intDigits < 1u || intDigits > 11u) { return vec3<u32>(0u, 0u, 0u); }
  var frac = 0u;
  if (p < e) {
    if (byteAt(p) != 46u || e - p - 1u < 1u || e - p - 1u > 4u) { return vec3<u32>(0u, 0u, 0u); }
    for (p = p + 1u; p < e; p = p + 1u) {
      let d = byteAt(p) - 48u;
      if (d > 9u) { return vec3<u32>(0u, 0u, 0u); }
      v = mul10add(v, d);
      frac = frac + 1u;
    }
  }
  for (; frac < 4u; frac = frac + 1u) { v = mul10add(v, 0u); }
  return vec3<u32>(select(v, neg64(v), sg.y == 1u), 1u);
}

fn digitsAt(s: u32, n: u32) -> i32 {
  var v = 0;
  for (var p = s; p < s + n; p = p + 1u) {
    let d = byteAt(p) - 48u;
    if (d > 9u) { return -1; }
    v = v * 10 + i32(d);
  }
  return v;
}

// queryplan's parseDate: YYYY-MM-DD, a real day, as days since 1970-01-01.
fn convDate(s: u32, e: u32) -> vec2<u32> {
  if (e - s != 10u || byteAt(s + 4u) != 45u || byteAt(s + 7u) != 45u) { return vec2<u32>(0u, 0u); }
  let y = digitsAt(s, 4u);
  let m = digitsAt(s + 5u, 2u);
  let d = digitsAt(s + 8u, 2u);
  if (y < 0 || m < 1 || m > 12 || d < 1) { return vec2<u32>(0u, 0u); }
  let leap = y % 4 == 0 && (y % 100 != 0 || y % 400 == 0);
  var days = array<i32, 12>(31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31);
  if (d > days[m - 1] + select(0, 1, m == 2 && leap)) { return vec2<u32>(0u, 0u); }
  let yy = select(y, y - 1, m <= 2);
  let era = select(yy, yy - 399, yy < 0) / 400;
  let yoe = yy - era * 400;
  let doy = (153 * select(m + 9, m - 3, m > 2) + 2) / 5 + d - 1;
  return vec2<u32>(bitcast<u32>(era * 146097 + yoe * 365 + yoe / 4 - yoe / 100 + doy - 719468), 1u);
}

fn convBoolean(s: u32, e: u32) -> vec2<u32> {
  let n = e - s;
  if (n == 1u) {
    let b = byteAt(s);
    if (b == 49u) { return vec2<u32>(1u, 1u); }
    if (b == 48u) { return vec2<u32>(0u, 1u); }
  } else if (n == 4u && byteAt(s) == 116u && byteAt(s + 1u) == 114u && byteAt(s + 2u) == 117u && byteAt(s + 3u) == 101u) {
    return vec2<u32>(1u, 1u);
  } else if (n == 5u && byteAt(s) == 102u && byteAt(s + 1u) == 97u && byteAt(s + 2u) == 108u && byteAt(s + 3u) == 115u && byteAt(s + 4u) == 101u) {
    return vec2<u32>(0u, 1u);
  }
  return vec2<u32>(0u, 0u);
}
`;

/** Whether the device converts columns of `type` (float32 text is left to the host: its rounding must be exact). */
export const deviceParses = (type: ScalarType): boolean => type !== 'float32';

/**
 * What parseRows does with each column, by the kind in bits 0..3 of its word of the column table (parseColumnTable):
 * skip it, convert it (the function, and the words it writes), or keep a string's span.
 */
const COLUMN_KINDS: Record<ScalarType, number> = { int32: 1, uint32: 2, date: 3, boolean: 4, int64: 5, decimal: 6, string: 7, float32: 0 };

/**
 * parseRows' column table of `layout`: per column of the file, its kind (COLUMN_KINDS; 0: not kept) | (its first
 * output word, or for a string its span among the row's) << 8.
 */
export function parseColumnTable(layout: TextLayout): Uint32Array {
  const { types, kept } = layout;
  const table = new Uint32Array(Math.max(1, types.length));
  let word = 0;
  let k = 0;
  types.forEach((type, c) => {
    if (!kept.includes(c)) return;
    if (!deviceParses(type)) throw new Error('internal: float32 text is parsed on the host');
    table[c] = COLUMN_KINDS[type] | ((type === 'string' ? k++ : word) << 8);
    word += rowWords([type]);
  });
  return table;
}

/** parseRows' u1 for `layout`: (columns, row words, string columns, quoting | trailing delimiter << 1 | delimiter << 8). */
export function parseRowsUniform(layout: TextLayout): number[] {
  const { types, kept } = layout;
  const width = rowWords(kept.map((c) => types[c]!));
  const strings = kept.filter((c) => types[c] === 'string').length;
  return [types.length, width, strings, (layout.quoting ? 1 : 0) | (layout.trailingDelimiter ? 2 : 0) | (layout.delimiter << 8)];
}

/**
 * One thread per record: split at the delimiter (CSV: quoted fields too), check the field count and convert the kept
 * columns into the relation's row words, string fields as (start, end) byte spans. The file's layout is data (the
 * column table and u1, see parseColumnTable), not code: every file of every table runs this one pipeline (each layout
 * compiled its own, a ~66 ms cold compile of a load's wall time on the H200), and the threads of a workgroup, on
 * records of one file, take the same branch at every column.
 */
function rowsPass(): string {
  const fail = `atomicOr(&state[0], 1u); return;`;
  const one = (fn: string): string => `{ let v = ${fn}(fs, fe); if (v.y == 0u || esc) { ${fail} } rows[at] = v.x; }`;
  const two = (fn: string): string => `{ let v = ${fn}(fs, fe); if (v.z == 0u || esc) { ${fail} } rows[at] = v.x; rows[at + 1u] = v.y; }`;
  const code = `${header('parseRows', ['text', 'ends', 'columns', 'rows', 'spans', 'state', 'counts'], 4)}${BYTES}${CONVERSIONS}${threadMain(`  if (i >= u[0].z || i >= counts[u[0].y]) { return; }
  let fieldCount = u[1].x;
  let width = u[1].y;
  let strings = u[1].z;
  let quoting = (u[1].w & 1u) != 0u;
  let trailing = (u[1].w & 2u) != 0u;
  let delimiter = u[1].w >> 8u;
  let r = i;
  let end = ends[r];
  var p = 0u;
  if (r > 0u) { p = ends[r - 1u] + 1u; }
  // Empty lines before the record ("\\n" or "\\r\\n").
  loop {
    let b = byteAt(p);
    if (b == 10u) { p = p + 1u; continue; }
    if (b == 13u && byteAt(p + 1u) == 10u) { p = p + 2u; continue; }
    break;
  }
  let lineEnd = select(end, end - 1u, byteAt(end - 1u) == 13u);
  let base = r * width;
  for (var c = 0u; c < fieldCount; c = c + 1u) {
    var fs = p;
    var fe = p;
    var esc = false;
    // A CSV field may be quoted: up to a quote not doubled, which the delimiter or the line's end must follow; an
    // unquoted one may hold no quote (the host's splitter, io records.ts, reads fields so).
    if (quoting && p < lineEnd && byteAt(p) == 34u) {
      p = p + 1u;
      fs = p;
      loop {
        if (p >= end) { ${fail} }
        if (byteAt(p) == 34u) {
          if (byteAt(p + 1u) != 34u) { break; }
          esc = true;
          p = p + 1u;
        }
        p = p + 1u;
      }
      fe = p;
      p = p + 1u;
      if (p < lineEnd && byteAt(p) != delimiter) { ${fail} }
    } else {
      loop {
        if (p >= lineEnd) { break; }
        let b = byteAt(p);
        if (b == delimiter) { break; }
        if (quoting && b == 34u) { ${fail} }
        p = p + 1u;
      }
      fe = p;
    }
    let column = columns[c];
    let at = base + (column >> 8u);
    switch (column & 15u) {
      case 1u: ${one('convInt32')}
      case 2u: ${one('convUint32')}
      case 3u: ${one('convDate')}
      case 4u: ${one('convBoolean')}
      case 5u: ${two('convInt64')}
      case 6u: ${two('convDecimal')}
      case 7u: {
        let s = (r * strings + (column >> 8u)) * 2u;
        spans[s] = fs;
        spans[s + 1u] = fe;
      }
      default: {}
    }
    if (c + 1u < fieldCount) {
      if (p >= lineEnd) { ${fail} }
      p = p + 1u;
    }
  }
  if (p < lineEnd && (!trailing || p + 1u != lineEnd)) { ${fail} }`)}`;
  return atomicBinding(code, 'state');
}

/**
 * The passes that parse text (CSV: `quoting`; uniform u0 = (bytes, segments, records)), with the scan's; parseRows
 * takes the file's layout as data (parseColumnTable, parseRowsUniform).
 */
export function parseTextShaders(quoting: boolean): Record<string, string> {
  return {
    ...(quoting ? { parseQuotes: quotesPass() } : {}),
    parseCount: countPass(quoting),
    parseEnds: endsPass(quoting),
    parseRows: rowsPass(),
    scanBlock: scanBlock(false),
    [`scanBlock${SUBGROUP_VARIANT}`]: scanBlock(true),
    scanAdd: SCAN_ADD,
  };
}

/**
 * String columns whose row words one parseStringIds or parseStrings dispatch writes (their offsets are uniforms, u2
 * on): a relation with more takes a dispatch per group of them.
 */
export const PARSE_STRING_GROUP = 16;

/** Word j of the group's offsets (uniform vec4s 2..). */
const groupOffset = (j: string): string => `u[2u + ${j} / 4u][${j} % 4u]`;

/**
 * Passes that find the distinct string fields of a parsed chunk on the device (F = records * S fields, S string
 * columns kept), so the host decodes each distinct string once and never touches a row: parseIntern hashes each
 * field's bytes (FNV-1a) into a linear-probing table of mask + 1 slots of (first field + 1, distinct index) and
 * appends each new string's span to `distinct` (state[1] counts them); parseStringIds writes each field's distinct
 * index into its row word. Nothing runs once state[0] flags the chunk (its spans may be unwritten). The row width,
 * S and the string columns' word offsets are uniforms: every table's parse shares these pipelines.
 */
function parseInternShaders(): Record<string, string> {
  const intern = `${header('parseIntern', ['text', 'spans', 'table', 'distinct', 'fieldSlots', 'state', 'counts'])}${BYTES}
fn sameBytes(a: u32, b: u32, n: u32) -> bool {
  for (var k = 0u; k < n; k = k + 1u) {
    if (byteAt(a + k) != byteAt(b + k)) { return false; }
  }
  return true;
}
${threadMain(`  if (i >= u[0].x || i >= counts[u[0].z] * u[0].w || atomicLoad(&state[0]) != 0u) { return; }
  let mask = u[0].y;
  let s = spans[2u * i];
  let e = spans[2u * i + 1u];
  var h = 2166136261u;
  for (var p = s; p < e; p = p + 1u) { h = (h ^ byteAt(p)) * 16777619u; }
  var slot = h & mask;
  loop {
    let r = atomicCompareExchangeWeak(&table[2u * slot], 0u, i + 1u);
    if (r.exchanged) {
      let d = atomicAdd(&state[1], 1u);
      distinct[2u * d] = s;
      distinct[2u * d + 1u] = e;
      atomicStore(&table[2u * slot + 1u], d);
      fieldSlots[i] = slot;
      return;
    }
    // A weak exchange may fail on an empty slot: try it again.
    if (r.old_value == 0u) { continue; }
    let o = r.old_value - 1u;
    let os = spans[2u * o];
    if (spans[2u * o + 1u] - os == e - s && sameBytes(os, s, e - s)) {
      fieldSlots[i] = slot;
      return;
    }
    slot = (slot + 1u) & mask;
  }`)}`;
  // Thread i: field j = i % G of the group (string column k0 + j) of record i / G.
  const ids = `${header('parseStringIds', ['table', 'fieldSlots', 'rows', 'state', 'counts'], 4 + PARSE_STRING_GROUP)}${threadMain(`  let S = u[1].x;
  let G = u[1].y;
  if (i >= u[0].x || i >= counts[u[0].y] * G || state[0] != 0u) { return; }
  let r = i / G;
  let j = i % G;
  rows[r * u[1].w + ${groupOffset('j')}] = table[2u * fieldSlots[r * S + u[1].z + j] + 1u];`)}`;
  const lengths = `${header('parseSpanLengths', ['distinct', 'state', 'starts'])}${threadMain(`  if (i > u[0].x) { return; }
  starts[i] = select(0u, distinct[2u * i + 1u] - distinct[2u * i], i < u[0].x && i < state[1]);`)}`;
  // Thread i packs bytes [4i, 4i + 4) of the strings: a binary search for the string holding the first (the last d
  // with starts[d] <= 4i), then on through the strings after it (empty ones skipped).
  const gather = `${header('parseGather', ['text', 'distinct', 'starts', 'state', 'out'])}${BYTES}${threadMain(`  if (i >= u[0].x) { return; }
  let total = starts[u[0].y];
  let q0 = i * 4u;
  if (q0 >= total) { return; }
  var lo = 0u;
  var hi = state[1];
  while (hi - lo > 1u) {
    let mid = (lo + hi) / 2u;
    if (starts[mid] <= q0) { lo = mid; } else { hi = mid; }
  }
  var d = lo;
  var w = 0u;
  for (var k = 0u; k < 4u; k = k + 1u) {
    let q = q0 + k;
    if (q >= total) { break; }
    while (starts[d + 1u] <= q) { d = d + 1u; }
    w = w | (byteAt(distinct[2u * d] + q - starts[d]) << (8u * k));
  }
  out[i] = w;`)}`;
  return { parseIntern: atomicBinding(atomicBinding(intern, 'table'), 'state'), parseStringIds: ids, parseSpanLengths: lengths, parseGather: gather };
}

/** The passes of parseInternShaders, the same for every table. */
export const PARSE_INTERN = parseInternShaders();

/**
 * The pass turning the string words of parsed rows from their chunk's distinct indices into dictionary ids: word =
 * map[word], for a group of string columns. u0 = (rows), u1 = (row words, string columns in the group), u2.. = their
 * word offsets.
 */
export const PARSE_STRINGS: Record<string, string> = {
  parseStrings: `${header('parseStrings', ['dict', 'rows'], 4 + PARSE_STRING_GROUP)}${threadMain(`  if (i >= u[0].x) { return; }
  for (var j = 0u; j < u[1].y; j = j + 1u) {
    let at = i * u[1].x + ${groupOffset('j')};
    rows[at] = dict[rows[at]];
  }`)}`,
};
