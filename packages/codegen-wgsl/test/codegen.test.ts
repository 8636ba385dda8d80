/** Generated WGSL for every kernel kind compiles on a real WebGPU device; constant layout is as documented. */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { KirKernel, KirProgram, KirVariable } from '@vixen/kernel-ir';
import type { Expr, ScalarType } from '@vixen/queryplan';
import { compileDevice, type CompileDevice } from './device.js';
import { vectorRows } from '../src/wgsl.js';
import {
  PASS_LAYOUTS,
  SUBGROUP_VARIANT,
  TABLES_GROUP,
  generateKernelShaders,
  generateProgramShaders,
  kernelConstants,
  kernelTables,
  type PassName,
} from '../src/index.js';

const A: ScalarType[] = ['int32', 'int64', 'string'];
const B: ScalarType[] = ['string', 'int64'];
const variables: KirVariable[] = [
  { id: 0, name: 'a', columns: A, relation: 'a' },
  { id: 1, name: 'b', columns: B },
  { id: 2, name: 'out', columns: ['int64', 'string', 'int32', 'int64'] },
  { id: 3, name: 'a2', columns: A },
  { id: 4, name: 'nullary', columns: [] },
  { id: 5, name: 'one', columns: ['int32'] },
  { id: 6, name: 'groups', columns: ['string', 'int32', 'int64'] },
];
const col = (index: number, type: ScalarType): Expr => ({ kind: 'col', index, type });
const i32: Expr = { kind: 'const', type: 'int32', value: -1 };
const i64: Expr = { kind: 'const', type: 'int64', value: 1n << 40n };
const str: Expr = { kind: 'const', type: 'string', value: 'x' };

