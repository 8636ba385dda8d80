/** The operator bench on a tiny size: every requested case runs and reports consistent figures. */
import { afterAll, beforeAll, expect, it } from 'vitest';
import { benchOperators, formatBenchReport, warmUp } from '../src/operators.js';
import { openGpu, type Gpu } from '@vixen/runtime/gpu';

/** A binding that holds the hash tables of 2^20-row cases, yet not their rows (as runtime's chunks test). */
const MEDIUM = 6 * 2 ** 20;

let gpu: Gpu;
let medium: Gpu;
beforeAll(async () => {
  gpu = await openGpu();
  medium = await openGpu({ maxStorageBufferBindingSize: MEDIUM });
});
afterAll(() => {
  gpu?.dispose();
  medium?.dispose();
});

it('benches copy, hash build/probe, group-by, a projection and a selectivity, with ratios to copy', async () => {
  const n = 2 ** 12;
  const report = await benchOperators(gpu, { sizes: [12], runs: 1, warmup: 0, operators: ['hashBuild', 'hashProbe', 'groupBy', 'mapFilter', 'project'], selectivities: [0.25] });
  const by = (op: string) => report.results.find((r) => r.operator === op)!;
  expect(report.results.map((r) => r.operator)).toEqual(['copy', 'mapFilter', 'mapFilter', 'mapFilter', 'project', 'hashBuild', 'hashProbe', ...Array(8).fill('groupBy')]);
  expect(report.skipped).toEqual([]);
  // Half the probes look up a build key (seeded data: within a few percent).
  expect(Math.abs(by('hashProbe').outputRows / n - 0.5)).toBeLessThan(0.05);
  expect(by('hashBuild').rows).toBe(n / 4);
  expect(report.results.filter((r) => r.operator === 'groupBy').map((r) => r.outputRows)).toEqual([n / 16, n / 16, 16, 16, 4, 4, 5, n / 16]);
  expect(Math.abs(by('mapFilter').outputRows / n - 0.25)).toBeLessThan(0.05);
  // The select in any order keeps as many rows as the one in input order.
  const selects = report.results.filter((r) => r.operator === 'mapFilter');
  expect(selects.map((r) => r.variant)).toEqual(['25% of int32 values', '25% of int32 values, any order', '25% of (int32, int32), swapped']);
  expect(selects[1]!.outputRows).toBe(selects[0]!.outputRows);
  // The projection keeps every row; its count is known to the host, so it reads nothing back.
  expect(by('project').outputRows).toBe(n);
  expect(by('project').bytes).toBe(16 * n);
  expect(by('project').countReadMs).toBeUndefined();
  for (const r of report.results) {
    expect(r.medianMs).toBeGreaterThan(0);
    expect(r.copyRatio).toBeCloseTo(r.gbPerSecond / by('copy').gbPerSecond, 6);
  }
  // A select leaves its count on the device (read after the timed bracket); a hash group-by reads its group count
  // itself, inside the bracket.
  expect(by('mapFilter').countReadMs).toBeGreaterThan(0);
  expect(by('groupBy').countReadMs).toBeUndefined();
  expect(by('copy').countReadMs).toBeUndefined();
  expect(report.roundTripMicros).toBeGreaterThan(0);
  expect(formatBenchReport(report)).toMatch(/hashProbe .* probes\/s/);
  expect(formatBenchReport(report)).toMatch(/ ms +count read ms +device ms /);
  expect(formatBenchReport(report)).toMatch(/host round trip .*: [0-9.]+ µs/);
  await expect(benchOperators(gpu, { sizes: [10], operators: ['nope'] })).rejects.toThrow(/unknown operators nope/);
  await expect(benchOperators(gpu, { sizes: [10], operators: ['groupBy'], groups: [0] })).rejects.toThrow(/group counts/);
});

it('benches the sorted group-by in TPC-H Q18\'s shape, its output checked against the host\'s sums', async () => {
  const n = 2 ** 13;
  const report = await benchOperators(gpu, { sizes: [13], runs: 1, warmup: 0, operators: ['sortedGroupBy'] });
  const [r] = report.results.filter((x) => x.operator === 'sortedGroupBy');
  // Groups of 1-7 rows, 4 on average (seeded data: within a few percent).
  expect(Math.abs(r!.outputRows / (n / 4) - 1)).toBeLessThan(0.05);
  // Rows of 3 words in, groups of 3 words out.
  expect(r!.bytes).toBe(12 * (n + r!.outputRows));
});

it('benches the byte string sort on the device and on workers, the device\'s order checked against the workers\'', async () => {
  const report = await benchOperators(gpu, { sizes: [12], runs: 1, warmup: 0, operators: ['stringSort'] });
  const sorts = report.results.filter((r) => r.operator === 'stringSort');
  expect(sorts.map((r) => `${r.variant}: ${r.rows}`)).toEqual(['comment-like strings, device sort: 4096', 'comment-like strings, worker sort: 4096']);
  // Strings of 10-80 bytes in (45 on average: within a few percent), nothing out on the device.
  for (const r of sorts) expect(Math.abs(r.bytes / (45 * 4096) - 1)).toBeLessThan(0.05);
  expect(formatBenchReport(report)).toMatch(/stringSort +comment-like strings, device sort +2\^12 .* strings\/s/);
});

