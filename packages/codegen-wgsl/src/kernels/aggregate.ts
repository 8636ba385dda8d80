/**
 * Reduce by key over input whose groups are adjacent rows, as a parallel segmented reduction (semantics of
 * @vixen/queryplan's `evalAggregate`). A group's rows form a segment; a row is a segment head when its group
 * key differs from the previous row's. A state is (count, one field per aggregate); merging two states of the
 * same segment adds counts and sums (128-bit sums as multi-word adds with carries, so exact in any order) and
 * keeps the earlier of equal minima and maxima.
 * - `flags`: workgroup t owns the tile of TILE rows from t * TILE; each thread folds ITEMS consecutive rows, a
 *   segmented scan over the threads gives the tile's state (rows from its last head to its end, or all its
 *   rows). counts[t] = heads in the tile (scanned by the host into group ranks), the state after the counts; and
 *   per thread, the heads before its rows in the tile and the state open at its first row (the scan's exclusive
 *   prefix), after the tile states.
 * - `aggCarry`: one workgroup turns the tile states in place into carries: the state of the segment open at
 *   each tile's start (a segmented exclusive scan over tiles, tiles / WG per thread).
 * - `scatter`: each thread starts from the tile's carry and its own prefix, walks its rows and writes a group's
 *   output row (group columns, aggregates) at the group's rank once it has seen the group's last row.
 * Rows are read coalesced: a thread's ITEMS rows go through workgroup memory in rounds of SUB rows, consecutive
 * threads loading consecutive words of the round (a thread reading its own rows from memory loads words
 * 12 x ITEMS bytes apart from its neighbours': TPC-H Q18's 18M rows took 19x their read time on the H200). Rows
 * too wide to stage are read from the buffer. No loop runs more than ITEMS rows, log2(WG) steps or tiles / WG
 * tiles per thread. Decimal sums and averages accumulate in 128 bits; one that does not fit the 64-bit result
 * sets the word after the output rows (u0.y = room for groups), which the host checks. float32 sums add in a
 * fixed tree order (rows of a thread, then threads, then tiles), not strictly row by row.
 */
import { rowWords, wordsOf, type Aggregate, type ScalarType } from '@vixen/queryplan';
import { AGGREGATE_STAGED_WORDS } from '@vixen/kernel-ir';
import { compareCode, header, workgroupScan } from '../wgsl.js';
import type { KernelShaders } from '../passes.js';
import { sortKeyWords } from './sort.js';

/** Consecutive rows per thread of a tile (TILE = AGG_ITEMS * WG rows): more rows per scan of the workgroup. */
export const AGG_ITEMS = 32;

/**
 * vec4 slots per scan round: 3 x 16 bytes x WG (256 at most) plus the head counts fit the 16 KiB of workgroup
 * memory every device has.
 */
const SCAN_SLOTS = 3;

/**
 * Words per thread of workgroup memory the rows of a round are staged in (15), shared with the scan's slots
 * (4 x SCAN_SLOTS, which come after the fold): with the head counts, 16 x 4 bytes x 256 threads, the 16 KiB every
 * device has.
 */
const STAGE_WORDS = AGGREGATE_STAGED_WORDS;

/**
 * Words of the scratch buffer of `n` rows: group starts per tile (scanned into ranks), one state per tile, then each
 * thread's prefix (heads before it in its tile, then the state open at its first row).
 */
export function aggregateScratchWords(n: number, workgroupSize: number, aggregates: readonly Aggregate[], argTypes: readonly (ScalarType | undefined)[]): number {
  const tiles = Math.ceil(n / (AGG_ITEMS * workgroupSize));
  const sw = aggregateStateWords(aggregates, argTypes);
  // Threads with rows only (thread r0 / ITEMS for its first row r0): few rows must fit small bindings too.
  return tiles + 1 + tiles * sw + Math.ceil(n / AGG_ITEMS) * (sw + 1);
}

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

/** The WGSL words of column `c` of the row at hand. */
type ColumnWords = (c: number) => string[];

