/**
 * Relations known to be canonical (a unique kernel's output) skip the sort, unique and concat work that would
 * only restore that form: a union into an empty relation and re-canonicalizing its rows become no-ops, and
 * the result still equals the canonical form computed from scratch. Facts loaded in canonical order are found so
 * by one pass (rowsOrder) and not sorted again; rows out of order, repeated or breaking a key still are.
 */
import { afterAll, beforeAll, expect, test } from 'vitest';
import { generateKernelShaders, SUBGROUP_VARIANT, type KernelShaders, type PassName } from '@vixen/codegen-wgsl';
import type { KirKernel, KirVariable } from '@vixen/kernel-ir';
import type { Row } from '@vixen/queryplan';
import { downloadRelation, exactRows, openGpu, releaseRelation, runKernel, uploadRelation, type Gpu } from '../src/gpu/index.js';
import { encode, randomRows, rng } from './gpu-fixtures.js';
import { compile } from '../src/index.js';
import { internals } from '../src/gpu/device.js';
import { chunkedOf } from '../src/gpu/chunks.js';
import { rowsOrder, rowsOrderPasses } from '../src/gpu/kernels/rows-order.js';
import { precompileLoad } from '../src/load-passes.js';
import { madeUpShaders } from '../src/gpu/recorder.js';
import { loadShaders } from '../src/canonical-load.js';
import { sortPasses } from '../src/gpu/kernels/sort.js';

let gpu: Gpu;
beforeAll(async () => {
  gpu = await openGpu();
});
afterAll(() => gpu?.dispose());

test('canonical relations skip sort, unique and a concat with an empty side', async () => {
  const vars: KirVariable[] = [0, 1, 2, 3].map((id) => ({ id, name: `v${id}`, columns: ['int32', 'int64'] }));
  const none = new Uint32Array(0);
  const launch = (k: KirKernel, inputs: Parameters<typeof runKernel>[3]) => runKernel(gpu, k, generateKernelShaders(k, vars), inputs, none, vars);
  const sort: KirKernel = { kind: 'sort', id: 0, input: 0, output: 1, keys: [0, 1] };
  const unique: KirKernel = { kind: 'unique', id: 1, input: 1, output: 2 };
  const concat: KirKernel = { kind: 'concat', id: 2, left: 2, right: 3, output: 3 };

  const raw = uploadRelation(gpu, encode(['int32', 'int64'], randomRows(rng(3), ['int32', 'int64'], 5000, 50)), 3);
  const sorted = await launch(sort, [raw]);
  expect(sorted.canonical).toBeFalsy();
  const canonical = await launch(unique, [sorted]);
  expect(canonical.canonical).toBe(true);
  expect(await exactRows(gpu, canonical)).toBeLessThan(5000);
  // The pass that finds loaded rows canonical agrees with the sort and unique kernels (negative and 64-bit values).
  expect((await rowsOrder(internals(gpu), canonical))?.ascending).toBe(true);
  expect((await rowsOrder(internals(gpu), sorted))?.ascending).toBe(false);
  expect((await rowsOrder(internals(gpu), raw))?.ascending).toBe(false);

  const empty = { buffer: null, count: 0, width: 3 };
  expect(await launch(concat, [empty, canonical])).toBe(canonical);
  expect(await launch(sort, [canonical])).toBe(canonical);
  // A sort by leading columns (a keyed load's sort through its key) finds it in order too.
  expect(await launch({ ...sort, keys: [0] }, [canonical])).toBe(canonical);
  expect(await launch(unique, [canonical])).toBe(canonical);
  // Sorting by other keys still sorts.
  const byKey1 = await launch({ ...sort, keys: [1, 0] }, [canonical]);
  expect(byKey1).not.toBe(canonical);
  expect(byKey1.canonical).toBeFalsy();

  // The canonical words are those of sort + unique over the concatenation computed from scratch.
  const both = await launch(concat, [canonical, canonical]);
  expect(both.canonical).toBeFalsy();
  const again = await launch(unique, [await launch(sort, [both])]);
  expect(Array.from(await downloadRelation(gpu, again))).toEqual(Array.from(await downloadRelation(gpu, canonical)));
  for (const r of [raw, sorted, canonical, byKey1, both, again]) releaseRelation(gpu, r);
});

