/**
 * A base relation made on the device from a resident relation of the same table that holds every column it loads
 * (database.ts): the resident rows' columns gathered, then the steps a load of its facts takes (canonical-load.ts:
 * sorted by all columns, duplicates dropped, declared keys checked, narrowed to the columns its variable keeps).
 *
 * It gives the rows a load from the facts gives: the resident relation holds, per fact, that fact's values of its
 * columns (its duplicates dropped, or rows narrowed to fewer columns: neither loses a value combination), so its
 * rows projected to the loaded columns and made distinct are the facts projected to them and made distinct. String
 * words stay ids of the resident relation's dictionary (its order is every dictionary's order), so they sort as the
 * host path's would.
 */
import type { KirKernel, KirProgram, KirVariable, VarId } from '@vixen/kernel-ir';
import { rowWords, type RelationDecl, type ScalarType } from '@vixen/queryplan';
import { columnTypes, concatWords, distinctAscending, factsColumns, type EncodedRelation, type StringDictionary } from '@vixen/io';
import { canonicalOnDevice, keptColumns, uploadLoaded } from './canonical-load.js';
import { checkDeclaredKeys } from './keys.js';
import { keyPrefix } from './load-passes.js';
import { downloadRelation, exactCount, releaseRelation, type DeviceRelation } from './gpu/relations.js';
import { runKernel } from './gpu/kernels/run-kernel.js';
import { madeUpShaders } from './gpu/recorder.js';
import { internals, type Gpu } from './gpu/device.js';
import { packChunks, releaseUnshared } from './gpu/chunks.js';

/** The facts columns (indices into factsColumns(decl)) that the loaded relation of `decl` holds, in order. */
export const loadedColumns = (decl: RelationDecl): readonly number[] => decl.pruned?.loadColumns ?? decl.columns.map((_, i) => i);

/** The facts columns a resident relation of `decl` holds in its words, in order (deviceColumns of the loaded ones). */
export function heldColumns(decl: RelationDecl): number[] {
  const loaded = loadedColumns(decl);
  return decl.deviceColumns ? decl.deviceColumns.map((c) => loaded[c]!) : [...loaded];
}

/** The types of the columns a resident relation of `decl` holds. */
export const heldTypes = (decl: RelationDecl): ScalarType[] => (decl.deviceColumns ? decl.deviceColumns.map((c) => decl.columns[c]!.type) : columnTypes(decl.columns));

/**
 * Where each column `decl` loads lies among those a resident relation of `source` holds; undefined when one is not
 * held, or the two read facts of other column types (they parse the same file differently).
 */
export function projectionFrom(decl: RelationDecl, source: RelationDecl): number[] | undefined {
  if (!sameFacts(decl, source)) return undefined;
  const held = heldColumns(source);
  const at = loadedColumns(decl).map((c) => held.indexOf(c));
  return at.every((p) => p >= 0) ? at : undefined;
}

/** Whether two declarations read the same facts the same way: one relation, the same column types. */
export const sameFacts = (a: RelationDecl, b: RelationDecl): boolean => a.name === b.name && columnTypes(factsColumns(a)).join() === columnTypes(factsColumns(b)).join();

/**
 * Facts columns of string type that `decl` loads: a relation's strings (those its dictionary must hold) are those
 * of its loaded columns, as for a load from the facts (EncodedRelation.usedIds).
 */
export const loadedStringColumns = (decl: RelationDecl): number[] => loadedColumns(decl).filter((_, i) => decl.columns[i]!.type === 'string');

export interface ProjectedRelation {
  /** In canonical order by `decl`'s loaded columns, then narrowed to its deviceColumns; its count exact. */
  relation: DeviceRelation;
  /** With `stringIds`: the distinct string ids its loaded columns hold, ascending. */
  ids?: Uint32Array;
}

/**
 * The relation of `decl` (a base relation of `kir`) made from resident relation `source` (holding the columns of
 * `sourceDecl`, string words ids of `dict`), its loaded column i being the source's column `at[i]`
 * (projectionFrom). `source` is read, never released. A declared key the rows break throws KeyViolationError, as a
 * load of the facts does. `stringIds`: also find the distinct strings its loaded columns hold.
 */
