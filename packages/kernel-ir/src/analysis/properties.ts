/**
 * Must-properties of variable values through the CFG, for the rewrites that drop redundant kernels: a value is
 * known empty, known duplicate-free, and known sorted by a column list (as `sort` orders them: by the words of
 * those columns, unsigned lexicographic). Forward dataflow to the greatest fixpoint: a property holds at a block
 * entry only when it holds at the end of every predecessor (loop back edges included).
 *
 * On entry, every QP relation variable is canonical (the runtime canonicalizes loaded facts). It is known empty
 * only when the program may assume so: a `temp` or `idb` relation with no inline facts, not named in `seeded`
 * (relations that get rows from outside, e.g. Soufflé `.input` files). The assumption is recorded in the
 * program (`KirProgram.emptyOnEntry`) so the runtime can refuse rows for those relations.
 */
import type { Expr } from '@vixen/queryplan';
import type { KirBlock, KirCommand, KirKernel, KirProgram, VarId } from '../ir.js';
import { kirSuccessors, rowProbes } from '../ir.js';
import { iota } from '../lower/from-plan.js';
import { neverHolds } from './exprs.js';

export interface VarProps {
  empty: boolean;
  /** At most one row (e.g. an aggregate without group-by): then also duplicate-free and sorted by anything. */
  single: boolean;
  /**
   * Columns no two rows agree on (ascending; any superset is a key too), or undefined when duplicates may occur:
   * all columns for a duplicate-free value, the group-by columns of an aggregate, [] for at most one row.
   */
  key: readonly number[] | undefined;
  /** Columns the rows are sorted by (and so by any prefix of them); 'any' for a value known empty. */
  sorted: readonly number[] | 'any';
}

/** Properties of every variable that has any (absent: nothing known). */
export type PropState = ReadonlyMap<VarId, VarProps>;

const EMPTY: VarProps = { empty: true, single: true, key: [], sorted: 'any' };
const SINGLE: VarProps = { empty: false, single: true, key: [], sorted: 'any' };
const UNKNOWN: VarProps = { empty: false, single: false, key: undefined, sorted: [] };

function canonical(arity: number): VarProps {
  return { empty: false, single: false, key: iota(arity), sorted: iota(arity) };
}

export function distinct(props: VarProps): boolean {
  return props.key !== undefined;
}

export function propsOf(s: PropState, v: VarId): VarProps {
  return s.get(v) ?? UNKNOWN;
}

/**
 * Whether the rows of `v` are sorted by `keys`: a prefix of its known order, or a prefix of it that covers a key
 * (no ties left to order) followed by any columns.
 */
export function sortedBy(s: PropState, v: VarId, keys: readonly number[]): boolean {
  const { sorted, key } = propsOf(s, v);
  if (sorted === 'any') return true;
  let n = 0;
  while (n < keys.length && n < sorted.length && keys[n] === sorted[n]) n++;
  if (n === keys.length) return true;
  const lead = new Set(keys.slice(0, n));
  return key !== undefined && key.every((c) => lead.has(c));
}

function commonPrefix(a: VarProps['sorted'], b: VarProps['sorted']): VarProps['sorted'] {
  if (a === 'any') return b;
  if (b === 'any') return a;
  let n = 0;
  while (n < a.length && n < b.length && a[n] === b[n]) n++;
  return a.slice(0, n);
}

function meetProps(a: VarProps, b: VarProps): VarProps {
  return {
    empty: a.empty && b.empty,
    single: a.single && b.single,
    // A key on every path: the union of the paths' keys (a superset of a key is a key).
    key: a.key === undefined || b.key === undefined ? undefined : [...new Set([...a.key, ...b.key])].sort((x, y) => x - y),
    sorted: commonPrefix(a.sorted, b.sorted),
  };
}

function meet(a: PropState, b: PropState): Map<VarId, VarProps> {
  const out = new Map<VarId, VarProps>();
  for (const [v, pa] of a) {
    const pb = b.get(v);
    if (pb) out.set(v, meetProps(pa, pb));
  }
  return out;
}

function sameProps(a: VarProps, b: VarProps): boolean {
  const sameSorted = a.sorted === 'any' || b.sorted === 'any' ? a.sorted === b.sorted : a.sorted.join() === b.sorted.join();
  return a.empty === b.empty && a.single === b.single && a.key?.join() === b.key?.join() && sameSorted;
}

