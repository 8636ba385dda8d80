/**
 * The playground's gallery: programs with their facts, inline or as CSV/TSV/.tbl text per base relation. Node
 * imports it too: the browser test runs each through the API and compares the page's tables with those answers.
 */
import { dbgenText } from '@vixen/bench/dbgen';

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
    source: `// Red Fox (CGO 2014), Listing 1: classify the numbers 0..100 as even or odd by mutual recursion.

number(n) -> int32(n).
number(0). number(1). number(2). number(3). number(4). number(5). number(6). number(7). number(8).
number(9). number(10). number(11). number(12). number(13). number(14). number(15). number(16).
number(17). number(18). number(19). number(20). number(21). number(22). number(23). number(24).
number(25). number(26). number(27). number(28). number(29). number(30). number(31). number(32).
number(33). number(34). number(35). number(36). number(37). number(38). number(39). number(40).
number(41). number(42). number(43). number(44). number(45). number(46). number(47). number(48).
number(49). number(50). number(51). number(52). number(53). number(54). number(55). number(56).
number(57). number(58). number(59). number(60). number(61). number(62). number(63). number(64).
number(65). number(66). number(67). number(68). number(69). number(70). number(71). number(72).
number(73). number(74). number(75). number(76). number(77). number(78). number(79). number(80).
number(81). number(82). number(83). number(84). number(85). number(86). number(87). number(88).
number(89). number(90). number(91). number(92). number(93). number(94). number(95). number(96).
number(97). number(98). number(99). number(100).

next(n, m) -> int32(n), int32(m).
next(0, 1). next(1, 2). next(2, 3). next(3, 4). next(4, 5). next(5, 6). next(6, 7). next(7, 8).
next(8, 9). next(9, 10). next(10, 11). next(11, 12). next(12, 13). next(13, 14). next(14, 15).
next(15, 16). next(16, 17). next(17, 18). next(18, 19). next(19, 20). next(20, 21). next(21, 22).
next(22, 23). next(23, 24). next(24, 25). next(25, 26). next(26, 27). next(27, 28). next(28, 29).
next(29, 30). next(30, 31). next(31, 32). next(32, 33). next(33, 34). next(34, 35). next(35, 36).
next(36, 37). next(37, 38). next(38, 39). next(39, 40). next(40, 41). next(41, 42). next(42, 43).
next(43, 44). next(44, 45). next(45, 46). next(46, 47). next(47, 48). next(48, 49). next(49, 50).
next(50, 51). next(51, 52). next(52, 53). next(53, 54). next(54, 55). next(55, 56). next(56, 57).
next(57, 58). next(58, 59). next(59, 60). next(60, 61). next(61, 62). next(62, 63). next(63, 64).
next(64, 65). next(65, 66). next(66, 67). next(67, 68). next(68, 69). next(69, 70). next(70, 71).
next(71, 72). next(72, 73). next(73, 74). next(74, 75). next(75, 76). next(76, 77). next(77, 78).
next(78, 79). next(79, 80). next(80, 81). next(81, 82). next(82, 83). next(83, 84). next(84, 85).
next(85, 86). next(86, 87). next(87, 88). next(88, 89). next(89, 90). next(90, 91). next(91, 92).
next(92, 93). next(93, 94). next(94, 95). next(95, 96). next(96, 97). next(97, 98). next(98, 99).
next(99, 100).

even(n) -> int32(n).
even(0).
even(n) <- number(n), next(m, n), odd(m).

odd(n) -> int32(n).
odd(n) <- next(m, n), even(m).
`,
    facts: {},
  },
  {
    name: 'Transitive closure',
    file: 'tc.logic',
    source: `// Transitive closure of a directed graph: path(x, y) holds when y is reachable from x.
edge(x, y) -> int32(x), int32(y).

path(x, y) <- edge(x, y).
path(x, z) <- path(x, y), edge(y, z).
`,
    facts: { 'edge.csv': graphCsv(40, 60, 7) },
  },
  {
    name: 'Same generation',
    file: 'sg.logic',
    source: `// Same generation: x and y are distinct nodes at the same depth below a common ancestor.
// Facts: edge.tsv (edge(p, c): p is the parent of c). Quadratic output on wide trees: keep graphs small.

edge(x, y) -> int32(x), int32(y).

sg(x, y) <- edge(p, x), edge(p, y), x != y.
sg(x, y) <- edge(a, x), sg(a, b), edge(b, y).
`,
    facts: { 'edge.csv': treeCsv(31) },
  },
  {
    name: 'Connected components',
    file: 'cc.logic',
    source: `// Connected components by minimum label propagation: every node takes the smallest id it is connected to.
// Stratified: label is a plain fixpoint (one edge per iteration, so longest shortest path + 1 iterations) and
// keeps every label that reaches a node; the minimum is taken in a later stratum.
// Facts: edge.tsv; give each edge in both directions (make-graph.ts --symmetric) for undirected components.

edge(x, y) -> int32(x), int32(y).

node(x) <- edge(x, _).
node(y) <- edge(_, y).

// A node is connected to itself and to whatever its neighbours are connected to.
label(x, x) <- node(x).
label(y, l) <- label(x, l), edge(x, y).

component[x] = c <- agg<<c = min(l)>> label(x, l).
`,
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