test('a few host rows are made canonical on the host, in the order and form the sort and unique kernels give', async () => {
  // Rows out of order, repeated, with negative numbers, 64-bit values and strings (given through the API: the
  // compiler keeps no repeated inline facts); a sort-merge join reads them as canonical (sorted by every word) and a
  // count sees each distinct row once.
  const program = compile(
    `f(a, b, s) -> int32(a), int64(b), string(s).
g(a, t) -> int32(a), string(t).
g(3, "x"). g(-2, "y"). g(3, "w"). g(7, "v").
j(a, b, s, t) <- f(a, b, s), g(a, t).
n[] = c <- agg<<c = count()>> f(_, _, _).`,
    { joinStrategy: 'sort-merge' },
  );
  const f = [[3, -7n, 'b'], [-2, 5n, 'a'], [3, -7n, 'b'], [0, 9007199254740993n, 'c'], [-2, 5n, 'a'], [-2, -1n, 'zz'], [3, 2n, 'a']];
  const run = await program.run({ gpu, facts: { f }, outputs: ['j', 'n'] });
  const oracle = await program.interpret({ facts: { f } });
  expect(run.relations.get('j')).toEqual(oracle.get('j'));
  expect(run.relations.get('n')).toEqual(oracle.get('n'));
  expect(run.relations.get('n')).toEqual([[5]]);
});

test('rowsOrder finds rows strictly ascending by all words, across chunks, and the leading words neighbours share', async () => {
  // Two-word rows (a, b): a = floor(i / 3), b = 2i; unsigned word order, so a negative int32 sorts after positives.
  const words = (n: number, edit?: (w: Uint32Array) => void): Uint32Array => {
    const w = new Uint32Array(2 * n);
    for (let i = 0; i < n; i++) {
      w[2 * i] = Math.floor(i / 3);
      w[2 * i + 1] = 2 * i;
    }
    edit?.(w);
    return w;
  };
  const chunks = (w: Uint32Array, cut: number) => chunkedOf([uploadRelation(gpu, w.subarray(0, 2 * cut), 2), uploadRelation(gpu, w.subarray(2 * cut), 2)], 2);
  const cases: Array<[string, Uint32Array, { ascending: boolean; shared: number }]> = [
    ['in order', words(1000), { ascending: true, shared: 1 }],
    ['in order, keys distinct', words(1000, (w) => w.forEach((_, k) => k % 2 === 0 && (w[k] = k))), { ascending: true, shared: 0 }],
    ['a repeated row', words(1000, (w) => w.set([w[2 * 500]!, w[2 * 500 + 1]!], 2 * 501)), { ascending: false, shared: 2 }],
    ['a row after a larger one', words(1000, (w) => (w[2 * 700 + 1] = 1)), { ascending: false, shared: 1 }],
    ['a negative int32 last', words(1000, (w) => (w[2 * 999] = -1 >>> 0)), { ascending: true, shared: 1 }],
    ['the last row of a chunk above the next chunk', words(1000, (w) => (w[2 * 599] = 400)), { ascending: false, shared: 1 }],
  ];
  for (const [what, w, expected] of cases) {
    const rel = chunks(w, 600);
    expect({ what, ...(await rowsOrder(internals(gpu), rel)) }).toEqual({ what, ...expected });
    releaseRelation(gpu, rel);
  }
});

