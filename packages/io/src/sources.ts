/** Where a run's facts come from: rows given through the API and files in a facts directory (or a store). */
import { existsSync } from 'node:fs';
import { isAbsolute, join } from 'node:path';
import type { SouffleInput } from '@vixen/frontend';
import { VixenError, type RelationDecl, type Row } from '@vixen/queryplan';
import type { StoreDeviceLoader } from './store/load.js';
import { EncodedFacts, columnTypes, factsColumns, loadEach, loadFactsDirInto, loadFactsFileInto, type FactsFileLoader } from './facts/index.js';
import type { LoadProgressListener } from './load-progress.js';
import { STORE_MANIFEST } from './store/manifest.js';
import { addApiFacts, type FactRelation } from './facts/rows.js';
import { souffleRecordFields } from './facts/souffle-records.js';

export interface FactSources {
  /**
   * Facts per relation: rows, typed as the relation declares (see `Value`: int32/uint32/float32/date number, int64
   * bigint or safe-integer number, decimal bigint scaled by 10^4, string string, boolean boolean), or
   * `{ columns }`, one array per declared column: a typed array (Int32Array for int32 and date, Uint32Array,
   * Float32Array or Float64Array for float32, BigInt64Array for int64 and decimal) or an array of such values.
   */
  facts?: Record<string, FactRelation>;
  /**
   * Directory with `<relation>.csv|.tsv|.facts|.tbl|.parquet|.arrow|.feather` files for the base (EDB)
   * relations, or a columnar store (`vixen import`) (Soufflé programs: their `.input` files; default `.`).
   */
  factsDir?: string;
  /** Hears how many bytes of the facts files are read so far (see LoadProgress). */
  onLoadProgress?: LoadProgressListener;
}

/**
 * Facts from outside the program text, encoded as they load (facts/encoded.ts). With a facts directory, every
 * base relation that has neither inline facts nor API rows needs a file there; relations with inline facts may
 * have one too. A Soufflé program (`souffleInputs` given) reads exactly its `.input` relations, each from the
 * file its directive names, in the facts directory or else (as Soufflé does) the current directory.
 */
export async function externalFacts(
  relations: readonly RelationDecl[],
  inline: Readonly<Record<string, readonly Row[]>>,
  sources: FactSources,
  souffleInputs?: Readonly<Record<string, SouffleInput>>,
  /** Reads each file of the facts directory (default: parsed on the host, loadKeptColumns). */
  loadFile?: FactsFileLoader,
  /** Reads a store's relations into device memory (default: into host memory). */
  storeOnDevice?: StoreDeviceLoader,
): Promise<EncodedFacts> {
  const byName = new Map(relations.filter((r) => r.kind !== 'temp').map((r) => [r.name, r]));
  const out = new EncodedFacts();
  try {
    await addExternal(out, byName, relations, inline, sources, souffleInputs, loadFile, storeOnDevice);
  } catch (e) {
    // Nothing stays half-loaded: rows a device parsed before a later file failed are given back.
    out.releaseDevice();
    throw e;
  }
  return out;
}

async function addExternal(
  out: EncodedFacts,
  byName: ReadonlyMap<string, RelationDecl>,
  relations: readonly RelationDecl[],
  inline: Readonly<Record<string, readonly Row[]>>,
  sources: FactSources,
  souffleInputs: Readonly<Record<string, SouffleInput>> | undefined,
  loadFile: FactsFileLoader | undefined,
  storeOnDevice: StoreDeviceLoader | undefined,
): Promise<void> {
  addApiFacts(out, byName, sources.facts ?? {});
  const given = new Set(out.relations.keys());
  if (souffleInputs) {
    if (sources.factsDir !== undefined && existsSync(join(sources.factsDir, STORE_MANIFEST))) {
      throw new VixenError({ severity: 'error', message: `${sources.factsDir} is a columnar store: a Soufflé program reads its .input files as text; give it the facts directory` });
    }
    // Soufflé's default facts directory is the current one: a missing `.input` file is an error, never empty.
    await loadSouffleInputs(sources.factsDir ?? '.', relations, souffleInputs, given, out);
  } else if (sources.factsDir !== undefined) {
    const fromFiles = relations.filter((r) => r.kind === 'edb' && !given.has(r.name));
    const required = fromFiles.filter((r) => !(inline[r.name]?.length)).map((r) => r.name);
    const optional = fromFiles.filter((r) => inline[r.name]?.length).map((r) => r.name);
    await loadFactsDirInto(sources.factsDir, [...relations], required, optional, out, loadFile, sources.onLoadProgress, false, storeOnDevice);
  }
}

/** Soufflé's `.input` files (relative to the facts directory unless absolute), skipping relations given rows by API. */
async function loadSouffleInputs(
  dir: string,
  relations: readonly RelationDecl[],
  inputs: Readonly<Record<string, SouffleInput>>,
  given: ReadonlySet<string>,
  out: EncodedFacts,
): Promise<void> {
  await loadEach(
    relations.filter((rel) => inputs[rel.name] && !given.has(rel.name)),
    (rel) => {
      const input = inputs[rel.name]!;
      const path = isAbsolute(input.filename) ? input.filename : join(dir, input.filename);
      const target = out.relation(rel.name, columnTypes(rel.columns));
      const columns = factsColumns(rel);
      const layout = input.records;
      const types = columns.map((c) => c.type);
      const expand = layout && ((fields: string[]) => souffleRecordFields(fields, input.delimiter, layout, types));
      return loadFactsFileInto(path, columns, target, out.strings, rel.name, input.delimiter, rel.pruned?.loadColumns, undefined, undefined, expand);
    },
  );
}
