/**
 * The KIR `pipeline` kernel: one hash build pass per probe (hash.ts; with the probe's build filter, of the build
 * rows it keeps) and one fused probe pass that scans the input tile by tile, filters, looks every kept row up in
 * all the tables (keys computed from the row), and writes project(row ++ build rows) for each combination of
 * matches that passes the check, with hash.ts's tile-wide compaction: per-thread match totals scanned in
 * workgroup memory, one atomic per tile to reserve its output range. No intermediate of the chain it replaces is
 * written. Each probe's table, chains and build rows lie in one buffer (`hashed`: the host copies the rows there
 * and the build passes write the tables and chains in place), so the pass binds four storage buffers however many
 * probes there are.
 */
import { rowWords, type Aggregate, type Expr, type ScalarType } from '@vixen/queryplan';
import type { KirKernel } from '@vixen/kernel-ir';
import { atomicBinding, columnWords, exprValue, exprWords, filterCode, header, projectCode, SUBGROUP_VARIANT, threadMain, tileKeepMask, vectorRows, vectorWidth, workgroupScan, type ColumnResolver } from '../wgsl.js';
import { as64 } from './aggregate.js';
import type { KernelShaders } from '../passes.js';
import { CHAIN_OVERFLOW, CHAIN_STEPS, HASH_ITEMS, hashBuildShaders, hashFunctions, joinSlotWords, KEPT_MASK, keyEquals, type HashKeyLayout } from './hash.js';
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

/** WGSL bool: each of words `xs` equals the one of `ys` at its index (true for none: a key of no words). */
const wordsEqual = (xs: readonly string[], ys: readonly string[]): string => (xs.length === 0 ? 'true' : xs.map((x, k) => `${x} == ${ys[k]}`).join(' && '));

/** pipelineBuildLayouts' last answer per kernel (the runtime asks at every launch), with the column lists it was for. */
const layoutsByKernel = new WeakMap<PipelineKernel, { types: readonly (readonly ScalarType[])[]; layouts: HashKeyLayout[] }>();

/** Each probe's build-side key layout (as hashJoinLayout's: the key columns' words in key order). */
export function pipelineBuildLayouts(kernel: PipelineKernel, buildTypes: readonly (readonly ScalarType[])[]): HashKeyLayout[] {
  const last = layoutsByKernel.get(kernel);
  if (last && last.types.length === buildTypes.length && last.types.every((t, j) => t === buildTypes[j])) return last.layouts;
  const layouts = kernel.probes.map((pr, j) => ({ width: rowWords(buildTypes[j]!), keyWords: sortKeyWords(buildTypes[j]!, pr.buildKeys) }));
  layoutsByKernel.set(kernel, { types: [...buildTypes], layouts });
  return layouts;
}

/** What a pipeline's passes are generated from. */
interface PipelineSource {
  kernel: PipelineKernel;
  inputTypes: readonly ScalarType[];
  buildTypes: readonly (readonly ScalarType[])[];
  builds: readonly HashKeyLayout[];
  constOffsets: ReadonlyMap<Expr, number>;
  constWords: number;
  /** The order the probes' lookups run in, a permutation of their indices (the lookups are independent). */
  lookupOrder: readonly number[];
}

/**
 * The passes of a pipeline kernel. `lookupOrder` (default: the probes' order) only changes which lookup a row meets
 * first: a row that misses one skips the others, so the runtime puts the smallest (most selective, cache-resident)
 * tables first.
 */
export function pipelineShaders(
  kernel: PipelineKernel,
  inputTypes: readonly ScalarType[],
  buildTypes: readonly (readonly ScalarType[])[],
  constOffsets: ReadonlyMap<Expr, number>,
  constWords: number,
  lookupOrder: readonly number[] = kernel.probes.map((_, j) => j),
): KernelShaders {
  const builds = pipelineBuildLayouts(kernel, buildTypes);
  if ([...lookupOrder].sort((a, b) => a - b).join() !== builds.map((_, j) => j).join()) throw new Error(`internal: lookup order ${lookupOrder.join()} of pipeline ${kernel.id}`);
  const src: PipelineSource = { kernel, inputTypes, buildTypes, builds, constOffsets, constWords, lookupOrder };
  const shaders: KernelShaders = {};
  builds.forEach((layout, j) => {
    const kept = kernel.probes[j]!.buildFilter ?? [];
    const filter = kept.length > 0 ? { keep: filterCode(kept, (c) => columnWords('build', 'b', buildTypes[j]!, c), constOffsets), constWords } : undefined;
    shaders[pipelineBuildPass(j)] = hashBuildShaders(layout, filter).hashBuild!;
  });
  if (kernel.aggregate) return { ...shaders, ...aggregateModules(src, kernel.aggregate) };
  const module = (subgroups: boolean): string => probeModule(src, subgroups);
  return { ...shaders, pipelineProbe: module(false), [`pipelineProbe${SUBGROUP_VARIANT}`]: module(true) };
}

/** The WGSL a pipeline's passes share: its row's columns, the probes' lookups and the loops over their matches. */
interface ProbeParts {
  /** First vec4 of the probe parameters in the uniform. */
  params: number;
  inputCols: ColumnResolver;
  /** Loads scanned row i into the registers inputCols reads; emitted where each row's scope opens. */
  rowLoad: string;
  /** `code` (a module) with `inp` bound as the vectors rowLoad reads. */
  inputBinding(code: string): string;
  /** Columns of the scanned row ++ build rows (build row j at word bo<j> of `hashed`). */
  rowCols: ColumnResolver;
  /** Key words of each probe's table. */
  widths: number[];
  /** The probes that add build rows to the row, and the negated ones (anti-joins), each in lookup order. */
  joined: number[];
  absent: number[];
  /** The negated probes' lookups of the scanned row: `continue` where a table holds its key. */
  absentLookups: string;
  /** lookup<j> functions. */
  lookups: string;
  /** Each probe's parameters and whether its build keys repeat. */
  consts: string;
  /** Probe j's key words of the scanned row. */
  keyOf(j: number): string[];
  /** `let at = <address of probe j's slot>; head = its first word; words[k] = key word k` (head, words: lvalues or `let x`). */
  slotLoads(j: number, slot: string, at: string, head: string, words: readonly string[]): string;
  /** Probe j's lookup of `keys` going on past the slot `slot` (whose key was another): the chain head, or 0. */
  probeOn(j: number, keys: readonly string[], slot: string): string;
  /**
   * Per joined probe, the lookup of the scanned row's key (x<j>: chain head; `continue` on a miss); with `counts`,
   * c<j> = its chain's length; with `together`, all their first table reads before any lookup goes on.
   */
  probes(counts: boolean, together: boolean): string;
  /**
   * `body` once per combination of the row's matches (of the joined probes), starting from chain heads `head(j)`;
   * `bounded` (the count of a row probe) counts the chain steps in `steps` and stops past CHAIN_BUDGET.
   */
  combinations(body: string, head: (j: number) => string, bounded?: boolean): string;
}

