/**
 * How much memory the device has, where the system says: WebGPU reports no memory size (Dawn's memory-heaps
 * adapter feature is not in the Node bindings), so NVIDIA GPUs are asked through nvidia-smi and AMD ones through
 * sysfs; a CPU adapter (llvmpipe) allocates host memory. The default device memory budget is this less a margin.
 */
import { execFileSync } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { totalmem } from 'node:os';

let gpuMemory: number | null | undefined;

/**
 * nvidia-smi's `fields` (comma-separated: MiB or MHz figures) of each GPU, a row of numbers per line it prints, or
 * undefined where it does not run.
 */
function nvidiaSmi(fields: string): number[][] | undefined {
  try {
    const out = execFileSync('nvidia-smi', [`--query-gpu=${fields}`, '--format=csv,noheader,nounits'], { encoding: 'utf8', timeout: 5000, stdio: ['ignore', 'pipe', 'ignore'] });
    return out.split('\n').filter((l) => l.trim() !== '').map((l) => l.split(',').map((x) => Number(x.trim())));
  } catch {
    return undefined;
  }
}

/** nvidia-smi's `field` (a MiB figure) of each GPU, or undefined where it does not run. */
const nvidiaSmiMiB = (field: string): number[] | undefined => nvidiaSmi(field)?.map((row) => row[0]!);

/**
 * The least memory a GPU has free in bytes (the adapter may be any of them; other processes' allocations are not
 * ours to take), or null where no tool says.
 */
function gpuMemoryBytes(): number | null {
  // Without NVIDIA's driver tools, sysfs.
  const free = (nvidiaSmiMiB('memory.free') ?? []).filter((n) => Number.isFinite(n) && n > 0);
  if (free.length > 0) return Math.min(...free) * 2 ** 20;
  try {
    const sizes = readdirSync('/sys/class/drm')
      .filter((d) => /^card\d+$/.test(d))
      .map((d) => {
        try {
          return Number(readFileSync(`/sys/class/drm/${d}/device/mem_info_vram_total`, 'utf8').trim());
        } catch {
          return NaN;
        }
      })
      .filter((n) => Number.isFinite(n) && n > 0);
    if (sizes.length > 0) return Math.min(...sizes);
  } catch {
    // No sysfs (not Linux).
  }
  return null;
}

let noSmi = false;

/**
 * Bytes of device memory in use on the GPU that uses the most, all processes' (the driver's count, which Vixen's own
 * BufferPool.allocatedBytes is compared with), or undefined for a CPU adapter or where nvidia-smi does not say.
 */
export function deviceMemoryUsed(cpuAdapter: boolean): number | undefined {
  if (cpuAdapter || noSmi) return undefined;
  const used = (nvidiaSmiMiB('memory.used') ?? []).filter((n) => Number.isFinite(n) && n >= 0);
  if (used.length > 0) return Math.max(...used) * 2 ** 20;
  noSmi = true;
  return undefined;
}

/**
 * The SM clock of the busiest GPU now and its most, in MHz (nvidia-smi's clocks.sm and clocks.max.sm of the GPU with
 * the highest clock: the adapter's, where others idle), or undefined for a CPU adapter or where nvidia-smi does not
 * say. An idle GPU lowers it, and a short warm-up may not raise it again: TPC-H at SF 10 on the H200 was 2-4x slower
 * on nine queries after 300 ms of warm-up each, with the same device work (issue #43).
 */
export function gpuClockMHz(cpuAdapter: boolean): { sm: number; max: number } | undefined {
  if (cpuAdapter || noSmi) return undefined;
  const rows = (nvidiaSmi('clocks.sm,clocks.max.sm') ?? []).filter((r) => r.length === 2 && r.every((n) => Number.isFinite(n) && n > 0));
  if (rows.length === 0) return undefined;
  const [sm, max] = rows.reduce((a, b) => (b[0]! > a[0]! ? b : a));
  return { sm: sm!, max: max! };
}

/** Device memory in bytes (host memory for a CPU adapter), or undefined where unknown; asked once per process. */
export function deviceMemoryBytes(cpuAdapter: boolean): number | undefined {
  if (cpuAdapter) return totalmem();
  if (gpuMemory === undefined) gpuMemory = gpuMemoryBytes();
  return gpuMemory ?? undefined;
}

/** The default budget: the memory less 10% (at least 1 GiB) for the driver, kernels' scratch and other processes. */
export function defaultBudget(memory: number | undefined): number | undefined {
  return memory === undefined ? undefined : Math.floor(Math.max(memory - Math.max(2 ** 30, memory / 10), memory / 2));
}
