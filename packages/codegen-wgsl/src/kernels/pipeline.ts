/**
 * The KIR `pipeline` kernel: one hash build pass per probe (hash.ts, unchanged) and one fused probe pass that
 * scans the input tile by tile, filters, looks every kept row up in all the tables (keys computed from the row),
 * and writes project(row ++ build rows) for each combination of matches that passes the check, with hash.ts's tile-wide compaction:
 * per-thread match totals scanned in workgroup memory, one atomic per tile to reserve its output range. No
 * intermediate of the chain it replaces is written. The host copies each probe's table, chains and build rows
 * into one buffer (`hashed`), so the pass binds four storage buffers however many probes there are.
 */
import { rowWords, type Expr, type ScalarType } from '@vixen/queryplan';
import type { KirKernel } from '@vixen/kernel-ir';
import { atomicBinding, columnWords, exprWords, filterCode, header, projectCode, SUBGROUP_VARIANT, workgroupScan, type ColumnResolver } from '../wgsl.js';
import type { KernelShaders } from '../index.js';
import { HASH_ITEMS, hashBuildShaders, hashFunctions, joinSlotWords, keyArgs, keyEquals, type HashKeyLayout } from './hash.js';
import { sortKeyWords } from './sort.js';

export type PipelineKernel = Extract<KirKernel, { kind: 'pipeline' }>;

/** Shader key of probe j's build pass (a `hashBuild` pass; the host runs it under that name). */
export const pipelineBuildPass = (j: number): string => `hashBuild.${j}`;

/**
 * First constant word of the probe parameters: after the kernel's constants, vec4-aligned. Probe j's vec4 there
 * holds (table mask, then the word offsets in `hashed` of its table, its chains and its build rows).
 */
export function pipelineParamsAt(constWords: number): number {
  return Math.ceil(constWords / 4) * 4;
}

/** Each probe's build-side key layout (as hashJoinLayout's: the key columns' words in key order). */
export function pipelineBuildLayouts(kernel: PipelineKernel, buildTypes: readonly (readonly ScalarType[])[]): HashKeyLayout[] {
  return kernel.probes.map((pr, j) => ({ width: rowWords(buildTypes[j]!), keyWords: sortKeyWords(buildTypes[j]!, pr.buildKeys) }));
}

export function pipelineShaders(
  kernel: PipelineKernel,
  inputTypes: readonly ScalarType[],
  buildTypes: readonly (readonly ScalarType[])[],
  constOffsets: ReadonlyMap<Expr, number>,
  constWords: number,
): KernelShaders {
  const builds = pipelineBuildLayouts(kernel, buildTypes);
  const shaders: KernelShaders = {};
  builds.forEach((layout, j) => (shaders[pipelineBuildPass(j)] = hashBuildShaders(layout).hashBuild!));
  const module = (subgroups: boolean): string => probeModule(kernel, inputTypes, buildTypes, builds, constOffsets, constWords, subgroups);
  return { ...shaders, pipelineProbe: module(false), [`pipelineProbe${SUBGROUP_VARIANT}`]: module(true) };
}

