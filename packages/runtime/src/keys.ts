/**
 * The declared keys of base relations (RelationDecl.keys), checked on the device when their facts load: the
 * kernel IR leaves duplicate elimination out where a key proves rows distinct, so facts that break one stop the
 * run before anything is evaluated (KeyViolationError), naming the key values held by several rows.
 */
import { sortKeyWords } from '@vixen/codegen-wgsl';
import type { KirKernel, KirProgram, VarId } from '@vixen/kernel-ir';
import { keyConstraint, KeyViolationError, rowWords, VIOLATION_ROWS, type DeclaredKey, type RelationDecl, type ScalarType } from '@vixen/queryplan';
import { allWords, pickWords, type HostRows } from './partitioned.js';
import { downloadRelation, releaseRelation, type DeviceRelation } from './gpu/relations.js';
import { runKernel } from './gpu/kernels/run-kernel.js';
import { loadShaders } from './canonical-load.js';
import type { Gpu } from './gpu/device.js';
import { internals } from './gpu/device.js';
import { releaseUnshared } from './gpu/chunks.js';
import { settle, syncCounts } from './gpu/relations.js';
import type { StringDictionary } from '@vixen/io';
import { ResultTable } from './result-table.js';
import { rowsOrder } from './gpu/kernels/rows-order.js';

/**
 * Throws KeyViolationError when canonical `rel` (variable `id`, relation `decl`) has two rows with one key. A key of
 * leading columns is checked by the order of the rows, where two rows holding it are adjacent: rows loaded in
 * canonical order (`shared`, the most leading words two adjacent rows share), or rows sorted by their leading
 * `sortedBy` columns, at least the key's (one rowsOrder pass finds what they share). Other keys, and a key found
 * shared, are checked by sorting their columns (keyViolations), which names the rows: at a load that took a
 * projection, a sort and a unique of their own per key, each compiled per key (TPC-H: a pipeline each, of about 66
 * ms of a cold load on the H200).
 */
export async function checkDeclaredKeys(
  gpu: Gpu,
  program: KirProgram,
  decl: RelationDecl,
  id: VarId,
  rel: DeviceRelation,
  dict: StringDictionary,
  /**
   * The most leading words two adjacent rows share, where known (rows loaded in canonical order, kernels/rows-order.ts,
   * or found distinct once sorted, canonicalOnDevice).
   */
  shared?: number,
  /** The leading columns the rows are sorted by (0: unknown). */
  sortedBy = 0,
): Promise<void> {
  const types = decl.columns.map((c) => c.type);
  let found: number | undefined;
  for (const key of decl.keys ?? []) {
    // Every column: a set of rows has no two equal ones.
    if (key.columns.length === decl.columns.length) continue;
    // A key of the leading columns of sorted rows: two rows holding it would be adjacent and share its words.
    if (leadingKey(key)) {
      const words = sortKeyWords(types, key.columns).length;
      if (shared !== undefined && shared < words) continue;
      if (shared === undefined && checkedByOrder(key, sortedBy)) {
        found ??= await adjacentWords(gpu, rel);
        if (found !== undefined && found < words) continue;
      }
    }
    const broken = await keyViolations(gpu, program, decl, key, id, rel, dict);
    if (broken) throw new KeyViolationError([{ constraint: keyConstraint(decl.name, key), ...broken }]);
  }
}

/** Whether `key` is of the leading columns (in any order). */
const leadingKey = (key: DeclaredKey): boolean => key.columns.every((c) => c < key.columns.length) && new Set(key.columns).size === key.columns.length;

/** Whether checkDeclaredKeys checks `key` by the order of rows sorted by their leading `sortedBy` columns. */
export const checkedByOrder = (key: DeclaredKey, sortedBy: number): boolean => leadingKey(key) && key.columns.length <= sortedBy;

