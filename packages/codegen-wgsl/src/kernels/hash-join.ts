/**
 * The KIR `hashJoin` kernel on the hash operator skeletons (hash.ts): where its keys and output words are in
 * the rows. Shared by shader generation and the host driver so both read the same layout.
 */
import { mapOperands, rowWords, wordsOf, type Expr, type ScalarType } from '@vixen/queryplan';
import type { KirKernel } from '@vixen/kernel-ir';
import { sortKeyWords } from './sort.js';
import { hashBuildShaders, hashProbeShaders, type HashKeyLayout, type JoinOutputWord } from './hash.js';
import type { KernelShaders } from '../passes.js';

export type HashJoinKernel = Extract<KirKernel, { kind: 'hashJoin' }>;

/** The same join with build and probe exchanged (the driver builds on whichever side has fewer rows). */
export function swapHashJoin(k: HashJoinKernel): HashJoinKernel {
  return {
    ...k,
    build: k.probe,
    probe: k.build,
    buildKeys: k.probeKeys,
    probeKeys: k.buildKeys,
    project: k.project.map((c) => ({ side: c.side === 'build' ? 'probe' : 'build', column: c.column })),
  };
}

type PipelineKernel = Extract<KirKernel, { kind: 'pipeline' }>;

/**
 * The same pipeline with its scanned side and its one probe's build side exchanged, where it has one such probe (not
 * negated, keyed by scanned columns): the scanned row's filter becomes the build filter and the other way round, and
 * the row (scanned ++ build) becomes build ++ scanned. The driver builds on whichever side keeps fewer rows. Constant
 * nodes stay the kernel's own, so its encoded constants serve both.
 */
export function swapPipeline(k: PipelineKernel, scannedTypes: readonly ScalarType[], buildTypes: readonly ScalarType[]): PipelineKernel | undefined {
  const pr = k.probes[0];
  if (k.probes.length !== 1 || !pr || pr.negated) return undefined;
  const keys = pr.probeKeys.map((e) => (e.kind === 'col' && e.index < scannedTypes.length ? e.index : -1));
  if (keys.includes(-1)) return undefined;
  const moved = (e: Expr): Expr => {
    switch (e.kind) {
      case 'col':
        return { ...e, index: e.index < scannedTypes.length ? buildTypes.length + e.index : e.index - scannedTypes.length };
      case 'const':
        return e;
      case 'binary':
        return { ...e, left: moved(e.left), right: moved(e.right) };
      case 'call':
        return { ...e, args: e.args.map(moved) };
    }
  };
  return {
    ...k,
    input: pr.build,
    filter: pr.buildFilter ?? [],
    probes: [{ build: k.input, buildKeys: keys, probeKeys: pr.buildKeys.map((c): Expr => ({ kind: 'col', index: c, type: buildTypes[c]! })), ...(k.filter.length > 0 ? { buildFilter: k.filter } : {}) }],
    check: k.check.map((p) => mapOperands(p, moved)),
    project: k.project.map(moved),
  };
}

export interface HashJoinLayout {
  build: HashKeyLayout;
  probe: HashKeyLayout;
  output: JoinOutputWord[];
}

export function hashJoinLayout(kernel: HashJoinKernel, buildTypes: readonly ScalarType[], probeTypes: readonly ScalarType[]): HashJoinLayout {
  const output = kernel.project.flatMap((c): JoinOutputWord[] => {
    const types = c.side === 'build' ? buildTypes : probeTypes;
    const base = types.slice(0, c.column).reduce((n, t) => n + wordsOf(t), 0);
    return Array.from({ length: wordsOf(types[c.column]!) }, (_, w) => ({ from: c.side, word: base + w }));
  });
  return {
    // Key words in key order: equal keys are equal words, as mergeJoin compares them.
    build: { width: rowWords(buildTypes), keyWords: sortKeyWords(buildTypes, kernel.buildKeys) },
    probe: { width: rowWords(probeTypes), keyWords: sortKeyWords(probeTypes, kernel.probeKeys) },
    output,
  };
}

export function hashJoinShaders(layout: HashJoinLayout): KernelShaders {
  return { ...hashBuildShaders(layout.build), ...hashProbeShaders(layout.probe, layout.build.width, layout.output) };
}