function probeModule(
  kernel: PipelineKernel,
  inputTypes: readonly ScalarType[],
  buildTypes: readonly (readonly ScalarType[])[],
  builds: readonly HashKeyLayout[],
  constOffsets: ReadonlyMap<Expr, number>,
  constWords: number,
  subgroups: boolean,
): string {
  const N = builds.length;
  const params = pipelineParamsAt(constWords) / 4 + 1;
  const scan = workgroupScan(subgroups);
  const inputCols: ColumnResolver = (c) => columnWords('inp', 'b', inputTypes, c);
  // Output columns: the input row's, then each build row's (at word bo<j> of `hashed`).
  const firstColumn = builds.map((_, j) => inputTypes.length + buildTypes.slice(0, j).reduce((n, t) => n + t.length, 0));
  const rowCols: ColumnResolver = (c) => {
    if (c < inputTypes.length) return inputCols(c);
    let j = N - 1;
    while (firstColumn[j]! > c) j--;
    return columnWords('hashed', `bo${j}`, buildTypes[j]!, c - firstColumn[j]!);
  };
  const widths = builds.map((l) => l.keyWords.length);
  const lookups = builds.map((layout, j) => {
    const K = layout.keyWords.length;
    return `// Chain head (build row + 1; 0: no match) of key k0.. in probe ${j}'s table.
fn lookup${j}(${keyArgs(K).split(', ').map((k) => `${k}: u32`).join(', ')}) -> u32 {
  let p = u[${params + j}u];
  var s = hashKey${K}(${keyArgs(K)}) & p.x;
  loop {
    let at = p.y + s * ${joinSlotWords(K)}u;
    let r = hashed[at];
    if (r == 0u) { return 0u; }
    if (${keyEquals(K, (k) => `hashed[at + ${k + 1}u]`)}) { return r; }
    s = (s + 1u) & p.x;
  }
}
`;
  });
  const probes = kernel.probes.map((pr, j) => {
    const words = pr.probeKeys.flatMap((e) => exprWords(e, inputCols, constOffsets));
    if (words.length !== widths[j]) throw new Error(`internal: pipeline ${kernel.id} probe ${j} has ${words.length} key words for a ${widths[j]}-word build key`);
    const args = words.map((w, k) => `let k${j}_${k} = ${w};`).join(' ');
    return `      ${args}
      let x${j} = lookup${j}(${words.map((_, k) => `k${j}_${k}`).join(', ')});
      if (x${j} == 0u) { continue; }${
        kernel.check.length > 0
          ? ''
          : `
      var c${j} = 1u;
      if (chained${j}) { for (var x = hashed[p${j}.z + x${j} - 1u]; x != 0u; x = hashed[p${j}.z + x - 1u]) { c${j} = c${j} + 1u; } }`
      }`;
  });
  const consts = builds.map((l, j) => {
    const SW = joinSlotWords(l.keyWords.length);
    return `  let p${j} = u[${params + j}u];
  // Whether any key of probe ${j}'s build side repeats (the word after its slots): else chains are never walked.
  let chained${j} = hashed[p${j}.y + (p${j}.x + 1u) * ${SW}u] != 0u;`;
  });
  const check = filterCode(kernel.check, rowCols, constOffsets);
  const buildRows = builds.map((l, j) => `let bo${j} = p${j}.w + (x${j} - 1u) * ${l.width}u;`).join('\n');
  // Every combination of the row's matches (heads h<j>[k]): one loop per probe, innermost the last, each walking
  // its chain, around `body` (which sees the build rows at bo<j>).
  const combinations = (body: string): string => {
    let nested = `${buildRows}\n${body}`;
    for (let j = N - 1; j >= 0; j--) {
      nested = `var x${j} = h${j}[k];
loop {
${nested.replace(/^/gm, '  ')}
  if (!chained${j}) { break; }
  x${j} = hashed[p${j}.z + x${j} - 1u];
  if (x${j} == 0u) { break; }
}`;
    }
    return `{\n${nested.replace(/^/gm, '  ')}\n}`;
  };
  const emit = `if (o < capacity) {
  let ob = o * OW;
${projectCode(kernel.project, 'outp', 'ob', rowCols, constOffsets)}
}
o = o + 1u;`;
  const write = combinations(kernel.check.length > 0 ? `if (${check}) {\n${emit.replace(/^/gm, '  ')}\n}` : emit);
  // Without a check every combination is an output row: the count is the product of the chain lengths.
  const count =
    kernel.check.length > 0
      ? `var c = 0u;\n${combinations(`if (${check}) { c = c + 1u; }`)}\ntotal = total + c;`
      : `total = total + ${builds.map((_, j) => `c${j}`).join(' * ')};`;
  return `${scan.enable}${atomicBinding(header('pipelineProbe', ['inp', 'hashed', 'outp', 'counter'], pipelineParamsAt(constWords) + 4 * N), 'counter')}
const W_IN: u32 = ${rowWords(inputTypes)}u;
const OW: u32 = ${rowWords(kernel.project.map((e) => e.type))}u;
const ITEMS: u32 = ${HASH_ITEMS}u;
override TILE: u32 = ITEMS * WG;
${hashFunctions(widths)}
${lookups.join('')}
${scan.decls}var<workgroup> start: u32;

@compute @workgroup_size(WG)
fn main(@builtin(local_invocation_index) lid: u32, @builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>${scan.builtins}) {
  let n = u[0].x;
  let capacity = u[0].y;
  let base = (wid.x + wid.y * nwg.x) * TILE;
  if (base >= n) { return; }
${consts.join('\n')}
  // Per row: the chain head in every table (all 0 unless every probe matched), counted as the product of
  // the chain lengths.
${builds.map((_, j) => `  var h${j}: array<u32, ITEMS>;`).join('\n')}
  var total = 0u;
  for (var k = 0u; k < ITEMS; k = k + 1u) {
${builds.map((_, j) => `    h${j}[k] = 0u;`).join('\n')}
    let i = base + k * WG + lid;
    if (i >= n) { continue; }
    let b = i * W_IN;
    if (!(${filterCode(kernel.filter, inputCols, constOffsets)})) { continue; }
${probes.join('\n')}
${builds.map((_, j) => `    h${j}[k] = x${j};`).join('\n')}
${count.replace(/^/gm, '    ')}
  }
  // Inclusive scan of the per-thread totals; the last thread reserves the tile's range.
  scanSums(lid, total, ${scan.sg});
  if (lid == WG - 1u) { start = atomicAdd(&counter[0], sums[lid]); }
  workgroupBarrier();
  var o = start + sums[lid] - total;
  for (var k = 0u; k < ITEMS; k = k + 1u) {
    if (h0[k] == 0u) { continue; }
    let i = base + k * WG + lid;
    let b = i * W_IN;
${write.replace(/^/gm, '    ')}
  }
}
`;
}