test('facts loaded in order are not sorted again; out of order, repeated or breaking a key, they are as before', async () => {
  const program = compile(
    `f(a, b, s) -> int32(a), int32(b), string(s).
f(a, b, s), f(a, b2, s2) -> b = b2, s = s2.
n[] = c <- agg<<c = count()>> f(_, _, _).
t[] = x <- agg<<x = sum(b)>> f(_, b, _).
top(a, s) <- f(a, _, s), a > 69990.`,
  );
  // Past the rows from which the order is checked; string ids follow string order ("k00010" < "k00011").
  const n = 70_000;
  const inOrder: Row[] = Array.from({ length: n }, (_, i) => [i, i % 7, `k${String(i % 1000).padStart(5, '0')}`]);
  const cases: Array<[string, Row[], boolean]> = [
    ['in order', inOrder, true],
    ['two rows swapped', inOrder.map((r, i) => inOrder[i === 100 ? 101 : i === 101 ? 100 : i]!), false],
    ['a row repeated', [...inOrder.slice(0, 500), inOrder[499]!, ...inOrder.slice(500)], false],
  ];
  for (const [what, f, sorted] of cases) {
    const run = await program.run({ gpu, facts: { f }, outputs: ['n', 't', 'top'] });
    const oracle = await program.interpret({ facts: { f }, outputs: ['n', 't', 'top'] });
    expect({ what, inOrder: run.stats.uploads.find((u) => u.name === 'f')?.inOrder ?? false }).toEqual({ what, inOrder: sorted });
    for (const r of ['n', 't', 'top']) expect(run.relations.get(r)).toEqual(oracle.get(r));
  }
  // In order, but two rows share a key: the key check still runs and names it.
  const broken = inOrder.map((r, i) => (i === 5000 ? [4999, 1, 'x'] : r)).sort((x, y) => (x[0] as number) - (y[0] as number) || (x[1] as number) - (y[1] as number));
  await expect(program.run({ gpu, facts: { f: broken } })).rejects.toThrow(/^key violated: f /);
});

test('facts out of order are sorted by the columns through their key, and come out as sorted by all', async () => {
  // A key of columns 0 and 2 (lineitem's shape: order key, part key, line number): the load sorts by columns 0-2.
  const program = compile(
    `g(a, p, l, s, d) -> int32(a), int32(p), int32(l), string(s), decimal(d).
g(a, p, l, s, d), g(a, p2, l, s2, d2) -> p = p2, s = s2, d = d2.
all(a, p, l, s, d) <- g(a, p, l, s, d).`,
  );
  const random = rng(11);
  const rows: Row[] = [];
  for (let a = 0; rows.length < 70_000; a++) {
    for (let l = 1; l <= 1 + (a % 7); l++) rows.push([a, Math.floor(random() * 1000) - 500, l, `s${Math.floor(random() * 50)}`, BigInt(l) * 10000n + 2500n]);
  }
  // Lines of an order shuffled among its neighbours', some rows given twice.
  const facts = rows.map((r, i) => rows[i % 3 === 0 && i + 1 < rows.length ? i + 1 : i % 3 === 1 ? i - 1 : i]!);
  facts.push(...rows.slice(1000, 1100));
  const run = await program.run({ gpu, facts: { g: facts }, outputs: ['all'] });
  const oracle = await program.interpret({ facts: { g: facts }, outputs: ['all'] });
  expect(run.stats.uploads.find((u) => u.name === 'g')?.inOrder ?? false).toBe(false);
  expect(run.relations.get('all')).toEqual(oracle.get('all'));
  // Two rows that share the key, apart: the key check names them.
  const broken = [...facts, [5, 777, 1, 'other', 10000n]];
  await expect(program.run({ gpu, facts: { g: broken } })).rejects.toThrow(/^key violated: g /);
});

