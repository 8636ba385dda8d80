/**
 * What a run needs of its host in Node (package.json `imports` `#host`): Dawn for the device, the file system for
 * included files and facts files. host-browser.ts is the same interface in a browser.
 */
import { existsSync } from 'node:fs';
import { freemem } from 'node:os';
import type { SouffleInput } from '@vixen/frontend';
import type { RelationDecl, Row } from '@vixen/queryplan';
import { externalFacts, readTextFile, type EncodedFacts, type FactSources } from '@vixen/io';
import type { Gpu } from './gpu/device.js';
import { factsLoader } from './facts-parse.js';
import { loadStoreOnDevice } from './gpu/store-columns.js';
import type { ParseMode } from './parse-mode.js';

export { openGpu as openDefaultGpu } from './gpu/dawn.js';
export { locateFileFacts } from '@vixen/io';

/** Free host memory in bytes: spilling relations to host memory keeps some of it free. */
export const hostFreeMemory = (): number => freemem();

/** Included files: a missing one is the front end's diagnostic; one that is not UTF-8 is an error here. */
export function readIncludedFile(path: string): string | undefined {
  return existsSync(path) ? readTextFile(path, 'included file') : undefined;
}

export function readProgramFile(path: string): string {
  return readTextFile(path, 'program file');
}

/** Facts from outside the program text (API rows, files); with `gpu`, files are parsed where `parse` says. */
export function loadExternalFacts(
  relations: readonly RelationDecl[],
  inline: Readonly<Record<string, readonly Row[]>>,
  sources: FactSources,
  souffleInputs: Readonly<Record<string, SouffleInput>> | undefined,
  device?: { gpu: Gpu; parse: ParseMode },
): Promise<EncodedFacts> {
  if (!device) return externalFacts(relations, inline, sources, souffleInputs);
  return externalFacts(relations, inline, sources, souffleInputs, factsLoader(device.gpu, device.parse), (read, strings, step) => loadStoreOnDevice(device.gpu, read, strings, step));
}
