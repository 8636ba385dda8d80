/**
 * WGSL skeletons instantiated per KIR kernel. Each kernel becomes a few passes (see passes.ts for the
 * binding contract with the host drivers in @vixen/runtime). Generated code is device-independent:
 * the workgroup size is an `override`, sizes and constants come from a uniform buffer.
 */
import { rowWords, type ScalarType } from '@vixen/queryplan';
import type { KirKernel, KirProgram, KirVariable, VarId } from '@vixen/kernel-ir';
import { constantLayout } from './constants.js';
import { aggregateShaders } from './kernels/aggregate.js';
import { differenceShaders } from './kernels/difference.js';
import { hashJoinLayout, hashJoinShaders } from './kernels/hash-join.js';
import { mapFilterShaders } from './kernels/map-filter.js';
import { mergeShaders } from './kernels/merge.js';
import { mergeJoinShaders } from './kernels/merge-join.js';
import { pipelineShaders } from './kernels/pipeline.js';
import { sortShaders } from './kernels/sort.js';
import { topKOnDevice, topKShaders } from './kernels/top-k.js';
import { hashedUniqueShaders, uniqueShaders } from './kernels/unique.js';
import type { KernelShaders } from './passes.js';
import { SCAN_ADD, SCAN_WRAPPED, scanBlock } from './scan.js';
import { SUBGROUP_VARIANT, withArithHelpers } from './wgsl.js';

const scanShaders: KernelShaders = { scanBlock: scanBlock(false), [`scanBlock${SUBGROUP_VARIANT}`]: scanBlock(true), scanAdd: SCAN_ADD };

export interface ShaderOptions {
  /** A pipeline's lookup order (pipelineShaders); default: its probes' order. */
  lookupOrder?: readonly number[];
}

export function generateKernelShaders(kernel: KirKernel, variables: readonly KirVariable[], options: ShaderOptions = {}): KernelShaders {
  const shaders = kernelSkeletons(kernel, variables, options);
  return Object.fromEntries(Object.entries(shaders).map(([pass, src]) => [pass, withArithHelpers(src)]));
}

function kernelSkeletons(kernel: KirKernel, variables: readonly KirVariable[], options: ShaderOptions): KernelShaders {
  const types = (id: VarId): ScalarType[] => {
    const v = variables.find((x) => x.id === id);
    if (!v) throw new Error(`internal: kernel ${kernel.id} uses unknown variable ${id}`);
    return v.columns;
  };
  const { offsets, words } = constantLayout(kernel);
  switch (kernel.kind) {
    case 'mapFilter': {
      const projected = rowWords(kernel.project.map((e) => e.type));
      if (projected !== rowWords(types(kernel.output))) throw new Error(`internal: mapFilter ${kernel.id} projects ${projected} words`);
      return mapFilterShaders(types(kernel.input), kernel.filter, kernel.project, offsets, words);
    }
    case 'sort':
      return sortShaders(types(kernel.input), kernel.keys);
    case 'unique':
      return (kernel.hashed ? hashedUniqueShaders : uniqueShaders)(types(kernel.input));
    case 'mergeJoin':
      return {
        ...mergeJoinShaders(types(kernel.left), types(kernel.right), kernel.leftKeys, kernel.rightKeys, kernel.filter, kernel.project, offsets, words),
        ...scanShaders,
        scanWrapped: SCAN_WRAPPED,
      };
    case 'hashJoin':
      return hashJoinShaders(hashJoinLayout(kernel, types(kernel.build), types(kernel.probe)));
    case 'pipeline':
      return pipelineShaders(kernel, types(kernel.input), kernel.probes.map((pr) => types(pr.build)), offsets, words, options.lookupOrder);
    case 'difference':
      return differenceShaders(types(kernel.left));
    case 'merge':
      return mergeShaders(types(kernel.left), kernel.keys);
    case 'concat':
    case 'copy':
      // Pure buffer copies on the host queue.
      return {};
    case 'limit': {
      // A device top-k, then a sort of the rows it keeps into canonical order; float32 rows are limited on the host.
      const input = types(kernel.input);
      if (!topKOnDevice(input)) return {};
      return { ...topKShaders(input, kernel.keys), ...sortShaders(input, input.map((_, c) => c)) };
    }
    case 'aggregate':
      return { ...aggregateShaders(types(kernel.input), kernel.groupBy, kernel.aggregates), ...scanShaders };
  }
}

/** Shaders of every kernel; index = kernel id. */
export function generateProgramShaders(program: KirProgram): KernelShaders[] {
  return program.kernels.map((k) => generateKernelShaders(k, program.variables));
}