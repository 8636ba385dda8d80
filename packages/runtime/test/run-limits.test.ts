/**
 * Run limits and profiles through the public API on real WebGPU: an iteration limit stops a recursive program with
 * partial stats, a device memory limit fails cleanly (and a sufficient one changes nothing), and the stats account
 * for every kernel, QP operator, loop and the peak of device memory.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { compareRows, printCommand, VixenError, type Row } from '@vixen/queryplan';
import { compile, formatBytes, openGpu, parseByteSize, RunLimitError, type FixpointProgress, type Gpu } from '../src/index.js';

let gpu: Gpu;
beforeAll(async () => {
  gpu = await openGpu();
});
afterAll(() => gpu?.dispose());

const tc = compile(
  `edge(x, y) -> int32(x), int32(y).
   path(x, y) <- edge(x, y).
   path(x, z) <- path(x, y), edge(y, z).`,
  { filename: 'tc.logic' },
);
/** A chain 0 -> 1 -> ... -> n: left-linear closure needs n iterations. */
const chain = (n: number): Row[] => Array.from({ length: n }, (_, i) => [i, i + 1]);
const closure = (n: number): Row[] => {
  const rows: Row[] = [];
  for (let i = 0; i <= n; i++) for (let j = i + 1; j <= n; j++) rows.push([i, j]);
  return rows.sort(compareRows);
};

describe('maxIterations', () => {
  it('stops a fixpoint that needs more iterations, naming the loop relations and the limit, with partial stats', async () => {
    const run = tc.run({ gpu, facts: { edge: chain(12) }, maxIterations: 3 });
    await expect(run).rejects.toBeInstanceOf(RunLimitError);
    const e = (await run.catch((x: unknown) => x)) as RunLimitError;
    expect(e).toBeInstanceOf(VixenError);
    expect(e.message).toMatch(/fixpoint loop computing path .*did not converge within 3 iterations/);
    expect(e.stats.loops).toEqual([expect.objectContaining({ relations: ['path'], iterations: 3 })]);
    expect(e.stats.launches).toBeGreaterThan(0);
  });

  it('lets a fixpoint that fits the limit finish', async () => {
    const r = await tc.run({ gpu, facts: { edge: chain(4) }, maxIterations: 5 });
    expect(r.relations.get('path')).toEqual(closure(4));
    expect(r.stats.loops[0]!.iterations).toBeLessThanOrEqual(5);
  });

  it('rejects a non-positive limit as a user error', async () => {
    await expect(tc.run({ gpu, facts: { edge: chain(2) }, maxIterations: 0 })).rejects.toThrow(/maxIterations/);
  });
});

describe('maxDeviceMemory', () => {
  it('fails a run whose one step needs more with a clear error naming the variable and sizes', async () => {
    // One row of each join side and its output: three 256-byte buffers, more than 600 bytes.
    const run = tc.run({ gpu, facts: { edge: chain(40) }, maxDeviceMemory: 600 });
    await expect(run).rejects.toBeInstanceOf(RunLimitError);
    const e = (await run.catch((x: unknown) => x)) as RunLimitError;
    expect(e.message).toMatch(/device memory limit exceeded: .* reads .* of \d+ rows, \d+ bytes; its smallest partition, 1 row, 8 bytes, .* the limit is 600 bytes/);
    expect(e.stats.peakDeviceBytes).toBeLessThanOrEqual(600);
  });

  it('runs kernels whose relations pass the limit together in partitions, with the same answer', async () => {
    const r = await tc.run({ gpu, facts: { edge: chain(40) }, maxDeviceMemory: '2KiB' });
    expect(r.relations.get('path')).toEqual(closure(40));
    expect(r.stats.peakDeviceBytes).toBeLessThanOrEqual(2048);
    expect(r.stats.partitionedLaunches).toBeGreaterThan(0);
  });

  it('checks the declared keys of facts loaded past the limit (in host memory) as it does on the device', async () => {
    const fd = compile('q(x, y) -> int32(x), int32(y).\nq(x, y), q(x, z) -> y = z.\nr(x, y) <- q(x, y).\n');
    const facts = { q: [...Array.from({ length: 300 }, (_, i) => [i, 2 * i]), [7, 15], [250, 1]] };
    const message = async (options: { maxDeviceMemory?: number }): Promise<string> =>
      fd.run({ gpu, facts, ...options }).then(
        () => 'no error',
        (e: unknown) => (e as Error).message,
      );
    const onDevice = await message({});
    expect(onDevice).toMatch(/^key violated: q /);
    // 302 rows of 8 bytes, sorted with room for three copies: more than 2 KiB.
    expect(await message({ maxDeviceMemory: 2048 })).toBe(onDevice);
    const ok = await fd.run({ gpu, facts: { q: facts.q.slice(0, 300) }, maxDeviceMemory: 2048 });
    expect(ok.relations.get('r')).toEqual(facts.q.slice(0, 300));
    expect(ok.stats.spilledBytes).toBeGreaterThanOrEqual(300 * 8);
  });

  it('gives the right answer under a sufficient limit and reports the peak', async () => {
    const r = await tc.run({ gpu, facts: { edge: chain(40) }, maxDeviceMemory: '64MiB' });
    expect(r.relations.get('path')).toEqual(closure(40));
    const free = await tc.run({ gpu, facts: { edge: chain(40) } });
    expect(r.stats.peakDeviceBytes).toBe(free.stats.peakDeviceBytes);
    // path alone holds 820 rows of 8 bytes at the end.
    expect(r.stats.peakDeviceBytes).toBeGreaterThanOrEqual(820 * 8);
    expect(r.stats.peakDeviceBytes).toBeLessThanOrEqual(64 * 2 ** 20);
  });

  it('parses and prints byte sizes', () => {
    expect(parseByteSize('64MiB')).toBe(64 * 2 ** 20);
    expect(parseByteSize('1.5 GiB')).toBe(1.5 * 2 ** 30);
    expect(parseByteSize('500MB')).toBe(500e6);
    expect(parseByteSize('4k')).toBe(4096);
    expect(parseByteSize(1000)).toBe(1000);
    expect(() => parseByteSize('12 parsecs', 'maxDeviceMemory')).toThrow(/maxDeviceMemory: '12 parsecs' is not a byte size/);
    expect(() => parseByteSize(-1)).toThrow(VixenError);
    expect(formatBytes(100)).toBe('100 bytes');
    expect(formatBytes(3 * 2 ** 20)).toBe('3.0 MiB (3145728 bytes)');
  });
});

