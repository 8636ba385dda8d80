/**
 * Reduce by key over input whose groups are adjacent rows, as a parallel segmented reduction (semantics of
 * @vixen/queryplan's `evalAggregate`). A group's rows form a segment; a row is a segment head when its group
 * key differs from the previous row's. A state is (count, one field per aggregate); merging two states of the
 * same segment adds counts and sums (128-bit sums as multi-word adds with carries, so exact in any order) and
 * keeps the earlier of equal minima and maxima.
 * - `flags`: workgroup t owns the tile of TILE rows from t * TILE; each thread folds ITEMS consecutive rows, a
 *   segmented scan over the threads gives the tile's state (rows from its last head to its end, or all its
 *   rows). counts[t] = heads in the tile (scanned by the host into group ranks), the state after the counts.
 * - `aggCarry`: one workgroup turns the tile states in place into carries: the state of the segment open at
 *   each tile's start (a segmented exclusive scan over tiles, tiles / WG per thread).
 * - `scatter`: each tile again, the tile's carry combined with the thread scan, then each thread walks its rows
 *   and writes a group's output row (group columns, aggregates) at the group's last row, at its rank.
 * No loop runs more than ITEMS rows, log2(WG) steps or tiles / WG tiles per thread. Decimal sums and averages
 * accumulate in 128 bits; one that does not fit the 64-bit result sets the word after the output rows
 * (u0.y = number of groups), which the host checks. float32 sums add in a fixed tree order (rows of a thread,
 * then threads, then tiles), not strictly row by row.
 */
import { rowWords, wordsOf, type Aggregate, type ScalarType } from '@vixen/queryplan';
import { sortKeyWords } from './sort.js';
import { columnWords, compareCode, header, lexCompareFn, workgroupScan } from '../wgsl.js';
import type { KernelShaders } from '../passes.js';

/** Consecutive rows per thread of a tile (TILE = AGG_ITEMS * WG rows): more rows per scan of the workgroup. */
export const AGG_ITEMS = 32;

/**
 * vec4 slots per scan round: 3 x 16 bytes x WG (256 at most) plus the head counts fit the 16 KiB of workgroup
 * memory every device has.
 */
const SCAN_SLOTS = 3;

type FieldType = 'u32' | 'f32' | 'vec2<u32>' | 'vec4<u32>';

const FIELD_WORDS: Record<FieldType, number> = { u32: 1, f32: 1, 'vec2<u32>': 2, 'vec4<u32>': 4 };

/** One aggregate's part of a state: field `f${k}` of struct St (count has none: it reads St.c). */
interface Field {
  type: FieldType;
  /** Field value of row `i` (a WGSL expression). */
  init: string;
  /** Merge of `a` (earlier rows) and `b` of the same segment. */
  merge: string;
}

interface Output {
  field?: Field;
  /** Statements run once at a group's end over state `s` (may set the overflow word). */
  finish: string;
  /** Result words. */
  words: string[];
}

/** WGSL value (u32, or vec2 for 2-word types) of column `c` of row `row`. */
function value(types: readonly ScalarType[], c: number, row: string): string {
  const words = columnWords('inp', `${row} * W_IN`, types, c);
  return words.length === 1 ? words[0]! : `vec2<u32>(${words.join(', ')})`;
}

/** A value as a signed 64-bit (lo, hi) pair, by type. */
export function as64(type: ScalarType, v: string): string {
  switch (type) {
    case 'int32':
      return `vec2<u32>(${v}, select(0u, 0xffffffffu, (${v} >> 31u) != 0u))`;
    case 'uint32':
      return `vec2<u32>(${v}, 0u)`;
    default:
      return v;
  }
}