const kernels: KirKernel[] = [
  {
    kind: 'mapFilter',
    id: 0,
    input: 0,
    output: 2,
    filter: [
      { kind: 'compare', op: '<', left: col(1, 'int64'), right: i64 },
      { kind: 'compare', op: '!=', left: str, right: col(2, 'string') },
      { kind: 'compare', op: '>=', left: col(0, 'int32'), right: i32 },
    ],
    // Fresh objects: each occurrence gets its own words.
    project: [col(1, 'int64'), col(2, 'string'), { ...i32 }, { ...i64 }],
  },
  { kind: 'sort', id: 1, input: 0, output: 3, keys: [2, 1] },
  { kind: 'unique', id: 2, input: 0, output: 3 },
  {
    kind: 'mergeJoin',
    id: 3,
    left: 0,
    right: 1,
    output: 2,
    leftKeys: [2, 1],
    rightKeys: [0, 1],
    filter: [{ kind: 'compare', op: '<=', left: col(0, 'int32'), right: col(0, 'int32') }],
    project: [col(4, 'int64'), col(3, 'string'), col(0, 'int32'), i64],
  },
  { kind: 'mergeJoin', id: 4, left: 0, right: 1, output: 2, leftKeys: [], rightKeys: [], filter: [], project: [col(1, 'int64'), str, i32, col(4, 'int64')] },
  { kind: 'difference', id: 5, left: 0, right: 3, output: 3 },
  { kind: 'concat', id: 6, left: 0, right: 3, output: 3 },
  { kind: 'copy', id: 7, input: 0, output: 3 },
  { kind: 'unique', id: 8, input: 4, output: 4 },
  { kind: 'sort', id: 9, input: 4, output: 4, keys: [] },
  { kind: 'merge', id: 10, left: 0, right: 3, output: 3, keys: [2, 0, 1] },
  // Two-column key (int64 = two words) of b joined with a's (string, int64) columns; out = (b.int64, a.string, a.int32, a.int64).
  {
    kind: 'hashJoin',
    id: 11,
    build: 1,
    probe: 0,
    output: 2,
    buildKeys: [0, 1],
    probeKeys: [2, 1],
    project: [
      { side: 'build', column: 1 },
      { side: 'probe', column: 2 },
      { side: 'probe', column: 0 },
      { side: 'probe', column: 1 },
    ],
  },
  { kind: 'sort', id: 12, input: 5, output: 5, keys: [0] },
  // Row a ++ b ++ a2: a filtered, looked up in b on (string, int64) and in a2 on a computed int32 key.
  {
    kind: 'pipeline',
    id: 13,
    input: 0,
    output: 2,
    filter: [{ kind: 'compare', op: '>=', left: col(0, 'int32'), right: { ...i32 } }],
    probes: [
      { build: 1, buildKeys: [0, 1], probeKeys: [col(2, 'string'), col(1, 'int64')] },
      { build: 3, buildKeys: [0], probeKeys: [{ kind: 'binary', op: '+', left: col(0, 'int32'), right: { ...i32 }, type: 'int32' }] },
    ],
    // Per combination: b's int64 against a's.
    check: [{ kind: 'compare', op: '!=', left: col(4, 'int64'), right: col(1, 'int64') }],
    project: [col(4, 'int64'), col(3, 'string'), col(5, 'int32'), { ...i64 }],
    fused: [1, 2, 3],
  },
  // The same rows aggregated: per string of b, the count and the sum of a's int64.
  {
    kind: 'pipeline',
    id: 14,
    input: 0,
    output: 6,
    filter: [{ kind: 'compare', op: '>=', left: col(0, 'int32'), right: { ...i32 } }],
    probes: [
      { build: 1, buildKeys: [0, 1], probeKeys: [col(2, 'string'), col(1, 'int64')] },
      { build: 3, buildKeys: [0], probeKeys: [col(0, 'int32')] },
    ],
    check: [],
    project: [col(3, 'string'), col(1, 'int64')],
    aggregate: { groupBy: [0], aggregates: [{ fn: 'count', type: 'int32' }, { fn: 'sum', column: 1, type: 'int64' }] },
    fused: [1, 2, 3],
  },
  // No filter: a projection pass (rows of 4 words in, read as a vec4; 6 out, written as 3 vec2s).
  { kind: 'mapFilter', id: 15, input: 0, output: 2, filter: [], project: [col(1, 'int64'), col(2, 'string'), { ...i32 }, { ...i64 }] },
  // An anti-join before a join: a rows absent from the filtered a2, looked up in b; the row is a ++ b (the negated
  // probe adds no columns).
  {
    kind: 'pipeline',
    id: 16,
    input: 0,
    output: 2,
    filter: [],
    probes: [
      { build: 3, buildKeys: [0], probeKeys: [col(0, 'int32')], buildFilter: [{ kind: 'compare', op: '!=', left: col(1, 'int64'), right: { ...i64 } }], negated: true },
      { build: 1, buildKeys: [0, 1], probeKeys: [col(2, 'string'), col(1, 'int64')] },
    ],
    check: [{ kind: 'compare', op: '!=', left: col(4, 'int64'), right: col(1, 'int64') }],
    project: [col(4, 'int64'), col(3, 'string'), col(0, 'int32'), { ...i64 }],
    fused: [1, 2, 3],
  },
  // Only an anti-join, aggregated: per string of a absent from b, the count and the sum of a's int64.
  {
    kind: 'pipeline',
    id: 17,
    input: 0,
    output: 6,
    filter: [{ kind: 'compare', op: '>=', left: col(0, 'int32'), right: { ...i32 } }],
    probes: [{ build: 1, buildKeys: [0, 1], probeKeys: [col(2, 'string'), col(1, 'int64')], negated: true }],
    check: [],
    project: [col(2, 'string'), col(1, 'int64')],
    aggregate: { groupBy: [0], aggregates: [{ fn: 'count', type: 'int32' }, { fn: 'sum', column: 1, type: 'int64' }] },
    fused: [1, 2],
  },
  // The first 5 rows of a by its int64 descending (ties: all columns): a device top-k, then a sort of those rows.
  { kind: 'limit', id: 18, input: 0, output: 3, keys: [{ column: 1, descending: true }], count: 5 },
  // A keyless anti-join (a row of a goes on only where the filtered a2 has no row: a key of no words) before a join.
  {
    kind: 'pipeline',
    id: 19,
    input: 0,
    output: 2,
    filter: [],
    probes: [
      { build: 3, buildKeys: [], probeKeys: [], buildFilter: [{ kind: 'compare', op: '!=', left: col(1, 'int64'), right: { ...i64 } }], negated: true },
      { build: 1, buildKeys: [0, 1], probeKeys: [col(2, 'string'), col(1, 'int64')] },
    ],
    check: [],
    project: [col(4, 'int64'), col(3, 'string'), col(0, 'int32'), { ...i64 }],
    fused: [1, 2, 3],
  },
  // Only a keyless anti-join, aggregated: per string of a, its count, where b has no row.
  {
    kind: 'pipeline',
    id: 20,
    input: 0,
    output: 6,
    filter: [{ kind: 'compare', op: '>=', left: col(0, 'int32'), right: { ...i32 } }],
    probes: [{ build: 1, buildKeys: [], probeKeys: [], negated: true }],
    check: [],
    project: [col(2, 'string'), col(1, 'int64')],
    aggregate: { groupBy: [0], aggregates: [{ fn: 'count', type: 'int32' }, { fn: 'sum', column: 1, type: 'int64' }] },
    fused: [1, 2],
  },
];

