/**
 * Reduce by key over input whose groups are adjacent rows. `flags` marks the first row of each group (tile
 * counts and keep bits, as the compacting kernels do); after the scan, `scatter` runs one thread per row, and
 * each group's first row ranks itself among the groups from the tile's keep bits, walks its group to the end
 * and writes one output row: the group columns, then the aggregates (semantics of @vixen/queryplan's
 * `evalAggregate`). Decimal sums and averages accumulate in 128 bits; one that does not fit the 64-bit result
 * sets the word after the output rows (u0.y = number of groups), which the host checks.
 *
 * A group is reduced by one thread, so a big group is a long serial loop, which is slow and which llvmpipe cuts
 * short (it ends a shader invocation's loops after 65535 iterations in all). Where every aggregate can be
 * combined exactly (all but float32 sums and averages, whose rounding depends on the order), large inputs take
 * two passes: `chunkFlags`/`chunkScatter` reduce each group's rows within chunks of AGGREGATE_CHUNK rows into
 * partial rows (group key words, count, partial states), then `combineFlags`/`combineScatter` merge the partials
 * of each group into the output row.
 */
import { rowWords, wordsOf, type Aggregate, type ScalarType } from '@vixen/queryplan';
import { COMPACT_ITEMS, countPass } from './compaction.js';
import { sortKeyWords } from './sort.js';
import { columnWords, compareCode, header, lexCompareFn, threadMain } from '../wgsl.js';
import type { KernelShaders } from '../index.js';

/** Most rows one thread reduces in the chunk pass. */
export const AGGREGATE_CHUNK = 1024;

/**
 * Words of a partial row of the two-pass reduction: the group key's words, the count, and each aggregate's
 * state (min/max: the value; sums: the type's words, decimal sums 128 bits; averages: a 128-bit sum).
 */
export function aggregatePartialWords(keyWords: number, aggregates: readonly Aggregate[], argTypes: readonly (ScalarType | undefined)[]): number {
  const state = (a: Aggregate, arg: ScalarType | undefined): number => {
    if (a.fn === 'count') return 0;
    if (a.fn === 'avg' || arg === 'decimal') return a.fn === 'min' || a.fn === 'max' ? 2 : 4;
    return wordsOf(arg!);
  };
  return keyWords + 1 + aggregates.reduce((n, a, i) => n + state(a, argTypes[i]), 0);
}

interface Accumulator {
  /** Statements initializing the accumulator from row `i`. */
  init: string;
  /** Statements folding row `j` in. */
  update: string;
  /** Statements run once at the end (may set the overflow word). */
  finish: string;
  /** Result words. */
  words: string[];
  /** Words of the partial state after `update` (chunk pass); absent when partials cannot be combined exactly. */
  state?: string[];
}

/** WGSL value (u32, or vec2 for 2-word types) of column `c` of row `row`. */
function value(types: readonly ScalarType[], c: number, row: string): string {
  const words = columnWords('inp', `${row} * W_IN`, types, c);
  return words.length === 1 ? words[0]! : `vec2<u32>(${words.join(', ')})`;
}

/** A value as a signed 64-bit (lo, hi) pair, by type. */
function as64(type: ScalarType, v: string): string {
  switch (type) {
    case 'int32':
      return `vec2<u32>(${v}, select(0u, 0xffffffffu, (${v} >> 31u) != 0u))`;
    case 'uint32':
      return `vec2<u32>(${v}, 0u)`;
    default:
      return v;
  }
}

