/**
 * Kernel IR (Red Fox §3.4): a CFG of side-effect-free kernels on managed variables.
 * Each kernel reads whole variables and writes one output variable (replacing its old value).
 * On the device a variable is a row-major buffer of u32 words (int64 = 2 words: lo, hi;
 * string = 1 word: an order-preserving dictionary id) plus a row count.
 *
 * Canonical form: every variable that holds a QP relation is kept sorted by all its words
 * (lexicographic, unsigned) and duplicate-free. Temporaries need not be.
 */
import type { Aggregate, Constraint, Expr, OutputOrder, Predicate, RelationDecl, Row, RuleOrigin, ScalarType } from '@vixen/queryplan';

export type VarId = number;

/** One output column of a hash join: a column of the build or the probe row. */
export interface HashJoinColumn {
  side: 'build' | 'probe';
  column: number;
}

/**
 * One hash probe of a pipeline kernel: a table over `build` keyed by its columns `buildKeys`, looked up with the
 * words of `probeKeys` (expressions over the pipeline's input row, one per build key, of equal types). With
 * `buildFilter` (predicates over a build row), the table holds only the build rows where it holds: the select of
 * a dimension runs inside the table's build, not as a kernel of its own.
 */
export interface PipelineProbe {
  build: VarId;
  buildKeys: number[];
  probeKeys: Expr[];
  buildFilter?: Predicate[];
  /**
   * An anti-join (a negated atom): the row goes on only where the table holds no row of its key, and the probe
   * adds no columns to the pipeline's row (there is no build row to read).
   */
  negated?: true;
}

/** The build sides whose rows a pipeline's row holds after the scanned row, in order: its probes that are not negated. */
export function rowProbes(probes: readonly PipelineProbe[]): PipelineProbe[] {
  return probes.filter((pr) => !pr.negated);
}

/**
 * A pipeline's hashed aggregation (Crystal's fused group-by): its projected rows are not written but aggregated
 * into a device hash table keyed by the `groupBy` columns of those rows (QP `aggregate` semantics; `aggregates`
 * read columns of the projected row). The output is one row per group, group columns then aggregates, in no
 * particular order. Only aggregates whose result does not depend on the order of the rows (see
 * hash-aggregates.ts): no float32 sums or averages, min and max of one-word types other than float32.
 */
export interface PipelineAggregate {
  groupBy: number[];
  aggregates: Aggregate[];
}

export interface KirVariable {
  id: VarId;
  name: string;
  columns: ScalarType[];
  /** QP relation this variable holds, if any (temporaries have none). */
  relation?: string;
}

/** Where a kernel came from: the QP block and the index of the command in it that it implements. */
export interface KirOrigin {
  block: string;
  command: number;
}

/**
 * `origin` is absent on kernels not lowered from a plan command (hand-built or older compiled programs). `rules`: the
 * source rules of the plan commands the kernel implements (fusion unions them), for debugging views.
 */
export type KirKernel = { origin?: KirOrigin; rules?: RuleOrigin[] } & (
  /**
   * output := project(t) for t in input where filter(t). Output order follows input order, unless `unordered`
   * (set where the results depend only on the output's multiset of rows): then rows may come in any order.
   * `fused`: the ids (in the program lowering gave) of the mapFilter kernels fusion merged into this one.
   */
  | { kind: 'mapFilter'; id: number; input: VarId; output: VarId; filter: Predicate[]; project: Expr[]; fused?: number[]; unordered?: true }
  /** output := input sorted by the words of `keys` (column indices, in this order), unsigned lexicographic. */
  | { kind: 'sort'; id: number; input: VarId; output: VarId; keys: number[] }
  /**
   * output := input with adjacent equal rows removed (input sorted by all columns). `hashed`: the input in any
   * order, one row of each set of equal rows kept (found through a hash table), kept rows in input order.
   */
  | { kind: 'unique'; id: number; input: VarId; output: VarId; hashed?: boolean }
  /**
   * Sort-merge join: right sorted by rightKeys (as `sort` orders them), searched by each left row (any order;
   * sorted by leftKeys, neighbouring rows search alike).
   * output := project(l ++ r) for matching pairs where filter(l ++ r). Empty keys: cross product.
   */
  | {
      kind: 'mergeJoin';
      id: number;
      left: VarId;
      right: VarId;
      output: VarId;
      leftKeys: number[];
      rightKeys: number[];
      filter: Predicate[];
      project: Expr[];
    }
  /**
   * Hash join: a table over `build` keyed by `buildKeys`, probed by every `probe` row (keys `probeKeys`,
   * non-empty, equal words). output := `project` of each matching (probe, build) pair, in no particular order.
   */
  | {
      kind: 'hashJoin';
      id: number;
      build: VarId;
      probe: VarId;
      output: VarId;
      buildKeys: number[];
      probeKeys: number[];
      project: HashJoinColumn[];
    }
  /**
   * Fused pipeline (Crystal-style, one pass over `input`): for each input row t where `filter(t)`, that no negated
   * probe's table holds the key of, and each combination of build rows b1..bn of the other probes (bj a row of
   * probes[j].build whose `buildKeys` equal `probeKeys[j](t)`)
   * where `check(t ++ b1 ++ ... ++ bn)`, output := `project(t ++ b1 ++ ... ++ bn)` (columns: t's, then b1's, ...),
   * in no particular order; with `aggregate`, output := those rows aggregated. `fused`: the ids (in the program
   * lowering gave) of the kernels it stands for (one, for an aggregate that only hashes).
   */
  | {
      kind: 'pipeline';
      id: number;
      input: VarId;
      output: VarId;
      filter: Predicate[];
      probes: PipelineProbe[];
      check: Predicate[];
      project: Expr[];
      aggregate?: PipelineAggregate;
      fused: number[];
    }
  /** output := left − right; both canonical. Output canonical. */
  | { kind: 'difference'; id: number; left: VarId; right: VarId; output: VarId }
  /** output := left rows followed by right rows (same columns). */
  | { kind: 'concat'; id: number; left: VarId; right: VarId; output: VarId }
  /**
   * Sorted merge: left and right both sorted by the words of `keys` (as `sort` orders them); output := all rows
   * of both (duplicates kept, left first among equal keys), sorted by `keys`. O(n + m), no re-sort.
   */
  | { kind: 'merge'; id: number; left: VarId; right: VarId; output: VarId; keys: number[] }
  /** output := input */
  | { kind: 'copy'; id: number; input: VarId; output: VarId }
  /**
   * Reduce by key: input sorted so that rows of one group (equal `groupBy` columns) are adjacent; output :=
   * per group its `groupBy` columns then `aggregates` (QP `aggregate` semantics). Output canonical.
   */
  | { kind: 'aggregate'; id: number; input: VarId; output: VarId; groupBy: number[]; aggregates: Aggregate[] }
  /**
   * output := the first `count` rows of input (duplicate-free, in any order) in the typed order `keys` (ties: all
   * columns ascending), as QP `limit`. Output canonical. The runtime runs it on the device (a top-k), or for
   * float32 rows on the host (it reads the input back).
   */
  | { kind: 'limit'; id: number; input: VarId; output: VarId; keys: OutputOrder['keys']; count: number }
);

