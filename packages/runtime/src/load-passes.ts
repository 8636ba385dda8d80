/**
 * The passes a relation's load runs (executor.ts loadInitialRelations): the columns its rows are sorted by, and
 * compiling its passes ahead (a first load otherwise compiles each stage's passes only when the stage comes).
 */
import type { KirVariable } from '@vixen/kernel-ir';
import { rowWords, type RelationDecl } from '@vixen/queryplan';
import type { GpuImpl } from './gpu/device.js';
import { rowsOrderPasses } from './gpu/kernels/rows-order.js';
import { sortPasses } from './gpu/kernels/sort.js';
import { loadShaders } from './canonical-load.js';
import { checkedByOrder } from './keys.js';
import { madeUpShaders, precompile } from './gpu/recorder.js';

/**
 * Starts compiling the passes that load a relation of `decl` (loadInitialRelations): its unique (or the rowsOrder pass
 * that finds rows sorted by a key prefix distinct), the projection to the columns kept and each key check's passes (a
 * rowsOrder, after a projection and sort of its own where the key is not of the leading columns), and its sort's and each key check's: only the passes a sort of `rows` (a
 * bound; default: many) runs, which for a load's radix sorts (loadShaders) are the same for every table (passes of
 * both sorts, compiled ahead, were half of a TPC-H load's). The dispatches find these pipelines; passes compiled for
 * other tables are not compiled again.
 */
export function precompileLoad(g: GpuImpl, decl: RelationDecl, rows?: number): void {
  const types = decl.columns.map((c) => c.type);
  const all = types.map((_, i) => i);
  const variables: KirVariable[] = [{ id: 0, name: decl.name, columns: types }];
  const sort = (input: number, keys: readonly number[]): void => {
    const shaders = loadShaders(g, { kind: 'sort', id: -1, input, output: input, keys: [...keys] }, variables);
    precompile(g, shaders, sortPasses(g, shaders, rows ?? Infinity, rowWords(variables[input]!.columns)));
  };
  const unique = (input: number): void => precompile(g, madeUpShaders({ kind: 'unique', id: -1, input, output: input }, variables));
  const project = (columns: readonly number[], output: number): void =>
    precompile(
      g,
      madeUpShaders(
        { kind: 'mapFilter', id: -1, input: 0, output, filter: [], project: columns.map((c) => ({ kind: 'col' as const, index: c, type: types[c]! })) },
        variables,
      ),
    );
  const prefix = keyPrefix(decl);
  sort(0, prefix ?? all);
  // Rows sorted by a key prefix are found distinct by one rowsOrder pass (canonicalOnDevice), others made unique.
  if (prefix) precompile(g, rowsOrderPasses());
  else unique(0);
  if (decl.deviceColumns) {
    variables.push({ id: 1, name: `${decl.name} kept`, columns: decl.deviceColumns.map((c) => types[c]!) });
    project(decl.deviceColumns, 1);
  }
  const sortedBy = (prefix ?? all).length;
  (decl.keys ?? []).forEach((key, k) => {
    if (key.columns.length === decl.columns.length) return;
    // Checked by one rowsOrder pass over the sorted rows (checkDeclaredKeys).
    if (checkedByOrder(key, sortedBy)) return precompile(g, rowsOrderPasses());
    const id = variables.length;
    variables.push({ id, name: `${decl.name} key ${k}`, columns: key.columns.map((c) => types[c]!) });
    project(key.columns, id);
    sort(id, key.columns.map((_, i) => i));
    precompile(g, rowsOrderPasses());
  });
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

