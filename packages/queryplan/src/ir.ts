/**
 * The query plan (QP) IR: relation declarations plus a CFG of basic blocks of relational-algebra commands,
 * as in Red Fox §3.3. Every command assigns its target a new value (set semantics: no duplicate tuples);
 * a target may also be one of its inputs. Recursive strata are loops of blocks ending in a branch.
 */
import type { SourceSpan } from './diagnostics.js';
import type { ArithOp } from './arith.js';
import type { BuiltinFn } from './builtins.js';
import type { Row, ScalarType, Value } from './types.js';

export interface Column {
  name: string;
  type: ScalarType;
}

/**
 * - `edb`: base relation, filled from facts (inline facts and/or a facts file) before the entry block.
 * - `idb`: derived by rules (may also have inline facts, which seed it).
 * - `temp`: plan-introduced (deltas, rule intermediates); never printed.
 */
export type RelationKind = 'edb' | 'idb' | 'temp';

export interface RelationDecl {
  name: string;
  columns: Column[];
  kind: RelationKind;
  /** Printed/written by default when the program runs. */
  output: boolean;
  span?: SourceSpan;
  /**
   * Set on a base relation narrowed by pruneColumns: the columns its facts have (files and API rows), and which
   * of them (ascending) `columns` keeps. Loaders check the field count against `sourceColumns` and parse only
   * the kept fields.
   */
  pruned?: { sourceColumns: Column[]; loadColumns: number[] };
  /**
   * Set by the kernel IR on a base relation some of whose columns no kernel reads, though the relation needs them
   * to tell its rows apart (a key such as TPC-H's (l_orderkey, l_linenumber)): its facts load, become canonical
   * and have their keys checked with every column of `columns`; then its variable keeps only these (ascending
   * indices into `columns`), one row per fact, in canonical order. Kernels see the same rows and order, minus
   * columns they never read.
   */
  deviceColumns?: number[];
  /**
   * Declared keys of a base relation (key constraints, `p(k, a), p(k, b) -> a = b.`): column sets no two of its
   * rows agree on. The runtime checks them when the facts load; the kernel IR uses them to prove results
   * duplicate-free. A key that lost a column to pruneColumns is dropped (the program reads no such rows).
   */
  keys?: DeclaredKey[];
}

/** A key of a base relation, and the constraint that declared it (for the violation message). */
export interface DeclaredKey {
  columns: number[];
  text: string;
  span?: SourceSpan;
}

export type CompareOp = '=' | '!=' | '<' | '<=' | '>' | '>=';

/**
 * Scalar expressions over one input tuple. In a MapJoin the input tuple is the left tuple's columns
 * followed by the right tuple's columns, so `col.index >= leftArity` refers to the right side.
 * A `binary` has operands of its own type and follows the semantics of `evalArith` (arith.ts).
 */
export type Expr =
  | { kind: 'col'; index: number; type: ScalarType }
  | { kind: 'const'; type: ScalarType; value: Value }
  | { kind: 'binary'; op: ArithOp; left: Expr; right: Expr; type: ScalarType }
  /** A scalar built-in (builtins.ts); arguments and result have the built-in's types. */
  | { kind: 'call'; fn: BuiltinFn; args: Expr[]; type: ScalarType };

/**
 * Filters are conjunctions of predicates. Both operands of a comparison have the same type. An `any` holds where
 * one of its alternatives (each a conjunction, none empty) holds: a union of selects of one relation, as one select.
 */
export type Predicate =
  | { kind: 'compare'; op: CompareOp; left: Expr; right: Expr }
  | { kind: 'any'; alternatives: Predicate[][] };

/** Aggregate functions (LANGUAGE.md "Aggregation"); `aggregateType` (aggregate.ts) gives each one's result type. */
export type AggregateFn = 'count' | 'sum' | 'min' | 'max' | 'avg';

/** One aggregate of a group: `fn` over input column `column` (absent for count), giving a value of `type`. */
export interface Aggregate {
  fn: AggregateFn;
  column?: number;
  type: ScalarType;
}

/**
 * A rule a command (or kernel) computes part of, for debugging views: where it was written and its text,
 * shortened (rule-origin.ts).
 */
export interface RuleOrigin {
  file: string;
  line: number;
  text: string;
}

/** Every command may name the rules it came from; plan-made commands (deltas, fixpoint bookkeeping) name none. */
export type QpCommand = QpCommandOp & { rules?: RuleOrigin[] };