it('benches radix sorts of 32-, 64- and 96-bit keys, each output checked, in keys or pairs per second', async () => {
  const report = await benchOperators(gpu, { sizes: [13], runs: 1, warmup: 0, operators: ['sort'] });
  const sorts = report.results.filter((r) => r.operator === 'sort');
  // The runtime's pick, then each sort it picks from on its own, of each shape (five columns too at this size).
  const shapes = ['int32 keys, random', 'int32 key + int32 payload, random', 'int64 keys, random', 'int64 + int32 keys (96 bits), random', '5 int32 columns, all keys'];
  expect(sorts.map((r) => `${r.variant}: ${r.outputRows}`)).toEqual(
    ['', ', rank sort', ', radix sort'].flatMap((path) => shapes.map((shape) => `${shape}${path}: 8192`)),
  );
  expect(formatBenchReport(report)).toMatch(/sort +int32 keys, random +2\^13 .* keys\/s .*%/);
});

it('benches top-k by tile rounds and by the radix select, each output checked against the host\'s first rows', async () => {
  const report = await benchOperators(gpu, { sizes: [13], runs: 1, warmup: 0, operators: ['topK'] });
  const tops = report.results.filter((r) => r.operator === 'topK');
  const shape = 'by decimal desc, rows of 5 words';
  expect(tops.map((r) => `${r.variant}: ${r.outputRows}`)).toEqual([
    `first 20 ${shape}: 20`,
    `first 20 ${shape}, radix select: 20`,
    `first 1000 ${shape}: 1000`,
    `first 4096 ${shape}: 4096`,
  ]);
  expect(formatBenchReport(report)).toMatch(/topK +first 20 by decimal desc, rows of 5 words +2\^13 .* rows\/s/);
});

it('warms up for the runs asked and on until the time asked has passed, and not at all with no runs asked', async () => {
  const runs = async (warmup: number, minMs: number): Promise<number> => {
    let k = 0;
    await warmUp(warmup, minMs, async () => (k++, 10));
    return k;
  };
  expect(await runs(2, 35)).toBe(4);
  expect(await runs(5, 0)).toBe(5);
  expect(await runs(5, 35)).toBe(5);
  expect(await runs(0, 100)).toBe(0);
});

it('the operator bench runs mapFilter, hash probe and group-by cases larger than one binding', async () => {
  const opts = { sizes: [20], runs: 1, warmup: 0, selectivities: [0.5] };
  const operators = ['mapFilter', 'hashProbe', 'groupBy'];
  const [whole, chunked] = [await benchOperators(gpu, { ...opts, operators }), await benchOperators(medium, { ...opts, operators })];
  const outputs = (rep: typeof whole) => rep.results.map((x) => `${x.operator} ${x.variant}: ${x.outputRows}`);
  // A group table that fills up grows to 2^20 slots (24 MiB): past this test's binding, not the rows' chunking.
  const tableTooBig = chunked.skipped.filter((x) => x.operator === 'groupBy' && /^group table of \d+ slots/.test(x.reason));
  expect(chunked.skipped).toEqual(tableTooBig);
  expect(outputs(chunked)).toEqual(outputs(whole).filter((line) => !tableTooBig.some((x) => line.startsWith(`groupBy ${x.variant}:`))));
  expect(outputs(chunked).filter((line) => /^(mapFilter|hashProbe|groupBy)/.test(line)).length).toBeGreaterThanOrEqual(4);
});

it('the operator bench sorts and merges rows larger than one binding on the device, with the unchunked outputs', async () => {
  // 2^20 two-word rows are chunks here (a sort range-partitions them, a merge runs chunk by chunk); 2^20 one-word
  // keys (4 MiB) fit one binding.
  const opts = { sizes: [20], runs: 1, warmup: 0, operators: ['sort', 'merge', 'difference'] };
  const [whole, chunked] = [await benchOperators(gpu, opts), await benchOperators(medium, opts)];
  const outputs = (rep: typeof whole) => rep.results.map((x) => `${x.operator} ${x.variant}: ${x.outputRows}`);
  expect(chunked.skipped).toEqual([]);
  expect(outputs(chunked)).toEqual(outputs(whole));
  // copy, four sorts (32-, 64-, 96-bit keys and key + payload), two merges and a difference.
  expect(outputs(chunked).length).toBe(8);
}, 240_000);

it('a merge past one binding whose output keeps an input chunk releases each buffer once', async () => {
  // 2^20 - 10 rows a chunk: the last 10 rows of the left side (keys from 2^21 - 20) get none of the delta's rows
  // (keys up to 2^21 - 127), so the output keeps that chunk.
  const tail = await openGpu({ maxStorageBufferBindingSize: 4 * (2 * (2 ** 20 - 10) + 1) });
  try {
    const report = await benchOperators(tail, { sizes: [20], runs: 2, warmup: 1, operators: ['merge'] });
    expect(report.results.filter((x) => x.operator === 'merge').map((x) => x.outputRows)).toEqual([2 ** 21, 2 ** 20 + 2 ** 14]);
  } finally {
    tail.dispose();
  }
}, 240_000);
