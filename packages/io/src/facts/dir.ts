/**
 * Facts directories: `<dir>/<relation>.csv|.tsv|.facts|.tbl|.parquet|.arrow|.feather`, exactly one file per
 * relation, or a columnar store (a folder with `vixen-store.json`, store/load.ts).
 */
import { readdir, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { VixenError, errorAt, type Diagnostic, type RelationDecl, type Row } from '@vixen/queryplan';
import { FACTS_EXTENSIONS, isBinaryFactsFile, loadFactsFileInto } from './file.js';
import { parseFileInParts } from './parse-file.js';
import { projectParts } from './project.js';
import { EncodedFacts, columnTypes, factsColumns } from './encoded.js';
import { progressCounter, type LoadProgressListener } from '../load-progress.js';
import { STORE_MANIFEST } from '../store/manifest.js';
import { loadStoreInto, type StoreDeviceLoader } from '../store/load.js';

async function listDir(dir: string): Promise<Set<string>> {
  const info = await stat(dir).catch(() => undefined);
  if (!info) throw new VixenError(errorAt(`facts directory not found: ${dir}`));
  if (!info.isDirectory()) throw new VixenError(errorAt(`facts path is not a directory: ${dir}`));
  return new Set(await readdir(dir));
}

/**
 * Loads the facts of each relation in `wanted` (its file must exist) and of each in `optional` (loaded when
 * its file exists). Returns rows by relation name. Every problem found — missing or ambiguous files, bad lines
 * in any file — is reported in one VixenError.
 */
export async function loadFactsDir(
  dir: string,
  relations: readonly RelationDecl[],
  wanted: readonly string[],
  optional: readonly string[] = [],
): Promise<Record<string, Row[]>> {
  const facts = new EncodedFacts();
  await loadFactsDirInto(dir, relations, wanted, optional, facts);
  return Object.fromEntries(facts.toRows());
}

/** Encodes the facts of relation `decl` from its file `path` into `facts`; `onBytes`, where it can, hears the bytes read. */
export type FactsFileLoader = (decl: RelationDecl, path: string, facts: EncodedFacts, onBytes?: (bytes: number) => void) => Promise<void>;

/**
 * Parses the columns the program reads (`pruned.loadColumns`), or all of them: a text file by byte ranges on the
 * worker pool (parse-file.ts), only those columns' fields converted and their strings interned; file.ts where the
 * byte parser gives up (it says where the problem is), or for a binary file.
 */
export const loadKeptColumns: FactsFileLoader = async (decl, path, facts, onBytes) => {
  const columns = factsColumns(decl);
  const kept = decl.pruned?.loadColumns ?? columns.map((_, i) => i);
  // A relation read for its row count alone keeps no word: file.ts counts its rows.
  if (kept.length > 0 && !isBinaryFactsFile(path)) {
    const parts = await parseFileInParts(path, columnTypes(columns), kept, onBytes);
    if (parts) {
      const keptTypes = kept.map((c) => columns[c]!.type);
      return projectParts(parts, keptTypes, keptTypes.map((_, k) => k), decl, facts);
    }
  }
  return loadFactsFileInto(path, columns, facts.relation(decl.name, columnTypes(decl.columns)), facts.strings, decl.name, undefined, decl.pruned?.loadColumns, onBytes);
};

/**
 * `loadFactsDir`, encoding the rows into `facts` as they are read (by `loadFile`, every file at once: the worker pool
 * and the device then have one file's ranges or chunks to work on while another's wait for the main thread; a store is
 * read by store/load.ts instead). `onProgress` hears of each file as it starts, as it is read, and once it is read.
 * `oneAtATime`: files in turn, for a `loadFile` that changes `facts` between files. `storeOnDevice`: the loader of a
 * store's relations into device memory (the host reads those it leaves).
 */
export async function loadFactsDirInto(
  dir: string,
  relations: readonly RelationDecl[],
  wanted: readonly string[],
  optional: readonly string[],
  facts: EncodedFacts,
  loadFile: FactsFileLoader = loadKeptColumns,
  onProgress?: LoadProgressListener,
  oneAtATime = false,
  storeOnDevice?: StoreDeviceLoader,
): Promise<void> {
  const entries = await listDir(dir);
  if (entries.has(STORE_MANIFEST)) return loadStoreInto(dir, relations, wanted, optional, facts, onProgress, storeOnDevice);
  const decls = new Map(relations.map((r) => [r.name, r]));
  const required = new Set(wanted);
  const diags: Diagnostic[] = [];
  const files: [RelationDecl, string][] = [];
  for (const name of new Set([...wanted, ...optional])) {
    const decl = decls.get(name);
    if (!decl) {
      diags.push(errorAt(`cannot load facts for ${name}: no such relation`));
      continue;
    }
    const candidates = FACTS_EXTENSIONS.map((ext) => name + ext).filter((f) => entries.has(f));
    if (candidates.length === 1) {
      files.push([decl, join(dir, candidates[0]!)]);
    } else if (candidates.length > 1) {
      diags.push(errorAt(`ambiguous facts for relation ${name} in ${dir}: found ${candidates.join(' and ')}; keep exactly one`));
    } else if (required.has(name)) {
      const expected = FACTS_EXTENSIONS.map((ext) => name + ext).join(', ');
      diags.push(errorAt(`no facts file for relation ${name} in ${dir}: expected one of ${expected}`));
    }
  }
  // Sizes only for a listener: a run without one does no more file system round trips than it needs.
  const sizes = onProgress ? await Promise.all(files.map(([, path]) => stat(path).then((s) => s.size, () => 0))) : [];
  const step = progressCounter(sizes.reduce((n, s) => n + s, 0), onProgress);
  // Relations in the order of their files, whichever file's rows come first.
  for (const [decl] of files) facts.relation(decl.name, columnTypes(decl.columns));
  await loadEach(files.map((f, i) => [...f, sizes[i] ?? 0] as const), async ([decl, path, size]) => {
    // A listener hears the file's name first, then its bytes as the loader reads them, all of them once it is done.
    let read = 0;
    const onBytes = (bytes: number): void => {
      const counted = Math.min(bytes, size - read);
      read += counted;
      step(decl.name, counted);
    };
    onBytes(0);
    await loadFile(decl, path, facts, onProgress ? onBytes : undefined);
    onBytes(size - read);
  }, diags, !oneAtATime);
}

/**
 * Runs `load` on each item, in turn or (`concurrent`) all at once; the diagnostics of every failed load, after
 * `diags` (problems found before), end in one VixenError in the items' order, so a user sees every bad file at once.
 * An error of a VixenError subclass (the runtime's DeviceFault) says more than its diagnostics: it is thrown as it is.
 */
export async function loadEach<T>(items: readonly T[], load: (item: T) => Promise<void>, diags: Diagnostic[] = [], concurrent = false): Promise<void> {
  const attempt = (item: T): Promise<Diagnostic[] | Error | undefined> =>
    load(item).then(
      () => undefined,
      (e: unknown) => (e instanceof VixenError && e.constructor === VixenError ? e.diagnostics : e instanceof Error ? e : new Error(String(e))),
    );
  const outcomes: (Diagnostic[] | Error | undefined)[] = [];
  if (concurrent) outcomes.push(...(await Promise.all(items.map(attempt))));
  else for (const item of items) outcomes.push(await attempt(item));
  for (const o of outcomes) {
    if (o instanceof Error) throw o;
    if (o) diags.push(...o);
  }
  if (diags.length > 0) throw new VixenError(diags);
}
