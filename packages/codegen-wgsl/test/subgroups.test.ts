/**
 * Passes with a subgroup variant: the variant differs in its workgroup scan, compiles where the device has
 * the 'subgroups' feature, and is refused where it has not (llvmpipe), which is why the recorder picks it only
 * when Gpu.subgroups says so.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { KirVariable } from '@vixen/kernel-ir';
import { compileDevice, type CompileDevice } from './device.js';
import { SUBGROUP_VARIANT, generateKernelShaders, hashProbeShaders, type KernelShaders } from '../src/index.js';

let gpu: CompileDevice;
beforeAll(async () => {
  gpu = await compileDevice();
});
afterAll(() => gpu?.device.destroy());

const variables: KirVariable[] = [
  { id: 0, name: 'a', columns: ['int32', 'int64'] },
  { id: 1, name: 'b', columns: ['int32', 'int64'] },
  { id: 2, name: 'c', columns: ['int32'] },
];
const sortShaders = generateKernelShaders({ kind: 'sort', id: 0, input: 0, output: 1, keys: [1] }, variables);
const keySortShaders = generateKernelShaders({ kind: 'sort', id: 0, input: 2, output: 2, keys: [0] }, variables);
const withVariants: Array<[string, KernelShaders, string]> = [
  ['hash probe', hashProbeShaders({ width: 3, keyWords: [2, 0] }, 4, [{ from: 'probe', word: 1 }, { from: 'build', word: 3 }, { from: 'buildIndex' }]), 'hashProbe'],
  ['radix sort', sortShaders, 'radixSweep'],
  ['radix sort, last pass', sortShaders, 'radixSweepRows'],
  ['radix sort of one-word rows', keySortShaders, 'radixSweepKeys'],
  ['block scan', generateKernelShaders({ kind: 'mergeJoin', id: 0, left: 0, right: 1, output: 2, leftKeys: [], rightKeys: [], filter: [], project: [] }, variables), 'scanBlock'],
  ['join count (its blocks scanned)', generateKernelShaders({ kind: 'mergeJoin', id: 0, left: 0, right: 1, output: 2, leftKeys: [0], rightKeys: [0], filter: [], project: [] }, variables), 'joinCount'],
  ['select', generateKernelShaders({ kind: 'mapFilter', id: 0, input: 0, output: 1, filter: [{ kind: 'compare', op: '!=', left: { kind: 'col', index: 0, type: 'int32' }, right: { kind: 'const', type: 'int32', value: 0 } }], project: [{ kind: 'col', index: 0, type: 'int32' }, { kind: 'col', index: 1, type: 'int64' }] }, variables), 'select'],
];

async function compileErrors(code: string): Promise<string[]> {
  // In an error scope: an invalid module must not count as an uncaptured error that fails the device.
  gpu.device.pushErrorScope('validation');
  const module = gpu.device.createShaderModule({ code });
  const info = await module.getCompilationInfo();
  await gpu.device.popErrorScope();
  return info.messages.filter((m) => m.type === 'error').map((m) => m.message);
}

describe.each(withVariants)('%s', (_, shaders, pass) => {
  const plain = shaders[pass]!;
  const variant = shaders[`${pass}${SUBGROUP_VARIANT}`]!;

  it('has a fallback without subgroup operations and a variant with them', () => {
    expect(plain).not.toMatch(/subgroup/);
    expect(variant).toMatch(/^enable subgroups;/);
    expect(variant).toMatch(/subgroupExclusiveAdd/);
  });

  it('type-checks here with the subgroup builtins stubbed (what the feature check would hide)', async () => {
    const builtins = ', @builtin(subgroup_invocation_id) sgi: u32, @builtin(subgroup_size) sgs: u32';
    expect(variant).toContain(builtins);
    const stubbed = variant
      .replace(/^enable subgroups;\n/, '')
      .replace(builtins, '')
      .replaceAll('subgroupExclusiveAdd(', 'stubExclusiveAdd(')
      .replaceAll('subgroupBallot(', 'stubBallot(')
      .replaceAll('subgroupShuffle(', 'stubShuffle(')
      .concat(
        '\nconst sgi: u32 = 0u;\nconst sgs: u32 = 32u;\nfn stubExclusiveAdd(x: u32) -> u32 { return x; }\n',
        'fn stubBallot(x: bool) -> vec4<u32> { return vec4<u32>(select(0u, 1u, x), 0u, 0u, 0u); }\nfn stubShuffle(x: u32, l: u32) -> u32 { return x + l; }\n',
      );
    expect(stubbed).not.toMatch(/subgroup/);
    expect(await compileErrors(stubbed)).toEqual([]);
  });

  it('compiles the fallback on this device', async () => {
    expect(await compileErrors(plain)).toEqual([]);
  });

  it('compiles the subgroup variant where the device has subgroups', async (ctx) => {
    if (!gpu.subgroups) ctx.skip('no subgroups on this adapter');
    expect(await compileErrors(variant)).toEqual([]);
  });

  it('the subgroup variant is refused without the feature (so it is chosen only with it)', async (ctx) => {
    if (gpu.device.features.has('subgroups')) ctx.skip('this adapter has subgroups');
    expect(gpu.subgroups).toBe(false);
    expect((await compileErrors(variant)).join('\n')).toMatch(/subgroups/);
  });
});
