/**
 * The pass shared by the compacting kernels (mapFilter, unique, difference): single-pass stream compaction
 * that keeps input order. A workgroup owns a tile of COMPACT_ITEMS * WG consecutive rows (tiles handed out in
 * the order workgroups start). It evaluates the keep predicate once per row, publishes the tile's kept-row count
 * at once, packs one keep bit per row into words and ranks the kept rows from a scan of the words' popcounts; the
 * tile's output offset comes from a decoupled look-back over the tiles before it (Merrill and Garland's
 * single-pass scan), so the input is read once from memory and there is no host-side scan; where the reader
 * does not need input order, the offset is an atomic instead (SELECT_UNORDERED). Each workgroup waits
 * only on tiles handed out before its own, which have started, so it makes progress wherever started workgroups
 * run to completion. Where the words a row's test and projection read fit a thread's registers for all its rows,
 * they are loaded once and written from there: on the H100 (2^28 int32, 1% / 50% / 100% kept) that took the
 * pass's device time from 0.63 / 0.90 / 1.13 ms (16 rows a thread, kept rows read again to be written) to
 * 0.48 / 0.75 / 0.94 ms (`bench operators --sizes 28 --operators mapFilter`).
 */
import { rowWords } from '@vixen/queryplan';
import type { Expr, ScalarType } from '@vixen/queryplan';
import { atomicBinding, columnWords, header, projectCode, SUBGROUP_VARIANT, tileKeepMask, workgroupScan, type ColumnResolver } from '../wgsl.js';

/**
 * Rows per thread of a select tile: at most 32, so that a tile has at most one keep word per thread. Many rows per
 * tile spread the tile's fixed costs (its number, the look-back) thin.
 */
export const COMPACT_ITEMS = 32;

/** Words of rows a thread may hold in registers (COMPACT_ITEMS rows of the words its test and projection read). */
const REGISTER_WORDS = 64;

/**
 * Longest WGSL of a row's test (and of its projection) that the pass's subgroup variant runs once per row of a
 * thread in unrolled code (written out, or in the held rows' loops, which a GPU compiler unrolls to keep the rows in
 * registers): longer ones are evaluated in a loop, since COMPACT_ITEMS copies of a long test (string matching, say)
 * take long to build.
 */
const UNROLLED_CODE = 400;

/** Words of the select pass's state before the tile statuses: the tile counter and the kept-row total. */
export const SELECT_STATE_HEAD = 2;

/**
 * Bit of the select pass's mode (uniform u0.z, with 0 count only, 1 write, 2 write and count word): kept rows may
 * leave in any order across tiles, as Crystal's select does (one atomic per tile for its offset, no look-back).
 * Order within a tile is kept. On the H100 at 2^28 int32 (1 / 50 / 100% kept) the look-back's waits on the tiles
 * before made the pass 0.50 / 0.78 / 0.95 ms against 0.37 / 0.54 / 0.73 ms without them; neither a wider look-back
 * window, nor loading the next tile during it, nor bigger tiles took more than 10% of that difference away.
 */
export const SELECT_UNORDERED = 4;

/**
 * Bit of the select pass's mode: publish the tile statuses and stop, before a run of the pass (tile counter zeroed
 * between) whose look-back then never waits. CPU adapters take it: llvmpipe ends a shader's loops after 65,535
 * iterations in all (Mesa's LP_MAX_TGSI_LOOP_ITERATIONS), so a look-back waiting on a tile whose thread the OS has
 * not run would give up with a wrong offset. Each of its rounds costs about 4 us there (256 threads, three
 * barriers), a wait of about 0.25 s; a 2,000,003-row select under load (load average 7 on 2 cores) ran 100 times
 * waited over 1,024 rounds in 53 runs and never over 8,192, so this is a margin made certain, not a failure seen.
 */
export const SELECT_PUBLISH = 8;

/** A select pass's kernel-specific parts. */
export interface Selection {
  /** `select` (one input) or `selectAbsent` (left and right), see PASS_LAYOUTS. */
  pass: 'select' | 'selectAbsent';
  /** Names of the input bindings; the rows written are those of the first. */
  inputs: readonly string[];
  inputTypes: readonly ScalarType[];
  /** WGSL bool over row index `i` and its first word `b`. */
  keep: string;
  /** The same test over any reader of the row's columns (lets the pass test rows it holds in registers). */
  keepOf?: (cols: ColumnResolver) => string;
  /** WGSL functions `keep` calls. */
  helpers: string;
  /**
   * `keep` loops (a search): evaluated in a loop over a tile's rows rather than written out once per row, which
   * would copy the loop COMPACT_ITEMS times into the pass.
   */
  keepLoops?: boolean;
  /**
   * WGSL every thread of a workgroup runs once its tile (rows base.. below n) is known, before any row is tested,
   * followed by a barrier: workgroup state `keep` reads (a search window, say).
   */
  tileSetup?: string;
  project: readonly Expr[];
  constOffsets: ReadonlyMap<Expr, number>;
  constWords: number;
}

