/**
 * The checked core program handed from the checks to lowering: only the forms the foundation slice
 * compiles (positive atoms and comparisons over variables and constants). Later forms extend these unions.
 */
import type { Column, CompareOp, Row, ScalarType, SourceSpan, Value } from '@vixen/queryplan';
import type { Term } from '../syntax/ast.js';

/** The AST terms that survive resolution: variables, `_` and integer/string constants. */
export type SimpleTerm = Extract<Term, { kind: 'var' | 'wildcard' | 'int' | 'string' }>;

export interface CoreAtom {
  pred: string;
  args: SimpleTerm[];
  span: SourceSpan;
}

export interface CoreComparison {
  op: CompareOp;
  left: SimpleTerm;
  right: SimpleTerm;
  span: SourceSpan;
}

export interface CoreRule {
  head: CoreAtom;
  atoms: CoreAtom[];
  comparisons: CoreComparison[];
  span: SourceSpan;
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
}

/** Output of resolve: predicates in order of first appearance, and the rules that passed resolution. */
export interface ResolvedProgram {
  preds: Map<string, PredInfo>;
  rules: CoreRule[];
  /** Predicates with a reported error that hides part of their definition (undeclared, or a rule dropped). */
  incomplete: Set<string>;
}

export type TypedTerm =
  | { kind: 'var'; name: string; type: ScalarType }
  | { kind: 'const'; type: ScalarType; value: Value }
  | { kind: 'wildcard'; type: ScalarType };

export interface TypedAtom {
  pred: string;
  args: TypedTerm[];
}

export interface TypedComparison {
  op: CompareOp;
  left: TypedTerm;
  right: TypedTerm;
}

export interface TypedRule {
  head: TypedAtom;
  atoms: TypedAtom[];
  comparisons: TypedComparison[];
}

export interface Relation {
  name: string;
  columns: Column[];
  hasRules: boolean;
  facts: Row[];
  span: SourceSpan;
}

export interface CheckedProgram {
  relations: Relation[];
  rules: TypedRule[];
}
