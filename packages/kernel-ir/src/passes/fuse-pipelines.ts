/**
 * Pipeline fusion (Crystal's tile-at-a-time pipelines; Red Fox §4 kernel fusion): a hash join whose probe side
 * `t` is produced by a mapFilter, a hash join or a pipeline that only this join reads becomes one `pipeline`
 * kernel: scan the producer's input, filter, look the row up in every build table, project. No intermediate
 * between them is written. A mapFilter of a hash join's or pipeline's rows joins it too (its predicates on build
 * rows checked per combination of matches). Repeated (fixpoint) it absorbs a whole chain `mapFilter -> hashJoin -> hashJoin ...`
 * (the star-schema shape: a fact table filtered and probed against dimension tables). A probe's keys must be
 * computable from the scanned row alone (not from an earlier probe's build row), so the lookups are independent.
 * A hashed aggregate (hash-aggregates.ts: a pipeline that only aggregates its input) absorbs the producer of its
 * rows the same way, so select -> probe -> aggregate is one kernel and the joined rows are never written, and so does
 * an anti-join (anti-joins.ts: a pipeline of negated probes), whose lookups then run before the chain's own. Sorts,
 * uniques, sorted aggregates and hash builds stay separate kernels: they need all their input first. A build side
 * that a column-picking mapFilter makes for the pipeline alone (a dimension's select) goes into the probe as its
 * build filter: the table is built over the mapFilter's input, from the rows the filter keeps.
 */
import { predicateOperands, unionOrigins, type Expr } from '@vixen/queryplan';
import { kernelInputs, rowProbes, type KirKernel, type KirProgram } from '../ir.js';
import { exprColumns, resegment, substitute, substitutePredicate } from '../analysis/exprs.js';
import { fuseWithProducers } from '../analysis/liveness.js';
import { segment } from '../analysis/column-reads.js';
import type { KirPass } from '../compile.js';

type Pipeline = Extract<KirKernel, { kind: 'pipeline' }>;
type HashJoin = Extract<KirKernel, { kind: 'hashJoin' }>;
type MapFilter = Extract<KirKernel, { kind: 'mapFilter' }>;

/** `k` as a pipeline (its row: the scanned row, then its build rows), when it can start or be one. */
function asPipeline(p: KirProgram, k: KirKernel): Pipeline | undefined {
  const origin = { ...(k.origin ? { origin: k.origin } : {}), ...unionOrigins(k.rules) };
  switch (k.kind) {
    case 'pipeline':
      // An aggregating pipeline writes groups, not the rows a following kernel could take over.
      return k.aggregate ? undefined : k;
    case 'mapFilter':
      return { kind: 'pipeline', id: k.id, ...origin, input: k.input, output: k.output, filter: k.filter, probes: [], check: [], project: k.project, fused: k.fused ?? [k.id] };
    case 'hashJoin': {
      const probe = p.variables[k.probe]!.columns;
      const build = p.variables[k.build]!.columns;
      const project = k.project.map((c): Expr => {
        const index = c.side === 'probe' ? c.column : probe.length + c.column;
        return { kind: 'col', index, type: (c.side === 'probe' ? probe : build)[c.column]! };
      });
      const probeKeys = k.probeKeys.map((c): Expr => ({ kind: 'col', index: c, type: probe[c]! }));
      return { kind: 'pipeline', id: k.id, ...origin, input: k.probe, output: k.output, filter: [], probes: [{ build: k.build, buildKeys: k.buildKeys, probeKeys }], check: [], project, fused: [k.id] };
    }
    default:
      return undefined;
  }
}

/** `first` (a pipeline writing join's probe side) followed by `join`, or undefined when a key needs a build row. */
function extend(p: KirProgram, first: Pipeline, join: HashJoin): Pipeline | undefined {
  const scanned = p.variables[first.input]!.columns.length;
  const probeKeys = join.probeKeys.map((c) => substitute(first.project[c]!));
  if (probeKeys.some((e) => exprColumns(e).some((c) => c >= scanned))) return undefined;
  // The join's build row follows the builds the pipeline already has.
  const at = scanned + rowProbes(first.probes).reduce((n, pr) => n + p.variables[pr.build]!.columns.length, 0);
  const build = p.variables[join.build]!.columns;
  const project = join.project.map((c): Expr => (c.side === 'probe' ? substitute(first.project[c.column]!) : { kind: 'col', index: at + c.column, type: build[c.column]! }));
  return {
    ...first,
    id: join.id,
    ...(join.origin ? { origin: join.origin } : {}),
    ...unionOrigins(first.rules, join.rules),
    output: join.output,
    filter: first.filter.map((f) => substitutePredicate(f)),
    probes: [...first.probes, { build: join.build, buildKeys: join.buildKeys, probeKeys }],
    check: first.check.map((f) => substitutePredicate(f)),
    project,
    fused: [...first.fused, join.id],
  };
}

/**
 * `first` followed by a mapFilter of its rows: the mapFilter's predicates on the scanned row alone filter it before
 * the lookups (which changes nothing), the others check each combination of matches.
 */