/**
 * A select pass by name, with a variant that scans the tile's keep-word counts with subgroup operations. (Packing
 * the keep bits themselves from ballots, with workgroup atomics, ran 3.8x slower on the H100 at 1% selectivity.)
 */
export function selectShaders(s: Selection): Record<string, string> {
  const held = heldRows(s);
  return { [s.pass]: selectPass(s, held, false), [`${s.pass}${SUBGROUP_VARIANT}`]: selectPass(s, held, true) };
}

/** Select pass: the rows where `keep` holds, written projected, in input order. */
function selectPass(s: Selection, held: HeldRows | undefined, subgroups: boolean): string {
  const outWords = s.project.reduce((n, e) => n + rowWords([e.type]), 0);
  // The plain variant is the one CPU adapters (llvmpipe, without subgroups) run, and llvmpipe builds unrolled code
  // slowly (the fuzz tests' programs took 3x as long with a cold shader cache): there the test stays in a loop, and
  // the held rows' loops take their bound from workgroup memory, which Mesa cannot fold (a loop indexing a private
  // array by a constant-bounded counter it unrolls, making the pass 4x as slow to build).
  const lean = !subgroups;
  const rowsHeld = lean ? 'rowsHeld' : 'ITEMS';
  // Row k of the thread (tile row k * WG + lid): its held words at x[k * HELD + slot], slot the word's place in
  // held.words; with ITEMS as the bound, a GPU's compiler unrolls the loops over k and keeps x in registers.
  const cols: ColumnResolver = (c) =>
    columnWords(s.inputs[0]!, 'b', s.inputTypes, c).map((_, w) => `x[k * HELD + ${held!.words.indexOf(rowWords(s.inputTypes.slice(0, c)) + w)}u]`);
  const load = (held?.words ?? []).map((w, slot) => `x[k * HELD + ${slot}u] = ${s.inputs[0]}[(base + k * WG + lid) * W_IN + ${w}u];`).join(' ');
  // The rows are tested once, after the loads; in the last tile, rows past n are loaded as nothing and masked off.
  const keepMask = held
    ? `  var x: array<u32, ${COMPACT_ITEMS * held.words.length}>;
  var valid = ${2 ** COMPACT_ITEMS - 1}u;
  if (base + TILE <= n) {
    for (var k = 0u; k < ${rowsHeld}; k = k + 1u) { ${load} }
  } else {
    valid = 0u;
    for (var k = 0u; k < ${rowsHeld}; k = k + 1u) {
      if (base + k * WG + lid < n) { valid = valid | (1u << k); ${load} }
    }
  }
  var mine = 0u;
  for (var k = 0u; k < ${rowsHeld}; k = k + 1u) {
    mine = mine | select(0u, 1u << k, ${held.keepOf(cols)});
  }
  mine = mine & valid;`
    : tileKeepMask(s.keep, COMPACT_ITEMS, lean || s.keepLoops || s.keep.length > UNROLLED_CODE);
  // Kept row r: its rank is the kept rows of the tile's words before its word j, less those of word j from r on.
  const writes = held
    ? `  for (var k = 0u; k < ${rowsHeld}; k = k + 1u) {
    if (((mine >> k) & 1u) != 0u) {
      let j = k * (WG / 32u) + lid / 32u;
      let ob = (start + sums[j] - countOneBits(bits[j] >> (lid % 32u))) * W_OUT;
${projectCode(s.project, 'outp', 'ob', cols, s.constOffsets).replace(/^/gm, '  ')}
    }
  }`
    : `  for (var k = 0u; k < ITEMS; k = k + 1u) {
    if (((mine >> k) & 1u) != 0u) {
      let r = k * WG + lid;
      let j = r / 32u;
      let b = (base + r) * W_IN;
      let ob = (start + sums[j] - countOneBits(bits[j] >> (r % 32u))) * W_OUT;
${projectCode(s.project, 'outp', 'ob', (c) => columnWords(s.inputs[0]!, 'b', s.inputTypes, c), s.constOffsets).replace(/^/gm, '  ')}
    }
  }`;
  const scan = workgroupScan(subgroups);
  return `${scan.enable}${atomicBinding(header(s.pass, [...s.inputs, 'state', 'outp'], s.constWords), 'state')}
${s.helpers}const W_IN: u32 = ${rowWords(s.inputTypes)}u;
const W_OUT: u32 = ${outWords}u;
const ITEMS: u32 = ${COMPACT_ITEMS}u;
override TILE: u32 = ITEMS * WG;
override WORDS: u32 = TILE / 32u;
const HEAD: u32 = ${SELECT_STATE_HEAD}u;${held ? `\nconst HELD: u32 = ${held.words.length}u;` : ''}
// Tiles a look-back round reads: the nearest prefix is mostly a few tiles back, and every lane of a round costs
// a read and a workgroup atomic (a window of WG lanes ran 1% selections 10% slower on the H100).
override LOOK: u32 = min(WG, 32u);
// Tile t's status word state[HEAD + t]: 0 until published, then AGGREGATE | its kept rows, then PREFIX | the kept
// rows of tiles 0..t. Counts fit 30 bits (the host bounds n).
const AGGREGATE: u32 = 0x40000000u;
const PREFIX: u32 = 0x80000000u;
const COUNT: u32 = 0x3fffffffu;
// u0.z bits: rows may leave in any order across tiles; publish the tile statuses only.
const UNORDERED: u32 = ${SELECT_UNORDERED}u;
const PUBLISH: u32 = ${SELECT_PUBLISH}u;
var<workgroup> tileId: u32;
var<workgroup> tileStart: u32;
var<workgroup> tileTotal: atomic<u32>;${held && lean ? '\nvar<workgroup> rowsHeld: u32;' : ''}
// Each thread's keep bits (its \`mine\`), then the tile's keep words; sums (scanSums) holds their inclusive
// popcount prefix sums.
var<workgroup> kept: array<u32, WG>;
var<workgroup> bits: array<u32, WORDS>;
${scan.decls}
// Look-back state: the kept rows of the tiles before this one added so far; per round, the nearest tile of the
// window holding a prefix and the nearest not yet published (window lanes, LOOK = none), then the lanes to add.
var<workgroup> behind: atomic<u32>;
var<workgroup> firstPrefix: atomic<u32>;
var<workgroup> firstOpen: atomic<u32>;
var<workgroup> lookStep: u32;

@compute @workgroup_size(WG)
fn main(@builtin(local_invocation_index) lid: u32${scan.builtins}) {
  if (lid == 0u) {
    tileId = atomicAdd(&state[0], 1u);${held && lean ? '\n    rowsHeld = ITEMS;' : ''}
    atomicStore(&behind, 0u);
    atomicStore(&tileTotal, 0u);
  }
  let t = workgroupUniformLoad(&tileId);
  let n = u[0].x;
  // The tile holding row n - 1 (tile 0 when n = 0) writes the total; tiles past it (the grid covers the host's
  // bound on n) have nothing to do, and no tile waits on them.
  let last = select(0u, (n - 1u) / TILE, n > 0u);
  if (t > last) { return; }
  let base = t * TILE;${s.tileSetup === undefined ? '' : `
${s.tileSetup}
  workgroupBarrier();`}
  // Bit k: row base + k * WG + lid is kept.
${keepMask}
  kept[lid] = mine;
  let mineCount = countOneBits(mine);
  if (mineCount != 0u) { atomicAdd(&tileTotal, mineCount); }
  workgroupBarrier();
  // The count goes out before any ranking, so that the tiles after this one wait on it as little as possible.
  var total = 0u;
  if (lid == 0u) {
    total = atomicLoad(&tileTotal);
    atomicStore(&state[HEAD + t], select(AGGREGATE, PREFIX, t == 0u) | total);
  }
  if ((u[0].z & PUBLISH) != 0u) { return; }
  var w = 0u;
  if (lid < WORDS) {
    // Word lid = bit k of threads 32g.. 32g + 31 (tile rows k * WG + 32g..); from thread lid % 32 of the run on, so
    // that the threads read different banks.
    let k = lid / (WG / 32u);
    let g = lid % (WG / 32u);
    for (var j = 0u; j < 32u; j = j + 1u) {
      let l = (j + lid) % 32u;
      w = w | (((kept[g * 32u + l] >> k) & 1u) << l);
    }
    bits[lid] = w;
  }
  scanSums(lid, countOneBits(w), ${scan.sg});
  if ((u[0].z & UNORDERED) != 0u) {
    // Any order across tiles (the reader sorts the rows): the tile's offset is one atomic on the running total,
    // with no wait on the tiles before it. The host copies the total (state[1]) where it is wanted.
    if (lid == 0u) { tileStart = atomicAdd(&state[1], total); }
  } else {
    // Decoupled look-back, a window of LOOK tiles per round (one thread each, the nearest first): the statuses up to
    // and including the nearest prefix are added once all of them are published; else those before the first
    // unpublished one (none: poll again). Tiles 0..rest - 1 are still to be added.
    var rest = t;
    loop {
      if (rest == 0u) { break; }
      if (lid == 0u) {
        atomicStore(&firstPrefix, LOOK);
        atomicStore(&firstOpen, LOOK);
      }
      workgroupBarrier();
      var s = 0u;
      if (lid < min(rest, LOOK)) {
        s = atomicLoad(&state[HEAD + rest - 1u - lid]);
        if (s == 0u) { atomicMin(&firstOpen, lid); }
        if ((s & PREFIX) != 0u) { atomicMin(&firstPrefix, lid); }
      }
      workgroupBarrier();
      if (lid == 0u) {
        let p = atomicLoad(&firstPrefix);
        let o = atomicLoad(&firstOpen);
        // Lanes to add in the low 16 bits, bit 16 when that ends the look-back (lanes past tile 0 are never needed).
        lookStep = select(min(o, min(rest, LOOK)), (p + 1u) | 0x10000u, p < o);
      }
      let taken = workgroupUniformLoad(&lookStep);
      let x = select(0u, s & COUNT, lid < (taken & 0xffffu));
      if (x != 0u) { atomicAdd(&behind, x); }
      if (taken > 0xffffu) { break; }
      rest = rest - taken;
    }
    workgroupBarrier();
    if (lid == 0u) {
      let start = atomicLoad(&behind);
      if (t > 0u) { atomicStore(&state[HEAD + t], PREFIX | (start + total)); }
      tileStart = start;
      if (t == last) {
        atomicStore(&state[1], start + total);
        // u0.z = 2: the count also goes to the output's count word (word u0.w), so it need not be copied there.
        if ((u[0].z & 3u) == 2u) { outp[u[0].w] = start + total; }
      }
    }
  }
  let start = workgroupUniformLoad(&tileStart);
  // u0.z = 0: count only (the host sizes the output from the total, then runs the pass again).
  if ((u[0].z & 3u) == 0u) { return; }
${writes}
}
`;
}

