/**
 * Where facts text is parsed (RunOptions.parse, `--parse`): on the host (io's parsers), on the device
 * (gpu/parse-text.ts, the host parser taking any file the device gives up), or `auto`: the device for large files
 * on a GPU, the host otherwise (a CPU adapter parses no faster than the host, and small files are not worth a
 * device round trip per chunk).
 */
import { stat } from 'node:fs/promises';
import { columnTypes, factsColumns, factsFormat, loadKeptColumns, type FactsFileLoader } from '@vixen/io';
import type { Gpu } from './gpu/index.js';
import { parseTextOnDevice } from './gpu/parse-text.js';
import { byteSorter } from './gpu/string-sort.js';
import { internals } from './gpu/device.js';
import { precompileLoad } from './load-passes.js';
import type { ParseMode } from './parse-mode.js';

/** In `auto` mode, files at least this large parse on the device (on a GPU). */
export const AUTO_DEVICE_BYTES = 16 * 2 ** 20;

/**
 * The loader of facts files for `mode`: `host` where the host parses (also for every file the device gives up), the
 * run's strings given as bytes sorted by byteSorter either way; `chunkBytes` sets the device's read size (tests).
 */
export function factsLoader(gpu: Gpu, mode: ParseMode, host: FactsFileLoader = loadKeptColumns, chunkBytes?: number): FactsFileLoader {
  const device = mode === 'device' || (mode === 'auto' && !gpu.software);
  return async (decl, path, facts, onBytes) => {
    // Strings loaded as bytes (Parquet's) are sorted where the device parse's are.
    facts.strings.sortBytes ??= () => byteSorter(gpu);
    const format = device ? factsFormat(path) : undefined;
    const size = format && mode === 'auto' ? await stat(path).then((s) => s.size, () => 0) : Infinity;
    if (format && size >= AUTO_DEVICE_BYTES) {
      const columns = factsColumns(decl);
      const kept = decl.pruned?.loadColumns ?? columns.map((_, i) => i);
      const file = { path, relation: decl.name, format, types: columnTypes(columns), kept, ...(chunkBytes !== undefined ? { chunkBytes } : {}), ...(onBytes ? { onBytes } : {}) };
      // Its parse passes are asked for first (Dawn compiles in the order asked, and the first chunk waits on them);
      // the passes that load its rows compile while the file parses (a CPU adapter compiles only those that run).
      const parsing = parseTextOnDevice(gpu, file, facts.strings);
      if (!gpu.software) precompileLoad(internals(gpu), decl);
      const rows = await parsing;
      if (rows) {
        facts.relation(decl.name, columnTypes(decl.columns)).addDevice(rows);
        return;
      }
    }
    await host(decl, path, facts, onBytes);
  };
}