/** Type of the state field of `fn` over `arg` (count has none). */
function fieldType(fn: Aggregate['fn'], arg: ScalarType | undefined): FieldType | undefined {
  if (fn === 'count') return undefined;
  const wide = arg !== undefined && wordsOf(arg) === 2;
  // float32: (least / greatest value that is not NaN, 1 when the first value is NaN).
  if (fn === 'min' || fn === 'max') return wide || arg === 'float32' ? 'vec2<u32>' : 'u32';
  if (arg === 'float32') return 'f32';
  if (fn === 'sum' && (arg === 'int32' || arg === 'uint32')) return 'u32';
  if (fn === 'sum' && arg === 'int64') return 'vec2<u32>';
  // Decimal sums and every integer or decimal average: exact 128-bit sums.
  return 'vec4<u32>';
}

/** Words of one tile state (count + fields) of `aggregates` over arguments of `argTypes`; the host sizes its buffer by it. */
export function aggregateStateWords(aggregates: readonly Aggregate[], argTypes: readonly (ScalarType | undefined)[]): number {
  return aggregates.reduce((n, a, k) => {
    const type = fieldType(a.fn, argTypes[k]);
    return n + (type ? FIELD_WORDS[type] : 0);
  }, 1);
}

function output(a: Aggregate, k: number, types: readonly ScalarType[]): Output {
  const f = `s.f${k}`;
  const arg = a.column === undefined ? undefined : types[a.column]!;
  const v = a.column === undefined ? '' : value(types, a.column, 'i');
  const type = fieldType(a.fn, arg);
  const words = (x: string): string[] => (arg !== undefined && wordsOf(arg) === 2 ? [`${x}.x`, `${x}.y`] : [x]);
  const overflow = `outp[u[0].y * W_OUT] = 1u;`;
  if (type === undefined) return { finish: '', words: ['s.c'] };
  switch (a.fn) {
    case 'count':
      throw new Error('internal: count has no field');
    case 'min':
    case 'max': {
      // The later value replaces the earlier only when strictly smaller (larger), as evalAggregate's fold.
      const op = a.fn === 'min' ? '<' : '>';
      if (arg === 'float32') {
        // That fold keeps a NaN first value and skips later NaNs: merging keeps the first flag of a and the
        // extreme of the non-NaN values of both (a NaN value field means none), so any merge order agrees.
        const nan = (x: string): string => `((${x} & 0x7fffffffu) > 0x7f800000u)`;
        const better = `(${nan('a.x')} || (!${nan('b.x')} && (bitcast<f32>(b.x) ${op} bitcast<f32>(a.x))))`;
        return {
          field: { type, init: `vec2<u32>(${v}, select(0u, 1u, ${nan(v)}))`, merge: `vec2<u32>(select(a.x, b.x, ${better}), a.y)` },
          finish: '',
          words: [`select(${f}.x, 0x7fc00000u, ${f}.y != 0u)`],
        };
      }
      return { field: { type, init: v, merge: `select(a, b, ${compareCode(op, arg!, words('b'), words('a'))})` }, finish: '', words: words(f) };
    }
    case 'sum':
    case 'avg':
      if (arg === 'float32') {
        const total = a.fn === 'sum' ? f : `(${f} / f32(s.c))`;
        return { field: { type, init: `bitcast<f32>(${v})`, merge: 'a + b' }, finish: '', words: [`canonF32(${total})`] };
      }
      if (arg !== 'int32' && arg !== 'uint32' && arg !== 'int64' && arg !== 'decimal') throw new Error(`internal: ${a.fn} of ${arg}`);
      if (type === 'u32') return { field: { type, init: v, merge: 'a + b' }, finish: '', words: [f] };
      if (type === 'vec2<u32>') return { field: { type, init: v, merge: 'add64(a, b)' }, finish: '', words: words(f) };
      if (a.fn === 'sum') {
        return {
          field: { type, init: `ext128(${v})`, merge: 'add128(a, b)' },
          finish: `if (!fits64(${f})) { ${overflow} }`,
          words: [`${f}.x`, `${f}.y`],
        };
      }
      // avg of an integer or decimal: exact 128-bit sum, then one decimal division.
      return {
        field: { type, init: `ext128(${as64(arg, v)})`, merge: 'add128(a, b)' },
        finish: `let avg${k} = avgDec(${f}, s.c, ${arg === 'decimal' ? 'false' : 'true'});\n      if (avg${k}.z != 0u) { ${overflow} }`,
        words: [`avg${k}.x`, `avg${k}.y`],
      };
  }
}

