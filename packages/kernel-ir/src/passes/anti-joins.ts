/**
 * Anti-joins as negated probes. A negated atom lowers to `x := join l, n -> l's row; s := sort x; [u := unique s;]
 * d := difference l, s` (the rows of l with a partner in n, made canonical, then removed from l): a join, a sort
 * of its matches and a merge of two sorted sides (TPC-H Q13, Q16, Q22). Where the matches are read by this chain alone, the chain becomes
 * `t := pipeline l, absent from n; d := sort t`: one table over n's keys (of the rows the join's filter on n keeps),
 * one pass over l keeping the rows whose key it lacks. l is duplicate-free (a difference reads canonical values),
 * so the kept rows are too; the sort restores d's canonical order, and skip-unneeded-order drops it where nothing
 * needs that order; fuse-pipelines then folds l's producer and d's readers into the scan. The join may be a merge
 * join (its sides possibly sorted by its keys for it alone: the probe reads them unsorted), a hash join with l on
 * either side, or a hash join whose filter and projection a mapFilter of its rows applies (a constant of the
 * negated atom that is not a key). A negated atom without a key (its variables all anonymous: TPC-H Q14's
 * `!promoted[] = _`) joins on no columns: its probe has a key of no words, asking whether n has any row its filter
 * keeps. Inside fixpoint loops too, under every join strategy but sort-merge: there the
 * chain sorted the kept rows twice an iteration (for the join, then its matches), and the probe's table over the
 * negated relation (a lower stratum's, unchanged in the loop) is rebuilt each iteration instead.
 */
import { predicateOperands, unionOrigins, type Expr, type Predicate } from '@vixen/queryplan';
import type { KirBlock, KirCommand, KirKernel, KirProgram, PipelineProbe, VarId } from '../ir.js';
import { iota } from '../lower/from-plan.js';
import { exprColumns, substitute, substitutePredicate } from '../analysis/exprs.js';
import { liveOutSets } from '../analysis/liveness.js';
import { BlockReaders } from '../analysis/block-readers.js';
import type { KirPass } from '../compile.js';

export const antiJoins = { name: 'anti-joins', required: false, run } satisfies KirPass;

/** Whether `project` copies a row of `arity` columns as it is. */
const identity = (project: readonly Expr[], arity: number): boolean => project.length === arity && project.every((e, i) => e.kind === 'col' && e.index === i);

/** An equi-join as a merge join states it: rows of `left ++ right` with equal keys, filtered, projected. */
interface JoinView {
  left: VarId;
  right: VarId;
  leftKeys: number[];
  rightKeys: number[];
  filter: Predicate[];
  project: Expr[];
}

/** Join `j` (a merge or hash join; under a mapFilter `map` of its rows, that too) as a JoinView. */
function joinView(p: KirProgram, j: KirKernel, map?: Extract<KirKernel, { kind: 'mapFilter' }>): JoinView | undefined {
  let view: JoinView;
  if (j.kind === 'mergeJoin') view = { left: j.left, right: j.right, leftKeys: j.leftKeys, rightKeys: j.rightKeys, filter: j.filter, project: j.project };
  else if (j.kind === 'hashJoin') {
    const probe = p.variables[j.probe]!.columns;
    const build = p.variables[j.build]!.columns;
    const project = j.project.map((c): Expr => (c.side === 'probe' ? { kind: 'col', index: c.column, type: probe[c.column]! } : { kind: 'col', index: probe.length + c.column, type: build[c.column]! }));
    view = { left: j.probe, right: j.build, leftKeys: j.probeKeys, rightKeys: j.buildKeys, filter: [], project };
  } else return undefined;
  if (!map) return view;
  return { ...view, filter: [...view.filter, ...map.filter.map((f) => substitutePredicate(f, view.project))], project: map.project.map((e) => substitute(e, view.project)) };
}

/**
 * The negated probe of `kept`'s rows that `view` stands for, when it writes exactly the rows of `kept` (on either
 * side) that have a partner: each kept row (duplicate-free) once, whole, its filter reading only the other side.
 */
