/**
 * The playground's gallery: programs with their facts, inline or as CSV/TSV/.tbl text per base relation. Node
 * imports it too: the browser test runs each through the API and compares the page's tables with those answers.
 */
import { dbgenText } from '@vixen/bench/dbgen';
// The examples' own text (`?raw`: Vite's suffix in the browser test, build.ts's esbuild plugin for the page), so the
// gallery runs the programs the repository ships, not copies of them.
import evenOdd from '../../../examples/even-odd.logic?raw';
import cc from '../../../examples/graphs/cc.logic?raw';
import sg from '../../../examples/graphs/sg.logic?raw';
import tc from '../../../examples/graphs/tc.logic?raw';

/** lineitem at SF 0.01 (60,000 rows), made on first use by the bench's TPC-H generator: the bytes `vixen bench` uses. */
let lineitem: string | undefined;

export interface GalleryProgram {
  name: string;
  /** File name: `.dl` is Soufflé, anything else LogiQL. */
  file: string;
  source: string;
  /** Facts text per base relation, read as its extension says (`edge.csv`, `lineitem.tbl`). */
  facts: Record<string, string>;
  /** The relations to show (compile's `outputs`); default every derived one. */
  outputs?: readonly string[];
}

/** A graph of `n` nodes and `m` edges spread by a multiplicative step (no randomness: the same on every load). */
function graphCsv(n: number, m: number, step: number, symmetric = false): string {
  const lines: string[] = [];
  for (let i = 0; i < m; i++) {
    const a = (i * step) % n;
    const b = (i * step * step + 1) % n;
    lines.push(`${a},${b}`);
    if (symmetric) lines.push(`${b},${a}`);
  }
  return lines.join('\n') + '\n';
}

/** A tree of `n` nodes: node i's parent is (i - 1) / 2. */
function treeCsv(n: number): string {
  return Array.from({ length: n - 1 }, (_, i) => `${Math.floor(i / 2)},${i + 1}`).join('\n') + '\n';
}

export const GALLERY: readonly GalleryProgram[] = [
  {
    name: 'Even and odd (Red Fox, Listing 1)',
    file: 'even-odd.logic',
    source: evenOdd,
    facts: {},
  },
  {
    name: 'Transitive closure',
    file: 'tc.logic',
    source: tc,
    facts: { 'edge.csv': graphCsv(40, 60, 7) },
  },
  {
    name: 'Same generation',
    file: 'sg.logic',
    source: sg,
    facts: { 'edge.csv': treeCsv(31) },
  },
  {
    name: 'Connected components',
    file: 'cc.logic',
    source: cc,
    facts: { 'edge.csv': graphCsv(60, 40, 3, true) },
  },
  {
    name: 'Transitive closure (Soufflé)',
    file: 'tc.dl',
    source: `// The same closure in Soufflé's syntax.
.decl edge(x: number, y: number)
.input edge
.decl path(x: number, y: number)
.output path
path(x, y) :- edge(x, y).
path(x, z) :- path(x, y), edge(y, z).
`,
    facts: { 'edge.tsv': graphCsv(12, 14, 5).replaceAll(',', '\t') },
  },
  {
    name: 'TPC-H Q1 (SF 0.01, generated in the page)',
    file: 'q1.logic',
    source: `// TPC-H Q1 (spec clause 2.4.1), validation parameters; sql/q1.sql is the same query.
lineitem(l_orderkey, l_partkey, l_suppkey, l_linenumber, l_quantity, l_extendedprice, l_discount, l_tax,
         l_returnflag, l_linestatus, l_shipdate, l_commitdate, l_receiptdate, l_shipinstruct, l_shipmode, l_comment) ->
    int32(l_orderkey), int32(l_partkey), int32(l_suppkey), int32(l_linenumber), decimal(l_quantity),
    decimal(l_extendedprice), decimal(l_discount), decimal(l_tax), string(l_returnflag), string(l_linestatus),
    date(l_shipdate), date(l_commitdate), date(l_receiptdate), string(l_shipinstruct), string(l_shipmode),
    string(l_comment).
// Pricing summary report. sum_charge is summed exactly at 100x scale (each product of two-digit decimals stays
// within 4 fractional digits), then divided once: the exact answer, truncated to the decimal type's 4 digits.
line(rf, ls, o, ln, q, p, d, t) <- lineitem(o, _, _, ln, q, p, d, t, rf, ls, sd, _, _, _, _, _),
    sd <= date:parse["1998-09-02"].
summary[rf, ls] = sq, sp, sdp, sc100, aq, ap, ad, n <-
    agg<<sq = sum(q), sp = sum(p), sdp = sum(dp), sc100 = sum(c100), aq = avg(q), ap = avg(p), ad = avg(d), n = count()>>
    line(rf, ls, o, ln, q, p, d, t), dp = p * (1 - d), c100 = p * 100 * (1 - d) * (1 + t).
result(l_returnflag, l_linestatus, sum_qty, sum_base_price, sum_disc_price, sum_charge, avg_qty, avg_price, avg_disc,
       count_order) <-
    summary(l_returnflag, l_linestatus, sum_qty, sum_base_price, sum_disc_price, sc100, avg_qty, avg_price, avg_disc,
        count_order),
    sum_charge = sc100 / 100.
order result by l_returnflag, l_linestatus.
`,
    get facts() {
      return { 'lineitem.tbl': (lineitem ??= dbgenText({ sf: 0.01 }).lineitem) };
    },
    outputs: ['result'],
  },
];