/** WGSL value (u32, or vec2 for 2-word types) of column `c`. */
function value(col: ColumnWords, c: number): string {
  const words = col(c);
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
function aggregateStateWords(aggregates: readonly Aggregate[], argTypes: readonly (ScalarType | undefined)[]): number {
  return aggregates.reduce((n, a, k) => {
    const type = fieldType(a.fn, argTypes[k]);
    return n + (type ? FIELD_WORDS[type] : 0);
  }, 1);
}

function output(a: Aggregate, k: number, types: readonly ScalarType[], col: ColumnWords): Output {
  const f = `s.f${k}`;
  const arg = a.column === undefined ? undefined : types[a.column]!;
  const v = a.column === undefined ? '' : value(col, a.column);
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
 * State code shared by the three passes: struct St, merge, loadSt on buffer `buf` (the scanned counts buffer; tile
 * t's state at tiles + 1 + t * SW) and, with `scan` (the passes that write states), storeSt and scanSt: the
 * segmented inclusive scan of the workgroup's states (heads per thread already scanned into `sums`) with each
 * thread's exclusive prefix. The scan moves fields packed in vec4 slots through workgroup memory `wgm`
 * (component-major: no bank conflicts), SCAN_SLOTS per round of log2(WG) steps, so workgroup memory does not grow
 * with the number of aggregates. `wgm` also has `stageWords` words per thread for the rows of a round (used before
 * the scan, never during it).
 */
function stateCode(fields: ReadonlyArray<{ name: string; field: Field }>, buf: string, scan: boolean, stageWords: number): string {
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
  // Word c of slot j of thread x.
  const slotWord = (j: number, c: number, x: string): string => `wgm[${j * 4 + c}u * WG + ${x}]`;
  const put = (round: typeof slots): string =>
    round
      .flatMap((slot, j) => {
        const ws = slot.flatMap((f) => fieldWords(f.type, `inc.${f.name}`));
        return ws.map((w, c) => `${slotWord(j, c, 'lid')} = ${w};`);
      })
      .join(' ');
  const unpackField = (j: number, f: (typeof slots)[number][number], x: string): string =>
    fromWords(f.type, Array.from({ length: FIELD_WORDS[f.type] }, (_, w) => slotWord(j, f.at + w, x)));
  const scans: string[] = [];
  for (let r = 0; r < slots.length; r += SCAN_SLOTS) {
    const round = slots.slice(r, r + SCAN_SLOTS);
    const take = (x: string, into: string, merged: boolean): string =>
      round
        .flatMap((slot, j) => slot.map((f) => (merged ? `${into}.${f.name} = m_${f.name}(${unpackField(j, f, x)}, ${into}.${f.name});` : `${into}.${f.name} = ${unpackField(j, f, x)};`)))
        .join('\n      ');
    scans.push(`  for (var off = 1u; off < WG; off = off * 2u) {
    ${put(round)}
    workgroupBarrier();
    if (lid >= off && sums[lid] == sums[lid - off]) {
      ${take('lid - off', 'inc', true)}
    }
    workgroupBarrier();
  }
  ${put(round)}
  workgroupBarrier();
  if (lid > 0u) {
      ${take('lid - 1u', 'exc', false)}
  }
  workgroupBarrier();`);
  }
  const wgmWords = Math.max(scan ? 4 * Math.min(slots.length, SCAN_SLOTS) : 0, stageWords);
  const code = `
const SW: u32 = ${at}u;
struct St { ${all.map(({ name, field }) => `${name}: ${field.type}`).join(', ')} }
${mergeFns.join('\n')}
// A row's state: the count 1 and each aggregate's field of the row.
fn rowSt(${all.length > 1 ? all.slice(1).map(({ name, field }) => `${name}: ${field.type}`).join(', ') : ''}) -> St { return St(1u${all.slice(1).map(({ name }) => `, ${name}`).join('')}); }
// a: the earlier rows; an empty a (count 0) is the identity.
fn merge(a: St, b: St) -> St {
  if (a.c == 0u) { return b; }
  return St(${all.map(({ name }) => `m_${name}(a.${name}, b.${name})`).join(', ')});
}
fn loadSt(at: u32) -> St { return St(${loads.join(', ')}); }
${scan ? `fn storeSt(at: u32, s: St) {\n${stores.join('\n')}\n}\n` : ''}${wgmWords > 0 ? `var<workgroup> wgm: array<u32, ${wgmWords}u * WG>;\n` : ''}${
    scan
      ? `// (inclusive, exclusive) segmented scan; a range merges into a later one only when the later has no head
// (equal inclusive head counts at both ends). The exclusive prefix of thread 0 is its own state.
fn scanSt(lid: u32, x: St) -> array<St, 2> {
  var inc = x;
  var exc = x;
${scans.join('\n')}
  return array<St, 2>(inc, exc);
}
`
      : ''
  }`;
  return code;
}

export function aggregateShaders(types: readonly ScalarType[], groupBy: readonly number[], aggregates: readonly Aggregate[]): KernelShaders {
  const width = rowWords(types);
  const at = types.map((_, c) => types.slice(0, c).reduce((n, t) => n + wordsOf(t), 0));
  // Rows of a round per thread: as many as fit STAGE_WORDS; rows wider than that (or of no words) are read from
  // the buffer, in one round.
  const staged = width > 0 && width <= STAGE_WORDS;
  const perRound = staged ? Math.min(AGG_ITEMS, Math.floor(STAGE_WORDS / width)) : AGG_ITEMS;
  const rounds = Math.ceil(AGG_ITEMS / perRound);
  // Words of a thread's rows in a round, then its stride in `wgm`: odd, so that consecutive threads' rows start in
  // different banks (an even round is at most 14 words, so one more still fits).
  const seg = perRound * width;
  const segPad = seg % 2 === 1 ? seg : seg + 1;
  // A row's word w: staged (thread lid's k-th row of the round at lid * SEGP + k * W_IN) or from the buffer.
  const rowWord = (w: number): string => (staged ? `wgm[sb + ${w}u]` : `inp[i * W_IN + ${w}u]`);
  const col: ColumnWords = (c) => Array.from({ length: wordsOf(types[c]!) }, (_, w) => rowWord(at[c]! + w));
  // The group key's words (the group columns' words, in output order).
  const keyWords = sortKeyWords(types, groupBy);
  const KW = keyWords.length;
  const outs = aggregates.map((a, k) => output(a, k, types, col));
  const fields = outs.flatMap((o, k) => (o.field ? [{ name: `f${k}`, field: o.field }] : []));
  const words = [...keyWords.map((_, w) => `key[${w}]`), ...outs.flatMap((o) => o.words)];
  const outWords = rowWords([...groupBy.map((c) => types[c]!), ...aggregates.map((a) => a.type)]);
  if (words.length !== outWords) throw new Error('internal: aggregate output words');
  const stageWords = staged ? segPad : 0;
  const scan = workgroupScan(false);
  const x = `rowSt(${fields.map(({ field }) => field.init).join(', ')})`;
  // The key of the previous row (cur) and whether row i starts a group, read from the row at hand.
  const keyDecl = KW > 0 ? `var cur: array<u32, ${KW}>;` : '';
  const headOf = KW > 0 ? `i == 0u || ${keyWords.map((o, w) => `${rowWord(o)} != cur[${w}]`).join(' || ')}` : 'i == 0u';
  const keepKey = keyWords.map((o, w) => `cur[${w}] = ${rowWord(o)};`).join(' ');
  // cur from row j of the buffer (the row before a thread's first, or the one after its last).
  const keyFrom = (j: string): string => keyWords.map((o, w) => `cur[${w}] = inp[${j} * W_IN + ${o}u];`).join(' ');
  const differsFrom = (j: string): string => (KW > 0 ? keyWords.map((o, w) => `inp[${j} * W_IN + ${o}u] != cur[${w}]`).join(' || ') : 'false');
  const tilePrelude = `const W_IN: u32 = ${width}u;
const ITEMS: u32 = ${AGG_ITEMS}u;
const SUB: u32 = ${perRound}u;
const ROUNDS: u32 = ${rounds}u;
const SEG: u32 = ${seg}u;
const SEGP: u32 = ${segPad}u;
override TILE: u32 = ITEMS * WG;
`;
  // Round r of the tile's rows into wgm: word o of thread t's rows at t * SEGP + o, consecutive threads loading
  // consecutive words. The barriers are in uniform control flow: every thread runs every round.
  // Each thread loads SEG words of a round (word e * WG + lid; a word past the rows reads word 0 and is never read
  // back), unrolled and without branches so that they are all in flight at once; those of round r + 1 while it
  // folds round r's (software pipelining: a workgroup waits on its loads only where its first round starts).
  const load = (round: string): string =>
    Array.from(
      { length: seg },
      (_, e) => `    { let w = ${e}u * WG + lid; let th = w / SEG; let o = w - th * SEG; let j = ${round} * SUB + o / W_IN;
      v${e} = inp[select(0u, (base + th * ITEMS + ${round} * SUB) * W_IN + o, j < ITEMS && base + th * ITEMS + j < n)]; }`,
    ).join('\n');
  const stageDecl = staged ? `  ${Array.from({ length: seg }, (_, e) => `var v${e}: u32;`).join(' ')}\n${load('0u')}\n` : '';
  const stage = staged
    ? `    workgroupBarrier();
${Array.from({ length: seg }, (_, e) => `    { let w = ${e}u * WG + lid; let th = w / SEG; wgm[th * SEGP + w - th * SEG] = v${e}; }`).join('\n')}
    workgroupBarrier();
${load('(r + 1u)')}
`
    : '';
  // The rows of thread lid (r0 .. r0 + ITEMS, clipped at n) in order: `body` sees row i and its state x.
  const walk = (body: string): string => `  let r0 = base + lid * ITEMS;
  ${keyDecl}
  if (r0 > 0u && r0 < n) { ${keyFrom('(r0 - 1u)')} }
${stageDecl}  for (var r = 0u; r < ROUNDS; r = r + 1u) {
${stage}    for (var k = 0u; k < SUB; k = k + 1u) {
      let j = r * SUB + k;
      let i = r0 + j;
      if (j < ITEMS && i < n) {
        let sb = lid * SEGP + k * W_IN;
        let x = ${x};
        let head = ${headOf};
${body}
        ${keepKey}
      }
    }
  }`;
  const main = (body: string): string => `
@compute @workgroup_size(WG)
fn main(@builtin(local_invocation_index) lid: u32, @builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
  let n = u[0].x;
  // The layout's tiles, of the host's bound on n (n may be a row count the device copied in).
  let tiles = u[0].z;
  let t = wid.x + wid.y * nwg.x;
  let base = t * TILE;
  // Thread lid's prefix (at its first row r0 / ITEMS = t * WG + lid, for threads with rows): the heads before
  // its rows in the tile, then the state open at its first row.
  let pre = tiles + 1u + tiles * SW + (t * WG + lid) * (SW + 1u);
${body}
}
`;
  const tileState = stateCode(fields, 'counts', true, stageWords);
  const flags = `${header('flags', ['inp', 'counts'])}
${tilePrelude}${scan.decls}${tileState}${main(`  if (t == 0u && lid == 0u) { counts[tiles] = 0u; }
  if (base >= n) { return; }
  // Heads among the thread's rows, and the state from the last of them (or its first row) on.
  var s: St;
  var heads = 0u;
${walk(`        if (head) {
          heads = heads + 1u;
          s = x;
        } else {
          s = merge(s, x);
        }`)}
  scanSums(lid, heads, ${scan.sg});
  let scanned = scanSt(lid, s);
  // The last thread with rows holds the tile's state.
  if (lid == (min(n - base, TILE) - 1u) / ITEMS) {
    counts[t] = sums[lid];
    storeSt(tiles + 1u + t * SW, scanned[0]);
  }
  if (r0 < n) {
    counts[pre] = sums[lid] - heads;
    storeSt(pre + 1u, scanned[1]);
  }`)}`;
  const carryState = stateCode(fields, 'offs', true, 0);
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
  const emitState = stateCode(fields, 'offs', false, stageWords);
  const emit = `${header('scatter', ['inp', 'offs', 'outp'])}
const W_OUT: u32 = ${outWords}u;
${tilePrelude}${emitState}
// Group rank g's output row from its state s and key (rows past the room u0.y are not written: a guessed room
// that was too small, which the host checks).
fn emit(s: St, g: u32${KW > 0 ? `, key: array<u32, ${KW}>` : ''}) {
  if (g >= u[0].y) { return; }
  ${outs.map((o) => o.finish).filter(Boolean).join('\n  ')}
  let ob = g * W_OUT;
${words.map((w, k) => `  outp[ob + ${k}u] = ${w};`).join('\n')}
}
${main(`  if (base >= n) { return; }
  // The state open at r0 (the tile's carry, continued by the threads before when none of them has a head) and
  // the heads before it in the tile.
  var acc: St;
  var before = 0u;
  if (base + lid * ITEMS < n) {
    acc = loadSt(tiles + 1u + t * SW);
    if (lid > 0u) {
      before = offs[pre];
      let e = loadSt(pre + 1u);
      if (before > 0u) { acc = e; } else { acc = merge(acc, e); }
    }
  }
  // A group is written at the head of the next (its last row is before it), or at the thread's end where the
  // next row starts a group or there is none.
${walk(`        if (head) {
          if (i > r0) { emit(acc, offs[t] + before - 1u${KW > 0 ? ', cur' : ''}); }
          before = before + 1u;
          acc = x;
        } else {
          acc = merge(acc, x);
        }`)}
  let end = min(r0 + ITEMS, n);
  if (r0 < n && (end == n || ${differsFrom('end')})) { emit(acc, offs[t] + before - 1u${KW > 0 ? ', cur' : ''}); }`)}`;
  return { flags, aggCarry: carry, scatter: emit };
}