export async function projectResident(
  gpu: Gpu,
  kir: KirProgram,
  decl: RelationDecl,
  source: DeviceRelation,
  sourceDecl: RelationDecl,
  at: readonly number[],
  dict: StringDictionary,
  stringIds: boolean,
): Promise<ProjectedRelation> {
  const g = internals(gpu);
  g.activity = `projecting ${decl.name} from its resident columns (${source.count} rows)`;
  return g.runScoped(`projecting ${decl.name} on the device`, async () => {
    const id = kir.relationVars[decl.name]!;
    // As the load of facts does: the relation's variable holds every loaded column until the kept ones are picked.
    const variables: KirVariable[] = kir.variables.map((v) => (v.id === id ? { ...v, columns: columnTypes(decl.columns) } : v));
    const from = variables.length;
    variables.push({ id: from, name: `resident ${decl.name}`, columns: heldTypes(sourceDecl) });
    const project = at.map((index, i) => ({ kind: 'col' as const, index, type: decl.columns[i]!.type }));
    const gather: KirKernel = { kind: 'mapFilter', id: -1, input: from, output: id, filter: [], project };
    // A projection always writes rows of its own (kernels/project.ts), so releasing them never touches the source.
    const raw = await runKernel(gpu, gather, madeUpShaders(gather, variables), [source], new Uint32Array(0), variables);
    // The leading columns of canonical rows come sorted, equal ones adjacent: only their duplicates go.
    const sorted = source.canonical === true && at.every((p, i) => p === i);
    // Else sorted through the key only, as a load of facts is: the key check right after fails where it does not hold.
    const { canonical, order, shared } = await canonicalOnDevice(gpu, variables, id, raw, sorted, keyPrefix(decl));
    let ids: Uint32Array | undefined;
    try {
      const sortedBy = sorted ? decl.columns.length : (keyPrefix(decl)?.length ?? decl.columns.length);
      await checkDeclaredKeys(gpu, { ...kir, variables }, decl, id, canonical, dict, order?.ascending ? order.shared : shared, sortedBy);
      if (stringIds) ids = await distinctStrings(gpu, variables, id, canonical, decl);
    } catch (e) {
      releaseRelation(gpu, canonical);
      throw e;
    }
    const kept = await keptColumns(gpu, variables, kir.variables[id]!, decl, id, canonical);
    // A resident relation outlives every sync of later runs: its count is exact.
    await exactCount(g, kept);
    // Its rows came in the source's chunks, sized for the source's wider rows: every kernel reading it dispatches
    // once a chunk (TPC-H Q6 from lineitem's 16 columns: 3 chunks where 1 holds its 7 words a row).
    const relation = await packChunks(g, kept);
    releaseUnshared(gpu, kept, relation);
    return { relation, ...(ids ? { ids } : {}) };
  });
}

/** The distinct ids the string columns of canonical `rel` (variable `id` of `variables`) hold, ascending. */
async function distinctStrings(gpu: Gpu, variables: readonly KirVariable[], id: VarId, rel: DeviceRelation, decl: RelationDecl): Promise<Uint32Array> {
  const one = variables.length;
  const vars: KirVariable[] = [...variables, { id: one, name: `${decl.name} strings`, columns: ['string'] }];
  // Each column's ids, distinct and ascending (millions for a comment column: typed arrays, not a Set).
  const lists: Uint32Array[] = [];
  for (const [index, c] of decl.columns.entries()) {
    if (c.type !== 'string') continue;
    const pick: KirKernel = { kind: 'mapFilter', id: -1, input: id, output: one, filter: [], project: [{ kind: 'col', index, type: 'string' }] };
    const column = await runKernel(gpu, pick, madeUpShaders(pick, vars), [rel], new Uint32Array(0), vars);
    const { canonical } = await canonicalOnDevice(gpu, vars, one, column);
    try {
      lists.push(await downloadRelation(gpu, canonical));
    } finally {
      releaseRelation(gpu, canonical);
    }
  }
  if (lists.length === 1) return lists[0]!;
  // Ascending lists, one after another: merged, not sorted again.
  return distinctAscending(concatWords(lists));
}

/** Device bytes of `decl`'s loaded rows for `rows` rows: what a projection's gathered rows take before their sort. */
export const loadedBytes = (decl: RelationDecl, rows: number): number => rows * rowWords(columnTypes(decl.columns)) * 4;

/**
 * The rows of `decl` in `rel` (host rows, and rows the device parsed; string words already ids of their dictionary)
 * on the device in canonical form (sorted by all columns, duplicate-free), their count exact: a relation loaded to
 * project others from, with no keys of its own to check.
 */
export async function uploadCanonical(gpu: Gpu, decl: RelationDecl, rel: EncodedRelation): Promise<DeviceRelation> {
  const g = internals(gpu);
  g.activity = `loading the facts of ${decl.name} (${rel.count + rel.device.reduce((n, d) => n + d.count, 0)} rows) to project from`;
  return g.runScoped(`loading ${decl.name} to project from`, async () => {
    const variables: KirVariable[] = [{ id: 0, name: decl.name, columns: columnTypes(decl.columns), relation: decl.name }];
    const { canonical } = await canonicalOnDevice(gpu, variables, 0, await uploadLoaded(gpu, rel));
    await exactCount(g, canonical);
    return canonical;
  });
}