type ExpectedPass = PassName | `${PassName}${typeof SUBGROUP_VARIANT}` | `hashBuild.${number}`;

/** The passes of a sort of wide rows. */
const sortPasses: ExpectedPass[] = [
  'radixCount',
  'radixTiles',
  'radixTilePrefix',
  'radixKeys',
  'radixSweep',
  `radixSweep${SUBGROUP_VARIANT}`,
  'radixSweepRows',
  `radixSweepRows${SUBGROUP_VARIANT}`,
  'rankSort',
  'sortTiles',
  'mergeRanks',
];

const expectedPasses: Record<KirKernel['kind'], ExpectedPass[]> = {
  mapFilter: ['select', `select${SUBGROUP_VARIANT}`],
  sort: sortPasses,
  unique: ['select', `select${SUBGROUP_VARIANT}`],
  mergeJoin: ['joinCount', `joinCount${SUBGROUP_VARIANT}`, 'joinWrite', 'joinRuns', 'scanBlock', `scanBlock${SUBGROUP_VARIANT}`, 'scanAdd', 'scanWrapped'],
  hashJoin: ['hashBuild', 'hashProbe', `hashProbe${SUBGROUP_VARIANT}`],
  // One build pass per probe, named hashBuild.<probe>.
  pipeline: ['hashBuild.0', 'hashBuild.1', 'pipelineProbe', `pipelineProbe${SUBGROUP_VARIANT}`],
  difference: ['selectAbsent', `selectAbsent${SUBGROUP_VARIANT}`],
  concat: [],
  merge: ['mergeSplits', 'merge', 'countSum'],
  copy: [],
  aggregate: ['flags', 'aggCarry', 'scatter', 'scanBlock', `scanBlock${SUBGROUP_VARIANT}`, 'scanAdd'],
  // A top-k, then the sort of the rows it keeps.
  limit: ['topkHist', 'topkPick', 'topkWrite', 'topkTile', 'topkRank', ...sortPasses],
};
/** Sorts generate only the passes of their row width: wide rows (above), no words, one word. */
const expectedById: Record<number, string[]> = {
  9: ['radixCount', 'radixTiles', 'radixTilePrefix', 'radixSweep', `radixSweep${SUBGROUP_VARIANT}`],
  12: ['radixCount', 'radixTiles', 'radixTilePrefix', 'radixSweepKeys', `radixSweepKeys${SUBGROUP_VARIANT}`, 'rankSort', 'sortTiles', 'mergeRanks'],
  14: ['hashBuild.0', 'hashBuild.1', 'pipelineAggregate', 'pipelineGroups'],
  15: ['project'],
  17: ['hashBuild.0', 'pipelineAggregate', 'pipelineGroups'],
  20: ['hashBuild.0', 'pipelineAggregate', 'pipelineGroups'],
};

let gpu: CompileDevice;
beforeAll(async () => {
  gpu = await compileDevice();
});
afterAll(() => gpu?.device.destroy());