/** Words of a field value (for a state stored in a u32 buffer), and the value from words. */
function fieldWords(type: FieldType, x: string): string[] {
  switch (type) {
    case 'u32':
      return [x];
    case 'f32':
      return [`bitcast<u32>(${x})`];
    case 'vec2<u32>':
      return [`${x}.x`, `${x}.y`];
    case 'vec4<u32>':
      return [`${x}.x`, `${x}.y`, `${x}.z`, `${x}.w`];
  }
}

function fromWords(type: FieldType, words: string[]): string {
  switch (type) {
    case 'u32':
      return words[0]!;
    case 'f32':
      return `bitcast<f32>(${words[0]})`;
    case 'vec2<u32>':
    case 'vec4<u32>':
      return `${type}(${words.join(', ')})`;
  }
}

/**
 * State code shared by the three passes: struct St, rowSt, merge, loadSt / storeSt on buffer `buf` (the
 * scanned counts buffer; tile t's state at tiles + 1 + t * SW), and scanSt, the segmented inclusive scan of
 * the workgroup's states (heads per thread already scanned into `sums`) with each thread's exclusive prefix.
 * The scan moves fields packed in vec4 slots through workgroup memory, SCAN_SLOTS per round of log2(WG) steps,
 * so workgroup memory does not grow with the number of aggregates.
 */
function stateCode(fields: ReadonlyArray<{ name: string; field: Field }>, buf: string, rows: boolean, writes: boolean): string {
  const all = [{ name: 'c', field: { type: 'u32' as FieldType, init: '1u', merge: 'a + b' } }, ...fields];
  let at = 0;
  const loads: string[] = [];
  const stores: string[] = [];
  for (const { name, field } of all) {
    const n = FIELD_WORDS[field.type];
    loads.push(fromWords(field.type, Array.from({ length: n }, (_, w) => `${buf}[at + ${at + w}u]`)));
    fieldWords(field.type, `s.${name}`).forEach((w, j) => stores.push(`  ${buf}[at + ${at + j}u] = ${w};`));
    at += n;
  }
  const mergeFns = all.map(({ name, field }) => `fn m_${name}(a: ${field.type}, b: ${field.type}) -> ${field.type} { return ${field.merge}; }`);
  // Fields packed into vec4 slots (first fit, largest first; none split across two), SCAN_SLOTS slots per round.
  const slots: Array<Array<{ name: string; type: FieldType; at: number }>> = [];
  const used = (slot: (typeof slots)[number]): number => slot.reduce((w, f) => w + FIELD_WORDS[f.type], 0);
  for (const { name, field } of [...all].sort((x, y) => FIELD_WORDS[y.field.type] - FIELD_WORDS[x.field.type])) {
    const slot = slots.find((sl) => used(sl) + FIELD_WORDS[field.type] <= 4);
    if (slot) slot.push({ name, type: field.type, at: used(slot) });
    else slots.push([{ name, type: field.type, at: 0 }]);
  }
  const packSlot = (slot: (typeof slots)[number], from: string): string => {
    const ws = slot.flatMap((f) => fieldWords(f.type, `${from}.${f.name}`));
    return `vec4<u32>(${[...ws, '0u', '0u', '0u'].slice(0, 4).join(', ')})`;
  };
  const unpackField = (f: (typeof slots)[number][number], v: string): string =>
    fromWords(f.type, Array.from({ length: FIELD_WORDS[f.type] }, (_, w) => `${v}.${'xyzw'[f.at + w]}`));
  const scans: string[] = [];
  for (let r = 0; r < slots.length; r += SCAN_SLOTS) {
    const round = slots.slice(r, r + SCAN_SLOTS);
    const put = round.map((slot, j) => `sv${j}[lid] = ${packSlot(slot, 'inc')};`).join(' ');
    const take = (at: string, into: string, merged: boolean): string =>
      round
        .flatMap((slot, j) => slot.map((f) => (merged ? `${into}.${f.name} = m_${f.name}(${unpackField(f, `sv${j}[${at}]`)}, ${into}.${f.name});` : `${into}.${f.name} = ${unpackField(f, `sv${j}[${at}]`)};`)))
        .join('\n      ');
    scans.push(`  for (var off = 1u; off < WG; off = off * 2u) {
    ${put}
    workgroupBarrier();
    if (lid >= off && sums[lid] == sums[lid - off]) {
      ${take('lid - off', 'inc', true)}
    }
    workgroupBarrier();
  }
  ${put}
  workgroupBarrier();
  if (lid > 0u) {
      ${take('lid - 1u', 'exc', false)}
  }
  workgroupBarrier();`);
  }
  const svDecls = Array.from({ length: Math.min(slots.length, SCAN_SLOTS) }, (_, j) => `var<workgroup> sv${j}: array<vec4<u32>, WG>;`).join('\n');
  const code = `
const SW: u32 = ${at}u;
struct St { ${all.map(({ name, field }) => `${name}: ${field.type}`).join(', ')} }
${mergeFns.join('\n')}
${rows ? `fn rowSt(i: u32) -> St { return St(${all.map(({ field }) => field.init).join(', ')}); }\n` : ''}// a: the earlier rows; an empty a (count 0) is the identity.
fn merge(a: St, b: St) -> St {
  if (a.c == 0u) { return b; }
  return St(${all.map(({ name }) => `m_${name}(a.${name}, b.${name})`).join(', ')});
}
fn loadSt(at: u32) -> St { return St(${loads.join(', ')}); }
${writes ? `fn storeSt(at: u32, s: St) {\n${stores.join('\n')}\n}\n` : ''}${svDecls}
// (inclusive, exclusive) segmented scan; a range merges into a later one only when the later has no head
// (equal inclusive head counts at both ends). The exclusive prefix of thread 0 is its own state.
fn scanSt(lid: u32, x: St) -> array<St, 2> {
  var inc = x;
  var exc = x;
${scans.join('\n')}
  return array<St, 2>(inc, exc);
}
`;
  return code;
}

