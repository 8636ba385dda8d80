/**
 * The checked core program handed from the checks to lowering: positive and negated atoms, comparisons and
 * assignments over variables, constants and arithmetic. Disjunctions are already split into several rules.
 */
import type { AggregateFn, ArithOp, BuiltinFn, Column, Constraint, CompareOp, DeclaredKey, Row, ScalarType, SourceSpan, Value } from '@vixen/queryplan';
import type { Clause, IntLit } from '../syntax/ast.js';

export type OrderClause = Extract<Clause, { kind: 'order' }>;

/** Literals after resolution. A real's `text` has no suffix; `suffix` says decimal (d) or float32 (f). */
export type LiteralTerm =
  | IntLit
  | { kind: 'real'; text: string; suffix: '' | 'd' | 'f'; span: SourceSpan }
  | { kind: 'string'; value: string; span: SourceSpan }
  | { kind: 'bool'; value: boolean; span: SourceSpan }
  /** `date:parse["..."]`, folded to its day number. */
  | { kind: 'date'; days: number; span: SourceSpan };

/** The AST terms that survive resolution: variables, `_`, literals and arithmetic. */
export type SimpleTerm =
  | { kind: 'var'; name: string; span: SourceSpan }
  | { kind: 'wildcard'; span: SourceSpan }
  | LiteralTerm
  | { kind: 'binary'; op: ArithOp; left: SimpleTerm; right: SimpleTerm; span: SourceSpan }
  /** A scalar built-in applied to terms (`date:year[d]`). */
  | { kind: 'call'; fn: BuiltinFn; args: SimpleTerm[]; span: SourceSpan };

export interface CoreAtom {
  pred: string;
  /** Body atoms hold no arithmetic; heads may. */
  args: SimpleTerm[];
  span: SourceSpan;
}

export interface CoreComparison {
  op: CompareOp;
  left: SimpleTerm;
  right: SimpleTerm;
  span: SourceSpan;
}

/** `name = expr` binding a variable no positive atom binds (found by the safety check). */
export interface CoreAssignment {
  name: string;
  expr: SimpleTerm;
  span: SourceSpan;
}

/** `target = fn(arg)` of an `agg<< >>`; `arg` is absent for count(). */
export interface CoreAggBinding {
  target: string;
  fn: AggregateFn;
  arg?: string;
  span: SourceSpan;
}

export interface CoreRule {
  head: CoreAtom;
  atoms: CoreAtom[];
  negated: CoreAtom[];
  comparisons: CoreComparison[];
  /** In an order where each one's right side only uses atom variables and earlier assignments. */
  assignments: CoreAssignment[];
  /**
   * `head <- agg<<bindings>> body`: the atoms, negations, comparisons and assignments above are the body; the
   * head's other variables are the group key. Wildcards of the body's positive atoms are renamed to fresh
   * variables, since every distinct body tuple counts.
   */
  aggregate?: CoreAggBinding[];
  span: SourceSpan;
  /** The clause as written (whitespace collapsed), for the debugging views' rule origins. */
  text: string;
}

export interface DeclaredColumn {
  name: string;
  /** Missing where the declaration itself was in error (reported there). */
  type?: ScalarType;
}

export interface PredInfo {
  name: string;
  arity: number;
  /** The declaration, else the first use: where the arity was fixed. */
  span: SourceSpan;
  declared: boolean;
  decl?: { columns: DeclaredColumn[]; span: SourceSpan };
  facts: CoreAtom[];
  hasRules: boolean;
  /** Functional predicates (`p[k1, k2] = v`): how many leading columns are the key. */
  keys?: number;
  /** Keys declared by dependency clauses (`p(k, a), p(k, b) -> a = b.`). */
  declaredKeys?: DeclaredKey[];
}

/** Output of resolve: predicates in order of first appearance, and the rules that passed resolution. */
export interface ResolvedProgram {
  preds: Map<string, PredInfo>;
  rules: CoreRule[];
  /** Predicates with a reported error that hides part of their definition (undeclared, or a rule dropped). */
  incomplete: Set<string>;
  /** Checks after evaluation, each the relation of its violations (derived by rules among `rules`). */
  constraints: Constraint[];
  orders: OrderClause[];
}

export type TypedTerm =
  | { kind: 'var'; name: string; type: ScalarType }
  | { kind: 'const'; type: ScalarType; value: Value }
  | { kind: 'wildcard'; type: ScalarType }
  | { kind: 'binary'; op: ArithOp; left: TypedTerm; right: TypedTerm; type: ScalarType }
  | { kind: 'call'; fn: BuiltinFn; args: TypedTerm[]; type: ScalarType };

export interface TypedAtom {
  pred: string;
  args: TypedTerm[];
  span: SourceSpan;
}

export interface TypedComparison {
  op: CompareOp;
  left: TypedTerm;
  right: TypedTerm;
}

export interface TypedAssignment {
  name: string;
  expr: TypedTerm;
}

export interface TypedAggBinding {
  target: string;
  fn: AggregateFn;
  arg?: string;
  type: ScalarType;
}

export interface TypedRule {
  head: TypedAtom;
  atoms: TypedAtom[];
  negated: TypedAtom[];
  comparisons: TypedComparison[];
  assignments: TypedAssignment[];
  aggregate?: TypedAggBinding[];
  /** Where the rule was written and its text (CoreRule's). */
  span: SourceSpan;
  text: string;
}

export interface Relation {
  name: string;
  columns: Column[];
  hasRules: boolean;
  facts: Row[];
  /** Where each of `facts` was written (its first occurrence). */
  factSpans: SourceSpan[];
  span: SourceSpan;
  /** Key columns of a functional predicate. */
  keys?: number;
  /** Keys declared by dependency clauses (base relations only). */
  declaredKeys?: DeclaredKey[];
}

export interface CheckedProgram {
  relations: Relation[];
  rules: TypedRule[];
  constraints: Constraint[];
  orders: OrderClause[];
}