function probeParts({ kernel, inputTypes, buildTypes, builds, constOffsets, constWords, lookupOrder }: PipelineSource): ProbeParts {
  const params = pipelineParamsAt(constWords) / 4 + 1;
  const joined = lookupOrder.filter((j) => !kernel.probes[j]!.negated);
  const absent = lookupOrder.filter((j) => kernel.probes[j]!.negated);
  // The scanned rows come in as vectors (vectorRows): only the probe rows' words are read one by one.
  const { load: rowLoad, column: inputCols, binding: inputBinding } = vectorRows('inp', inputTypes);
  // Output columns: the input row's, then each joined probe's build row (at word bo<j> of `hashed`), in probe order.
  const rowSides = builds.map((_, j) => j).filter((j) => !kernel.probes[j]!.negated);
  const firstColumn = rowSides.map((_, s) => inputTypes.length + rowSides.slice(0, s).reduce((n, j) => n + buildTypes[j]!.length, 0));
  const rowCols: ColumnResolver = (c) => {
    if (c < inputTypes.length) return inputCols(c);
    let s = rowSides.length - 1;
    while (firstColumn[s]! > c) s--;
    const j = rowSides[s]!;
    return columnWords('hashed', `bo${j}`, buildTypes[j]!, c - firstColumn[s]!);
  };
  const widths = builds.map((l) => l.keyWords.length);
  const lookups = builds.map((layout, j) => {
    const K = layout.keyWords.length;
    return `// Chain head (build row + 1; 0: no match) of key k0.. in probe ${j}'s table, probing from slot s0.
fn lookup${j}(${[...Array.from({ length: K }, (_, k) => `k${k}: u32`), 's0: u32', 'mask: u32'].join(', ')}) -> u32 {
  let p = u[${params + j}u];
  var s = s0;
  loop {
    let at = p.y + s * ${joinSlotWords(K)}u;
    let r = hashed[at];
    if (r == 0u) { return 0u; }
    if (${keyEquals(K, (k) => `hashed[at + ${k + 1}u]`)}) { return r; }
    s = (s + 1u) & mask;
  }
}
`;
  });
  const keyOf = (j: number): string[] => {
    const words = kernel.probes[j]!.probeKeys.flatMap((e) => exprWords(e, inputCols, constOffsets));
    if (words.length !== widths[j]) throw new Error(`internal: pipeline ${kernel.id} probe ${j} has ${words.length} key words for a ${widths[j]}-word build key`);
    return words;
  };
  const slotLoads = (j: number, slot: string, at: string, head: string, words: readonly string[]): string =>
    `let ${at} = p${j}.y + ${slot} * ${joinSlotWords(widths[j]!)}u; ${head} = hashed[${at}]; ${words.map((w, k) => `${w} = hashed[${at} + ${k + 1}u];`).join(' ')}`;
  const probeOn = (j: number, keys: readonly string[], slot: string): string => `lookup${j}(${[...keys, `(${slot} + 1u) & m${j}`, `m${j}`].join(', ')})`;
  // With `together`, every probe's first slot of the row's key is read before any is looked at (the lookups are
  // independent), so a row's lookups wait for one table read, not one per probe: for rows every earlier lookup but
  // the last matched already (an aggregating pipeline's last list). Else a miss skips the later probes' reads.
  const probes = (counts: boolean, together: boolean): string => {
    const keys = (j: number): string[] => keyOf(j).map((_, k) => `k${j}_${k}`);
    const first = joined.map(
      (j) => `      ${keyOf(j).map((w, k) => `let k${j}_${k} = ${w};`).join(' ')}
      let fs${j} = hashKey${widths[j]}(${keys(j).join(', ')}) & m${j};
      ${slotLoads(j, `fs${j}`, `fa${j}`, `let fh${j}`, keys(j).map((_, k) => `let fw${j}_${k}`))}`,
    );
    const resolve = joined.map(
      (j) => `      var x${j} = fh${j};
      if (x${j} != 0u && !(${wordsEqual(keys(j).map((_, w) => `fw${j}_${w}`), keys(j))})) { x${j} = ${probeOn(j, keys(j), `fs${j}`)}; }
      if (x${j} == 0u) { continue; }${
        counts
          ? `
      var c${j} = 1u;
      if (chained${j}) { for (var x = hashed[p${j}.z + x${j} - 1u]; x != 0u && steps / 3u <= ${CHAIN_STEPS}; x = hashed[p${j}.z + x - 1u]) { c${j} = c${j} + 1u; steps = steps + 1u; } }`
          : ''
      }`,
    );
    return (together ? [...first, ...resolve] : first.flatMap((f, s) => [f, resolve[s]!])).join('\n');
  };
  const consts = builds
    .map((l, j) => {
      const SW = joinSlotWords(l.keyWords.length);
      // A filtered build's rows fill the first slots of its table (hash.ts keptMask), as many as it kept rows for.
      const mask = kernel.probes[j]!.buildFilter?.length ? `keptMask(hashed[p${j}.y + (p${j}.x + 1u) * ${SW}u + 1u], p${j}.x)` : `p${j}.x`;
      return `  let p${j} = u[${params + j}u];
  let m${j} = ${mask};
  // Whether any key of probe ${j}'s build side repeats (the word after its slots): else chains are never walked.
  let chained${j} = hashed[p${j}.y + (p${j}.x + 1u) * ${SW}u] != 0u;`;
    })
    .join('\n');
  const absentLookups = absent
    .map((j) => {
      const keys = keyOf(j).map((_, k) => `nk${j}_${k}`);
      return `      {
        ${keyOf(j).map((w, k) => `let ${keys[k]} = ${w};`).join(' ')}
        let ns${j} = hashKey${widths[j]}(${keys.join(', ')}) & m${j};
        ${slotLoads(j, `ns${j}`, `na${j}`, `var nh${j}`, keys.map((_, k) => `let nw${j}_${k}`))}
        if (nh${j} != 0u && !(${wordsEqual(keys.map((_, w) => `nw${j}_${w}`), keys)})) { nh${j} = ${probeOn(j, keys, `ns${j}`)}; }
        if (nh${j} != 0u) { continue; }
      }`;
    })
    .join('\n');
  const buildRows = joined.map((j) => `let bo${j} = p${j}.w + (x${j} - 1u) * ${builds[j]!.width}u;`).join('\n');
  // One loop per probe, innermost the last, each walking its chain, around `body` (which sees the build rows at bo<j>).
  const combinations = (body: string, head: (j: number) => string, bounded = false): string => {
    let nested = `${buildRows}\n${body}`;
    for (const j of [...rowSides].reverse()) {
      nested = `var x${j} = ${head(j)};
loop {
${nested.replace(/^/gm, '  ')}
  if (!chained${j}) { break; }
  x${j} = hashed[p${j}.z + x${j} - 1u];
  if (x${j} == 0u) { break; }${bounded ? `\n  steps = steps + 1u;\n  if (steps / 3u > ${CHAIN_STEPS}) { break; }` : ''}
}`;
    }
    return `{\n${nested.replace(/^/gm, '  ')}\n}`;
  };
  return { params, rowLoad, inputBinding, inputCols, rowCols, widths, joined, absent, absentLookups, lookups: (kernel.probes.some((pr) => pr.buildFilter?.length) ? KEPT_MASK : '') + lookups.join(''), consts, keyOf, slotLoads, probeOn, probes, combinations };
}

