/**
 * Sort-merge joins that sort a side only for themselves become hash joins, outside fixpoint loops. Lowering
 * chose sort-merge where both sides were canonical relations, sorted by the join keys for free; but a relation
 * that keys prove duplicate-free is no longer sorted by a unique, and simplify-kernels leaves a sort that exists
 * only for the join (TPC-H Q7 sorted 18M joined lineitem rows by all their columns, 19 ms on the H100, to merge
 * them with orders). `%s := sort x; j := mergeJoin %s, y` (%s read by the join alone) becomes a hash join of x
 * and y, its table over x; remove-dead-kernels drops the sort, and fuse-pipelines can fold the probe into y's
 * producer. Both joins give the same rows in no particular order (properties.ts). A merge join whose rows only a
 * hashed aggregate reads becomes a hash join too, so that the aggregate absorbs it (Q10's revenue per customer: the
 * join of the quarter's orders with the returned lines, summed as it probes). Inside loops merge joins stay,
 * as join-strategy.ts says.
 */
import { unionOrigins, type ScalarType } from '@vixen/queryplan';
import type { KirBlock, KirCommand, KirKernel, KirKernelBody, KirProgram, VarId } from '../ir.js';
import { buildSide, loopBlocks, lowerHashJoin } from '../lower/join-strategy.js';
import { liveOutSets } from '../analysis/liveness.js';
import { BlockReaders } from '../analysis/block-readers.js';
import { blockEntryStates, commandStates, propsOf } from '../analysis/properties.js';
import type { KirPass } from '../compile.js';

export const hashJoins = { name: 'hash-joins', required: false, run } satisfies KirPass;

/**
 * Whether only hashed aggregates (pipelines that aggregate and probe nothing) read what command `i` writes: as a
 * hash join, fuse-pipelines folds the join into the aggregate, and its rows are never written.
 */
function aggregatedOnly(rd: BlockReaders, i: number): boolean {
  return rd.readOnlyBy(i, (r) => r?.kind === 'pipeline' && r.aggregate !== undefined && r.probes.length === 0);
}

function run(p: KirProgram): KirProgram {
  const loops = loopBlocks(p.blocks);
  const liveOut = liveOutSets(p);
  const kernels = [...p.kernels];
  const variables = [...p.variables];
  let changed = false;
  const entry = blockEntryStates(p);
  const blocks = p.blocks.map((b): KirBlock => {
    if (loops.has(b.label)) return b;
    const rd = new BlockReaders(p, b, liveOut.get(b.label)!);
    // Properties before each command (an unreachable block: none known).
    const states = commandStates(p, entry, b);
    /** The input of the sort writing `v` for command `i` alone, when nothing writes that input in between. */
    const sortedFor = (i: number, v: VarId): VarId | undefined => {
      const found = rd.soleSort(i, v);
      return found && !rd.clobbers(found.at, i, found.sort.input) ? found.sort.input : undefined;
    };
    let hashed = false;
    const commands = b.commands.flatMap((c, i): KirCommand[] => {
      const k = rd.kernelAt(i);
      if (k?.kind !== 'mergeJoin' || k.leftKeys.length === 0 || k.left === k.right) return [c];
      const left = sortedFor(i, k.left);
      const right = sortedFor(i, k.right);
      const aggregated = left === undefined && right === undefined;
      if (aggregated && !aggregatedOnly(rd, i)) return [c];
      hashed = true;
      const launched: KirCommand[] = [];
      const lw = {
        columns: (v: VarId) => variables[v]!.columns,
        temp: (columns: ScalarType[]): VarId => {
          const id = variables.length;
          variables.push({ id, name: `%k${id}`, columns: [...columns] });
          return id;
        },
        // The first kernel takes the merge join's id (its origin kept), a filter after it a new one.
        launch: (body: KirKernelBody): void => {
          const id = launched.length === 0 ? k.id : kernels.length;
          const origin = { ...(k.origin ? { origin: k.origin } : {}), ...unionOrigins(k.rules) };
          kernels[id] = { ...body, id, ...origin } as KirKernel;
          launched.push({ kind: 'launch', kernel: id });
        },
      };
      const [l, r] = [left ?? k.left, right ?? k.right];
      // The table goes over the side that was to be sorted: the other one, sorted already, may be a whole base
      // relation (Q5's lineitem, 60M rows), better scanned once than hashed.
      // For an aggregate, the table goes over the side its keys identify rows of (one match per probe row, no
      // chains: in Q10 the quarter's orders, while the aggregate scans the returned lines).
      const unique = (v: VarId, keys: readonly number[]): boolean => (states && propsOf(states[i]!, v).key?.every((x) => keys.includes(x))) ?? false;
      const keyed = aggregated && unique(l, k.leftKeys) !== unique(r, k.rightKeys) ? (unique(l, k.leftKeys) ? 'left' : 'right') : undefined;
      const build = keyed ?? (left === undefined ? 'right' : right === undefined ? 'left' : buildSide(k, variables[l]!.columns.length, variables[r]!.columns.length));
      lowerHashJoin(lw, k, l, r, build, k.output);
      return launched;
    });
    changed ||= hashed;
    return hashed ? { ...b, commands } : b;
  });
  return changed ? { ...p, kernels, variables, blocks } : p;
}