/** The rows a select pass holds in registers: the words (offsets in a row) its test and projection read, and the test. */
interface HeldRows {
  words: number[];
  keepOf: (cols: ColumnResolver) => string;
}

/**
 * The rows the pass holds, when its test can read registers (keepOf), COMPACT_ITEMS rows of the words it and the
 * projection read fit REGISTER_WORDS and both are short enough to write out per row; else undefined (rows are
 * tested and written in loops, read where they are needed).
 */
function heldRows(s: Selection): HeldRows | undefined {
  const keepOf = s.keepOf;
  if (!keepOf) return undefined;
  const used = new Set<number>();
  const note: ColumnResolver = (c) => {
    const words = columnWords(s.inputs[0]!, 'b', s.inputTypes, c);
    words.forEach((_, w) => used.add(rowWords(s.inputTypes.slice(0, c)) + w));
    return words;
  };
  const code = [keepOf(note), projectCode(s.project, 'outp', 'ob', note, s.constOffsets)];
  if (code.some((x) => x.length > UNROLLED_CODE) || used.size === 0 || used.size * COMPACT_ITEMS > REGISTER_WORDS) return undefined;
  return { words: [...used].sort((a, b) => a - b), keepOf };
}

/** Projection copying every column: the scatter of unique and difference. */
export function identity(types: readonly ScalarType[]): Expr[] {
  return types.map((type, index) => ({ kind: 'col', index, type }));
}

/** Word pairs (buffer a row at `a` vs buffer b row at `b`) over all `width` words. */
export function rowPairs(bufA: string, bufB: string, width: number): Array<[string, string]> {
  return Array.from({ length: width }, (_, k): [string, string] => [`${bufA}[a * ${width}u + ${k}u]`, `${bufB}[b * ${width}u + ${k}u]`]);
}