/** The most leading words two adjacent rows of `rel` share (its counts read first), or undefined where unknown. */
async function adjacentWords(gpu: Gpu, rel: DeviceRelation): Promise<number | undefined> {
  await syncCounts(internals(gpu));
  return (await rowsOrder(internals(gpu), settle(rel)))?.shared;
}

/**
 * checkDeclaredKeys for canonical rows in host memory (relations loaded past the device memory budget), `sort` sorting
 * rows by the given words (partitioned.ts sortWords).
 */
export async function checkDeclaredKeysOnHost(
  decl: RelationDecl,
  rows: HostRows,
  dict: StringDictionary,
  sort: (rows: HostRows, keys: readonly number[]) => Promise<HostRows>,
): Promise<void> {
  const types = decl.columns.map((c) => c.type);
  for (const key of decl.keys ?? []) {
    if (key.columns.length === decl.columns.length) continue;
    const keyWords = sortKeyWords(types, key.columns);
    const sorted = await sort(pickWords(rows, keyWords), allWords(keyWords.length));
    const broken = repeatedKeys(sorted.words, key.columns.map((c) => types[c]!), dict);
    if (broken) throw new KeyViolationError([{ constraint: keyConstraint(decl.name, key), ...broken }]);
  }
}

/** Sorted key rows `words`: each key held by several rows once, in order (undefined when there is none). */
function repeatedKeys(words: Uint32Array, types: ScalarType[], dict: StringDictionary): { rows: ReturnType<ResultTable['rows']>; count: number } | undefined {
  const width = rowWords(types);
  const same = (a: number, b: number): boolean => words.subarray(a * width, (a + 1) * width).every((w, i) => w === words[b * width + i]);
  const repeated: number[] = [];
  for (let r = 1; r * width < words.length; r++) if (same(r, r - 1) && (r === 1 || !same(r - 1, r - 2))) repeated.push(r);
  if (repeated.length === 0) return undefined;
  const shown = new Uint32Array(Math.min(repeated.length, VIOLATION_ROWS) * width);
  repeated.slice(0, VIOLATION_ROWS).forEach((r, i) => shown.set(words.subarray(r * width, (r + 1) * width), i * width));
  return { rows: ResultTable.fromWords(types, shown, dict).rows(), count: repeated.length };
}

/** Sorts the key columns of `rel` and finds whether adjacent ones are equal; where some are, the repeated keys. */
async function keyViolations(
  gpu: Gpu,
  program: KirProgram,
  decl: RelationDecl,
  key: DeclaredKey,
  id: VarId,
  rel: DeviceRelation,
  dict: StringDictionary,
): Promise<{ rows: ReturnType<ResultTable['rows']>; count: number } | undefined> {
  const types = key.columns.map((c) => decl.columns[c]!.type);
  const keyVar = program.variables.length;
  const variables = [...program.variables, { id: keyVar, name: `${decl.name} key`, columns: types }];
  const all = types.map((_, i) => i);
  const none = new Uint32Array(0);
  const run = (k: KirKernel, inputs: DeviceRelation[]): Promise<DeviceRelation> => runKernel(gpu, k, loadShaders(internals(gpu), k, variables), inputs, none, variables);
  const project = key.columns.map((c) => ({ kind: 'col' as const, index: c, type: decl.columns[c]!.type }));
  const keys = await run({ kind: 'mapFilter', id: -1, input: id, output: keyVar, filter: [], project }, [rel]);
  const sorted = await run({ kind: 'sort', id: -1, input: keyVar, output: keyVar, keys: all }, [keys]);
  releaseUnshared(gpu, keys, sorted);
  try {
    // Rows holding one key are adjacent once sorted, sharing all its words: one rowsOrder pass (the same pipeline
    // for every key) tells, where a unique and its count took a pass compiled per key width.
    const shared = await adjacentWords(gpu, sorted);
    if (shared !== undefined && shared < rowWords(types)) return undefined;
    return repeatedKeys(await downloadRelation(gpu, settle(sorted)), types, dict);
  } finally {
    releaseRelation(gpu, sorted);
  }
}