/**
 * Workgroup words a staged pipeline (see aggregateModules) gives its staged rows and its local table together: 15
 * KiB of the 16 every device has.
 */
const STAGED_WORDS = 3840;

/** Threads of a workgroup at most (the runtime's WG): a staging step holds one row for each. */
const MAX_WG = 256;

/** Whether rows of W words load as single words a row apart (an odd W but 1), which staging makes coalesced. */
const strided = (W: number): boolean => W > 1 && vectorWidth(W) === 1;

/**
 * Rows of W words (an odd W: single-word loads) staged in workgroup memory, WG rows a step: each thread's words
 * lid + k * WG of a step (pf<k>) are loaded a step ahead, so that their latency hides behind the current step's rows,
 * stored into `stage` (coalesced), and its row read there as r0.. (an odd stride: no bank conflicts). Needs `n`
 * (rows), `lid` and `inp` (single words).
 */
function staging(W: number): { decl: string; prologue: (firstStep: string) => string; store: string; prefetch: (step0: string) => string; load: string } {
  const ks = Array.from({ length: W }, (_, k) => k);
  const prefetch = (step0: string): string => `{ let wb = (${step0}) * W + lid; ${ks.map((k) => `if (wb + ${k}u * WG < nw) { pf${k} = inp[wb + ${k}u * WG]; }`).join(' ')} }`;
  return {
    decl: `const W: u32 = ${W}u;\n// WG rows of the input, copied coalesced: thread t's row at stage[t * W].\nvar<workgroup> stage: array<u32, WG * W>;`,
    prologue: (first) => `let nw = n * W;\n  ${ks.map((k) => `var pf${k} = 0u;`).join(' ')}\n  ${prefetch(first)}`,
    store: ks.map((k) => `stage[lid + ${k}u * WG] = pf${k};`).join(' '),
    prefetch,
    load: ks.map((k) => `let r${k} = stage[lid * W + ${k}u];`).join(' '),
  };
}

/** Workgroup words a staged probe pass's rows may take: the rest of STAGED_WORDS holds its scan's totals. */
const STAGED_PROBE_WORDS = STAGED_WORDS - MAX_WG - MAX_WG / 4;

/**
 * A probe pass's module declarations, its entry point up to the tile's first row (`base`), the writes of a row's
 * combinations of matches (from chain heads `head(j)`, at output row `o` on) and their count (added to `total`).
 */
function probeOutput(src: PipelineSource, parts: ProbeParts, scan: ReturnType<typeof workgroupScan>, head: (j: number) => string): { write: string; count: string; decls: string; entry: string } {
  const { kernel, builds, constOffsets, constWords } = src;
  const { inputBinding, rowCols, widths, joined, lookups, consts, combinations } = parts;
  const check = filterCode(kernel.check, rowCols, constOffsets);
  const emit = `if (o < capacity) {
  let ob = o * OW;
${projectCode(kernel.project, 'outp', 'ob', rowCols, constOffsets)}
}
o = o + 1u;`;
  const write = combinations(kernel.check.length > 0 ? `if (${check}) {\n${emit.replace(/^/gm, '  ')}\n}` : emit, head);
  // Without a check every combination is an output row: the count is the product of the chain lengths.
  const count =
    kernel.check.length > 0
      ? `var c = 0u;\n${combinations(`if (${check}) { c = c + 1u; }`, head, true)}\ntotal = total + c;`
      : `total = total + ${joined.length > 0 ? joined.map((j) => `c${j}`).join(' * ') : '1u'};`;
  const decls = `${scan.enable}${inputBinding(atomicBinding(header('pipelineProbe', ['inp', 'hashed', 'outp', 'counter'], pipelineParamsAt(constWords) + 4 * builds.length), 'counter'))}
const OW: u32 = ${rowWords(kernel.project.map((e) => e.type))}u;
const ITEMS: u32 = ${HASH_ITEMS}u;
override TILE: u32 = ITEMS * WG;
// The chain steps a thread may count, a third of its loop budget (CPU adapters: codegen-wgsl hash.ts CHAIN_STEPS).
override ${CHAIN_STEPS}: u32 = 0xffffffffu;
${hashFunctions(widths)}
${lookups}
${scan.decls}var<workgroup> start: u32;`;
  const entry = `@compute @workgroup_size(WG)
fn main(@builtin(local_invocation_index) lid: u32, @builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>${scan.builtins}) {
  let n = u[0].x;
  let capacity = u[0].y;
  let base = (wid.x + wid.y * nwg.x) * TILE;
  if (base >= n) { return; }
  // Chain steps counted, and twice the rows to write: the loop iterations the thread spends (see overBudget).
  var steps = 0u;
${consts}`;
  return { write, count, decls, entry };
}

/**
 * A row probe's thread whose counted chain steps and rows to write (each written row takes up to two loop
 * iterations) pass three times CHAIN_STEPS (set on CPU adapters only, whose invocations end their loops after
 * 65,535 iterations in all, silently) writes nothing (`drop` clears its rows) and sets CHAIN_OVERFLOW in the counter.
 */
function overBudget(drop: string): string {
  return `  if (${CHAIN_STEPS} != 0xffffffffu) {
    steps = steps + 2u * total;
    if (steps / 3u > ${CHAIN_STEPS}) {
      atomicOr(&counter[0], ${CHAIN_OVERFLOW}u);
      total = 0u;
      ${drop}
    }
  }`;
}

