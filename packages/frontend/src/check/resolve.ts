/**
 * Name resolution: collects declarations, facts and rules across files into one predicate table, checks
 * arities, finds undeclared predicates, and reduces rules to the core forms lowering handles, reporting
 * every not-yet-supported form where it stands.
 */
import { errorAt, SCALAR_TYPES, type Diagnostic, type ScalarType, type SourceSpan } from '@vixen/queryplan';
import { conjuncts, type Atom, type Clause, type Formula, type Head, type SourceAst, type Term } from '../syntax/ast.js';
import { formatLocation } from '../syntax/span.js';
import type { CoreAtom, CoreComparison, CoreRule, DeclaredColumn, PredInfo, ResolvedProgram, SimpleTerm } from './program.js';

/** Every primitive type of the language; those outside SCALAR_TYPES are recognised but not supported yet. */
const TYPE_NAMES = new Set(['int32', 'int64', 'uint32', 'float32', 'decimal', 'string', 'boolean', 'date']);

const NOT_SUPPORTED = {
  funcAtom: 'functional predicates (p[k] = v) are not supported yet',
  not: 'negation (!) is not supported yet',
  or: 'disjunction (;) is not supported yet',
  agg: 'aggregation (agg<< >>) is not supported yet',
  arith: 'arithmetic is not supported yet',
  real: 'decimal and float literals are not supported yet',
  uint: 'uint32 literals are not supported yet',
  order: 'order ... by is not supported yet',
  constraint: 'integrity constraints are not supported yet',
} as const;

class Resolver {
  readonly preds = new Map<string, PredInfo>();
  readonly rules: CoreRule[] = [];
  readonly incomplete = new Set<string>();

  constructor(private readonly diagnostics: Diagnostic[]) {}

  private error(message: string, span: SourceSpan): void {
    this.diagnostics.push(errorAt(message, span));
  }

  private entry(name: string, arity: number, span: SourceSpan): PredInfo {
    let info = this.preds.get(name);
    if (!info) {
      info = { name, arity, span, declared: false, facts: [], hasRules: false };
      this.preds.set(name, info);
    }
    return info;
  }

  /** Records a use of `atom`; false (with a diagnostic) if its arity is wrong or zero. */
  private use(atom: Atom): boolean {
    if (atom.args.length === 0) {
      this.error(`predicates need at least one argument: ${atom.pred}() has none`, atom.span);
      return false;
    }
    const info = this.entry(atom.pred, atom.args.length, atom.predSpan);
    if (info.arity === atom.args.length) return true;
    const how = info.declared ? 'declared' : 'first used';
    this.error(
      `arity mismatch: ${atom.pred} expects ${plural(info.arity, 'argument')} ` +
        `(${how} at ${formatLocation(info.span)}), found ${atom.args.length}`,
      atom.span,
    );
    return false;
  }

  declaration(head: Head, body: Formula, span: SourceSpan): void {
    if (head.kind === 'funcAtom') return this.error(NOT_SUPPORTED.funcAtom, head.span);
    const typeAtoms = conjuncts(body);
    if (!typeAtoms.every((a) => a.kind === 'atom' && TYPE_NAMES.has(a.pred))) {
      return this.error(NOT_SUPPORTED.constraint, span);
    }
    if (head.args.length === 0) {
      return this.error(`predicates need at least one argument: ${head.pred}() has none`, head.span);
    }
    const existing = this.preds.get(head.pred);
    if (existing?.declared) {
      const first = formatLocation(existing.decl!.span);
      return this.error(`duplicate declaration of ${head.pred} (first declared at ${first})`, head.predSpan);
    }
    const columns: DeclaredColumn[] = head.args.map((t, i) => {
      if (t.kind === 'var' && head.args.findIndex((u) => u.kind === 'var' && u.name === t.name) === i) return { name: t.name };
      this.error(`expected a distinct variable name in the declaration of ${head.pred}`, t.span);
      return { name: `c${i}` };
    });
    const mentioned = new Set<string>();
    for (const a of typeAtoms as Atom[]) {
      const arg = a.args[0];
      if (a.args.length !== 1 || arg?.kind !== 'var') {
        this.error(`expected a type atom with one variable, like ${a.pred}(x)`, a.span);
        continue;
      }
      mentioned.add(arg.name);
      const column = columns.find((c) => c.name === arg.name);
      if (!column) {
        this.error(`${arg.name} is not an argument of ${head.pred}`, arg.span);
      } else if (!(SCALAR_TYPES as readonly string[]).includes(a.pred)) {
        this.error(`type ${a.pred} is not supported yet (supported: ${SCALAR_TYPES.join(', ')})`, a.predSpan);
      } else if (column.type) {
        this.error(`${arg.name} already has type ${column.type}`, a.span);
      } else {
        column.type = a.pred as ScalarType;
      }
    }
    head.args.forEach((t, i) => {
      if (t.kind === 'var' && columns[i]!.name === t.name && !mentioned.has(t.name)) {
        this.error(`expected a type for ${t.name} in the declaration of ${head.pred}, e.g. int32(${t.name})`, t.span);
      }
    });
    // Declarations are resolved before any use, so this entry is new.
    const info = this.entry(head.pred, columns.length, head.predSpan);
    info.declared = true;
    info.decl = { columns, span: head.span };
  }