function negatedProbe(p: KirProgram, view: JoinView, kept: 'left' | 'right'): PipelineProbe | undefined {
  const [k, n] = kept === 'left' ? [view.left, view.right] : [view.right, view.left];
  const [probeKeys, buildKeys] = kept === 'left' ? [view.leftKeys, view.rightKeys] : [view.rightKeys, view.leftKeys];
  const leftArity = p.variables[view.left]!.columns.length;
  const keptAt = kept === 'left' ? 0 : leftArity;
  const negAt = kept === 'left' ? leftArity : 0;
  const keptColumns = p.variables[k]!.columns;
  const negColumns = p.variables[n]!.columns;
  const project = view.project.map((e) => (e.kind === 'col' && e.index >= keptAt && e.index < keptAt + keptColumns.length ? { ...e, index: e.index - keptAt } : undefined));
  if (project.some((e) => e === undefined) || !identity(project as Expr[], keptColumns.length)) return undefined;
  if (view.filter.flatMap(predicateOperands).flatMap(exprColumns).some((c) => c < negAt || c >= negAt + negColumns.length)) return undefined;
  // The filter over the negated row alone: its columns renumbered from 0.
  const shift: Expr[] = [];
  for (const [c, type] of negColumns.entries()) shift[negAt + c] = { kind: 'col', index: c, type };
  const buildFilter: Predicate[] = view.filter.map((f) => substitutePredicate(f, shift));
  const col = (c: number): Expr => ({ kind: 'col', index: c, type: keptColumns[c]! });
  return { build: n, buildKeys, probeKeys: probeKeys.map(col), ...(buildFilter.length > 0 ? { buildFilter } : {}), negated: true };
}

function run(p: KirProgram): KirProgram {
  const liveOut = liveOutSets(p);
  const kernels = [...p.kernels];
  const variables = [...p.variables];
  let changed = false;
  const blocks = p.blocks.map((b): KirBlock => {
    const rd = new BlockReaders(p, b, liveOut.get(b.label)!);
    /** The last write of `v` before command `i`, when `i` alone reads it: its command index and kernel. */
    const soleWriter = (i: number, v: VarId): { at: number; k: KirKernel } | undefined => {
      for (let n = i - 1; n >= 0; n--) {
        const k = rd.kernelAt(n);
        if (k?.output === v) return rd.readers(n)?.join() === String(i) ? { at: n, k } : undefined;
      }
      return undefined;
    };
    let rewritten = false;
    const commands = b.commands.flatMap((c, i): KirCommand[] => {
      const d = rd.kernelAt(i);
      if (d?.kind !== 'difference') return [c];
      // Back from the difference's right side through the sorts and uniques that canonicalize the matches.
      const chain: number[] = [];
      let joined = soleWriter(i, d.right);
      while (joined && (joined.k.kind === 'sort' || joined.k.kind === 'unique')) {
        chain.unshift(joined.k.id);
        joined = soleWriter(joined.at, joined.k.input);
      }
      if (!joined) return [c];
      // A join, or a mapFilter of a hash join's rows (the join's filter and projection, lowered apart).
      const map = joined.k.kind === 'mapFilter' ? joined.k : undefined;
      const join = map ? soleWriter(joined.at, map.input) : joined;
      const view = join && joinView(p, join.k, map);
      if (!join || !view) return [c];
      /** What the join reads for side `v`: the input of a sort only the join reads (a merge join's), else `v`; and since when. */
      const unsorted = (v: VarId): { v: VarId; at: number } => {
        const s = rd.soleSort(join.at, v);
        return s && !rd.clobbers(s.at, i, s.sort.input) ? { v: s.sort.input, at: s.at } : { v, at: join.at };
      };
      const [l, r] = [unsorted(view.left), unsorted(view.right)];
      const kept = l.v === d.left ? 'left' : r.v === d.left ? 'right' : undefined;
      const probe = kept && negatedProbe(p, { ...view, left: l.v, right: r.v }, kept);
      const from = Math.min(l.at, r.at);
      if (!probe || rd.clobbers(from, i, d.left) || rd.clobbers(from, i, probe.build)) return [c];
      const columns = variables[d.output]!.columns;
      const rows = variables.length;
      variables.push({ id: rows, name: `%k${rows}`, columns: [...columns] });
      const origin = { ...(d.origin ? { origin: d.origin } : {}), ...unionOrigins(join.k.rules, map?.rules, d.rules) };
      const fused = [join.k.id, ...(map ? [map.id] : []), ...chain, d.id];
      const project = columns.map((type, index): Expr => ({ kind: 'col', index, type }));
      kernels[d.id] = { kind: 'pipeline', id: d.id, ...origin, input: d.left, output: rows, filter: [], probes: [probe], check: [], project, fused };
      const order: KirKernel = { kind: 'sort', id: kernels.length, ...origin, input: rows, output: d.output, keys: iota(columns.length) };
      kernels.push(order);
      rewritten = true;
      return [c, { kind: 'launch', kernel: order.id }];
    });
    changed ||= rewritten;
    return rewritten ? { ...b, commands } : b;
  });
  return changed ? { ...p, kernels, variables, blocks } : p;
}