function sameState(a: PropState, b: PropState): boolean {
  if (a.size !== b.size) return false;
  for (const [v, pa] of a) {
    const pb = b.get(v);
    if (!pb || !sameProps(pa, pb)) return false;
  }
  return true;
}

/** Output position of each input column a projection copies verbatim. */
function copiedColumns(project: readonly Expr[]): Map<number, number> {
  const position = new Map<number, number>();
  project.forEach((e, i) => {
    if (e.kind === 'col' && !position.has(e.index)) position.set(e.index, i);
  });
  return position;
}

/** The columns of a side that identify its row: a key when one is known, else all of them. */
function identifying(props: VarProps, arity: number): readonly number[] {
  return props.key ?? iota(arity);
}

/** Properties of a mapFilter's output: filtering keeps order and distinctness; projection maps them through. */
function mapProps(inp: VarProps, k: Extract<KirKernel, { kind: 'mapFilter' }>): VarProps {
  if (inp.empty || k.filter.some(neverHolds)) return EMPTY;
  if (inp.single) return SINGLE;
  const position = copiedColumns(k.project);
  const sorted: number[] = [];
  for (const c of inp.sorted === 'any' ? [] : inp.sorted) {
    const at = position.get(c);
    if (at === undefined) break;
    sorted.push(at);
  }
  // Keeping a key's columns verbatim keeps it a key (for a duplicate-free input: keeping every column).
  const keyKept = inp.key?.every((c) => position.has(c)) ?? false;
  const key = keyKept ? inp.key!.map((c) => position.get(c)!).sort((x, y) => x - y) : undefined;
  return { empty: false, single: false, key, sorted };
}

/**
 * Where a join's output holds column `c` of one side: `here(c)` when the projection copies it, else, for a join
 * key (`own[i]`), where it holds the partner `other[i]` of the other side (`there`; matching rows agree on it).
 */
function partnerAt(
  own: readonly number[],
  other: readonly number[],
  here: (c: number) => number | undefined,
  there: (c: number) => number | undefined,
): (c: number) => number | undefined {
  return (c) => {
    const i = own.indexOf(c);
    return here(c) ?? (i >= 0 ? there(other[i]!) : undefined);
  };
}

/** A join side: its properties, join key columns, arity, and where the output holds each of its columns. */
interface JoinSide {
  props: VarProps;
  keys: readonly number[];
  arity: number;
  /** Output position of the side's column `c`: copied, or a join key whose partner on the other side is. */
  at: (c: number) => number | undefined;
}

/**
 * A key of a join's output, or undefined when it may hold duplicates: both sides must be duplicate-free, and the
 * projection must keep a key of each side that may match several rows of the other (join keys covering a key of a
 * side match one of its rows). Each output row stands for one pair; the pair is recoverable from the kept keys.
 */
function joinKey(a: JoinSide, b: JoinSide): number[] | undefined {
  if (!distinct(a.props) || !distinct(b.props)) return undefined;
  const kept = (side: JoinSide): number[] | undefined => {
    const at = identifying(side.props, side.arity).map(side.at);
    return at.every((p) => p !== undefined) ? (at as number[]) : undefined;
  };
  const matchesOne = (side: JoinSide): boolean => side.props.single || (side.props.key?.every((c) => side.keys.includes(c)) ?? false);
  const ka = kept(a);
  const kb = kept(b);
  const keys = [ka && kb ? [...ka, ...kb] : undefined, ka && matchesOne(b) ? ka : undefined, kb && matchesOne(a) ? kb : undefined];
  const shortest = keys.filter((k) => k !== undefined).sort((x, y) => new Set(x).size - new Set(y).size)[0];
  return shortest && [...new Set(shortest)].sort((x, y) => x - y);
}

function joinProps(left: VarProps, right: VarProps, key: () => number[] | undefined): VarProps {
  if (left.empty || right.empty) return EMPTY;
  if (left.single && right.single) return SINGLE;
  return { empty: false, single: false, key: key(), sorted: [] };
}

