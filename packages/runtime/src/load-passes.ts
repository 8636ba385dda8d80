/**
 * The passes a relation's load runs (executor.ts loadInitialRelations): the columns its rows are sorted by, and
 * compiling its passes ahead (a first load otherwise compiles each stage's passes only when the stage comes).
 */
import type { KirKernel, KirVariable } from '@vixen/kernel-ir';
import type { RelationDecl } from '@vixen/queryplan';
import type { GpuImpl } from './gpu/device.js';
import { madeUpShaders, precompile } from './gpu/recorder.js';

/**
 * Starts compiling the passes that load a relation of `decl` (loadInitialRelations): its sort and unique, the
 * projection to the columns kept and each key check's projection, sort and unique. Their WGSL depends on the
 * columns alone, so the dispatches find these pipelines (every pass of a sort: which one runs depends on the rows).
 */
export function precompileLoad(g: GpuImpl, decl: RelationDecl): void {
  const types = decl.columns.map((c) => c.type);
  const all = types.map((_, i) => i);
  const variables: KirVariable[] = [{ id: 0, name: decl.name, columns: types }];
  const kernels: KirKernel[] = [
    { kind: 'sort', id: -1, input: 0, output: 0, keys: keyPrefix(decl) ?? all },
    { kind: 'unique', id: -1, input: 0, output: 0 },
  ];
  const project = (columns: readonly number[], output: number): KirKernel => ({
    kind: 'mapFilter',
    id: -1,
    input: 0,
    output,
    filter: [],
    project: columns.map((c) => ({ kind: 'col' as const, index: c, type: types[c]! })),
  });
  if (decl.deviceColumns) {
    variables.push({ id: 1, name: `${decl.name} kept`, columns: decl.deviceColumns.map((c) => types[c]!) });
    kernels.push(project(decl.deviceColumns, 1));
  }
  (decl.keys ?? []).forEach((key, k) => {
    if (key.columns.length === decl.columns.length) return;
    const id = variables.length;
    variables.push({ id, name: `${decl.name} key ${k}`, columns: key.columns.map((c) => types[c]!) });
    kernels.push(project(key.columns, id), { kind: 'sort', id: -1, input: id, output: id, keys: key.columns.map((_, i) => i) }, { kind: 'unique', id: -1, input: id, output: id });
  });
  for (const k of kernels) precompile(g, madeUpShaders(k, variables));
}

/**
 * The leading columns through the last column of the declared key that ends soonest (undefined: no key short of
 * every column). While the key holds no two rows share them, so rows sorted by them alone are sorted by every column
 * (and equal rows, which share them, lie together for the unique); where it does not, the load's key check fails
 * anyway. TPC-H lineitem's key (l_orderkey, l_linenumber) makes its load sort 4 words, not all 20 it keeps.
 */
export function keyPrefix(decl: RelationDecl): number[] | undefined {
  const ends = (decl.keys ?? []).filter((k) => k.columns.length < decl.columns.length).map((k) => Math.max(...k.columns) + 1);
  if (ends.length === 0) return undefined;
  return Array.from({ length: Math.min(...ends) }, (_, i) => i);
}