type QpCommandOp =
  /** target := { project(t) | t in source, filter(t) } */
  | { kind: 'mapFilter'; target: string; source: string; filter: Predicate[]; project: Expr[] }
  /** target := { project(l ++ r) | l in left, r in right, l[leftKeys] = r[rightKeys], filter(l ++ r) } (keys may be empty: a product) */
  | {
      kind: 'mapJoin';
      target: string;
      left: string;
      right: string;
      leftKeys: number[];
      rightKeys: number[];
      filter: Predicate[];
      project: Expr[];
    }
  /** target := left ∪ right */
  | { kind: 'union'; target: string; left: string; right: string }
  /** target := left − right */
  | { kind: 'difference'; target: string; left: string; right: string }
  /** target := source */
  | { kind: 'copy'; target: string; source: string }
  /** target := ∅ */
  | { kind: 'clear'; target: string }
  /**
   * target := one row per distinct value g of source's `groupBy` columns: g's columns, then each aggregate
   * over the source rows of that group (a set: every distinct row counts once). No rows, no groups: an empty
   * source gives an empty target even with no group columns.
   */
  | { kind: 'aggregate'; target: string; source: string; groupBy: number[]; aggregates: Aggregate[] }
  /**
   * target := the first `count` rows of source in the order `keys` (ties: all columns ascending), the rows
   * `order P by ... limit N` prints (output.ts applyOutputOrder); what rules reading a limited P see.
   */
  | { kind: 'limit'; target: string; source: string; keys: OutputOrder['keys']; count: number };

/** `empty`: true when every named relation is empty (the fixpoint change test on the deltas). */
export type Condition = { kind: 'empty'; relations: string[] };

export type Terminator =
  | { kind: 'jump'; target: string }
  | { kind: 'branch'; condition: Condition; ifTrue: string; ifFalse: string }
  | { kind: 'halt' };

export interface BasicBlock {
  label: string;
  commands: QpCommand[];
  terminator: Terminator;
}

/** `order P by ... [limit N]`: the order (and count) in which a relation's rows are printed or returned. */
export interface OutputOrder {
  keys: Array<{ column: number; descending: boolean }>;
  limit?: number;
}

/**
 * A check after evaluation: every row of `relation` (a derived relation the plan computes) is a violation.
 * `functional`: the rows of a functional predicate `predicate` with two values for one key; `constraint`: the
 * rows of the left side of `text` for which the right side fails. `key` (made by the runtime when a base
 * relation's facts break a DeclaredKey, not part of a plan): `relation` is the base relation, rows its key values.
 */
export interface Constraint {
  kind: 'functional' | 'constraint' | 'key';
  relation: string;
  /** The constraint as written (for `functional`, the predicate name). */
  text: string;
  /** For `functional`: how many leading columns are the key. */
  keys?: number;
  /** For `key`: the key's columns of `relation`. */
  columns?: number[];
  span?: SourceSpan;
}

export interface QpProgram {
  relations: RelationDecl[];
  /** Inline facts from the source text: the initial contents of those relations. */
  facts: Record<string, Row[]>;
  /** Where each inline fact was written, parallel to `facts` (violations point at the offending facts). */
  factSpans?: Record<string, SourceSpan[]>;
  blocks: BasicBlock[];
  entry: string;
  /** Output orders by relation name (absent: rows sorted by their columns, ascending). */
  orders?: Record<string, OutputOrder>;
  constraints?: Constraint[];
}

/** Relations a command reads, in order. */
export function commandInputs(c: QpCommand): string[] {
  switch (c.kind) {
    case 'mapFilter':
    case 'copy':
    case 'aggregate':
    case 'limit':
      return [c.source];
    case 'mapJoin':
    case 'union':
    case 'difference':
      return [c.left, c.right];
    case 'clear':
      return [];
  }
}

/** How many commands write each relation, and how many commands and branch conditions read it. */
export function relationUses(plan: QpProgram): { reads: Map<string, number>; writes: Map<string, number> } {
  const reads = new Map<string, number>();
  const writes = new Map<string, number>();
  const count = (m: Map<string, number>, name: string) => m.set(name, (m.get(name) ?? 0) + 1);
  for (const b of plan.blocks) {
    for (const c of b.commands) {
      count(writes, c.target);
      for (const r of commandInputs(c)) count(reads, r);
    }
    if (b.terminator.kind === 'branch') for (const r of b.terminator.condition.relations) count(reads, r);
  }
  return { reads, writes };
}

/** Terminator shapes the plan and the kernel IR share. */
export type Jumps = { kind: 'jump'; target: string } | { kind: 'branch'; ifTrue: string; ifFalse: string } | { kind: 'halt' };

/** Successor block labels of a terminator (of the plan or the kernel IR). */
export function successors(t: Jumps): string[] {
  switch (t.kind) {
    case 'jump':
      return [t.target];
    case 'branch':
      return [t.ifTrue, t.ifFalse];
    case 'halt':
      return [];
  }
}
