/**
 * Opening a Gpu in Node: Dawn through the `webgpu` package, preferring Vulkan on a real GPU and falling back to
 * OpenGL ES (llvmpipe where there is no GPU). A browser opens its Gpu from `navigator.gpu` instead (browser.ts).
 */
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { create, globals } from 'webgpu';
import { defaultBudget, deviceMemoryBytes } from './device-memory.js';
import { internals, isRealGpu, openDevice, type Gpu, type GpuOptions } from './device.js';
import { parseByteSize } from '../limits.js';

let globalsInstalled = false;

function installGlobals(): void {
  if (globalsInstalled) return;
  Object.assign(globalThis, globals);
  globalsInstalled = true;
}

const VULKAN_LOADER_DIRS = ['/usr/lib/x86_64-linux-gnu', '/usr/lib/aarch64-linux-gnu', '/usr/lib64', '/usr/lib', '/lib/x86_64-linux-gnu', '/lib64'];

/**
 * Whether a Vulkan loader is installed. Without one Dawn prints a loud warning when asked for a Vulkan adapter,
 * so 'auto' skips straight to OpenGL ES on machines (like CI) that have none.
 */
function hasVulkanLoader(): boolean {
  if (process.platform !== 'linux') return true;
  const dirs = [...(process.env.LD_LIBRARY_PATH ?? '').split(':').filter((d) => d.length > 0), ...VULKAN_LOADER_DIRS];
  return dirs.some((d) => existsSync(join(d, 'libvulkan.so.1')));
}

async function vulkanAdapter(): Promise<{ instance: GPU; adapter: GPUAdapter } | null> {
  // Dawn quantizes timestamps by default (a browser's guard against timing attacks): H100 profiles showed every
  // pass time as a multiple of 65,536 ns, so short passes read as 0. Profiles need the device's own resolution.
  const instance = create(['disable-dawn-features=timestamp_quantization']);
  const adapter = await instance.requestAdapter({ powerPreference: 'high-performance' });
  return adapter ? { instance, adapter } : null;
}

async function glAdapter(): Promise<{ instance: GPU; adapter: GPUAdapter } | null> {
  process.env.EGL_PLATFORM ??= 'surfaceless';
  const instance = create(['backend=opengles']);
  const adapter = await instance.requestAdapter({ featureLevel: 'compatibility' });
  return adapter ? { instance, adapter } : null;
}

export async function openGpu(options: GpuOptions = {}): Promise<Gpu> {
  installGlobals();
  const want = options.backend ?? 'auto';
  let found: { instance: GPU; adapter: GPUAdapter } | null = null;
  let backend = want;
  if (want === 'vulkan' || (want === 'auto' && hasVulkanLoader())) {
    found = await vulkanAdapter();
    if (want === 'auto' && found && !isRealGpu(found.adapter)) found = null;
    backend = 'vulkan';
  }
  if (!found && want !== 'vulkan') {
    found = await glAdapter();
    backend = 'opengles';
  }
  if (!found) throw new Error(`no WebGPU adapter found (backend: ${want})`);
  const { instance, adapter } = found;
  // A test knob: the CLI and the benches then run the segmented paths of relations past one binding on small data.
  const cap = process.env.VIXEN_MAX_BINDING_BYTES;
  const capped = options.maxStorageBufferBindingSize === undefined && cap ? { ...options, maxStorageBufferBindingSize: parseByteSize(cap, 'VIXEN_MAX_BINDING_BYTES') } : options;
  // A test knob: a CPU adapter takes the paths a GPU takes (GpuOptions.gpuPaths), in the CLI and the benches.
  const chosen = capped.gpuPaths === undefined && process.env.VIXEN_GPU_PATHS === '1' ? { ...capped, gpuPaths: true } : capped;
  const memory = deviceMemoryBytes(!isRealGpu(adapter));
  const gpu = await openDevice(instance, adapter, backend, chosen, options.maxDeviceMemory ?? defaultBudget(memory));
  // A test knob: a real device fault where the run does what this names (`loading the facts of lineitem`), once: a
  // buffer past the device's memory but within its largest (the driver runs out of memory: a GPU's 141 GB against
  // its 1 TiB), else past its largest buffer (Dawn refuses the size: llvmpipe's 2 GiB against the host's memory).
  const refuse = process.env.VIXEN_REFUSE_BUFFER;
  const largest = gpu.limits.maxBufferSize;
  if (refuse) internals(gpu).pool.refuseWhile = { activity: refuse, bytes: memory !== undefined && memory < largest ? largest : 2 * largest };
  return gpu;
}
