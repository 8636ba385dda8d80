/**
 * A WebGPU device to compile generated WGSL on, straight from Dawn: this package comes before the runtime, whose
 * `openGpu` picks adapters for running kernels. Tests run where CI does, on Dawn's OpenGL ES backend (llvmpipe).
 */
import { create, globals } from 'webgpu';

export interface CompileDevice {
  /** Held so that Dawn's instance lives as long as the device (collected early, it takes the process down). */
  instance: GPU;
  device: GPUDevice;
  subgroups: boolean;
}

export async function compileDevice(): Promise<CompileDevice> {
  Object.assign(globalThis, globals);
  process.env.EGL_PLATFORM ??= 'surfaceless';
  const instance = create(['backend=opengles']);
  const adapter = await instance.requestAdapter({ featureLevel: 'compatibility' });
  if (!adapter) throw new Error('no WebGPU adapter (Dawn, OpenGL ES backend)');
  const subgroups = adapter.features.has('subgroups');
  const device = await adapter.requestDevice({ requiredFeatures: subgroups ? ['subgroups'] : [] });
  return { instance, device, subgroups };
}
