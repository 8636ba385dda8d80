/**
 * The surface AST. Every node carries its source span. Forms the foundation slice does not compile yet
 * (disjunction, negation, arithmetic, functional predicates, aggregation, ordering) are still parsed so the
 * checker can point at them; later passes extend the unions rather than re-parse.
 */
import type { CompareOp, SourceSpan } from '@vixen/queryplan';

export type ArithOp = '+' | '-' | '*' | '/' | '%';

/** Integer literal; `suffix` is '' (int32, or int64 where an int64 is expected), 'L' (int64) or 'u' (uint32). */
export interface IntLit {
  kind: 'int';
  value: bigint;
  suffix: '' | 'L' | 'u';
  span: SourceSpan;
}

export type Term =
  | { kind: 'var'; name: string; span: SourceSpan }
  | { kind: 'wildcard'; span: SourceSpan }
  | IntLit
  /** Decimal/float literal (`3.25`, `1e-3`, `19.99d`), kept as text. */
  | { kind: 'real'; text: string; span: SourceSpan }
  | { kind: 'string'; value: string; span: SourceSpan }
  | { kind: 'neg'; operand: Term; span: SourceSpan }
  | { kind: 'binary'; op: ArithOp; left: Term; right: Term; span: SourceSpan }
  /** Functional application `f[args]` used as a value. */
  | { kind: 'apply'; name: string; args: Term[]; span: SourceSpan; nameSpan: SourceSpan };

export interface Atom {
  kind: 'atom';
  pred: string;
  args: Term[];
  span: SourceSpan;
  predSpan: SourceSpan;
}

/** Functional atom `p[keys] = value` (a head may give several values: `stats[g] = lo, hi`). */
export interface FuncAtom {
  kind: 'funcAtom';
  pred: string;
  keys: Term[];
  values: Term[];
  span: SourceSpan;
  predSpan: SourceSpan;
}

export interface Comparison {
  kind: 'compare';
  op: CompareOp;
  left: Term;
  right: Term;
  span: SourceSpan;
}

/** `name = fn(args)` inside `agg<< >>`. */
export interface AggBinding {
  target: string;
  fn: string;
  args: Term[];
  span: SourceSpan;
}

export type Formula =
  | Atom
  | FuncAtom
  | Comparison
  | { kind: 'not'; body: Formula; span: SourceSpan }
  | { kind: 'and'; items: Formula[]; span: SourceSpan }
  | { kind: 'or'; items: Formula[]; span: SourceSpan }
  | { kind: 'agg'; bindings: AggBinding[]; body: Formula; span: SourceSpan };

export type Head = Atom | FuncAtom;

export interface OrderKey {
  column: string;
  descending: boolean;
  span: SourceSpan;
}

export type Clause =
  | { kind: 'include'; path: string; span: SourceSpan; pathSpan: SourceSpan }
  /** `head -> body.`: a type declaration when the body is made of type atoms, else an integrity constraint. */
  | { kind: 'decl'; head: Head; body: Formula; span: SourceSpan }
  /** `p(k, a), p(k, b) -> a = b.`: two atoms of one predicate on the left; the resolver accepts key forms only. */
  | { kind: 'dependency'; atoms: [Head, Head]; body: Formula; span: SourceSpan }
  | { kind: 'fact'; head: Head; span: SourceSpan }
  | { kind: 'rule'; head: Head; body: Formula; span: SourceSpan }
  | { kind: 'order'; pred: string; keys: OrderKey[]; limit?: IntLit; span: SourceSpan; predSpan: SourceSpan };

export interface SourceAst {
  file: string;
  clauses: Clause[];
}

/** Conjuncts of a formula, flattening nested `and`s. */
export function conjuncts(f: Formula): Formula[] {
  return f.kind === 'and' ? f.items.flatMap(conjuncts) : [f];
}