test("a relation's load passes compile ahead of its load, its sort by the columns through its key among them", async () => {
  const program = compile(
    `h(a, b, c, d) -> int32(a), int32(b), string(c), int32(d).
h(a, b, c, d), h(a, b2, c2, d2) -> b = b2, c = c2, d = d2.
out(a, b, c, d) <- h(a, b, c, d), b > 5.`,
  );
  const decl = program.kir.relations.find((r) => r.name === 'h')!;
  const g = internals(gpu);
  const facts = Array.from({ length: 70_000 }, (_, i) => [69_999 - i, i, `s${i % 13}`, i % 5]);
  precompileLoad(g, decl, facts.length);
  // The key ends at column 0: the load sorts by it alone, then finds the rows distinct by their order.
  expect(decl.keys?.map((k) => k.columns)).toEqual([[0]]);
  const variables: KirVariable[] = [{ id: 0, name: 'h', columns: decl.columns.map((c) => c.type) }];
  const sort = loadShaders(g, { kind: 'sort', id: -1, input: 0, output: 0, keys: [0] }, variables);
  const unique = madeUpShaders({ kind: 'unique', id: -1, input: 0, output: 0 }, variables);
  const codeOf = (shaders: KernelShaders, pass: string): string => (g.subgroups ? shaders[`${pass}${SUBGROUP_VARIANT}`] : undefined) ?? shaders[pass]!;
  // Of the sort, only the passes a sort of that many rows runs.
  const sortRuns = sortPasses(g, sort, facts.length, 4);
  const passes = [...sortRuns.map((pass) => codeOf(sort, pass)), rowsOrderPasses().rowsOrder!];
  const uniquePasses = Object.keys(unique).filter((pass) => !pass.endsWith(SUBGROUP_VARIANT)).map((pass) => codeOf(unique, pass));
  expect(sortRuns.length).toBeGreaterThan(2);
  expect(passes.filter((code) => !g.pipelines.has(code))).toEqual([]);
  // Nor the whole-key sort's, compiled per row layout: a load radix sorts.
  const full = madeUpShaders({ kind: 'sort', id: -1, input: 0, output: 0, keys: [0] }, variables);
  const others = Object.keys(full).filter((pass) => !pass.endsWith(SUBGROUP_VARIANT) && !sortRuns.includes(pass as PassName));
  expect(others).toEqual(expect.arrayContaining(['rankSort', 'sortTiles', 'mergeRanks']));
  expect(others.filter((pass) => g.pipelines.has(codeOf(full, pass)))).toEqual([]);
  expect(uniquePasses.filter((code) => g.pipelines.has(code))).toEqual([]);
  const compiled = passes.map((code) => g.pipelines.get(code));
  await Promise.all(compiled.flatMap((variants) => [...variants!.values()]));
  const before = g.compiled.pipelines;
  // A load of rows out of order runs those passes on the pipelines compiled ahead.
  const run = await program.run({ gpu, facts: { h: facts }, outputs: ['out'] });
  expect(run.relations.get('out')).toEqual((await program.interpret({ facts: { h: facts }, outputs: ['out'] })).get('out'));
  expect(passes.map((code) => g.pipelines.get(code))).toEqual(compiled);
  // Its key (the leading column) is checked by the sorted rows' order: no projection of its own compiled or run.
  const keyProject = madeUpShaders(
    { kind: 'mapFilter', id: -1, input: 0, output: 1, filter: [], project: [{ kind: 'col', index: 0, type: 'int32' }] },
    [...variables, { id: 1, name: 'h key 0', columns: ['int32'] }],
  );
  expect(Object.keys(keyProject).filter((pass) => g.pipelines.has(keyProject[pass]!))).toEqual([]);
  // Nor a unique: no two rows share the key, so none are equal.
  expect(uniquePasses.filter((code) => g.pipelines.has(code))).toEqual([]);
  // Out of order: a row given twice is no violation, two rows that share the key but differ are.
  const twice = [...facts, facts[123]!];
  expect((await program.run({ gpu, facts: { h: twice }, outputs: ['out'] })).relations.get('out')).toEqual(run.relations.get('out'));
  await expect(program.run({ gpu, facts: { h: [...facts, [facts[123]![0]!, 7, 'other', 1]] } })).rejects.toThrow(/^key violated: h /);
  // Few rows, which a query's sort would sort by whole keys, are radix sorted too.
  const few = facts.slice(0, 3000);
  await program.run({ gpu, facts: { h: few }, outputs: ['out'] });
  expect(others.filter((pass) => g.pipelines.has(codeOf(full, pass)))).toEqual([]);
  // A second relation of the same columns and key loads on the same pipelines: nothing compiles again.
  const twin = compile(
    `k(a, b, c, d) -> int32(a), int32(b), string(c), int32(d).
k(a, b, c, d), k(a, b2, c2, d2) -> b = b2, c = c2, d = d2.
out(a, b, c, d) <- k(a, b, c, d), b > 5.`,
  );
  const after = g.compiled.pipelines;
  expect(after).toBeGreaterThan(before);
  await twin.run({ gpu, facts: { k: facts }, outputs: ['out'] });
  expect(g.compiled.pipelines).toBe(after);
});