/** Properties of kernel `k`'s output, given those of its inputs. */
export function kernelProps(p: KirProgram, s: PropState, k: KirKernel): VarProps {
  const arity = (v: VarId): number => p.variables[v]!.columns.length;
  switch (k.kind) {
    case 'mapFilter':
      return mapProps(propsOf(s, k.input), k);
    case 'sort': {
      const inp = propsOf(s, k.input);
      return inp.empty || inp.single ? inp : { empty: false, single: false, key: inp.key, sorted: k.keys };
    }
    case 'unique': {
      const inp = propsOf(s, k.input);
      return inp.empty || inp.single ? inp : { empty: false, single: false, key: inp.key ?? iota(arity(k.output)), sorted: inp.sorted };
    }
    case 'copy':
      return propsOf(s, k.input);
    case 'mergeJoin': {
      const left = propsOf(s, k.left);
      const right = propsOf(s, k.right);
      const la = arity(k.left);
      const copied = copiedColumns(k.project);
      // Right columns are la.. of the joined row.
      const leftAt = (c: number) => copied.get(c);
      const rightAt = (c: number) => copied.get(la + c);
      return joinProps(left, right, () =>
        joinKey(
          { props: left, keys: k.leftKeys, arity: la, at: partnerAt(k.leftKeys, k.rightKeys, leftAt, rightAt) },
          { props: right, keys: k.rightKeys, arity: arity(k.right), at: partnerAt(k.rightKeys, k.leftKeys, rightAt, leftAt) },
        ),
      );
    }
    case 'hashJoin': {
      const build = propsOf(s, k.build);
      const probe = propsOf(s, k.probe);
      const position = (side: 'build' | 'probe') => (c: number) => {
        const i = k.project.findIndex((col) => col.side === side && col.column === c);
        return i >= 0 ? i : undefined;
      };
      const [buildAt, probeAt] = [position('build'), position('probe')];
      return joinProps(build, probe, () =>
        joinKey(
          { props: build, keys: k.buildKeys, arity: arity(k.build), at: partnerAt(k.buildKeys, k.probeKeys, buildAt, probeAt) },
          { props: probe, keys: k.probeKeys, arity: arity(k.probe), at: partnerAt(k.probeKeys, k.buildKeys, probeAt, buildAt) },
        ),
      );
    }
    case 'pipeline': {
      // Formed after the property-driven rewrites (compile.ts), so nothing finer than emptiness is needed.
      const empty = propsOf(s, k.input).empty || rowProbes(k.probes).some((pr) => propsOf(s, pr.build).empty) || [...k.filter, ...k.check].some(neverHolds);
      if (empty) return EMPTY;
      // A hashed aggregate (hash-aggregates.ts, before fusion): one row per group, in no particular order.
      if (k.aggregate) return k.aggregate.groupBy.length === 0 ? SINGLE : { empty: false, single: false, key: iota(k.aggregate.groupBy.length), sorted: [] };
      // Only anti-joins (anti-joins.ts): a select of the scanned rows, in no particular order.
      if (rowProbes(k.probes).length === 0 && k.check.length === 0) {
        const inp = propsOf(s, k.input);
        return inp.single ? SINGLE : { ...mapProps(inp, { kind: 'mapFilter', id: k.id, input: k.input, output: k.output, filter: k.filter, project: k.project }), sorted: [] };
      }
      return UNKNOWN;
    }
    case 'difference': {
      const left = propsOf(s, k.left);
      // Some of the left rows: a key of the left side stays one.
      return left.empty || left.single ? left : { ...canonical(arity(k.output)), key: left.key ?? iota(arity(k.output)) };
    }
    case 'concat': {
      const left = propsOf(s, k.left);
      const right = propsOf(s, k.right);
      if (left.empty) return right;
      if (right.empty) return left;
      return UNKNOWN;
    }
    case 'merge': {
      const left = propsOf(s, k.left);
      const right = propsOf(s, k.right);
      if (left.empty) return right;
      if (right.empty) return left;
      return { empty: false, single: false, key: undefined, sorted: k.keys };
    }
    case 'aggregate': {
      const inp = propsOf(s, k.input);
      if (inp.empty) return EMPTY;
      if (k.groupBy.length === 0 || inp.single) return SINGLE;
      // One row per group: the group-by columns (the leading output columns) are a key.
      return { ...canonical(arity(k.output)), key: iota(k.groupBy.length) };
    }
    case 'limit': {
      const inp = propsOf(s, k.input);
      if (inp.empty || k.count === 0) return EMPTY;
      return inp.single || k.count === 1 ? SINGLE : canonical(arity(k.output));
    }
  }
}