describe('profile', () => {
  it('accounts every kernel and QP operator, with device-waited times and row counts', async () => {
    const r = await tc.run({ gpu, facts: { edge: chain(5) }, profile: true });
    const s = r.stats;
    expect(s.profiled).toBe(true);
    expect(s.kernels.map((k) => k.kernel)).toEqual(tc.kir.kernels.map((k) => k.id));
    expect(s.kernels.reduce((n, k) => n + k.launches, 0)).toBe(s.launches);
    for (const k of s.kernels) {
      expect(k.launches).toBeGreaterThan(0);
      expect(k.origin).toBeDefined();
      expect(k.bytesOut).toBe(k.rowsOut * 8);
    }
    // One operator per plan command that has kernels, each pointing back at that command.
    const planCommands = tc.plan!.blocks.flatMap((b) => b.commands.map((c, i) => ({ block: b.label, command: i, c })));
    // The KIR passes may leave a command no kernel of its own (e.g. a union into a relation known empty).
    const origins = new Set(tc.kir.kernels.map((k) => `${k.origin!.block}#${k.origin!.command}`));
    const withKernels = planCommands.filter((pc) => origins.has(`${pc.block}#${pc.command}`));
    expect(withKernels.length).toBeGreaterThan(3);
    expect(s.operators.map((o) => [o.block, o.command])).toEqual(withKernels.map((pc) => [pc.block, pc.command]));
    const loop = s.loops[0]!;
    expect(loop.iterations).toBe(5);
    const opText = (o: { block: string; command: number }): string =>
      printCommand(planCommands.find((pc) => pc.block === o.block && pc.command === o.command)!.c);
    // The loop's join ran once per iteration; its union into path wrote path's size after each one (chain of 5).
    expect(s.operators.find((o) => opText(o).includes('mapJoin'))!.launches).toBe(5);
    const union = s.operators.find((o) => o.block === loop.block && opText(o).startsWith('path := union path'))!;
    expect(union.rowsOut).toBe(9 + 12 + 14 + 15 + 15);
    expect(s.blocks.find((b) => b.label === loop.block)!.executions).toBe(5);
  });

  it('reports fixpoint progress once per host decision, with a profile once per iteration', async () => {
    const seen: FixpointProgress[] = [];
    await tc.run({ gpu, facts: { edge: chain(4) }, profile: true, onProgress: (p) => seen.push(p) });
    expect(seen.map((p) => p.iteration)).toEqual([1, 2, 3, 4]);
    expect(seen[0]!.relations).toEqual(['path']);
    expect(seen.map((p) => p.deltas[0]!.rows)).toEqual([3, 2, 1, 0]);
    // Without a profile, loop control may run several iterations per host decision: fewer reports, the last at 4.
    const batched: FixpointProgress[] = [];
    const r = await tc.run({ gpu, facts: { edge: chain(4) }, onProgress: (p) => batched.push(p) });
    expect(batched.length).toBe(r.stats.loops[0]!.batches);
    expect(batched.length).toBeLessThanOrEqual(4);
    expect(batched.at(-1)).toMatchObject({ iteration: 4, deltas: [{ rows: 0 }] });
    expect(batched.map((p) => p.iteration)).toEqual([...batched.map((p) => p.iteration)].sort((a, b) => a - b));
  });
});