describe('generateKernelShaders', () => {
  it.each(kernels.map((k) => [`${k.kind} #${k.id}`, k] as const))('%s compiles without errors', async (_, kernel) => {
    const shaders = generateKernelShaders(kernel, variables);
    expect(Object.keys(shaders).sort()).toEqual([...(expectedById[kernel.id] ?? expectedPasses[kernel.kind])].sort());
    for (const [pass, code] of Object.entries(shaders)) {
      const variant = pass.endsWith(SUBGROUP_VARIANT);
      expect(pass.slice(0, variant ? -SUBGROUP_VARIANT.length : undefined).replace(/\.\d+$/, '') in PASS_LAYOUTS).toBe(true);
      // Device-independent: the workgroup size is an override set at pipeline creation.
      expect(code).toMatch(/override WG: u32/);
      expect(code.startsWith('enable subgroups;')).toBe(variant);
      // A subgroup variant compiles only where the device has the feature (see subgroups.test.ts).
      if (variant && !gpu.subgroups) continue;
      const module = gpu.device.createShaderModule({ code });
      const errors = (await module.getCompilationInfo()).messages.filter((m) => m.type === 'error').map((m) => `${pass}: ${m.message}`);
      expect(errors).toEqual([]);
    }
  });

  it('runs a pipeline\'s lookups in the order asked (the same passes otherwise), and rejects an order that is no permutation', async () => {
    const pipeline = kernels.find((k) => k.kind === 'pipeline')!;
    const probe = (order?: number[]): string => generateKernelShaders(pipeline, variables, order ? { lookupOrder: order } : {}).pipelineProbe!;
    const at = (code: string, j: number): number => code.indexOf(`= lookup${j}(`);
    expect(at(probe(), 0)).toBeLessThan(at(probe(), 1));
    const reversed = probe([1, 0]);
    expect(at(reversed, 1)).toBeLessThan(at(reversed, 0));
    expect(reversed.replace(/^.*= lookup\d\(.*$/gm, '')).not.toBe(probe().replace(/^.*= lookup\d\(.*$/gm, ''));
    const errors = (await gpu.device.createShaderModule({ code: reversed }).getCompilationInfo()).messages.filter((m) => m.type === 'error');
    expect(errors).toEqual([]);
    expect(() => probe([0, 0])).toThrow(/lookup order/);
    // A row that misses the first lookup reads nothing of the second's table.
    expect(probe().indexOf('if (x0 == 0u) { continue; }')).toBeLessThan(probe().indexOf('let fh1 = hashed['));
  });

  it("lists an aggregating pipeline's rows for each lookup but the last, and finds group slots in one loop", () => {
    const code = generateKernelShaders(kernels.find((k) => k.id === 14)!, variables).pipelineAggregate!;
    // The filtered tile is listed, then the rows lookup 0 matches; lookup 1 runs with the aggregation over that list.
    expect(code.match(/listed\[at\] = ids\[r\]/g)).toHaveLength(2);
    expect(code.match(/= lookup0\(/g)).toHaveLength(1);
    expect(code.match(/= lookup1\(/g)).toHaveLength(1);
    // The last list's rows matched lookup 0 already: both lookups' first slots are read before either goes on.
    const last = code.slice(code.lastIndexOf('for (var r = 0u; r < ITEMS; r = r + 1u) {'));
    expect(last.indexOf('let fh1 = hashed[')).toBeGreaterThan(0);
    expect(last.indexOf('let fh1 = hashed[')).toBeLessThan(last.indexOf('if (x0 == 0u) { continue; }'));
    // Lookup 0's stage reads every row's first slot before probing on from any (unrolled, one row after another).
    const probedOn = [...code.matchAll(/lookup0\(lk(\d)_0\b/g)];
    expect(probedOn.map((m) => m[1])).toEqual(['0', '1', '2', '3']);
    expect(code.indexOf('lh3 = hashed[')).toBeGreaterThan(0);
    expect(code.indexOf('lh3 = hashed[')).toBeLessThan(probedOn[0]!.index);
    // A thread waiting for a claimed slot's key words waits across turns of the slot loop, never in a loop of its
    // own that its warp might run ahead of the claimer (which hung an H100).
    for (const fn of ['localSlot', 'globalSlot']) {
      const body = code.slice(code.indexOf(`fn ${fn}(`), code.indexOf('\n}\n', code.indexOf(`fn ${fn}(`)));
      expect(body.match(/\bloop \{|\bfor \(|\bwhile /g)).toEqual(['loop {']);
    }
  });

  it("looks a pipeline's negated probes up first, dropping the rows their tables hold, and lists an aggregate's misses", () => {
    const code = generateKernelShaders(kernels.find((k) => k.id === 16)!, variables).pipelineProbe!;
    expect(code.indexOf('if (nh0 != 0u) { continue; }')).toBeGreaterThan(0);
    expect(code.indexOf('if (nh0 != 0u) { continue; }')).toBeLessThan(code.indexOf('let fh1 = hashed['));
    // No build row of the negated probe is read: the output's first column is b's int64 (probe 1's row).
    expect(code).not.toMatch(/\bbo0\b/);
    expect(code).toMatch(/hashed\[bo1 \+ 1u\]/);
    const agg = generateKernelShaders(kernels.find((k) => k.id === 17)!, variables).pipelineAggregate!;
    // The filtered tile is listed, then the rows lookup 0 misses; the last loop looks nothing up.
    expect(agg.match(/listed\[at\] = ids\[r\]/g)).toHaveLength(2);
    expect(agg).toMatch(/\(live & 1u\) != 0u && !\(lh0 != 0u/);
    expect(agg).not.toMatch(/let fh0 = /);
  });

  it('projects rows without a filter as vectors, row i to row i', () => {
    const code = generateKernelShaders(kernels.find((k) => k.id === 15)!, variables).project!;
    expect(code).toContain('var<storage, read> inp: array<vec4<u32>>;');
    expect(code).toContain('var<storage, read_write> outp: array<vec2<u32>>;');
    expect(code).toContain('outp[i * 3u + 0u] = vec2<u32>(r0.y, r0.z);');
  });

  it('rejects a projection whose width does not match the output variable', () => {
    const bad: KirKernel = { kind: 'mapFilter', id: 0, input: 0, output: 3, filter: [], project: [i32] };
    expect(() => generateKernelShaders(bad, variables)).toThrow(/projects 1 words/);
  });
});

describe('kernelConstants', () => {
  it('lists filter constants (left, right) then projection constants, by occurrence', () => {
    expect(kernelConstants(kernels[0]!)).toEqual([i64, str, i32, i32, i64]);
    expect(kernelConstants(kernels[4]!)).toEqual([str, i32]);
    expect(kernelConstants(kernels[1]!)).toEqual([]);
  });

  it('addresses constant words in that order in the uniform array', () => {
    const select = generateKernelShaders(kernels[0]!, variables).select!;
    // Filter: i64 words 0-1, str word 2, i32 word 3; project: i32 word 4, i64 words 5-6. Sizes + 2 vec4s.
    expect(select).toContain('array<vec4<u32>, 3>');
    expect(select).toContain('cmpI64(inp[b + 1u], inp[b + 2u], u[1u][0u], u[1u][1u]) < 0');
    expect(select).toContain('(u[1u][2u] != inp[b + 3u])');
    expect(select).toContain('(bitcast<i32>(inp[b + 0u]) >= bitcast<i32>(u[1u][3u]))');
    expect(select).toContain('outp[ob + 3u] = u[2u][0u];');
    expect(select).toContain('outp[ob + 5u] = u[2u][2u];');
  });
});

describe('kernelTables', () => {
  const call = (fn: 'string:like' | 'string:length' | 'string:substring', args: Expr[], type: ScalarType): Expr => ({ kind: 'call', fn, args, type });
  const pat = (value: string): Expr => ({ kind: 'const', type: 'string', value });
  const int = (value: number): Expr => ({ kind: 'const', type: 'int32', value });
  const yes: Expr = { kind: 'const', type: 'boolean', value: true };
  // like(s, "%a%") twice (one table), like on the other string column, and substring then length of it.
  const kernel: KirKernel = {
    kind: 'mergeJoin',
    id: 0,
    left: 0,
    right: 1,
    output: 2,
    leftKeys: [],
    rightKeys: [],
    filter: [
      { kind: 'compare', op: '=', left: call('string:like', [col(2, 'string'), pat('%a%')], 'boolean'), right: yes },
      { kind: 'compare', op: '!=', left: call('string:like', [col(3, 'string'), pat('%a%')], 'boolean'), right: yes },
    ],
    project: [col(1, 'int64'), call('string:substring', [col(2, 'string'), int(1), int(2)], 'string'), call('string:length', [col(3, 'string')], 'int32'), i64],
  };

  it('lists one table per function and constants, in first-use order, and keeps their constants out of the uniform', () => {
    expect(kernelTables(kernel)).toEqual([
      { fn: 'string:like', args: ['%a%'] },
      { fn: 'string:substring', args: [1, 2] },
      { fn: 'string:length', args: [] },
    ]);
    expect(kernelConstants(kernel)).toEqual([yes, yes, i64]);
  });

  it('looks calls up in the tables group from the passes that evaluate them, and compiles', async () => {
    const shaders = generateKernelShaders(kernel, variables);
    expect(shaders.joinCount).toContain(`@group(${TABLES_GROUP}) @binding(0) var<storage, read> tbl: array<u32>;`);
    expect(shaders.joinCount).toContain('tableBit(0u, lhs[lb + 3u])');
    expect(shaders.joinCount).toContain('tableBit(0u, rhs[rb + 0u])');
    expect(shaders.joinWrite).toContain('outp[ob + 2u] = tableWord(1u, lhs[lb + 3u]);');
    expect(shaders.joinWrite).toContain('outp[ob + 3u] = tableWord(2u, rhs[rb + 0u]);');
    expect(shaders.scanBlock).not.toContain('tbl');
    for (const [pass, code] of Object.entries(shaders)) {
      if (pass.endsWith(SUBGROUP_VARIANT) && !gpu.subgroups) continue;
      const module = gpu.device.createShaderModule({ code });
      const errors = (await module.getCompilationInfo()).messages.filter((m) => m.type === 'error').map((m) => `${pass}: ${m.message}`);
      expect(errors).toEqual([]);
    }
  });
});

describe('generateProgramShaders', () => {
  it('indexes shaders by kernel id', () => {
    const program: KirProgram = { relations: [], relationVars: {}, facts: {}, variables, kernels, blocks: [], entry: 'main' };
    const all = generateProgramShaders(program);
    expect(all).toHaveLength(kernels.length);
    expect(Object.keys(all[1]!)).toContain('radixSweep');
    expect(all[6]).toEqual({});
  });
});

describe('vectorRows', () => {
  it('reads a row in the widest vectors that divide it, each column from its components', () => {
    const four = vectorRows('inp', ['int32', 'int64', 'string']);
    expect(four.load.trim()).toBe('let r0 = inp[i * 1u + 0u];');
    expect([0, 1, 2].map(four.column)).toEqual([['r0.x'], ['r0.y', 'r0.z'], ['r0.w']]);
    expect(four.binding('var<storage, read> inp: array<u32>;')).toBe('var<storage, read> inp: array<vec4<u32>>;');
    const six = vectorRows('inp', ['int64', 'int32', 'int32', 'int64']);
    expect(six.load.trim()).toBe('let r0 = inp[i * 3u + 0u]; let r1 = inp[i * 3u + 1u]; let r2 = inp[i * 3u + 2u];');
    expect([0, 1, 2, 3].map(six.column)).toEqual([['r0.x', 'r0.y'], ['r1.x'], ['r1.y'], ['r2.x', 'r2.y']]);
    const three = vectorRows('inp', ['int32', 'int64']);
    expect([0, 1].map(three.column)).toEqual([['r0'], ['r1', 'r2']]);
    expect(three.binding('var<storage, read> inp: array<u32>;')).toBe('var<storage, read> inp: array<u32>;');
    expect(() => three.column(2)).toThrow(/out of range/);
  });
});