export function aggregateShaders(types: readonly ScalarType[], groupBy: readonly number[], aggregates: readonly Aggregate[]): KernelShaders {
  const width = rowWords(types);
  const cmpKey = lexCompareFn(
    'cmpKey',
    sortKeyWords(types, groupBy).map((o): [string, string] => [`inp[a * ${width}u + ${o}u]`, `inp[b * ${width}u + ${o}u]`]),
  );
  const outs = aggregates.map((a, k) => output(a, k, types));
  const fields = outs.flatMap((o, k) => (o.field ? [{ name: `f${k}`, field: o.field }] : []));
  const words = [...groupBy.flatMap((c) => columnWords('inp', 'i * W_IN', types, c)), ...outs.flatMap((o) => o.words)];
  const outWords = rowWords([...groupBy.map((c) => types[c]!), ...aggregates.map((a) => a.type)]);
  if (words.length !== outWords) throw new Error('internal: aggregate output words');
  const scan = workgroupScan(false);
  const tilePrelude = `const W_IN: u32 = ${width}u;
const ITEMS: u32 = ${AGG_ITEMS}u;
override TILE: u32 = ITEMS * WG;
${cmpKey}
fn isHead(i: u32) -> bool { return i == 0u || cmpKey(i - 1u, i) != 0; }
${scan.decls}`;
  // Thread lid's rows r0.. r0 + ITEMS (clipped at n): heads and the state from the last head (or r0) on.
  const fold = `  let r0 = base + lid * ITEMS;
  var s: St;
  var heads = 0u;
  for (var k = 0u; k < ITEMS; k = k + 1u) {
    let i = r0 + k;
    if (i < n) {
      let x = rowSt(i);
      if (isHead(i)) {
        heads = heads + 1u;
        s = x;
      } else {
        s = merge(s, x);
      }
    }
  }
  scanSums(lid, heads, ${scan.sg});
  let scanned = scanSt(lid, s);`;
  const main = (body: string): string => `
@compute @workgroup_size(WG)
fn main(@builtin(local_invocation_index) lid: u32, @builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
  let n = u[0].x;
  // The layout's tiles, of the host's bound on n (n may be a row count the device copied in).
  let tiles = u[0].z;
  let t = wid.x + wid.y * nwg.x;
  let base = t * TILE;
${body}
}
`;
  const tileState = stateCode(fields, 'counts', true, true);
  const flags = `${header('flags', ['inp', 'counts'])}
${tilePrelude}${tileState}${main(`  if (t == 0u && lid == 0u) { counts[tiles] = 0u; }
  if (base >= n) { return; }
${fold}
  // The last thread with rows holds the tile's state.
  if (lid == (min(n - base, TILE) - 1u) / ITEMS) {
    counts[t] = sums[lid];
    storeSt(tiles + 1u + t * SW, scanned[0]);
  }`)}`;
  const carryState = stateCode(fields, 'offs', false, true);
  const carry = `${header('aggCarry', ['offs'])}
const ITEMS: u32 = ${AGG_ITEMS}u;
override TILE: u32 = ITEMS * WG;
${scan.decls}${carryState}
@compute @workgroup_size(WG)
fn main(@builtin(local_invocation_index) lid: u32) {
  let tiles = u[0].z;
  let per = (tiles + WG - 1u) / WG;
  let first = min(lid * per, tiles);
  let last = min(first + per, tiles);
  var s: St;
  var heads = 0u;
  for (var k = first; k < last; k = k + 1u) {
    let h = offs[k + 1u] - offs[k];
    let x = loadSt(tiles + 1u + k * SW);
    heads = heads + h;
    if (h > 0u) { s = x; } else { s = merge(s, x); }
  }
  scanSums(lid, heads, ${scan.sg});
  let scanned = scanSt(lid, s);
  // Tile k's carry: the state of the segment open before it (empty before tile 0).
  var e: St;
  if (lid > 0u) { e = scanned[1]; }
  for (var k = first; k < last; k = k + 1u) {
    let h = offs[k + 1u] - offs[k];
    let x = loadSt(tiles + 1u + k * SW);
    storeSt(tiles + 1u + k * SW, e);
    if (h > 0u) { e = x; } else { e = merge(e, x); }
  }
}
`;
  const emitState = stateCode(fields, 'offs', true, false);
  const emit = `${header('scatter', ['inp', 'offs', 'outp'])}
const W_OUT: u32 = ${outWords}u;
${tilePrelude}${emitState}${main(`  if (base >= n) { return; }
${fold}
  // Heads before this thread's rows in the tile; the state open at r0: the tile's carry, continued by the
  // threads before when none of them has a head.
  var before = sums[lid] - heads;
  var s0 = loadSt(tiles + 1u + t * SW);
  if (lid > 0u) {
    if (before > 0u) { s0 = scanned[1]; } else { s0 = merge(s0, scanned[1]); }
  }
  var acc = s0;
  var head = r0 < n && isHead(r0);
  for (var k = 0u; k < ITEMS; k = k + 1u) {
    let i = r0 + k;
    if (i >= n) { break; }
    let x = rowSt(i);
    if (head) {
      before = before + 1u;
      acc = x;
    } else {
      acc = merge(acc, x);
    }
    head = i + 1u >= n || isHead(i + 1u);
    if (head) {
      let s = acc;
      ${outs.map((o) => o.finish).filter(Boolean).join('\n      ')}
      let ob = (offs[t] + before - 1u) * W_OUT;
${words.map((w, k) => `      outp[ob + ${k}u] = ${w};`).join('\n')}
    }
  }`)}`;
  return { flags, aggCarry: carry, scatter: emit };
}
