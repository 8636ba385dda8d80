/**
 * Small-delta fixpoint loops in one dispatch (issue 44): which loops one workgroup can run many iterations of inside
 * one kernel (codegen-wgsl kernels/small-loop.ts, runtime small-loop.ts), and what each command of the loop's block
 * becomes there. Rows inside the kernel are multisets (sorts and uniques only copy): duplicates are dropped where new
 * rows meet the recursive relation, by a device hash set over the rows derived in the kernel plus a binary search of
 * the relation as it was when the kernel started; those rows also go to an append log that the host sorts and merges
 * into the relation when the kernel hands back.
 */
import { builtinTable, type Expr, type Predicate } from '@vixen/queryplan';
import { kernelInputs, type KirKernel, type KirProgram, type VarId } from '../ir.js';

/** One command of the loop block as the loop kernel runs it; `kernel`: the KIR kernel (its constants). */
export type SmallLoopStep =
  /**
   * output := project(t) for t in input where filter(t) and t misses every `absent` probe (a pipeline of negated
   * probes, anti-joins.ts): no row of `right` (invariant, canonical, its first columns `rightKeys`) has t's `keys`
   * there and passes `filter` (over that row).
   */
  | { kind: 'map'; kernel: number; input: VarId; output: VarId; filter: Predicate[]; project: Expr[]; absent?: AbsentProbe[] }
  /** output := project(l ++ r) for l in left, r in `right` (invariant, sorted by rightKeys) with equal keys, where filter. */
  | { kind: 'join'; kernel: number; left: VarId; right: VarId; output: VarId; leftKeys: number[]; rightKeys: number[]; filter: Predicate[]; project: Expr[] }
  /** output := the rows of the inputs (sort, unique, copy, concat and merge of rows the kernel holds as multisets). */
  | { kind: 'rows'; inputs: VarId[]; output: VarId }
  /** output := rows of input absent from `right` (invariant, canonical). */
  | { kind: 'absent'; input: VarId; right: VarId; output: VarId }
  /**
   * output := rows of input absent from the recursive relation `relation` and from the rows derived in the kernel,
   * each once; they are appended to the relation's log (the block's `relation := merge relation, output`).
   */
  | { kind: 'insert'; input: VarId; relation: VarId; output: VarId };

/** A negated probe the loop kernel runs as a binary search of an invariant relation by a prefix of its columns. */
export interface AbsentProbe {
  right: VarId;
  rightKeys: number[];
  keys: Expr[];
  filter: Predicate[];
}

export interface SmallLoopPlan {
  block: string;
  steps: SmallLoopStep[];
  /** Variables the block reads and never writes: their rows as the loop found them. */
  invariants: VarId[];
  /** Relations the block grows by `r := merge r, new` only: `recursive[i]` is grown by the i-th insert step. */
  recursive: VarId[];
  /** The merge kernel growing each recursive relation (the host merges the kernel's log with it). */
  merges: number[];
  /**
   * Variables an iteration reads before it writes them (the deltas), each written once by a copy: the state an
   * iteration hands to the next besides the recursive relations.
   */
  carried: VarId[];
  /** Variables written in the block and read only after that, each once an iteration (the kernel's scratch rows). */
  locals: VarId[];
  /** The exit test: the loop stops when these are all empty after an iteration. */
  exit: VarId[];
  /** Kernels whose constants the loop kernel reads, in the order it lays them out. */
  kernels: number[];
}

const tabled = (e: Expr): boolean =>
  e.kind === 'call' ? builtinTable(e.fn) !== undefined || e.args.some(tabled) : e.kind === 'binary' ? tabled(e.left) || tabled(e.right) : false;
const predicateTabled = (p: Predicate): boolean => (p.kind === 'any' ? p.alternatives.some((a) => a.some(predicateTabled)) : tabled(p.left) || tabled(p.right));
const isPrefix = (keys: readonly number[]): boolean => keys.every((c, i) => c === i);

/**
 * The plan of the loop branching at `label` whose body is `body`, or undefined where its block is not one the loop
 * kernel can run: one block looping to itself whose commands are launches of row-wise kernels (no aggregates,
 * limits, hash joins or pipelines but those of negated probes alone, no string tables), joins only against variables the loop does not change, and
 * recursive relations read only by the difference that finds their new rows.
 */
