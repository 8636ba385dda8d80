/**
 * The KIR `hashJoin` kernel on the hash operator skeletons (hash.ts): where its keys and output words are in
 * the rows. Shared by shader generation and the host driver so both read the same layout.
 */
import { rowWords, wordsOf, type ScalarType } from '@vixen/queryplan';
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