/** A kernel without its id (lowering assigns ids); `Omit` distributed over the union keeps each variant's fields. */
export type KirKernelBody = KirKernel extends infer K ? (K extends KirKernel ? Omit<K, 'id'> : never) : never;

export type KirCommand =
  | { kind: 'launch'; kernel: number }
  /** Variables whose values are dead after this point: their buffers go back to the pool. */
  | { kind: 'free'; vars: VarId[] }
  /** var := ∅ */
  | { kind: 'clear'; var: VarId };

export type KirTerminator =
  | { kind: 'jump'; target: string }
  /** ifTrue when every named variable is empty. */
  | { kind: 'branch'; condition: { kind: 'empty'; vars: VarId[] }; ifTrue: string; ifFalse: string }
  | { kind: 'halt' };

export interface KirBlock {
  label: string;
  commands: KirCommand[];
  terminator: KirTerminator;
}

export interface KirProgram {
  /** QP declarations, carried so the runtime can load facts and print outputs without the front end. */
  relations: RelationDecl[];
  /** Variable holding each QP relation. */
  relationVars: Record<string, VarId>;
  facts: Record<string, Row[]>;
  variables: KirVariable[];
  /** kernels[i].id === i */
  kernels: KirKernel[];
  blocks: KirBlock[];
  entry: string;
  /** From the plan: output orders and constraints, applied and checked by the runtime after evaluation. */
  orders?: Record<string, OutputOrder>;
  constraints?: Constraint[];
  /**
   * Relations the KIR passes assumed empty when the program starts (derived and temp relations without inline
   * facts): the runtime refuses outside rows for them. Absent: nothing assumed.
   */
  emptyOnEntry?: string[];
}

export function kernelInputs(k: KirKernel): VarId[] {
  switch (k.kind) {
    case 'mapFilter':
    case 'sort':
    case 'unique':
    case 'copy':
    case 'aggregate':
    case 'limit':
      return [k.input];
    case 'mergeJoin':
    case 'difference':
    case 'concat':
    case 'merge':
      return [k.left, k.right];
    case 'hashJoin':
      return [k.build, k.probe];
    case 'pipeline':
      return [k.input, ...k.probes.map((pr) => pr.build)];
  }
}

/** Variables a program ever reads: kernel inputs and the variables branches test. */
export function variablesRead(p: KirProgram): Set<VarId> {
  const read = new Set(p.kernels.flatMap(kernelInputs));
  for (const b of p.blocks) if (b.terminator.kind === 'branch') for (const v of b.terminator.condition.vars) read.add(v);
  return read;
}

/** Successor block labels of a terminator. */
export function kirSuccessors(t: KirTerminator): string[] {
  switch (t.kind) {
    case 'jump':
      return [t.target];
    case 'branch':
      return [t.ifTrue, t.ifFalse];
    case 'halt':
      return [];
  }
}

/** `k` reading `f(v)` for each input variable v. */
export function withInputs(k: KirKernel, f: (v: VarId) => VarId): KirKernel {
  switch (k.kind) {
    case 'mapFilter':
    case 'sort':
    case 'unique':
    case 'copy':
    case 'aggregate':
    case 'limit':
      return f(k.input) === k.input ? k : { ...k, input: f(k.input) };
    case 'mergeJoin':
    case 'difference':
    case 'concat':
    case 'merge':
      return f(k.left) === k.left && f(k.right) === k.right ? k : { ...k, left: f(k.left), right: f(k.right) };
    case 'hashJoin':
      return f(k.build) === k.build && f(k.probe) === k.probe ? k : { ...k, build: f(k.build), probe: f(k.probe) };
    case 'pipeline':
      return kernelInputs(k).every((v) => f(v) === v) ? k : { ...k, input: f(k.input), probes: k.probes.map((pr) => ({ ...pr, build: f(pr.build) })) };
  }
}

/**
 * Words a row may have for the aggregate kernel to read it coalesced (codegen-wgsl stages up to this many words a
 * thread in workgroup memory; wider rows are read from the buffer, 32 rows a thread, far slower): a fusion does not
 * widen an aggregate's input past it.
 */
export const AGGREGATE_STAGED_WORDS = 15;
