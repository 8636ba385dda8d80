/**
 * The Soufflé surface AST, every node with its span. It holds everything the parser accepts, including forms
 * outside the compiled subset (power, functor calls, aggregates), so `toLogic` can point at them.
 */
import type { CompareOp, SourceSpan } from '@vixen/queryplan';
import type { ArithOp } from '../syntax/ast.js';

export interface Name {
  name: string;
  span: SourceSpan;
}

export type AggregateFn = 'count' | 'sum' | 'min' | 'max' | 'mean';

export type STerm =
  | { kind: 'var'; name: string; span: SourceSpan }
  | { kind: 'wildcard'; span: SourceSpan }
  /** `42`, `0x2a`, `0b101`, `42u` (unsigned); a leading `-` is folded in. */
  | { kind: 'int'; value: bigint; unsigned: boolean; span: SourceSpan }
  | { kind: 'float'; text: string; span: SourceSpan }
  | { kind: 'string'; value: string; span: SourceSpan }
  | { kind: 'neg'; operand: STerm; span: SourceSpan }
  | { kind: 'binary'; op: ArithOp | '^'; left: STerm; right: STerm; span: SourceSpan }
  /** A functor call used as a value: `cat(a, b)`, `strlen(s)`, `min(a, b)`. */
  | { kind: 'call'; name: string; args: STerm[]; span: SourceSpan; nameSpan: SourceSpan }
  /**
   * `count : { body }`, `sum x : { body }`; `target` is absent for count. `materialized` is set by normalisation
   * (normalize.ts), from the body as written: whether Soufflé aggregates over a relation of its named variables.
   */
  | { kind: 'aggregate'; fn: AggregateFn; target?: STerm; body: SFormula; span: SourceSpan; fnSpan: SourceSpan; materialized?: boolean }
  /** A record `[a, b]` (records.ts lowers it to its fields before conversion). */
  | { kind: 'record'; args: STerm[]; span: SourceSpan }
  /** A branch of an algebraic data type `$A(1, x)` (`$A` without arguments). */
  | { kind: 'branch'; name: string; args: STerm[]; span: SourceSpan; nameSpan: SourceSpan };

export interface SAtom {
  kind: 'atom';
  rel: string;
  args: STerm[];
  span: SourceSpan;
  relSpan: SourceSpan;
}

export type SFormula =
  | SAtom
  | { kind: 'compare'; op: CompareOp; left: STerm; right: STerm; span: SourceSpan }
  | { kind: 'not'; body: SFormula; span: SourceSpan }
  /** The `true` and `false` literals. */
  | { kind: 'bool'; value: boolean; span: SourceSpan }
  | { kind: 'and'; items: SFormula[]; span: SourceSpan }
  | { kind: 'or'; items: SFormula[]; span: SourceSpan };

export interface Attribute {
  name: Name;
  type: Name;
}

/** A branch `A {x: number}` of an algebraic data type. */
export interface Branch {
  name: Name;
  fields: Attribute[];
}

/** `key=value` in `.input p(IO=file, filename="p.csv", delimiter=",")`. */
export interface IoOption {
  key: string;
  value: string;
  span: SourceSpan;
}

export interface IoTarget {
  rel: Name;
  options: IoOption[];
}

export type SItem =
  /** `.decl p(x: number, y: symbol) btree`; `input`/`output` qualifiers are kept (old-style IO). */
  | { kind: 'decl'; rel: Name; attributes: Attribute[]; qualifiers: Name[]; span: SourceSpan }
  | { kind: 'io'; direction: 'input' | 'output' | 'printsize'; targets: IoTarget[]; span: SourceSpan }
  /**
   * `.type T <: number`, `.type T = A | B`, `.number_type T`, `.symbol_type T`: a name for a primitive type
   * (or a union of names for one).
   */
  | {
      kind: 'type';
      name: Name;
      alternatives: Name[];
      span: SourceSpan;
      /** The fields of a record type `.type P = [x: number, y: P]`. */
      record?: Attribute[];
      /** The branches of an algebraic data type `.type T = A {x: number} | B {}`. */
      branches?: Branch[];
    }
  | { kind: 'fact'; atom: SAtom; span: SourceSpan }
  /** `h1(x), h2(x) :- body.`: several heads share one body. */
  | { kind: 'rule'; heads: SAtom[]; body: SFormula; span: SourceSpan }
  /** `.comp Name<T...> : Base<A...>, ... { items }`: a template, expanded where `.init` instantiates it (components.ts). */
  | { kind: 'comp'; name: Name; params: Name[]; bases: CompRef[]; items: SItem[]; span: SourceSpan }
  /** `.init instance = Comp<A...>` */
  | { kind: 'init'; name: Name; comp: CompRef; span: SourceSpan }
  /** `.override rel` in a component: the inherited rules of `rel` are dropped. */
  | { kind: 'override'; rel: Name; span: SourceSpan }
  /**
   * `r(k..., a) <= r(k..., b) :- b < a.`: a subsumption that keeps, per key, the least (`min`) or greatest (`max`)
   * last column (subsumption.ts); the parser refuses other subsumptions.
   */
  | { kind: 'subsume'; rel: Name; fn: 'min' | 'max'; span: SourceSpan };

/** A component named with its type arguments: `Graph<number>`. */
export interface CompRef {
  name: Name;
  args: Name[];
}

export interface SouffleAst {
  file: string;
  items: SItem[];
}
