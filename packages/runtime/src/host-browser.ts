/**
 * What a run needs of its host in a browser (package.json `imports` `#host`, `browser` condition; host-node.ts is
 * Node's): the page's WebGPU (`navigator.gpu`) for the device, and facts only as rows, since a page has no files.
 */
import type { SouffleInput } from '@vixen/frontend';
import { VixenError, type RelationDecl, type Row, type Violation } from '@vixen/queryplan';
import { addApiFacts, EncodedFacts, type FactSources } from '@vixen/io';
import { openDevice, type Gpu, type GpuOptions } from './gpu/device.js';
import type { ParseMode } from './parse-mode.js';

/** The page's WebGPU device; a clear error where the browser has none. `options.backend` is Dawn's: the browser picks. */
export async function openDefaultGpu(options: GpuOptions = {}): Promise<Gpu> {
  const gpu = (globalThis as { navigator?: { gpu?: GPU } }).navigator?.gpu;
  if (!gpu) throw new VixenError({ severity: 'error', message: 'this browser has no WebGPU (navigator.gpu is missing)' });
  const adapter = await gpu.requestAdapter({ powerPreference: 'high-performance' });
  if (!adapter) throw new VixenError({ severity: 'error', message: "this browser's WebGPU offers no adapter: it may be turned off or blocked" });
  return openDevice(gpu, adapter, 'webgpu', { ...(options.subgroups !== undefined ? { subgroups: options.subgroups } : {}), ...(options.gpuPaths !== undefined ? { gpuPaths: options.gpuPaths } : {}) });
}

/**
 * A page cannot tell its free memory; it spills only under a budget its caller names (a page's device has no
 * default budget), so the caller's budget is the bound.
 */
export const hostFreeMemory = (): number => Number.POSITIVE_INFINITY;

/** A page has no file system: an included file is never found (the front end reports it where it is included). */
export function readIncludedFile(_path: string): string | undefined {
  return undefined;
}

export function readProgramFile(path: string): never {
  throw new VixenError({ severity: 'error', message: `cannot read ${path}: a browser page has no file system` });
}

/** Facts as rows only (`sources.facts`): a facts directory or a Soufflé `.input` file without rows is an error. */
export async function loadExternalFacts(
  relations: readonly RelationDecl[],
  _inline: Readonly<Record<string, readonly Row[]>>,
  sources: FactSources,
  souffleInputs: Readonly<Record<string, SouffleInput>> | undefined,
  _device?: { gpu: Gpu; parse: ParseMode },
): Promise<EncodedFacts> {
  if (sources.factsDir !== undefined) throw new VixenError({ severity: 'error', message: 'a browser page has no facts directory: give the facts as rows' });
  const missing = Object.keys(souffleInputs ?? {}).filter((name) => sources.facts?.[name] === undefined);
  if (missing.length > 0) throw new VixenError({ severity: 'error', message: `no rows for the .input relation${missing.length > 1 ? 's' : ''} ${missing.join(', ')}: a browser page reads no files` });
  const out = new EncodedFacts();
  addApiFacts(out, new Map(relations.filter((r) => r.kind !== 'temp').map((r) => [r.name, r])), sources.facts ?? {});
  return out;
}

/** Violations keep their rows' values only: their rows came from no file. */
export function locateFileFacts(violations: Violation[], _relations: readonly RelationDecl[], _factsDir: string): Violation[] {
  return violations;
}