function accumulator(a: Aggregate, k: number, types: readonly ScalarType[]): Accumulator {
  const acc = `acc${k}`;
  const arg = a.column === undefined ? undefined : types[a.column]!;
  const vi = a.column === undefined ? '' : value(types, a.column, 'i');
  const vj = a.column === undefined ? '' : value(types, a.column, 'j');
  const wide = arg !== undefined && wordsOf(arg) === 2;
  const words = (x: string): string[] => (wide ? [`${x}.x`, `${x}.y`] : [x]);
  const overflow = `outp[u[0].y * W_OUT] = 1u;`;
  switch (a.fn) {
    case 'count':
      return { init: '', update: '', finish: '', words: ['cnt'], state: [] };
    case 'min':
    case 'max': {
      const op = a.fn === 'min' ? '<' : '>';
      return {
        init: `var ${acc} = ${vi};`,
        update: `let x${k} = ${vj};\n      if (${compareCode(op, arg!, words(`x${k}`), words(acc))}) { ${acc} = x${k}; }`,
        finish: '',
        words: words(acc),
        state: words(acc),
      };
    }
    case 'sum':
    case 'avg':
      switch (arg) {
        case 'float32': {
          const total = a.fn === 'sum' ? acc : `(${acc} / f32(cnt))`;
          return {
            init: `var ${acc} = bitcast<f32>(${vi});`,
            update: `${acc} = ${acc} + bitcast<f32>(${vj});`,
            finish: '',
            words: [`canonF32(${total})`],
          };
        }
        case 'int32':
        case 'uint32':
          if (a.fn === 'sum') return { init: `var ${acc} = ${vi};`, update: `${acc} = ${acc} + ${vj};`, finish: '', words: [acc], state: [acc] };
          break;
        case 'int64':
          if (a.fn === 'sum') {
            return { init: `var ${acc} = ${vi};`, update: `${acc} = add64(${acc}, ${vj});`, finish: '', words: words(acc), state: words(acc) };
          }
          break;
        case 'decimal':
          if (a.fn === 'sum') {
            return {
              init: `var ${acc} = ext128(${vi});`,
              update: `${acc} = add128(${acc}, ext128(${vj}));`,
              finish: `if (!fits64(${acc})) { ${overflow} }`,
              words: [`${acc}.x`, `${acc}.y`],
              state: vec4Words(acc),
            };
          }
          break;
        default:
          throw new Error(`internal: ${a.fn} of ${arg}`);
      }
      // avg of an integer or decimal: exact 128-bit sum, then one decimal division.
      return {
        init: `var ${acc} = ext128(${as64(arg, vi)});`,
        update: `${acc} = add128(${acc}, ext128(${as64(arg, vj)}));`,
        finish: `let avg${k} = avgDec(${acc}, cnt, ${arg === 'decimal' ? 'false' : 'true'});\n  if (avg${k}.z != 0u) { ${overflow} }`,
        words: [`avg${k}.x`, `avg${k}.y`],
        state: vec4Words(acc),
      };
  }
}

const vec4Words = (x: string): string[] => [`${x}.x`, `${x}.y`, `${x}.z`, `${x}.w`];

/**
 * The combine pass's accumulator of aggregate `k`: it reads the partial state at word `at` of partial rows
 * (`init` from row i, `update` from row j) and finishes as the single pass does.
 */
function combiner(a: Aggregate, k: number, at: number, types: readonly ScalarType[], single: Accumulator): Accumulator {
  const acc = `acc${k}`;
  const n = single.state!.length;
  const read = (row: string): string[] => Array.from({ length: n }, (_, w) => `inp[${row} * W_IN + ${at + w}u]`);
  const val = (row: string): string => (n === 1 ? read(row)[0]! : `vec${n}<u32>(${read(row).join(', ')})`);
  const base = { finish: single.finish, words: single.words };
  switch (a.fn) {
    case 'count':
      return { init: '', update: '', ...base };
    case 'min':
    case 'max': {
      const arg = types[a.column!]!;
      const words = (x: string): string[] => (n === 2 ? [`${x}.x`, `${x}.y`] : [x]);
      const op = a.fn === 'min' ? '<' : '>';
      return {
        init: `var ${acc} = ${val('i')};`,
        update: `let x${k} = ${val('j')};\n      if (${compareCode(op, arg, words(`x${k}`), words(acc))}) { ${acc} = x${k}; }`,
        ...base,
      };
    }
    case 'sum':
    case 'avg': {
      const add = n === 4 ? 'add128' : n === 2 ? 'add64' : '';
      return { init: `var ${acc} = ${val('i')};`, update: `${acc} = ${add ? `${add}(${acc}, ${val('j')})` : `${acc} + ${val('j')}`};`, ...base };
    }
  }
}

/**
 * The scatter pass's reduction. `same` is a WGSL bool over rows $A and $B: row i starts a group unless
 * same(i - 1, i), and rows j > i belong to it while same(i, j). Row R adds `count` (over $R) to the group's
 * count. The group's first row ranks itself among the group starts from the tile's keep bits and writes `out`.
 */
