import { compileLogic } from '@vixen/frontend';
const EDGE = 'edge(x, y) -> int32(x), int32(y).\n';
const cases = [
  'c[x] = n <- agg<<n = count()>> r(x, _).\nr(x, y) <- edge(x, y).\nr(x, n) <- c[x] = n.',
  'p[x] = n <- agg<<n = median(y)>> edge(x, y).',
  's(x, v) -> int32(x), string(v).\np[x] = n <- agg<<n = sum(v)>> s(x, v).',
  'p[x] = n <- agg<<n = count(y)>> edge(x, y).',
  'p(x, n) <- edge(x, _), agg<<n = count()>> edge(x, _).',
  'p[x] = n <- agg<<n = sum(z)>> edge(x, y).',
  'p[x] = x + 1 <- agg<<n = count()>> edge(x, _).',
  'price[p] = v -> int32(p), int32(v).\nq(x) <- price[x, 1] = x.',
  'price[p] = v -> int32(p), int32(v).\nq(x) <- price[x] = x, price(x, x, x).',
  'q(x) <- edge(x, _), string:lenght[x] = 2.',
  'order edge by z desc.',
  'p(x) <- edge(x, _).\norder p by x limit 2.\nq(x) <- p(x).',
  'order nope by x.',
];
for (const c of cases) {
  const r = compileLogic([{ path: 'main.logic', text: EDGE + c }]);
  console.log(JSON.stringify(c));
  for (const d of r.diagnostics) console.log('   ', d.span?.start.line, d.span?.start.column, d.message);
}