export function smallLoopPlan(program: KirProgram, label: string, body: ReadonlySet<string>): SmallLoopPlan | undefined {
  const block = program.blocks.find((b) => b.label === label);
  if (!block || body.size !== 1 || block.terminator.kind !== 'branch' || block.terminator.ifFalse !== label) return undefined;
  const launched: KirKernel[] = [];
  for (const c of block.commands) {
    if (c.kind === 'clear') return undefined;
    if (c.kind === 'launch') launched.push(program.kernels[c.kernel]!);
  }
  const writes = new Map<VarId, KirKernel[]>();
  for (const k of launched) writes.set(k.output, [...(writes.get(k.output) ?? []), k]);
  const isRelation = (v: VarId): boolean => {
    const name = program.variables[v]!.relation;
    return name !== undefined && program.relations.find((r) => r.name === name)?.kind !== 'temp';
  };
  // Recursive relations: r := merge r, n where n := difference t, r; r read by nothing else.
  const recursive = new Map<VarId, { merge: KirKernel; difference: KirKernel }>();
  for (const [v, ks] of writes) {
    if (!isRelation(v)) continue;
    const m = ks[0]!;
    if (ks.length !== 1 || m.kind !== 'merge' || m.left !== v || m.right === v) return undefined;
    const d = writes.get(m.right);
    if (d?.length !== 1 || d[0]!.kind !== 'difference' || d[0]!.right !== v) return undefined;
    recursive.set(v, { merge: m, difference: d[0]! });
  }
  for (const k of launched) {
    for (const v of kernelInputs(k)) if (recursive.has(v) && k !== recursive.get(v)!.merge && k !== recursive.get(v)!.difference) return undefined;
  }
  const inserted = new Set([...recursive.values()].map((r) => r.difference.output));

  const invariants: VarId[] = [];
  const carried: VarId[] = [];
  const locals: VarId[] = [];
  const written = new Set<VarId>();
  const steps: SmallLoopStep[] = [];
  const kernels: number[] = [];
  const read = (v: VarId): void => {
    if (recursive.has(v) || invariants.includes(v) || carried.includes(v) || written.has(v)) return;
    if (!writes.has(v)) invariants.push(v);
    else carried.push(v);
  };
  for (const k of launched) {
    const inputs = kernelInputs(k);
    if (k.kind === 'merge' && recursive.has(k.output)) continue;
    if (inputs.includes(k.output) || written.has(k.output)) return undefined;
    for (const v of inputs) if (!(k.kind === 'difference' && recursive.has(v))) read(v);
    switch (k.kind) {
      case 'mapFilter':
        if (k.filter.some(predicateTabled) || k.project.some(tabled)) return undefined;
        steps.push({ kind: 'map', kernel: k.id, input: k.input, output: k.output, filter: k.filter, project: k.project });
        kernels.push(k.id);
        break;
      case 'mergeJoin':
        if (!invariants.includes(k.right) || k.filter.some(predicateTabled) || k.project.some(tabled)) return undefined;
        steps.push({ kind: 'join', kernel: k.id, left: k.left, right: k.right, output: k.output, leftKeys: k.leftKeys, rightKeys: k.rightKeys, filter: k.filter, project: k.project });
        kernels.push(k.id);
        break;
      case 'sort':
      case 'unique':
      case 'copy':
        steps.push({ kind: 'rows', inputs: [k.input], output: k.output });
        break;
      case 'concat':
      case 'merge':
        steps.push({ kind: 'rows', inputs: [k.left, k.right], output: k.output });
        break;
      case 'difference':
        // New rows are rows the iteration derived (the kernel hashes them where it holds them).
        if (recursive.has(k.right) && writes.has(k.left)) steps.push({ kind: 'insert', input: k.left, relation: k.right, output: k.output });
        else if (invariants.includes(k.right)) steps.push({ kind: 'absent', input: k.left, right: k.right, output: k.output });
        else return undefined;
        break;
      case 'pipeline': {
        // Negated probes alone (anti-joins.ts) of relations the loop does not change, keyed by a prefix of their
        // columns: their canonical order sorts them by the keys, so the kernel binary-searches them where they are.
        const searchable = k.probes.every((pr) => pr.negated && invariants.includes(pr.build) && isRelation(pr.build) && isPrefix(pr.buildKeys));
        const predicates = [...k.filter, ...k.check, ...k.probes.flatMap((pr) => pr.buildFilter ?? [])];
        if (k.aggregate || !searchable || predicates.some(predicateTabled) || [...k.project, ...k.probes.flatMap((pr) => pr.probeKeys)].some(tabled)) return undefined;
        // Without joined probes the check reads the scanned row alone: a filter.
        const absent = k.probes.map((pr): AbsentProbe => ({ right: pr.build, rightKeys: pr.buildKeys, keys: pr.probeKeys, filter: pr.buildFilter ?? [] }));
        steps.push({ kind: 'map', kernel: k.id, input: k.input, output: k.output, filter: [...k.filter, ...k.check], project: k.project, absent });
        kernels.push(k.id);
        break;
      }
      case 'hashJoin':
      case 'aggregate':
      case 'limit':
        return undefined;
    }
    written.add(k.output);
  }
  for (const v of block.terminator.condition.vars) read(v);
  // A delta is a copy of the rows an insert step found new: duplicate-free, so the host only sorts it on hand-back.
  for (const v of carried) {
    const ks = writes.get(v)!;
    if (ks.length !== 1 || ks[0]!.kind !== 'copy' || !inserted.has(ks[0]!.input) || isRelation(v)) return undefined;
  }
  // A sort, unique or copy of a local that nothing reads afterwards reads that local's rows in place: no stage.
  const alias = new Map<VarId, VarId>();
  const resolve = (v: VarId): VarId => alias.get(v) ?? v;
  const exit = [...block.terminator.condition.vars];
  const staged: SmallLoopStep[] = [];
  steps.forEach((s, i) => {
    const from = s.kind === 'rows' && s.inputs.length === 1 ? s.inputs[0]! : undefined;
    const readLater = (v: VarId): boolean => exit.includes(v) || steps.slice(i + 1).some((t) => stepInputs(t).includes(v));
    if (from !== undefined && written.has(from) && !carried.includes(from) && !carried.includes(s.output) && !readLater(from)) {
      alias.set(s.output, resolve(from));
      return;
    }
    // A delta copied from an insert's new rows, read by nothing in between: the insert writes the delta itself.
    const insert = staged.findIndex((t) => t.kind === 'insert' && t.output === from);
    if (from !== undefined && insert >= 0 && carried.includes(s.output) && !steps.slice(i + 1).some((t) => stepInputs(t).includes(from))) {
      const at = steps.findIndex((t) => t.kind === 'insert' && t.output === from);
      if (!steps.slice(at + 1, i).some((t) => stepInputs(t).includes(s.output))) {
        staged[insert] = { ...staged[insert]!, output: s.output };
        alias.set(from, s.output);
        return;
      }
    }
    staged.push(withStepInputs(s, resolve));
  });
  for (const v of written) if (!carried.includes(v) && !alias.has(v)) locals.push(v);
  // Insert steps in the order of `recursive`.
  const order = staged.flatMap((s) => (s.kind === 'insert' ? [s.relation] : []));
  if (order.length === 0 || order.length !== recursive.size) return undefined;
  // Rows of no words have no hash and no order to search: such loops stay on the general path.
  if ([...invariants, ...order, ...carried, ...locals].some((v) => program.variables[v]!.columns.length === 0)) return undefined;
  const merges = order.map((v) => recursive.get(v)!.merge.id);
  return { block: label, steps: staged, invariants, recursive: order, merges, carried, locals, exit: exit.map(resolve), kernels };
}

/** The variables a step reads rows of (not the relations it searches). */
function stepInputs(s: SmallLoopStep): VarId[] {
  switch (s.kind) {
    case 'map':
    case 'absent':
    case 'insert':
      return [s.input];
    case 'join':
      return [s.left];
    case 'rows':
      return s.inputs;
  }
}

/** `s` reading `f(v)` for each variable v of stepInputs. */
function withStepInputs(s: SmallLoopStep, f: (v: VarId) => VarId): SmallLoopStep {
  switch (s.kind) {
    case 'map':
    case 'absent':
    case 'insert':
      return { ...s, input: f(s.input) };
    case 'join':
      return { ...s, left: f(s.left) };
    case 'rows':
      return { ...s, inputs: s.inputs.map(f) };
  }
}
