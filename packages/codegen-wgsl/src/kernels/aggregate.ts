/**
 * Reduce by key over input whose groups are adjacent rows. `flags` marks the first row of each group (tile
 * counts and keep bits, as the compacting kernels do); after the scan, `scatter` runs one thread per row, and
 * each group's first row ranks itself among the groups from the tile's keep bits, walks its group to the end
 * and writes one output row: the group columns, then the aggregates (semantics of @vixen/queryplan's
 * `evalAggregate`). Decimal sums and averages accumulate in 128 bits; one that does not fit the 64-bit result
 * sets the word after the output rows (u0.y = number of groups), which the host checks.
 * Correctness first: a group is reduced by one thread, so a huge group is a long serial loop.
 */
import { rowWords, wordsOf, type Aggregate, type ScalarType } from '@vixen/queryplan';
import { COMPACT_ITEMS, countPass } from './compaction.js';
import { sortKeyWords } from './sort.js';
import { columnWords, compareCode, header, lexCompareFn, threadMain } from '../wgsl.js';
import type { KernelShaders } from '../index.js';

interface Accumulator {
  /** Statements initializing the accumulator from row `i`. */
  init: string;
  /** Statements folding row `j` in. */
  update: string;
  /** Statements run once at the end (may set the overflow word). */
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
      return { init: '', update: '', finish: '', words: ['cnt'] };
    case 'min':
    case 'max': {
      const op = a.fn === 'min' ? '<' : '>';
      return {
        init: `var ${acc} = ${vi};`,
        update: `let x${k} = ${vj};\n      if (${compareCode(op, arg!, words(`x${k}`), words(acc))}) { ${acc} = x${k}; }`,
        finish: '',
        words: words(acc),
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
          if (a.fn === 'sum') return { init: `var ${acc} = ${vi};`, update: `${acc} = ${acc} + ${vj};`, finish: '', words: [acc] };
          break;
        case 'int64':
          if (a.fn === 'sum') return { init: `var ${acc} = ${vi};`, update: `${acc} = add64(${acc}, ${vj});`, finish: '', words: words(acc) };
          break;
        case 'decimal':
          if (a.fn === 'sum') {
            return {
              init: `var ${acc} = ext128(${vi});`,
              update: `${acc} = add128(${acc}, ext128(${vj}));`,
              finish: `if (!fits64(${acc})) { ${overflow} }`,
              words: [`${acc}.x`, `${acc}.y`],
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
      };
  }
}

export function aggregateShaders(types: readonly ScalarType[], groupBy: readonly number[], aggregates: readonly Aggregate[]): KernelShaders {
  const width = rowWords(types);
  const cmpKey = lexCompareFn(
    'cmpKey',
    sortKeyWords(types, groupBy).map((o): [string, string] => [`inp[a * ${width}u + ${o}u]`, `inp[b * ${width}u + ${o}u]`]),
  );
  const accs = aggregates.map((a, k) => accumulator(a, k, types));
  const out = [...groupBy.flatMap((c) => columnWords('inp', 'i * W_IN', types, c)), ...accs.flatMap((a) => a.words)];
  const outWords = rowWords([...groupBy.map((c) => types[c]!), ...aggregates.map((a) => a.type)]);
  if (out.length !== outWords) throw new Error('internal: aggregate output words');
  const reduce = `${header('scatter', ['inp', 'offs', 'outp'])}
const W_IN: u32 = ${width}u;
const W_OUT: u32 = ${outWords}u;
override TILE: u32 = ${COMPACT_ITEMS}u * WG;
override BITS: u32 = TILE / 32u;
${cmpKey}${threadMain(`  let n = u[0].x;
  if (i >= n) { return; }
  if (i > 0u && cmpKey(i - 1u, i) == 0) { return; }
  // Rank among group starts: the tile's offset plus the keep bits before row i in its tile.
  let tiles = (n + TILE - 1u) / TILE;
  let t = i / TILE;
  let r = i % TILE;
  let at = tiles + 1u + t * BITS;
  var rank = offs[t];
  for (var w = 0u; w < r / 32u; w = w + 1u) { rank = rank + countOneBits(offs[at + w]); }
  rank = rank + countOneBits(offs[at + r / 32u] & ((1u << (r % 32u)) - 1u));
  var cnt = 1u;
  ${accs.map((a) => a.init).filter(Boolean).join('\n  ')}
  for (var j = i + 1u; j < n; j = j + 1u) {
    if (cmpKey(i, j) != 0) { break; }
    cnt = cnt + 1u;
      ${accs.map((a) => a.update).filter(Boolean).join('\n      ')}
  }
  ${accs.map((a) => a.finish).filter(Boolean).join('\n  ')}
  let ob = rank * W_OUT;
${out.map((w, k) => `  outp[ob + ${k}u] = ${w};`).join('\n')}`)}`;
  return {
    flags: countPass('flags', ['inp'], types, 'i == 0u || cmpKey(i - 1u, i) != 0', cmpKey, 0),
    scatter: reduce,
  };
}