function probeModule(src: PipelineSource, subgroups: boolean): string {
  const W = rowWords(src.inputTypes);
  if (strided(W) && MAX_WG * W <= STAGED_PROBE_WORDS) return stagedProbeModule(src, subgroups, W);
  const { kernel, constOffsets } = src;
  const scan = workgroupScan(subgroups);
  const parts = probeParts(src);
  const { rowLoad, inputCols, joined, absentLookups, probes } = parts;
  const { write, count, decls, entry } = probeOutput(src, parts, scan, (j) => `h${j}[k]`);
  return `${decls}
${entry}
  // Per row: the chain head in every joined probe's table and, in \`passed\`, whether the row matched them all and
  // no negated probe's; counted as the product of the chain lengths.
${joined.map((j) => `  var h${j}: array<u32, ITEMS>;`).join('\n')}
  var passed = 0u;
  var total = 0u;
  // The filter first, over the whole tile (its loads all in flight), then the lookups of the rows it keeps.
${tileKeepMask(filterCode(kernel.filter, inputCols, constOffsets), HASH_ITEMS, false, rowLoad)}
  for (var k = 0u; k < ITEMS; k = k + 1u) {
    if (((mine >> k) & 1u) == 0u) { continue; }
    let i = base + k * WG + lid;
    ${rowLoad}
${absentLookups}
${probes(kernel.check.length === 0, false)}
${joined.map((j) => `    h${j}[k] = x${j};`).join('\n')}
    passed = passed | (1u << k);
${count.replace(/^/gm, '    ')}
  }
${overBudget('passed = 0u;')}
  // Inclusive scan of the per-thread totals; the last thread reserves the tile's range.
  scanSums(lid, total, ${scan.sg});
  if (lid == WG - 1u) { start = atomicAdd(&counter[0], sums[lid]); }
  workgroupBarrier();
  var o = start + sums[lid] - total;
  for (var k = 0u; k < ITEMS; k = k + 1u) {
    if (((passed >> k) & 1u) == 0u) { continue; }
    let i = base + k * WG + lid;
    ${rowLoad}
${write.replace(/^/gm, '    ')}
  }
}
`;
}

/**
 * probeModule for rows of an odd width W (single-word loads, each of a warp's touching W cache lines): the tile is
 * staged (`staging`) a step of WG rows at a time, and each step filters, looks up, counts, reserves its output range
 * (one atomic) and writes its rows, all reading the rows from workgroup memory.
 */
function stagedProbeModule(src: PipelineSource, subgroups: boolean, W: number): string {
  const { kernel, constOffsets } = src;
  const scan = workgroupScan(subgroups);
  const parts = probeParts(src);
  const { inputCols, joined, absentLookups, probes } = parts;
  const stg = staging(W);
  const { write, count, decls, entry } = probeOutput(src, parts, scan, (j) => `h${j}`);
  return `${decls}
${stg.decl}
${entry}
  ${stg.prologue('base')}
  for (var r = 0u; r < ITEMS; r = r + 1u) {
    let step0 = base + r * WG;
    workgroupBarrier();
    ${stg.store}
    workgroupBarrier();
    if (r + 1u < ITEMS) ${stg.prefetch('step0 + WG')}
    // The row's chain head in every joined probe's table and, in \`passed\`, whether it matched them all and no
    // negated probe's; counted as the product of the chain lengths. (One pass of the loop: \`continue\` drops the row.)
${joined.map((j) => `    var h${j} = 0u;`).join('\n')}
    var passed = false;
    var total = 0u;
    for (var once = 0u; once < 1u; once = once + 1u) {
      if (step0 + lid >= n) { continue; }
      ${stg.load}
      if (!(${filterCode(kernel.filter, inputCols, constOffsets)})) { continue; }
${absentLookups}
${probes(kernel.check.length === 0, false)}
${joined.map((j) => `      h${j} = x${j};`).join('\n')}
      passed = true;
${count.replace(/^/gm, '      ')}
    }
${overBudget('passed = false;').replace(/^/gm, '  ')}
    // Inclusive scan of the per-thread totals; the last thread reserves the step's range.
    scanSums(lid, total, ${scan.sg});
    if (lid == WG - 1u) { start = atomicAdd(&counter[0], sums[lid]); }
    workgroupBarrier();
    var o = start + sums[lid] - total;
    if (passed) {
      ${stg.load}
${write.replace(/^/gm, '      ')}
    }
  }
}
`;
}

/**
 * Words of a local (workgroup) table at most: with an aggregating pipeline's list of a tile's rows (at most 1,024
 * words: HASH_ITEMS rows a thread, 256 threads), 14 KiB of the 16 every device has.
 */
const LOCAL_TABLE_WORDS = 2560;


/** Probes of the local table before a row goes to the global one. */
const LOCAL_PROBES = 8;

/** Probes of the global table (at most half full) before a row calls it full: a cluster this long is a bad hash. */
const GLOBAL_PROBES = 4096;

/** Words of one aggregate in a group's slot: 128-bit decimal sums and averages, 64-bit int64 sums, else one (count: none, it reads the slot's count). */
export function aggregateSlotWords(a: Aggregate, arg: ScalarType | undefined): number {
  if (a.fn === 'count') return 0;
  if (a.fn === 'min' || a.fn === 'max') return 1;
  if (a.fn === 'sum' && (arg === 'int32' || arg === 'uint32')) return 1;
  if (a.fn === 'sum' && arg === 'int64') return 2;
  return 4;
}

/**
 * A global group slot of an aggregating pipeline whose projected rows have column types `types`: tag, group id,
 * key words, the count, then each aggregate's words from `offsets[k]` (relative to the count word).
 */
export function groupSlotLayout(
  agg: NonNullable<PipelineKernel['aggregate']>,
  types: readonly ScalarType[],
): { offsets: number[]; slotWords: number; owners: number[] } {
  const offsets: number[] = [];
  // The aggregate whose words each one reads: sums and averages of one column (TPC-H Q1's sum(q) and avg(q)) keep
  // the same 128-bit sum, added once a row.
  const owners: number[] = [];
  let words = 1;
  const wide = (a: Aggregate): number => aggregateSlotWords(a, a.column === undefined ? undefined : types[a.column]);
  agg.aggregates.forEach((a, k) => {
    const owner = wide(a) === 4 ? agg.aggregates.findIndex((b, j) => j < k && b.column === a.column && wide(b) === 4) : -1;
    owners.push(owner < 0 ? k : owner);
    offsets.push(owner < 0 ? words : offsets[owner]!);
    if (owner < 0) words += wide(a);
  });
  return { offsets, slotWords: 2 + rowWords(agg.groupBy.map((c) => types[c]!)) + words, owners };
}

/**
 * How one aggregate updates its words of a group's slot (after the count word every slot has). `value`: a row's
 * value, a u32 for max and one-word sums, else a vec2<u32> (a 4-word sum's 64-bit signed value, sign-extended).
 */
type Update = { kind: 'count' } | { kind: 'add'; words: 1 | 2 | 4; value: string } | { kind: 'max'; value: string; decode: (w: string) => string };

/**
 * Rows of a group a thread keeps in registers (count and aggregates) before they reach the workgroup's table: the
 * first CACHE_ENTRIES groups the thread meets, at most CACHE_WORDS words of them. With few groups (TPC-H Q1's 4, of
 * 18 words each) a thread's rows then cost one table update per group, not one per row on the few words every
 * thread of the workgroup updates.
 */
const CACHE_ENTRIES = 4;
const CACHE_WORDS = 96;