/** State after command `c`. */
export function transfer(p: KirProgram, s: PropState, c: KirCommand): PropState {
  switch (c.kind) {
    case 'launch': {
      const k = p.kernels[c.kernel]!;
      const props = kernelProps(p, s, k);
      // Every write to a QP relation variable leaves it canonical (ir.ts): lowering canonicalizes what it stores.
      // A hashed unique (hash-unique.ts, for readers that ignore order) leaves it duplicate-free in any order.
      const relation = p.variables[k.output]!.relation !== undefined && !props.single && !(k.kind === 'unique' && k.hashed);
      const arityOut = p.variables[k.output]!.columns.length;
      return new Map(s).set(k.output, relation ? { ...props, key: props.key ?? iota(arityOut), sorted: iota(arityOut) } : props);
    }
    case 'clear':
      return new Map(s).set(c.var, EMPTY);
    case 'free': {
      const out = new Map(s);
      for (const v of c.vars) out.delete(v);
      return out;
    }
  }
}

/** The state before each command of block `b`, given the block entry states; undefined for an unreachable block. */
export function commandStates(p: KirProgram, entry: ReadonlyMap<string, PropState>, b: KirBlock): PropState[] | undefined {
  let s = entry.get(b.label);
  if (!s) return undefined;
  const states: PropState[] = [];
  for (const c of b.commands) {
    states.push(s);
    s = transfer(p, s, c);
  }
  return states;
}

/** Relations the analysis may assume empty when the program starts. */
export function emptyOnEntry(p: KirProgram, seeded: readonly string[] = []): string[] {
  const outside = new Set(seeded);
  return p.relations
    .filter((r) => r.kind !== 'edb' && !outside.has(r.name) && (p.facts[r.name]?.length ?? 0) === 0)
    .map((r) => r.name);
}

function entryState(p: KirProgram): Map<VarId, VarProps> {
  const empty = new Set(p.emptyOnEntry ?? []);
  const decls = new Map(p.relations.map((r) => [r.name, r]));
  const s = new Map<VarId, VarProps>();
  for (const [name, v] of Object.entries(p.relationVars)) {
    const props = canonical(p.variables[v]!.columns.length);
    // A declared key (checked when the facts load) identifies rows with fewer columns: the shortest one.
    const key = decls.get(name)?.keys?.map((k) => [...k.columns].sort((a, b) => a - b)).sort((a, b) => a.length - b.length)[0];
    s.set(v, empty.has(name) ? EMPTY : key ? { ...props, key } : props);
  }
  return s;
}

/** Properties at the entry of every reachable block. */
export function blockEntryStates(p: KirProgram): Map<string, PropState> {
  const byLabel = new Map(p.blocks.map((b) => [b.label, b]));
  const entry = entryState(p);
  const atEntry = new Map<string, PropState>();
  const outs = new Map<string, PropState>();
  const preds = new Map<string, string[]>(p.blocks.map((b) => [b.label, []]));
  for (const b of p.blocks) for (const t of kirSuccessors(b.terminator)) preds.get(t)?.push(b.label);
  const blockOut = (b: KirBlock, s: PropState): PropState => b.commands.reduce((acc, c) => transfer(p, acc, c), s);
  for (let changed = true; changed; ) {
    changed = false;
    for (const b of p.blocks) {
      // Predecessors not yet reached contribute nothing yet (optimistic start); the program entry adds its start state.
      const ins = preds.get(b.label)!.flatMap((l) => (outs.has(l) ? [outs.get(l)!] : []));
      if (b.label === p.entry) ins.push(entry);
      if (ins.length === 0) continue;
      const next = ins.slice(1).reduce<PropState>((acc, s) => meet(acc, s), ins[0]!);
      const old = atEntry.get(b.label);
      if (old && sameState(old, next)) continue;
      atEntry.set(b.label, next);
      outs.set(b.label, blockOut(byLabel.get(b.label)!, next));
      changed = true;
    }
  }
  return atEntry;
}
