/**
 * Loaded rows brought into canonical form (sorted by all columns, duplicate-free) on the device, then narrowed to
 * the columns their variable keeps: the executor's load of facts (executor.ts loadInitialRelations) and a
 * Database's projection of a resident relation (project-resident.ts) share these steps, so both give the same rows.
 */
import type { KirKernel, KirVariable, VarId } from '@vixen/kernel-ir';
import type { RelationDecl } from '@vixen/queryplan';
import type { EncodedRelation } from '@vixen/io';
import { sortKeyWords, type KernelShaders } from '@vixen/codegen-wgsl';
import { releaseRelation, settle, syncCounts, uploadRelationStaged, type DeviceRelation } from './gpu/relations.js';
import { runKernel } from './gpu/kernels/run-kernel.js';
import { rowsOrder, type RowsOrder } from './gpu/kernels/rows-order.js';
import { madeUpShaders } from './gpu/recorder.js';
import { radixOnly } from './gpu/kernels/sort.js';
import { internals, type Gpu, type GpuImpl } from './gpu/device.js';
import { chunkedOf, packChunks, releaseUnshared } from './gpu/chunks.js';
import { deviceRowsRelation } from './gpu/parsed-rows.js';

/** The passes of a kernel a load runs (madeUpShaders), its sorts radix sorts (radixOnly): one set for every table. */
export function loadShaders(g: GpuImpl, kernel: KirKernel, variables: readonly KirVariable[]): KernelShaders {
  const shaders = madeUpShaders(kernel, variables);
  if (kernel.kind !== 'sort') return shaders;
  return radixOnly(g, shaders, sortKeyWords(variables.find((v) => v.id === kernel.input)!.columns, kernel.keys).length);
}

/**
 * Loaded rows from which their order is checked before a sort (kernels/rows-order.ts): a pass and a round trip cost
 * more than sorting fewer.
 */
const ORDER_CHECK_ROWS = 2 ** 16;

/**
 * The loaded rows of `rel` on the device as one relation to make canonical: its host rows uploaded, then the rows the
 * device parsed (their string words filled in), which it hands over.
 */
export async function uploadLoaded(gpu: Gpu, rel: EncodedRelation): Promise<DeviceRelation> {
  const parts = rel.count > 0 ? [await uploadRelationStaged(gpu, rel.pieces(), rel.width, rel.count)] : [];
  for (const rows of rel.device.splice(0)) parts.push(await deviceRowsRelation(gpu, rows, rel.types));
  return chunkedOf(parts, rel.width);
}

/**
 * `raw` (variable `id` of `variables`, every loaded column; released here unless returned) sorted and made
 * duplicate-free, and its `order` where it was checked. `sorted`: the rows are known to be sorted already (equal
 * ones adjacent), so only the unique runs. `keys`: the leading columns the rows are sorted by (default all), where
 * rows that share them are equal (a declared key among them that the caller checks; load-passes.ts keyPrefix).
 * Rows sorted by such `keys` of which no two adjacent ones share all their words are distinct and sorted by every
 * column: one rowsOrder pass finds so (`shared`: the most leading words adjacent rows share) and the unique, a pass
 * over every row compiled per row width, does not run.
 */
export async function canonicalOnDevice(
  gpu: Gpu,
  variables: readonly KirVariable[],
  id: VarId,
  raw: DeviceRelation,
  sorted = false,
  keys?: readonly number[],
): Promise<{ canonical: DeviceRelation; order?: RowsOrder; shared?: number }> {
  const run = (k: KirKernel, input: DeviceRelation): Promise<DeviceRelation> => runKernel(gpu, k, loadShaders(internals(gpu), k, variables), [input], new Uint32Array(0), variables);
  let order: RowsOrder | undefined;
  let rows = raw;
  if (!sorted) {
    // Rows loaded in canonical order already (a store or file written sorted) need no sort: one pass says so. Their
    // pieces (a parsed text chunk or an upload each) are then gathered into chunks as large as a binding allows.
    order = raw.count >= ORDER_CHECK_ROWS ? await rowsOrder(internals(gpu), raw) : undefined;
    if (order?.ascending) {
      const packed = await packChunks(internals(gpu), raw);
      releaseUnshared(gpu, raw, packed);
      raw = packed;
      raw.canonical = true;
    }
    rows = await run({ kind: 'sort', id: -1, input: id, output: id, keys: [...(keys ?? variables[id]!.columns.map((_, i) => i))] }, raw);
    releaseUnshared(gpu, raw, rows);
    const types = variables[id]!.columns;
    if (keys !== undefined && keys.length < types.length && !rows.canonical) {
      await syncCounts(internals(gpu));
      const after = await rowsOrder(internals(gpu), settle(rows));
      if (after !== undefined && after.shared < sortKeyWords(types, keys).length) {
        rows.canonical = true;
        return { canonical: rows, ...(order ? { order } : {}), shared: after.shared };
      }
    }
  }
  const canonical = await run({ kind: 'unique', id: -1, input: id, output: id }, rows);
  releaseUnshared(gpu, rows, canonical);
  return { canonical, ...(order ? { order } : {}) };
}

/**
 * Loaded relation `canonical` (variable `id` of `loaded`, every loaded column) with only the columns its variable
 * `kept` holds (RelationDecl.deviceColumns), rows in their order.
 */
export async function keptColumns(gpu: Gpu, loaded: readonly KirVariable[], kept: KirVariable, decl: RelationDecl, id: VarId, canonical: DeviceRelation): Promise<DeviceRelation> {
  if (!decl.deviceColumns) return canonical;
  const out = loaded.length;
  const variables = [...loaded, { ...kept, id: out }];
  const project = decl.deviceColumns.map((c) => ({ kind: 'col' as const, index: c, type: decl.columns[c]!.type }));
  const k: KirKernel = { kind: 'mapFilter', id: -1, input: id, output: out, filter: [], project };
  try {
    return await runKernel(gpu, k, madeUpShaders(k, variables), [canonical], new Uint32Array(0), variables);
  } finally {
    releaseRelation(gpu, canonical);
  }
}