/** A register accumulator of an update: its WGSL type, its first value, one more value added, and its table words (a vec4). */
function accumulator(up: Exclude<Update, { kind: 'count' }>): { type: string; init: (v: string) => string; add: (a: string, v: string) => string; wide: (a: string) => string } {
  if (up.kind === 'max') return { type: 'u32', init: (v) => v, add: (a, v) => `max(${a}, ${v})`, wide: (a) => a };
  switch (up.words) {
    case 1:
      return { type: 'u32', init: (v) => v, add: (a, v) => `(${a} + ${v})`, wide: (a) => `vec4<u32>(${a}, 0u, 0u, 0u)` };
    case 2:
      return { type: 'vec2<u32>', init: (v) => v, add: (a, v) => `add64(${a}, ${v})`, wide: (a) => `vec4<u32>(${a}, 0u, 0u)` };
    case 4:
      // 96 bits: a thread adds fewer than 2^32 values below 2^63 in magnitude.
      return {
        type: 'vec3<u32>',
        init: (v) => `ext128(${v}).xyz`,
        add: (a, v) => `add96(${a}, ${v})`,
        wide: (a) => `vec4<u32>(${a}, select(0u, 0xffffffffu, (${a}.z >> 31u) != 0u))`,
      };
  }
}

/** A 96-bit accumulator plus a sign-extended 64-bit value. */
const ADD96 = `fn add96(a: vec3<u32>, v: vec2<u32>) -> vec3<u32> {
  let x = a.x + v.x;
  let y0 = a.y + v.y;
  let y = y0 + select(0u, 1u, x < a.x);
  let c = select(0u, 1u, y0 < a.y) + select(0u, 1u, y < y0);
  return vec3<u32>(x, y, a.z + c + select(0u, 0xffffffffu, (v.y >> 31u) != 0u));
}`;

/** Words of an accumulator's WGSL type. */
const typeWords = (type: string): number => (type === 'u32' ? 1 : Number(/vec(\d)/.exec(type)![1]));

/**
 * The aggregating pipeline's passes (kernels/pipeline.ts's rows, aggregated instead of written):
 * - `pipelineAggregate`: workgroups stride over tiles of the input; each row (each combination of matches passing
 *   the check) updates its group in the workgroup's own table, or, when that has no room, in the global table;
 *   the workgroup then adds its table's groups into the global one (few groups cost one global update per group
 *   and workgroup, not per row). The rows a tile's filter keeps, and those each lookup but the last matches, are
 *   listed in workgroup memory, and the next lookup runs over the list: otherwise every lookup would run on the few
 *   lanes of each warp whose rows are left, at the full latency of a warp (SSB Q1.x's pipeline on an H100: 0.45-1.07
 *   ms before, 0.34 ms listed, which is the copy bandwidth over its 960 MB). Without lookups, rows of an odd width
 *   are staged (`staging`) and each thread aggregates its row of each step.
 * - `pipelineGroups`: one output row per occupied global slot, at its group id.
 * A slot is (tag, group id, key words, count, aggregate words); the local one has no group id. Key words are stored
 * XOR the salt in u0.z, so 0 marks a word not yet written: the thread that claims a slot (compare-exchange of the
 * tag, a non-zero hash) writes them next, and a thread that finds the tag looks at the slot again, turn after turn
 * of its slot loop, until every word is non-zero. That needs no ordering between different words, which WGSL's
 * relaxed atomics do not give. A key word equal to the salt sets flags[2] (the host runs again with another salt);
 * a group id at or past u0.w (the output's room), or a row that finds no slot, sets flags[1] (the host runs again
 * on a larger table). Sums add word by word with the carry of each word added to the next (exact modulo 2^32, 2^64
 * or 2^128 in any order); decimal sums and every average keep 128 bits, so an out-of-range result is found at the
 * end (flags[3]). min and max are atomicMax of an order-preserving encoding (min of its complement), so a zeroed
 * slot is their identity.
 */