function reduceModule(inWidth: number, outWidth: number, helpers: string, same: string, accs: readonly Accumulator[], out: readonly string[], count: string): string {
  return `${header('scatter', ['inp', 'offs', 'outp'])}
const W_IN: u32 = ${inWidth}u;
const W_OUT: u32 = ${outWidth}u;
override TILE: u32 = ${COMPACT_ITEMS}u * WG;
override BITS: u32 = TILE / 32u;
${helpers}${threadMain(`  let n = u[0].x;
  if (i >= n) { return; }
  if (i > 0u && ${same.replaceAll('$A', '(i - 1u)').replaceAll('$B', 'i')}) { return; }
  // Rank among group starts: the tile's offset plus the keep bits before row i in its tile.
  let tiles = (n + TILE - 1u) / TILE;
  let t = i / TILE;
  let r = i % TILE;
  let at = tiles + 1u + t * BITS;
  var rank = offs[t];
  for (var w = 0u; w < r / 32u; w = w + 1u) { rank = rank + countOneBits(offs[at + w]); }
  rank = rank + countOneBits(offs[at + r / 32u] & ((1u << (r % 32u)) - 1u));
  var cnt = ${count.replaceAll('$R', 'i')};
  ${accs.map((a) => a.init).filter(Boolean).join('\n  ')}
  for (var j = i + 1u; j < n; j = j + 1u) {
    if (!(${same.replaceAll('$A', 'i').replaceAll('$B', 'j')})) { break; }
    cnt = cnt + ${count.replaceAll('$R', 'j')};
      ${accs.map((a) => a.update).filter(Boolean).join('\n      ')}
  }
  ${accs.map((a) => a.finish).filter(Boolean).join('\n  ')}
  let ob = rank * W_OUT;
${out.map((w, k) => `  outp[ob + ${k}u] = ${w};`).join('\n')}`)}`;
}

export function aggregateShaders(types: readonly ScalarType[], groupBy: readonly number[], aggregates: readonly Aggregate[]): KernelShaders {
  const width = rowWords(types);
  const cmpKey = lexCompareFn(
    'cmpKey',
    sortKeyWords(types, groupBy).map((o): [string, string] => [`inp[a * ${width}u + ${o}u]`, `inp[b * ${width}u + ${o}u]`]),
  );
  const accs = aggregates.map((a, k) => accumulator(a, k, types));
  const keyWords = groupBy.flatMap((c) => columnWords('inp', 'i * W_IN', types, c));
  const out = [...keyWords, ...accs.flatMap((a) => a.words)];
  const outWords = rowWords([...groupBy.map((c) => types[c]!), ...aggregates.map((a) => a.type)]);
  if (out.length !== outWords) throw new Error('internal: aggregate output words');
  const same = 'cmpKey($A, $B) == 0';
  const shaders: KernelShaders = {
    flags: countPass('flags', ['inp'], types, 'i == 0u || cmpKey(i - 1u, i) != 0', cmpKey, 0),
    scatter: reduceModule(width, outWords, cmpKey, same, accs, out, '1u'),
  };
  if (accs.some((a) => a.state === undefined)) return shaders;

  // Partial rows: the group key's words, the count, then each aggregate's state.
  const partialOut = [...keyWords, 'cnt', ...accs.flatMap((a) => a.state!)];
  const pw = partialOut.length;
  const k = keyWords.length;
  const argTypes = aggregates.map((a) => (a.column === undefined ? undefined : types[a.column]));
  if (pw !== aggregatePartialWords(k, aggregates, argTypes)) throw new Error('internal: aggregate partial row words');
  const chunkSame = `(${same} && $B % ${AGGREGATE_CHUNK}u != 0u)`;
  shaders.chunkFlags = countPass('flags', ['inp'], types, `i == 0u || i % ${AGGREGATE_CHUNK}u == 0u || cmpKey(i - 1u, i) != 0`, cmpKey, 0);
  const unfinished = accs.map((a) => ({ ...a, finish: '' }));
  shaders.chunkScatter = reduceModule(width, pw, cmpKey, chunkSame, unfinished, partialOut, '1u');

  const partialTypes: ScalarType[] = Array.from({ length: pw }, () => 'uint32');
  const sameKey = lexCompareFn(
    'cmpKey',
    Array.from({ length: k }, (_, w): [string, string] => [`inp[a * ${pw}u + ${w}u]`, `inp[b * ${pw}u + ${w}u]`]),
  );
  let at = k + 1;
  const combiners = aggregates.map((a, i) => {
    const c = combiner(a, i, at, types, accs[i]!);
    at += accs[i]!.state!.length;
    return c;
  });
  const combinedOut = [...Array.from({ length: k }, (_, w) => `inp[i * W_IN + ${w}u]`), ...combiners.flatMap((c) => c.words)];
  shaders.combineFlags = countPass('flags', ['inp'], partialTypes, 'i == 0u || cmpKey(i - 1u, i) != 0', sameKey, 0);
  shaders.combineScatter = reduceModule(pw, outWords, sameKey, same, combiners, combinedOut, `inp[$R * W_IN + ${k}u]`);
  return shaders;
}