describe('storage binding size', () => {
  it('runs linear and non-linear closure whose relation outgrows one binding (chunked, gpu/chunks.ts)', async () => {
    const small = await openGpu({ maxStorageBufferBindingSize: 4096 });
    try {
      // The closure of a 60-node chain has 1830 tuples of 8 bytes: more than 4096 bytes, so path is chunked; joining
      // path with itself joins chunk with chunk.
      expect((await tc.run({ gpu: small, facts: { edge: chain(60) } })).relations.get('path')).toEqual(closure(60));
      const squared = compile(`edge(x, y) -> int32(x), int32(y).
path(x, y) <- edge(x, y).
path(x, z) <- path(x, y), path(y, z).`);
      expect((await squared.run({ gpu: small, facts: { edge: chain(60) } })).relations.get('path')).toEqual(closure(60));
      // A limit that holds the result changes nothing.
      const ok = await tc.run({ gpu: small, facts: { edge: chain(20) } });
      expect(ok.relations.get('path')).toEqual(closure(20));
    } finally {
      small.dispose();
    }
  });
});

/** Counts up without bound: one new tuple per iteration, never a fixpoint (int32 would take 2^31 iterations). */
const countUp = compile(
  `count(x) -> int32(x).
   count(0).
   count(y) <- count(x), y = x + 1.`,
  { filename: 'count-up.logic' },
);

describe('maxTuples', () => {
  it('stops a runaway recursion when one relation would pass the limit, with partial stats', async () => {
    const run = countUp.run({ gpu, maxTuples: 25 });
    await expect(run).rejects.toBeInstanceOf(RunLimitError);
    const e = (await run.catch((x: unknown) => x)) as RunLimitError;
    expect(e.message).toMatch(/tuple limit exceeded: kernel k\d+ .* made relation count hold 26 tuples; the limit is 25 per relation \(maxTuples \/ --max-tuples\)/);
    // The relation held 25 tuples (0..24) when the 26th was refused; one iteration adds one tuple.
    expect(e.stats.relationRows).toEqual([{ name: 'count', rows: 25 }]);
    expect(e.stats.loops[0]!.iterations).toBe(25);
    expect(e.message).toMatch(/stopped after 25 fixpoint iterations, \d+ kernel launches and [\d.]+ s of evaluation, holding 25 tuples \(count 25\)/);
  });

  it('counts facts too, and a limit that suffices changes nothing', async () => {
    await expect(tc.run({ gpu, facts: { edge: chain(12) }, maxTuples: 11 })).rejects.toThrow(
      /loading the facts of edge made relation edge hold 12 tuples; the limit is 11/,
    );
    const r = await tc.run({ gpu, facts: { edge: chain(12) }, maxTuples: closure(12).length });
    expect(r.relations.get('path')).toEqual(closure(12));
    expect(r.stats.relationRows).toEqual([
      { name: 'edge', rows: 12 },
      { name: 'path', rows: closure(12).length },
    ]);
  });
});

describe('timeout', () => {
  it('stops a runaway recursion after the wall-clock limit between launches, and the device stays usable', async () => {
    const t0 = performance.now();
    const run = countUp.run({ gpu, timeout: 0.5 });
    await expect(run).rejects.toBeInstanceOf(RunLimitError);
    const elapsed = (performance.now() - t0) / 1000;
    const e = (await run.catch((x: unknown) => x)) as RunLimitError;
    expect(e.message).toMatch(/^timed out after \d+\.\d\d s; the limit is 0\.5 s \(timeout \/ --timeout\); stopped after \d+ fixpoint iterations/);
    const rows = e.stats.relationRows[0]!.rows;
    expect(rows).toBeGreaterThan(1);
    // Each iteration adds one tuple: the partial stats agree with themselves.
    expect(e.stats.loops[0]!.iterations).toBeGreaterThanOrEqual(rows - 1);
    expect(elapsed).toBeGreaterThanOrEqual(0.5);
    expect(elapsed).toBeLessThan(5);
    // Nothing was left queued or mapped: the same device runs the next program correctly.
    const after = await tc.run({ gpu, facts: { edge: chain(6) } });
    expect(after.relations.get('path')).toEqual(closure(6));
  });

  it('lets a run that finishes in time finish', async () => {
    const r = await tc.run({ gpu, facts: { edge: chain(4) }, timeout: 60 });
    expect(r.relations.get('path')).toEqual(closure(4));
  });
});

describe('device buffer limits', () => {
  it('runs a join whose result exceeds maxStorageBufferBindingSize in parts (a chunked result, gpu/chunks.ts)', async () => {
    const cross = compile(
      `a(x) -> int32(x).
       b(y) -> int32(y).
       big(x, y) <- a(x), b(y).`,
      { filename: 'cross.logic' },
    );
    const small = await openGpu({ maxStorageBufferBindingSize: 4096 });
    try {
      // Just over one binding: rows * 2 words * 4 bytes > the limit.
      const side = Math.ceil(Math.sqrt(small.limits.maxStorageBufferBindingSize / 8)) + 1;
      const values = Array.from({ length: side }, (_, i): Row => [i]);
      const run = await cross.run({ gpu: small, facts: { a: values, b: values } });
      expect(run.relations.get('big')).toEqual(values.flatMap(([x]) => values.map(([y]) => [x, y])));
    } finally {
      small.dispose();
    }
  });
});
