/** DawnNoiseFilter drops Dawn's known harmless records from stderr text and passes everything else unchanged. */
import { describe, expect, test } from 'vitest';
import { DawnNoiseFilter } from '../src/dawn-noise.js';

const LIMITS =
  'Warning: maxDynamicUniformBuffersPerPipelineLayout artificially reduced from 90 to 16 to fit dynamic offset allocation limit.\n' +
  'Warning: maxDynamicStorageBuffersPerPipelineLayout artificially reduced from 80 to 16 to fit dynamic offset allocation limit.\n';
const VULKAN_REJECTED =
  'Warning: Vulkan shaderUniform*ArrayDynamicIndexing required.\n - While initializing adapter (backend=BackendType::Vulkan)\n' +
  '    at InitializeImpl (/build/dawn/src/dawn/native/vulkan/PhysicalDeviceVk.cpp:130)\n\n';
const NO_LOADER = "Warning: Couldn't load Vulkan: libvulkan.so.1: cannot open shared object file\n    at operator() (/build/dawn/src/dawn/native/vulkan/BackendVk.cpp:368)\n\n";

function filtered(...pieces: string[]): string {
  let out = '';
  const f = new DawnNoiseFilter((s) => (out += s));
  for (const p of pieces) f.push(p);
  f.end();
  return out;
}

describe('DawnNoiseFilter', () => {
  test('drops the limit warnings and adapters turned away, whole records with their locations', () => {
    expect(filtered(LIMITS + 'adapter: llvmpipe (opengles)\n')).toBe('adapter: llvmpipe (opengles)\n');
    expect(filtered('warning: no facts for base relation edge\n', VULKAN_REJECTED, LIMITS, 'adapter: x\n')).toBe('warning: no facts for base relation edge\nadapter: x\n');
  });

  test('keeps Vixen text, other Dawn records and text that only looks alike', () => {
    const kept = [NO_LOADER, 'error: no WebGPU adapter found (backend: vulkan)\n', 'Warning: something else\n', '  at a (b.cpp:1)\n', 'x - While initializing adapter (backend=\n'];
    expect(filtered(...kept)).toBe(kept.join(''));
  });

  test('unfinished lines (the progress line, a prompt) pass at once and are continued', () => {
    let out = '';
    const f = new DawnNoiseFilter((s) => (out += s));
    f.push('\rpath: iteration 3');
    expect(out).toBe('\rpath: iteration 3');
    f.push(', delta 5\x1b[K\r\x1b[K' + 'adapter: x\n' + LIMITS);
    f.end();
    expect(out).toBe('\rpath: iteration 3, delta 5\x1b[K\r\x1b[Kadapter: x\n');
  });
});
