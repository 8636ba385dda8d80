/**
 * Anti-joins as negated probes. A negated atom lowers to `x := join l, n -> l's row; s := sort x; [u := unique s;]
 * d := difference l, s` (the rows of l with a partner in n, made canonical, then removed from l): a join, a sort
 * of its matches and a merge of two sorted sides (TPC-H Q13, Q16, Q22). Where the matches are read by this chain alone, the chain becomes
 * `t := pipeline l, absent from n; d := sort t`: one table over n's keys (of the rows the join's filter on n keeps),
 * one pass over l keeping the rows whose key it lacks. l is duplicate-free (a difference reads canonical values),
 * so the kept rows are too; the sort restores d's canonical order, and skip-unneeded-order drops it where nothing
 * needs that order; fuse-pipelines then folds l's producer and d's readers into the scan. Outside fixpoint loops
 * under the `auto` join strategy, as hash-joins.ts does for joins, everywhere under `hash`.
 */
import { predicateOperands, unionOrigins, type Expr, type Predicate } from '@vixen/queryplan';
import type { KirBlock, KirCommand, KirKernel, KirProgram, PipelineProbe, VarId } from '../ir.js';
import { iota } from '../lower/from-plan.js';
import { loopBlocks } from '../lower/join-strategy.js';
import { exprColumns, substitutePredicate } from '../analysis/exprs.js';
import { liveOutSets } from '../analysis/liveness.js';
import { BlockReaders } from '../analysis/block-readers.js';
import type { KirPass, KirPassContext } from '../compile.js';

export const antiJoins = { name: 'anti-joins', required: false, run } satisfies KirPass;

/** Whether `project` copies a row of `arity` columns as it is. */
const identity = (project: readonly Expr[], arity: number): boolean => project.length === arity && project.every((e, i) => e.kind === 'col' && e.index === i);

/**
 * The negated probe of `left`'s rows that join `j` stands for, when `j` writes exactly the rows of `left` that have
 * a partner: each left row (duplicate-free) once, whole, its filter reading only the other side.
 */
function negatedProbe(p: KirProgram, j: KirKernel, left: VarId): PipelineProbe | undefined {
  const arity = p.variables[left]!.columns.length;
  const col = (c: number): Expr => ({ kind: 'col', index: c, type: p.variables[left]!.columns[c]! });
  if (j.kind === 'mergeJoin') {
    if (j.left !== left || j.right === left || j.leftKeys.length === 0 || !identity(j.project, arity)) return undefined;
    if (j.filter.flatMap(predicateOperands).flatMap(exprColumns).some((c) => c < arity)) return undefined;
    // The filter over the right row alone: its columns renumbered from 0.
    const shift: Expr[] = [];
    for (const [c, type] of p.variables[j.right]!.columns.entries()) shift[arity + c] = { kind: 'col', index: c, type };
    const buildFilter: Predicate[] = j.filter.map((f) => substitutePredicate(f, shift));
    return { build: j.right, buildKeys: j.rightKeys, probeKeys: j.leftKeys.map(col), ...(buildFilter.length > 0 ? { buildFilter } : {}), negated: true };
  }
  if (j.kind === 'hashJoin') {
    if (j.probe !== left || j.build === left || j.project.length !== arity || !j.project.every((c, i) => c.side === 'probe' && c.column === i)) return undefined;
    return { build: j.build, buildKeys: j.buildKeys, probeKeys: j.probeKeys.map(col), negated: true };
  }
  return undefined;
}

function run(p: KirProgram, ctx: KirPassContext): KirProgram {
  const loops = ctx.joinStrategy === 'hash' ? new Set<string>() : loopBlocks(p.blocks);
  const liveOut = liveOutSets(p);
  const kernels = [...p.kernels];
  const variables = [...p.variables];
  let changed = false;
  const blocks = p.blocks.map((b): KirBlock => {
    if (loops.has(b.label)) return b;
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
      const probe = joined && negatedProbe(p, joined.k, d.left);
      if (!joined || !probe || rd.clobbers(joined.at, i, d.left) || rd.clobbers(joined.at, i, probe.build)) return [c];
      const columns = variables[d.output]!.columns;
      const rows = variables.length;
      variables.push({ id: rows, name: `%k${rows}`, columns: [...columns] });
      const origin = { ...(d.origin ? { origin: d.origin } : {}), ...unionOrigins(joined.k.rules, d.rules) };
      const fused = [joined.k.id, ...chain, d.id];
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
