/**
 * Which columns of a value a kernel reads, and the kernel rewritten to read a narrower value holding only those:
 * shared by the passes that drop columns (narrow-columns for temporaries, narrow-base-relations for base
 * relations) and by fuse-pipelines (where a pipeline's row holds each input's columns).
 */
import { predicateOperands, type Expr, type ScalarType } from '@vixen/queryplan';
import { rowProbes, type KirKernel, type KirProgram, type VarId } from '../ir.js';
import { exprColumns, resegment, substitute, substitutePredicate } from './exprs.js';

/**
 * Columns of `v` that kernel `k` (a reader of `v`) needs, or undefined for all of them. The reads it names are
 * row by row: the kernel's output depends on each row's other columns in no way (kernels that compare or copy
 * whole rows need them all).
 */
export function columnsRead(p: KirProgram, k: KirKernel, v: VarId, sortNeeds: (k: Extract<KirKernel, { kind: 'sort' }>) => Set<number> | undefined): Set<number> | undefined {
  const cols = (es: readonly Expr[]): number[] => es.flatMap(exprColumns);
  switch (k.kind) {
    case 'aggregate':
      return new Set([...k.groupBy, ...k.aggregates.flatMap((a) => (a.column === undefined ? [] : [a.column]))]);
    case 'mapFilter':
      return new Set(cols([...k.filter.flatMap(predicateOperands), ...k.project]));
    case 'pipeline': {
      const sides = k.probes.flatMap((pr, j) => (pr.build === v ? [j] : []));
      if (sides.length > 1 || (sides.length === 1 && k.input === v)) return undefined;
      const all = cols([...[...k.filter, ...k.check].flatMap(predicateOperands), ...k.probes.flatMap((pr) => pr.probeKeys), ...k.project]);
      const { at, width } = segment(p, k, v);
      const pr = sides.length === 1 ? k.probes[sides[0]!]! : undefined;
      // A build side: its keys, its filter's columns and those of its row the check and projection read.
      const own = pr ? [...pr.buildKeys, ...cols((pr.buildFilter ?? []).flatMap(predicateOperands))] : [];
      return new Set([...own, ...all.filter((c) => c >= at && c < at + width).map((c) => c - at)]);
    }
    case 'hashJoin': {
      if (k.build === k.probe) return undefined;
      const side = k.build === v ? 'build' : 'probe';
      return new Set([...(side === 'build' ? k.buildKeys : k.probeKeys), ...k.project.filter((c) => c.side === side).map((c) => c.column)]);
    }
    case 'sort':
      return sortNeeds(k);
    case 'unique':
    case 'mergeJoin':
    case 'difference':
    case 'concat':
    case 'merge':
    case 'copy':
    case 'limit':
      return undefined;
  }
}

/** Where pipeline `k`'s row holds the row of `v` (its scanned row or one build side's): first column and width. */
export function segment(p: KirProgram, k: Extract<KirKernel, { kind: 'pipeline' }>, v: VarId, widthOf = (x: VarId): number => p.variables[x]!.columns.length): { at: number; width: number } {
  if (k.input === v) return { at: 0, width: widthOf(v) };
  let at = widthOf(k.input);
  for (const pr of k.probes) {
    // A negated probe's table is read for its keys alone: the row holds nothing of it.
    if (pr.build === v) return { at, width: pr.negated ? 0 : widthOf(v) };
    if (pr.negated) continue;
    at += widthOf(pr.build);
  }
  return { at, width: 0 };
}

/**
 * Kernel `r` reading `to` in place of `from` (of columns `fromColumns`): the columns of `from` it reads (`map`
 * keys; it must read no other) are at the positions `map` gives them in `to`, which has only those.
 */
export function readThrough(p: KirProgram, r: KirKernel, from: VarId, to: VarId, fromColumns: readonly ScalarType[], map: ReadonlyMap<number, number>): KirKernel {
  const c = (i: number): number => map.get(i)!;
  // The kept columns at their new positions, indexed by their old ones: substitute renumbers through it.
  const own: Expr[] = [];
  for (const [old, now] of map) own[old] = { kind: 'col', index: now, type: fromColumns[old]! };
  const sub = (e: Expr): Expr => substitute(e, own);
  switch (r.kind) {
    case 'mapFilter':
      return { ...r, input: to, filter: r.filter.map((f) => substitutePredicate(f, own)), project: r.project.map(sub) };
    case 'pipeline': {
      const widthOf = (x: VarId): number => (x === from ? fromColumns.length : p.variables[x]!.columns.length);
      const types = [r.input, ...rowProbes(r.probes).map((pr) => pr.build)].flatMap((x) => (x === from ? fromColumns : p.variables[x]!.columns));
      const { at, width } = segment(p, r, from, widthOf);
      const row = width === 0 ? undefined : resegment(types, at, width, map.size, (i) => map.get(i));
      const scanned = r.input === from;
      return {
        ...r,
        input: scanned ? to : r.input,
        filter: scanned ? r.filter.map((f) => substitutePredicate(f, own)) : r.filter,
        probes: r.probes.map((pr) =>
          scanned
            ? { ...pr, probeKeys: pr.probeKeys.map(sub) }
            : pr.build === from
              ? { ...pr, build: to, buildKeys: pr.buildKeys.map(c), ...(pr.buildFilter ? { buildFilter: pr.buildFilter.map((f) => substitutePredicate(f, own)) } : {}) }
              : pr,
        ),
        check: r.check.map((f) => substitutePredicate(f, row)),
        project: r.project.map((e) => substitute(e, row)),
      };
    }
    case 'aggregate':
      return { ...r, input: to, groupBy: r.groupBy.map(c), aggregates: r.aggregates.map((a) => (a.column === undefined ? a : { ...a, column: c(a.column) })) };
    case 'sort':
      return { ...r, input: to, keys: r.keys.map(c) };
    case 'hashJoin': {
      const side = r.build === from ? 'build' : 'probe';
      return side === 'build'
        ? { ...r, build: to, buildKeys: r.buildKeys.map(c), project: r.project.map((x) => (x.side === 'build' ? { ...x, column: c(x.column) } : x)) }
        : { ...r, probe: to, probeKeys: r.probeKeys.map(c), project: r.project.map((x) => (x.side === 'probe' ? { ...x, column: c(x.column) } : x)) };
    }
    default:
      throw new Error(`internal: narrowing what a ${r.kind} kernel reads`);
  }
}