function aggregateModules(src: PipelineSource, agg: NonNullable<PipelineKernel['aggregate']>): KernelShaders {
  const { kernel, inputTypes, builds, constOffsets, constWords } = src;
  const { rowLoad, inputBinding, rowCols, inputCols, widths, joined, absent, lookups, consts, keyOf, slotLoads, probeOn, probes, combinations } = probeParts(src);
  const types = kernel.project.map((e) => e.type);
  const keyWords = agg.groupBy.flatMap((c) => exprWords(kernel.project[c]!, rowCols, constOffsets));
  const G = keyWords.length;
  const updates = agg.aggregates.map((a): Update => {
    if (a.fn === 'count') return { kind: 'count' };
    const arg = types[a.column!]!;
    const v = exprValue(kernel.project[a.column!]!, rowCols, constOffsets);
    if (a.fn === 'min' || a.fn === 'max') {
      const signed = arg === 'int32' || arg === 'date';
      const enc = (x: string): string => (signed ? `(${x} ^ 0x80000000u)` : x);
      // min: the complement under atomicMax.
      return a.fn === 'max' ? { kind: 'max', value: enc(v), decode: (w) => enc(w) } : { kind: 'max', value: `~${enc(v)}`, decode: (w) => enc(`(~${w})`) };
    }
    // The slot's width for it says how the value is added: as it is (32 or 64 bits) or sign-extended to 128.
    const words = aggregateSlotWords(a, arg) as 1 | 2 | 4;
    return { kind: 'add', words, value: words === 4 ? as64(arg, v) : v };
  });
  const { offsets, slotWords: SW, owners } = groupSlotLayout(agg, types);
  // The updates a row makes: one per owner of slot words (see groupSlotLayout), none for count (the slot's count).
  const owned = updates.flatMap((up, k) => (up.kind !== 'count' && owners[k] === k ? [{ k, up, acc: accumulator(up) }] : []));
  const LW = SW - 1;
  const N = builds.length;
  // Rows of an odd number of words load as single words, so each of a warp's loads of one column touches as many
  // cache lines as the row has words (TPC-H Q1's 11-word lineitem rows: 11 lines a load, 121 for 32 rows' words).
  // Without lookups such rows are staged instead: the workgroup copies WG rows at a time into workgroup memory with
  // coalesced loads (consecutive threads, consecutive words), and each thread reads its row there (an odd stride:
  // no bank conflicts). The local table then has what is left of STAGED_WORDS.
  const W = rowWords(inputTypes);
  const stagedSlots = (STAGED_WORDS - MAX_WG * W) / LW;
  const staged = N === 0 && strided(W) && stagedSlots >= (G === 0 ? 1 : 16);
  const tableWords = staged ? stagedSlots * LW : LOCAL_TABLE_WORDS;
  const LS = G === 0 ? 1 : 2 ** Math.floor(Math.log2(Math.max(1, Math.min(256, tableWords / LW))));
  const keyParams = Array.from({ length: G }, (_, w) => `e${w}: u32`).join(', ');
  const keyArgsList = Array.from({ length: G }, (_, w) => `e${w}`).join(', ');
  const withKeys = (rest: string): string => [keyParams, rest].filter(Boolean).join(', ');
  const withKeyArgs = (rest: string): string => [keyArgsList, rest].filter(Boolean).join(', ');
  // Claiming, finding and updating a slot, in the global table (`table`, slots of SW words from word 0) or the
  // workgroup's (`lt`, slots of LW words).
  const slotFns = (arr: string, local: boolean): string => {
    const W = local ? 'LW' : 'SW';
    const keyAt = local ? 1 : 2;
    const keyStores = Array.from({ length: G }, (_, w) => `          atomicStore(&${arr}[at + ${keyAt + w}u], e${w});`).join('\n');
    const claim = local
      ? `if (atomicLoad(&lfill) >= LMAX) {
        done = true;
      } else {
        let r = atomicCompareExchangeWeak(&lt[at], 0u, tag);
        if (r.exchanged) {
          atomicAdd(&lfill, 1u);
${keyStores}
          found = at;
          done = true;
        }
      }`
      : `// Once the table is full (the host runs again on a larger one) no slot is claimed: it stays at most half full.
      if (atomicLoad(&flags[1]) != 0u) {
        done = true;
      } else {
        let r = atomicCompareExchangeWeak(&table[at], 0u, tag);
        if (r.exchanged) {
          let gid = atomicAdd(&flags[0], 1u);
          if (gid >= u[0].w) { atomicStore(&flags[1], 1u); }
          atomicStore(&table[at + 1u], gid);
${keyStores}
          found = at;
          done = true;
        }
      }`;
    const words = Array.from({ length: G }, (_, w) => `      let w${w} = atomicLoad(&${arr}[at + ${keyAt + w}u]);`).join('\n');
    const unwritten = G === 0 ? 'false' : Array.from({ length: G }, (_, w) => `w${w} == 0u`).join(' || ');
    const equal = wordsEqual(Array.from({ length: G }, (_, w) => `w${w}`), Array.from({ length: G }, (_, w) => `e${w}`));
    const mask = local ? '(LS - 1u)' : 'u[0].y';
    const probesLimit = local ? 'LPROBES' : `min(${mask} + 1u, GPROBES)`;
    const name = local ? 'localSlot' : 'globalSlot';
    const add = (buf: string): string => `fn ${local ? 'l' : 'g'}Add(at: u32, x: vec4<u32>, words: u32) {
  var c = 0u;
  for (var w = 0u; w < words; w = w + 1u) {
    let xw = x[w];
    var carry = 0u;
    if (xw != 0u) { let o = atomicAdd(&${buf}[at + w], xw); carry = select(0u, 1u, o + xw < o); }
    if (c != 0u) { let o = atomicAdd(&${buf}[at + w], c); carry = carry + select(0u, 1u, o + c < o); }
    c = carry;
  }
}
`;
    return `// Slot (first word) of the key e0.. with hash h, claimed when new; NONE when there is no room.
// One step a turn: claim a free slot, compare a claimed one's key, or move on. A slot whose key words its claimer
// has not all written yet is looked at again next turn. Every turn's branches join before the next: a thread must
// never loop waiting on another thread of its warp (the claimer) in a branch the GPU may run to its end first, which
// hung an H100.
fn ${name}(${withKeys('h: u32')}) -> u32 {
  let tag = h | 1u;
  var s = h & ${mask};
  var probe = 0u;
  var found = NONE;
  var done = false;
  loop {
    let at = s * ${W};
    let head = atomicLoad(&${arr}[at]);
    // Look at the same slot again: a weak exchange may fail spuriously, and a claimed slot's key may be unwritten.
    var again = false;
    if (head == 0u) {
      ${claim}
      again = !done;
    } else if (head == tag) {
${words}
      if (${unwritten}) {
        again = true;
      } else if (${equal}) {
        found = at;
        done = true;
      }
    }
    if (!done && !again) {
      s = (s + 1u) & ${mask};
      probe = probe + 1u;
      if (probe >= ${probesLimit}) {
        ${local ? '' : 'atomicStore(&flags[1], 1u);\n        '}done = true;
      }
    }
    if (done) { break; }
  }
  return found;
}
${add(arr)}`;
  };
  const A = `${2 + G}u`;
  // Updates of the slot at `at` of table `arr` (aggregate words from word `first` of the slot) by `count` rows
  // whose owned updates' totals are `value(o)` (vec4s for adds).
  const slotUpdates = (fn: string, arr: string, first: string, count: string, value: (o: (typeof owned)[number]) => string): string =>
    [
      `atomicAdd(&${arr}[at + ${first}], ${count});`,
      ...owned.map((o) =>
        o.up.kind === 'add' ? `${fn}(at + ${first} + ${offsets[o.k]}u, ${value(o)}, ${o.up.words}u);` : `atomicMax(&${arr}[at + ${first} + ${offsets[o.k]}u], ${value(o)});`,
      ),
    ].join('\n      ');
  // Those updates of the group e0.. (hash h) in the workgroup's table, or, where it has no room, the global one.
  const tableUpdates = (count: string, value: (o: (typeof owned)[number]) => string): string => `var at = localSlot(${withKeyArgs('h')});
  if (at != NONE) {
    ${slotUpdates('lAdd', 'lt', `${1 + G}u`, count, value)}
  } else {
    at = globalSlot(${withKeyArgs('h')});
    if (at != NONE) {
      ${slotUpdates('gAdd', 'table', A, count, value)}
    }
  }`;
  // A local slot's totals added to a global slot.
  const merges = [
    `atomicAdd(&table[g + ${A}], atomicLoad(&lt[at + ${1 + G}u]));`,
    ...owned.map(({ k, up }) => {
      const from = `at + ${1 + G + offsets[k]!}u`;
      if (up.kind === 'max') return `atomicMax(&table[g + ${A} + ${offsets[k]}u], atomicLoad(&lt[${from}]));`;
      const words = Array.from({ length: 4 }, (_, w) => (w < up.words ? `atomicLoad(&lt[${from} + ${w}u])` : '0u'));
      return `gAdd(g + ${A} + ${offsets[k]}u, vec4<u32>(${words.join(', ')}), ${up.words}u);`;
    }),
  ].join('\n      ');
  const hashOf = (args: string): string => (G === 0 ? '0x9e3779b9u' : `hashKey${G}(${args})`);
  // The register cache (CACHE_ENTRIES): entry c's key words c<c>k<w> (as encoded), count c<c>n and accumulators
  // c<c>a<k>; cached = entries in use. Without group-by columns one entry takes every row.
  const entryWords = G + 1 + owned.reduce((n, o) => n + typeWords(o.acc.type), 0);
  const C = G === 0 ? 1 : Math.min(CACHE_ENTRIES, Math.floor(CACHE_WORDS / entryWords));
  const entries = Array.from({ length: C }, (_, c) => c);
  const cacheDecls = [
    'var cached = 0u;',
    ...entries.map((c) => [...Array.from({ length: G }, (_, w) => `var c${c}k${w} = 0u;`), `var c${c}n = 0u;`, ...owned.map((o) => `var c${c}a${o.k}: ${o.acc.type};`)].join(' ')),
  ].join('\n  ');
  const sameKey = (c: number): string => [`cached > ${c}u`, ...Array.from({ length: G }, (_, w) => `e${w} == c${c}k${w}`)].join(' && ');
  const hit = (c: number): string => [`c${c}n = c${c}n + 1u;`, ...owned.map((o) => `c${c}a${o.k} = ${o.acc.add(`c${c}a${o.k}`, `v${o.k}`)};`)].join(' ');
  const claim = (c: number): string =>
    [...Array.from({ length: G }, (_, w) => `c${c}k${w} = e${w};`), `c${c}n = 1u;`, ...owned.map((o) => `c${c}a${o.k} = ${o.acc.init(`v${o.k}`)};`)].join(' ');
  const rowValue = (o: (typeof owned)[number]): string => (o.up.kind === 'add' && o.up.words === 4 ? `ext128(v${o.k})` : o.acc.wide(`v${o.k}`));
  const cacheOrTable =
    C === 0
      ? `let h = ${hashOf(keyArgsList)};\n  ${tableUpdates('1u', rowValue)}`
      : `${entries.map((c) => `if (${sameKey(c)}) { ${hit(c)} }`).join('\n  else ')}
  else if (cached < ${C}u) {
    ${entries.map((c) => `if (cached == ${c}u) { ${claim(c)} }`).join('\n    else ')}
    cached = cached + 1u;
  } else {
    let h = ${hashOf(keyArgsList)};
    ${tableUpdates('1u', rowValue).replace(/\n/g, '\n  ')}
  }`;
  // The cached groups into the tables, at the end of the thread's rows.
  const flush = entries
    .map(
      (c) => `  if (cached > ${c}u) {
${Array.from({ length: G }, (_, w) => `    let e${w} = c${c}k${w};`).join('\n')}
    let h = ${hashOf(keyArgsList)};
    ${tableUpdates(`c${c}n`, (o) => o.acc.wide(`c${c}a${o.k}`)).replace(/\n/g, '\n  ')}
  }`,
    )
    .join('\n');
  const encoded = keyWords.map((w, k) => `let e${k} = (${w}) ^ salt;`).join(' ');
  const values = owned.map((o) => `let v${o.k} = ${o.up.value};`).join('\n  ');
  const saltHit = G === 0 ? '' : `if (${Array.from({ length: G }, (_, k) => `e${k} == 0u`).join(' || ')}) { atomicStore(&flags[2], 1u); } else {\n`;
  const body = `${encoded}
${saltHit}  ${values}
  ${cacheOrTable}
${G === 0 ? '' : '}'}`;
  const perRow = kernel.check.length > 0 ? `if (${filterCode(kernel.check, rowCols, constOffsets)}) {\n${body}\n}` : body;
  // The lookups that list the rows they keep: every negated probe's, then every joined probe's but the last, which
  // the final loop (over the rows left) repeats with the others to walk their chains.
  const stages = [...absent, ...joined.slice(0, -1)];
  // A filter is applied to the whole tile first; its rows are then listed like those of a lookup. Without lookups
  // each thread aggregates the rows of its own bits of the filter instead: no barriers, no list to read the rows'
  // ids from first (TPC-H Q1 keeps 98% of its rows).
  const filtered = kernel.filter.length > 0;
  const listFiltered = filtered && N > 0;
  // The rows ids[r] whose bit r of `bits` is set become the list (barriers: everyone has read the old one first).
  const relist = (bits: string): string => `    workgroupBarrier();
    if (lid == 0u) { atomicStore(&listing, 0u); }
    workgroupBarrier();
    if (${bits} != 0u) {
      var at = atomicAdd(&listing, countOneBits(${bits}));
      for (var r = 0u; r < ITEMS; r = r + 1u) {
        if (((${bits} >> r) & 1u) != 0u) { listed[at] = ids[r]; at = at + 1u; }
      }
    }
    workgroupBarrier();
    if (lid == 0u) { listedRows = atomicLoad(&listing); }
    m = workgroupUniformLoad(&listedRows);`;
  // A stage's r-th row, i: the listed one, or (`fromList` false: the tile unfiltered) the tile's own, coalesced;
  // `skip` where there is none.
  const nextRow = (fromList: boolean, skip: string): string =>
    fromList
      ? `let e = r * WG + lid; if (e >= m) { ${skip} } let i = listed[e];`
      : filtered
        ? `if (((mine >> r) & 1u) == 0u) { ${skip} } let i = base + r * WG + lid;`
        : `let i = base + r * WG + lid; if (i >= n) { ${skip} }`;
  // Probe j's lookup of the rows (at most ITEMS a thread): those that match (a negated probe's: that miss) stay listed. Unrolled in three steps (each
  // row's key; its first slot's words; the rest of the probing, rarely needed) so that a thread's lookups are in
  // flight together rather than one row's after another's (on the H100, SSB Q2.x-Q4.x's pipelines ran 5-30% faster).
  const lookupStage = (j: number, fromList: boolean): string => {
    const negated = kernel.probes[j]!.negated === true;
    const K = widths[j]!;
    const items = Array.from({ length: HASH_ITEMS }, (_, r) => r);
    const words = (r: number, v: string): string[] => Array.from({ length: K }, (_, k) => `${v}${r}_${k}`);
    const keys = keyOf(j);
    const first = items.map((r) => {
      const row = fromList ? `let e = ${r}u * WG + lid;
      if (e < m) {
        let i = listed[e];` : `let i = base + ${r}u * WG + lid;
      if (i < n) {`;
      return `    var ls${r} = 0u; ${words(r, 'lk').map((w) => `var ${w} = 0u;`).join(' ')}
    {
      ${row}
        ids[${r}] = i;
        live = live | ${1 << r}u;
        ${rowLoad}
        ${words(r, 'lk').map((w, k) => `${w} = ${keys[k]};`).join(' ')}
      }
    }`;
    });
    const slots = items.map(
      (r) => `    var lh${r} = 0u; ${words(r, 'lw').map((w) => `var ${w} = 0u;`).join(' ')}
    if ((live & ${1 << r}u) != 0u) {
      ls${r} = hashKey${K}(${words(r, 'lk').join(', ')}) & m${j};
      ${slotLoads(j, `ls${r}`, 'at', `lh${r}`, words(r, 'lw'))}
    }`,
    );
    const matches = items.map((r) => {
      const equal = wordsEqual(words(r, 'lw'), words(r, 'lk'));
      const match = `lh${r} != 0u && ((${equal}) || ${probeOn(j, words(r, 'lk'), `ls${r}`)} != 0u)`;
      return negated
        ? `    if ((live & ${1 << r}u) != 0u && !(${match})) { found = found | ${1 << r}u; }`
        : `    if (${match}) { found = found | ${1 << r}u; }`;
    });
    return `    {
    var found = 0u;
    var live = 0u;
${[...first, ...slots, ...matches].join('\n')}
${relist('found')}
    }`;
  };
  // A staged tile: per step, its WG rows into `stage` (barriers: everyone has read the last step's rows first, and
  // every word is in before anyone reads a row), the next step's words loaded; then each thread's row, filtered,
  // aggregated.
  const stg = staging(W);
  const stagedPrologue = stg.prologue('(wid.x + wid.y * nwg.x) * TILE');
  const stagedRows = `    for (var r = 0u; r < ITEMS; r = r + 1u) {
      let step0 = base + r * WG;
      workgroupBarrier();
      ${stg.store}
      workgroupBarrier();
      ${stg.prefetch('select(step0 + WG, (t + groups) * TILE, r + 1u == ITEMS)')}
      if (step0 + lid < n) {
        ${stg.load}
        if (${filterCode(kernel.filter, inputCols, constOffsets)}) {
${perRow.replace(/^/gm, '          ')}
        }
      }
    }`;
  const insert = `${inputBinding(atomicBinding(atomicBinding(header('pipelineAggregate', ['inp', 'hashed', 'table', 'flags'], pipelineParamsAt(constWords) + 4 * N), 'table'), 'flags'))}
const ITEMS: u32 = ${HASH_ITEMS}u;
override TILE: u32 = ITEMS * WG;
const SW: u32 = ${SW}u;
const LW: u32 = ${LW}u;
const LS: u32 = ${LS}u;
const LMAX: u32 = ${Math.max(1, LS / 2)}u;
const LPROBES: u32 = ${Math.min(LS, LOCAL_PROBES)}u;
const GPROBES: u32 = ${GLOBAL_PROBES}u;
const NONE: u32 = 0xffffffffu;
${hashFunctions([...widths, ...(G > 0 ? [G] : [])])}
${owned.some((o) => o.acc.type === 'vec3<u32>') ? ADD96 : ''}
${lookups}
var<workgroup> lt: array<atomic<u32>, ${LS * LW}>;
var<workgroup> lfill: atomic<u32>;
${
    N > 0
      ? `// The tile's rows still to look up (in no particular order), so that each lookup runs on dense lanes rather than
// on the few lanes of each warp whose rows are left: listed[0..m), gathered through 'listing'.
var<workgroup> listed: array<u32, TILE>;
var<workgroup> listing: atomic<u32>;
var<workgroup> listedRows: u32;`
      : ''
  }${staged ? `\n${stg.decl}` : ''}
${slotFns('table', false)}
${slotFns('lt', true)}
@compute @workgroup_size(WG)
fn main(@builtin(local_invocation_index) lid: u32, @builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
  for (var w = lid; w < LS * LW; w = w + WG) { atomicStore(&lt[w], 0u); }
  if (lid == 0u) { atomicStore(&lfill, 0u); }
  workgroupBarrier();
  let n = u[0].x;
  let salt = u[0].z;
  let tiles = (n + TILE - 1u) / TILE;
  let groups = nwg.x * nwg.y;
${consts}
  ${N > 0 ? 'var ids: array<u32, ITEMS>;\n  var m = 0u;\n  ' : ''}${staged ? `${stagedPrologue}\n  ` : ''}${cacheDecls}
  for (var t = wid.x + wid.y * nwg.x; t < tiles; t = t + groups) {
    let base = t * TILE;
${staged ? stagedRows : `${filtered ? `${tileKeepMask(filterCode(kernel.filter, inputCols, constOffsets), HASH_ITEMS, false, rowLoad).replace(/^/gm, '  ')}
${listFiltered ? `    for (var r = 0u; r < ITEMS; r = r + 1u) { ids[r] = base + r * WG + lid; }\n${relist('mine')}` : ''}` : ''}
${stages.map((j, s) => lookupStage(j, listFiltered || s > 0)).join('\n')}
    for (var r = 0u; r < ITEMS; r = r + 1u) {
      ${nextRow(listFiltered || stages.length > 0, 'continue;')}
      ${rowLoad}
${probes(false, true)}
${(joined.length > 0 ? combinations(perRow, (j) => `x${j}`) : `{\n${perRow}\n}`).replace(/^/gm, '      ')}
    }`}
  }
${flush}
  workgroupBarrier();
  // The workgroup's groups into the global table.
  for (var s = lid; s < LS; s = s + WG) {
    let at = s * LW;
    if (atomicLoad(&lt[at]) == 0u) { continue; }
${Array.from({ length: G }, (_, w) => `    let e${w} = atomicLoad(&lt[at + ${1 + w}u]);`).join('\n')}
    let g = globalSlot(${withKeyArgs(hashOf(keyArgsList))});
    if (g != NONE) {
      ${merges}
    }
  }
}
`;
  // Output words of a group: keys, then each aggregate by its function and type.
  const words: string[] = Array.from({ length: G }, (_, w) => `(table[at + ${2 + w}u] ^ salt)`);
  const finish: string[] = [];
  agg.aggregates.forEach((a, k) => {
    const up = updates[k]!;
    const at = (w: number): string => `table[at + ${2 + G + offsets[k]! + w}u]`;
    if (up.kind === 'count') words.push(`table[at + ${2 + G}u]`);
    else if (up.kind === 'max') words.push(up.decode(at(0)));
    else if (up.words < 4) words.push(...Array.from({ length: up.words }, (_, w) => at(w)));
    else {
      const sum = `vec4<u32>(${[0, 1, 2, 3].map(at).join(', ')})`;
      if (a.fn === 'sum') {
        finish.push(`if (!fits64(${sum})) { atomicStore(&flags[3], 1u); }`);
        words.push(at(0), at(1));
      } else {
        const arg = types[a.column!]!;
        finish.push(`let avg${k} = avgDec(${sum}, table[at + ${2 + G}u], ${arg === 'decimal' ? 'false' : 'true'});\n  if (avg${k}.z != 0u) { atomicStore(&flags[3], 1u); }`);
        words.push(`avg${k}.x`, `avg${k}.y`);
      }
    }
  });
  const OW = rowWords([...agg.groupBy.map((c) => types[c]!), ...agg.aggregates.map((a) => a.type)]);
  if (words.length !== OW) throw new Error(`internal: pipeline ${kernel.id} writes ${words.length} words of ${OW}-word groups`);
  const emit = `${atomicBinding(header('pipelineGroups', ['table', 'outp', 'flags']), 'flags')}
const SW: u32 = ${SW}u;
const OW: u32 = ${OW}u;
${threadMain(`  let slots = u[0].x;
  let salt = u[0].y;
  if (i >= slots) { return; }
  let at = i * SW;
  if (table[at] == 0u) { return; }
  let group = table[at + 1u];
  if (group >= u[0].z) { return; }
  ${finish.join('\n  ')}
  let ob = group * OW;
${words.map((w, k) => `  outp[ob + ${k}u] = ${w};`).join('\n')}`)}`;
  return { pipelineAggregate: insert, pipelineGroups: emit };
}