function absorb(p: KirProgram, first: Pipeline, map: MapFilter): Pipeline {
  const scanned = p.variables[first.input]!.columns.length;
  const predicates = map.filter.map((f) => substitutePredicate(f, first.project));
  const early = (f: (typeof predicates)[number]): boolean => predicateOperands(f).flatMap(exprColumns).every((c) => c < scanned);
  return {
    ...first,
    id: map.id,
    ...(map.origin ? { origin: map.origin } : {}),
    ...unionOrigins(first.rules, map.rules),
    output: map.output,
    filter: [...first.filter.map((f) => substitutePredicate(f)), ...predicates.filter(early)],
    probes: first.probes.map((pr) => ({ ...pr, probeKeys: pr.probeKeys.map((e) => substitute(e)) })),
    check: [...first.check.map((f) => substitutePredicate(f)), ...predicates.filter((f) => !early(f))],
    project: map.project.map((e) => substitute(e, first.project)),
    fused: [...first.fused, ...(map.fused ?? [map.id])],
  };
}

/**
 * `first` followed by a pipeline of its rows that only filters them (a hashed aggregate, an anti-join): that
 * pipeline's filter and projection (over those rows) absorbed, then its negated probes, whose keys must come from
 * `first`'s scanned row (they are looked up before its probes), and its aggregation.
 */
function absorbPipeline(p: KirProgram, first: Pipeline, next: Pipeline): Pipeline | undefined {
  const scanned = p.variables[first.input]!.columns.length;
  const negated = next.probes.map((pr) => ({ ...pr, probeKeys: pr.probeKeys.map((e) => substitute(e, first.project)) }));
  if (negated.some((pr) => pr.probeKeys.some((e) => exprColumns(e).some((c) => c >= scanned)))) return undefined;
  const origin = { ...(next.origin ? { origin: next.origin } : {}), ...unionOrigins(next.rules) };
  const map: MapFilter = { kind: 'mapFilter', id: next.id, ...origin, input: next.input, output: next.output, filter: next.filter, project: next.project, fused: next.fused };
  const fused = absorb(p, first, map);
  return { ...fused, probes: [...fused.probes, ...negated], ...(next.aggregate ? { aggregate: next.aggregate } : {}) };
}

/**
 * `pipe` with probe `j`'s build side, made by `map` (which only picks columns), built from `map`'s input where
 * `map`'s filter holds: the pipeline's row then holds that input's row where it held `map`'s output row.
 */
function absorbBuildSelect(p: KirProgram, pipe: Pipeline, j: number, map: MapFilter): Pipeline | undefined {
  const picked: number[] = [];
  for (const e of map.project) {
    if (e.kind !== 'col') return undefined;
    picked.push(e.index);
  }
  const pr = pipe.probes[j]!;
  // The pipeline reads pr.build once (fusePipelines checks), so its segment is probe j's.
  const { at } = segment(p, pipe, pr.build);
  const columns = p.variables[map.input]!.columns;
  const types = [...p.variables[pipe.input]!.columns, ...rowProbes(pipe.probes).flatMap((q) => p.variables[q.build]!.columns)];
  // A negated probe's build row is not part of the pipeline's row.
  const row = pr.negated ? undefined : resegment(types, at, picked.length, columns.length, (c) => picked[c]);
  const buildFilter = [...map.filter.map((f) => substitutePredicate(f)), ...(pr.buildFilter ?? []).map((f) => substitutePredicate(f, map.project))];
  return {
    ...pipe,
    ...unionOrigins(pipe.rules, map.rules),
    filter: pipe.filter.map((f) => substitutePredicate(f)),
    probes: pipe.probes.map((q, n) => ({
      ...q,
      probeKeys: q.probeKeys.map((e) => substitute(e)),
      ...(n === j ? { build: map.input, buildKeys: q.buildKeys.map((k) => picked[k]!), buildFilter } : {}),
    })),
    check: pipe.check.map((f) => substitutePredicate(f, row)),
    project: pipe.project.map((e) => substitute(e, row)),
    fused: [...pipe.fused, ...(map.fused ?? [map.id])],
  };
}

export const fusePipelines = { name: 'fuse-pipelines', required: false, run } satisfies KirPass;

function run(p: KirProgram): KirProgram {
  return fuseWithProducers(p, (next, producerOf) => {
    if (next.kind === 'pipeline') {
      for (const [q, pr] of next.probes.entries()) {
        // A side the pipeline reads twice keeps its producer for the other read.
        if (kernelInputs(next).filter((v) => v === pr.build).length !== 1) continue;
        const map = producerOf(pr.build);
        const fused = map?.kind === 'mapFilter' ? absorbBuildSelect(p, next, q, map) : undefined;
        if (fused) return fused;
      }
    }
    // A join extends a chain ending in its probe side; a mapFilter extends one that already probes; a pipeline
    // that only filters its rows (an aggregate, anti-joins) extends any.
    const filtering = next.kind === 'pipeline' && next.probes.every((pr) => pr.negated && pr.build !== next.input);
    const t = next.kind === 'hashJoin' && next.build !== next.probe ? next.probe : next.kind === 'mapFilter' || filtering ? next.input : undefined;
    const before = t === undefined ? undefined : producerOf(t);
    if (!before) return undefined;
    // Consecutive mapFilters are fuse-map-filters' work.
    const first = next.kind !== 'mapFilter' || before.kind !== 'mapFilter' ? asPipeline(p, before) : undefined;
    return !first ? undefined : next.kind === 'hashJoin' ? extend(p, first, next) : next.kind === 'mapFilter' ? absorb(p, first, next) : filtering ? absorbPipeline(p, first, next) : undefined;
  });
}