  fact(head: Head): void {
    if (head.kind === 'funcAtom') return this.error(NOT_SUPPORTED.funcAtom, head.span);
    const args = head.args.map((t) => this.simpleTerm(t));
    let ground = true;
    for (const t of args) {
      if (t && (t.kind === 'var' || t.kind === 'wildcard')) {
        const found = t.kind === 'var' ? `variable ${t.name}` : '_';
        this.error(`facts must be ground: expected a constant but found ${found}`, t.span);
        ground = false;
      }
    }
    if (!this.use(head) || !ground || args.some((t) => !t)) return;
    this.preds.get(head.pred)!.facts.push({ pred: head.pred, args: args as SimpleTerm[], span: head.span });
  }

  rule(head: Head, body: Formula, span: SourceSpan): void {
    if (head.kind === 'funcAtom') return this.error(NOT_SUPPORTED.funcAtom, head.span);
    let ok = this.use(head);
    if (ok) this.preds.get(head.pred)!.hasRules = true;
    const coreHead = this.coreAtom(head);
    ok &&= coreHead !== undefined;
    const atoms: CoreAtom[] = [];
    const comparisons: CoreComparison[] = [];
    for (const f of conjuncts(body)) {
      switch (f.kind) {
        case 'atom': {
          const atom = this.use(f) ? this.coreAtom(f) : undefined;
          if (atom) atoms.push(atom);
          else ok = false;
          break;
        }
        case 'compare': {
          const left = this.simpleTerm(f.left);
          const right = this.simpleTerm(f.right);
          if (left && right) comparisons.push({ op: f.op, left, right, span: f.span });
          else ok = false;
          break;
        }
        case 'and':
          // Only an empty `and` reaches here: the parser's stand-in for a literal it already reported.
          ok = false;
          break;
        case 'funcAtom':
        case 'not':
        case 'or':
        case 'agg':
          this.error(NOT_SUPPORTED[f.kind], f.span);
          ok = false;
          break;
      }
    }
    if (ok) this.rules.push({ head: coreHead!, atoms, comparisons, span });
    else this.incomplete.add(head.pred);
  }

  private coreAtom(a: Atom): CoreAtom | undefined {
    const args = a.args.map((t) => this.simpleTerm(t));
    return args.every((t) => t !== undefined) ? { pred: a.pred, args: args as SimpleTerm[], span: a.span } : undefined;
  }

  private simpleTerm(t: Term): SimpleTerm | undefined {
    switch (t.kind) {
      case 'var':
      case 'wildcard':
      case 'string':
        return t;
      case 'int':
        if (t.suffix !== 'u') return t;
        this.error(NOT_SUPPORTED.uint, t.span);
        return undefined;
      case 'real':
        this.error(NOT_SUPPORTED.real, t.span);
        return undefined;
      case 'neg':
      case 'binary':
        this.error(NOT_SUPPORTED.arith, t.span);
        return undefined;
      case 'apply':
        this.error(NOT_SUPPORTED.funcAtom, t.span);
        return undefined;
    }
  }

  /** Body atoms must name something: a declaration, facts or rules. */
  checkDefined(): void {
    for (const r of this.rules) {
      for (const a of r.atoms) {
        const info = this.preds.get(a.pred)!;
        if (!info.declared && info.facts.length === 0 && !info.hasRules) {
          this.error(`undeclared predicate ${a.pred}: expected a declaration, facts or rules for it`, a.span);
          this.incomplete.add(a.pred);
        }
      }
    }
  }
}

function plural(n: number, word: string): string {
  return `${n} ${word}${n === 1 ? '' : 's'}`;
}

export function resolve(files: SourceAst[], diagnostics: Diagnostic[]): ResolvedProgram {
  const r = new Resolver(diagnostics);
  const clauses: Clause[] = files.flatMap((f) => f.clauses);
  // Declarations first, so every use is checked against them wherever they stand.
  for (const c of clauses) if (c.kind === 'decl') r.declaration(c.head, c.body, c.span);
  for (const c of clauses) {
    switch (c.kind) {
      case 'fact':
        r.fact(c.head);
        break;
      case 'rule':
        r.rule(c.head, c.body, c.span);
        break;
      case 'order':
        diagnostics.push(errorAt(NOT_SUPPORTED.order, c.span));
        break;
      case 'decl':
      case 'include':
        break;
    }
  }
  r.checkDefined();
  return { preds: r.preds, rules: r.rules, incomplete: r.incomplete };
}
