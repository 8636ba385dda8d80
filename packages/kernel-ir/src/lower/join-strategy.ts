/**
 * How lowering runs a QP equi-join: sort-merge (sort each side by its keys unless canonical order already
 * does, then mergeJoin) or hash (build a table over one side, probe it with the other: no sorts before the
 * join). Both give the same rows in different orders; the join's consumer canonicalizes them either way.
 */
import type { Jumps, QpCommand, ScalarType } from '@vixen/queryplan';
import { successors } from '@vixen/queryplan';
import type { HashJoinColumn, KirKernelBody, VarId } from '../ir.js';

export const JOIN_STRATEGIES = ['sort-merge', 'hash', 'auto'] as const;
export type JoinStrategy = (typeof JOIN_STRATEGIES)[number];

type MapJoin = Extract<QpCommand, { kind: 'mapJoin' }>;
/** What lowering a join as a hash join reads of it (a QP mapJoin, or a KIR mergeJoin turned into one). */
export type EquiJoin = Pick<MapJoin, 'leftKeys' | 'rightKeys' | 'filter' | 'project'>;

export type JoinChoice = { kind: 'sort-merge' } | { kind: 'hash'; build: 'left' | 'right' };

/** Labels of blocks on a cycle of the CFG (of the plan or the kernel IR): the bodies of fixpoint loops. */
export function loopBlocks(blocks: ReadonlyArray<{ label: string; terminator: Jumps }>): Set<string> {
  const succ = new Map(blocks.map((b) => [b.label, successors(b.terminator)]));
  const onCycle = new Set<string>();
  for (const b of blocks) {
    const seen = new Set<string>();
    const stack = [...succ.get(b.label)!];
    while (stack.length > 0) {
      const l = stack.pop()!;
      if (l === b.label) {
        onCycle.add(l);
        break;
      }
      if (seen.has(l)) continue;
      seen.add(l);
      stack.push(...(succ.get(l) ?? []));
    }
  }
  return onCycle;
}

/** True when `keys` is exactly [0, 1, ..., keys.length-1]: canonical order already sorts by them. */
export function isPrefixIndices(keys: readonly number[]): boolean {
  return keys.every((c, i) => c === i);
}

/** True when the keys name every column of the side: a canonical (duplicate-free) side then has unique keys. */
function keysCoverAll(keys: readonly number[], arity: number): boolean {
  return new Set(keys).size === arity;
}

/**
 * `auto` hashes equi-joins outside fixpoint loops whose sort-merge form would sort at least one side; a join
 * both of whose sides are canonical by their keys already needs no sort, and merge join is then one pass.
 * Inside loops it keeps sort-merge: there the left side is usually a small delta whose sort is cheap, and a
 * hash table would be rebuilt every iteration (measured on llvmpipe only; revisit with GPU numbers).
 * Build side: the driver builds on whichever side has fewer rows when it runs (sizes are known only then);
 * this picks the orientation whose passes are generated ahead, and the one kept on a tie: a side whose keys
 * are all its columns (unique keys: no chains, and the probe's first pass, with room for one match per probe
 * row, always suffices), else the right side, in rule bodies the later atom, usually the base relation.
 */
export function chooseJoin(strategy: JoinStrategy, c: MapJoin, inLoop: boolean, leftArity: number, rightArity: number): JoinChoice {
  // A hash table needs a key; a cross product stays a merge join.
  if (c.leftKeys.length === 0 || strategy === 'sort-merge') return { kind: 'sort-merge' };
  if (strategy === 'auto') {
    const sameSide = c.left === c.right && c.leftKeys.join() === c.rightKeys.join();
    const needsSort = !isPrefixIndices(c.leftKeys) || (!sameSide && !isPrefixIndices(c.rightKeys));
    if (inLoop || !needsSort) return { kind: 'sort-merge' };
  }
  return { kind: 'hash', build: buildSide(c, leftArity, rightArity) };
}

/** The side a hash join builds on when the sizes are not known yet (see chooseJoin). */
export function buildSide(c: EquiJoin, leftArity: number, rightArity: number): 'left' | 'right' {
  return keysCoverAll(c.leftKeys, leftArity) && !keysCoverAll(c.rightKeys, rightArity) ? 'left' : 'right';
}

/** What lowering a hash join needs from the lowering in progress. */
export interface JoinLowering {
  columns(v: VarId): ScalarType[];
  temp(columns: ScalarType[]): VarId;
  launch(body: KirKernelBody): void;
}

/**
 * Lowers `c` as a hash join of `left` and `right`, returning the variable holding project(l ++ r) for matching
 * pairs passing the filter (not canonical): `output` when given, else a new temporary. A join whose projection
 * only picks columns writes them straight from the probe; otherwise it writes l ++ r and a mapFilter applies the
 * filter and projection.
 */
export function lowerHashJoin(lw: JoinLowering, c: EquiJoin, left: VarId, right: VarId, build: 'left' | 'right', output?: VarId): VarId {
  const leftArity = lw.columns(left).length;
  const sideOf = (col: number): HashJoinColumn => {
    const fromLeft = col < leftArity;
    const column = fromLeft ? col : col - leftArity;
    return { side: fromLeft === (build === 'left') ? 'build' : 'probe', column };
  };
  const join = (project: HashJoinColumn[], types: ScalarType[], into = lw.temp(types)): VarId => {
    lw.launch({
      kind: 'hashJoin',
      build: build === 'left' ? left : right,
      probe: build === 'left' ? right : left,
      output: into,
      buildKeys: build === 'left' ? c.leftKeys : c.rightKeys,
      probeKeys: build === 'left' ? c.rightKeys : c.leftKeys,
      project,
    });
    return into;
  };
  const picked = c.project.flatMap((e) => (e.kind === 'col' ? [e] : []));
  if (c.filter.length === 0 && picked.length === c.project.length) return join(picked.map((e) => sideOf(e.index)), picked.map((e) => e.type), output);
  const both = [...lw.columns(left), ...lw.columns(right)];
  const joined = join(both.map((_, i) => sideOf(i)), both);
  const mapped = output ?? lw.temp(c.project.map((e) => e.type));
  lw.launch({ kind: 'mapFilter', input: joined, output: mapped, filter: c.filter, project: c.project });
  return mapped;
}
