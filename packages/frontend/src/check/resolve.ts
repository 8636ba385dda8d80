/**
 * Name resolution: collects declarations, facts and rules across files into one predicate table, checks
 * arities, finds undeclared predicates, and reduces rules to the core forms lowering handles, reporting
 * every not-yet-supported form where it stands.
 */
import { errorAt, parseDate, SCALAR_TYPES, type CompareOp, type Diagnostic, type ScalarType, type SourceSpan } from '@vixen/queryplan';
import { conjuncts, type Atom, type Clause, type Formula, type Head, type SourceAst, type Term } from '../syntax/ast.js';
import { formatLocation } from '../syntax/span.js';
import type { CoreAtom, CoreComparison, CoreRule, DeclaredColumn, PredInfo, ResolvedProgram, SimpleTerm } from './program.js';

/** Every primitive type of the language. */
const TYPE_NAMES = new Set<string>(SCALAR_TYPES);

const NOT_SUPPORTED = {
  funcAtom: 'functional predicates (p[k] = v) are not supported yet',
  or: 'disjunction (;) inside another formula is not supported yet; write it at the top of the rule body',
  agg: 'aggregation (agg<< >>) is not supported yet',
  order: 'order ... by is not supported yet',
  constraint: 'integrity constraints are not supported yet',
} as const;

/** `!(a op b)` is the comparison with the opposite operator. */
const NEGATED_OP: Record<CompareOp, CompareOp> = { '=': '!=', '!=': '=', '<': '>=', '<=': '>', '>': '<=', '>=': '<' };

/** Where a term stands decides what it may be: constants only in facts, no arithmetic in body atoms. */
type TermPlace = 'fact' | 'atom' | 'value';

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
    const args = head.args.map((t) => this.simpleTerm(t, 'fact'));
    if (!this.use(head) || args.some((t) => !t)) return;
    this.preds.get(head.pred)!.facts.push({ pred: head.pred, args: args as SimpleTerm[], span: head.span });
  }

  /** A rule; a body `a ; b` is one rule per disjunct. */
  rule(head: Head, body: Formula, span: SourceSpan): void {
    if (head.kind === 'funcAtom') return this.error(NOT_SUPPORTED.funcAtom, head.span);
    let headOk = this.use(head);
    if (headOk) this.preds.get(head.pred)!.hasRules = true;
    const coreHead = this.coreAtom(head, 'value');
    headOk &&= coreHead !== undefined;
    const disjuncts = body.kind === 'or' ? body.items : [body];
    for (const d of disjuncts) {
      const rule = this.ruleBody(d);
      if (headOk && rule) this.rules.push({ head: coreHead!, ...rule, assignments: [], span });
      else this.incomplete.add(head.pred);
    }
  }

  private ruleBody(body: Formula): Pick<CoreRule, 'atoms' | 'negated' | 'comparisons'> | undefined {
    let ok = true;
    const atoms: CoreAtom[] = [];
    const negated: CoreAtom[] = [];
    const comparisons: CoreComparison[] = [];
    const literal = (f: Formula, positive: boolean): void => {
      switch (f.kind) {
        case 'atom': {
          const atom = this.use(f) ? this.coreAtom(f, 'atom') : undefined;
          if (!atom) ok = false;
          else (positive ? atoms : negated).push(atom);
          return;
        }
        case 'compare': {
          const left = this.simpleTerm(f.left, 'value');
          const right = this.simpleTerm(f.right, 'value');
          if (left && right) comparisons.push({ op: positive ? f.op : NEGATED_OP[f.op], left, right, span: f.span });
          else ok = false;
          return;
        }
        case 'not':
          return literal(f.body, !positive);
        case 'and':
          // An empty `and` is the parser's stand-in for a literal it already reported.
          ok = false;
          if (f.items.length > 0) this.error('expected one atom or comparison after !', f.span);
          return;
        case 'funcAtom':
        case 'or':
        case 'agg':
          this.error(NOT_SUPPORTED[f.kind], f.span);
          ok = false;
          return;
      }
    };
    for (const f of conjuncts(body)) literal(f, true);
    return ok ? { atoms, negated, comparisons } : undefined;
  }

  private coreAtom(a: Atom, place: TermPlace): CoreAtom | undefined {
    const args = a.args.map((t) => this.simpleTerm(t, place));
    return args.every((t) => t !== undefined) ? { pred: a.pred, args: args as SimpleTerm[], span: a.span } : undefined;
  }

  private simpleTerm(t: Term, place: TermPlace): SimpleTerm | undefined {
    switch (t.kind) {
      case 'var':
        if (t.name === 'true' || t.name === 'false') return { kind: 'bool', value: t.name === 'true', span: t.span };
        return this.nonConstant(t, place, `variable ${t.name}`);
      case 'wildcard':
        return this.nonConstant(t, place, '_');
      case 'string':
      case 'int':
        return t;
      case 'real':
        return this.real(t.text, t.span);
      case 'neg':
      case 'binary': {
        if (place !== 'value') {
          const why = place === 'fact' ? 'facts must be ground: expected a constant' : 'expected a variable or constant in a body atom';
          this.error(`${why}, not arithmetic; bind it with = first (q(y), y = x + 1)`, t.span);
          return undefined;
        }
        const left: SimpleTerm | undefined =
          t.kind === 'neg' ? { kind: 'int', value: 0n, suffix: '', span: t.span } : this.simpleTerm(t.left, place);
        const right = this.simpleTerm(t.kind === 'neg' ? t.operand : t.right, place);
        if (!left || !right) return undefined;
        return { kind: 'binary', op: t.kind === 'neg' ? '-' : t.op, left, right, span: t.span };
      }
      case 'apply':
        return this.apply(t);
    }
  }

  private nonConstant<T extends SimpleTerm>(t: T, place: TermPlace, found: string): T | undefined {
    if (place !== 'fact') return t;
    this.error(`facts must be ground: expected a constant but found ${found}`, t.span);
    return undefined;
  }

  /** `3.25`, `1e-3`, `19.99d`, `2.5f`: the suffix is checked here, the digits against the type later. */
  private real(text: string, span: SourceSpan): SimpleTerm | undefined {
    const m = /^(-?[0-9.eE+-]+?)([dfuL]?)$/.exec(text)!;
    const suffix = m[2]!;
    if (suffix === 'u' || suffix === 'L') {
      this.error(`bad literal ${text}: the ${suffix} suffix needs an integer (use d for decimal, f for float32)`, span);
      return undefined;
    }
    if (suffix === 'd' && /[eE]/.test(m[1]!)) {
      this.error(`bad literal ${text}: decimal literals take no exponent`, span);
      return undefined;
    }
    return { kind: 'real', text: m[1]!, suffix: suffix as '' | 'd' | 'f', span };
  }

  /** Only `date:parse["YYYY-MM-DD"]` is a value so far: a constant, folded here. */
  private apply(t: Extract<Term, { kind: 'apply' }>): SimpleTerm | undefined {
    if (t.name !== 'date:parse') {
      this.error(NOT_SUPPORTED.funcAtom, t.span);
      return undefined;
    }
    const arg = t.args[0];
    if (t.args.length !== 1 || arg?.kind !== 'string') {
      this.error('expected a string constant in date:parse["YYYY-MM-DD"]', t.span);
      return undefined;
    }
    const days = parseDate(arg.value);
    if (days === undefined) {
      this.error(`bad date ${JSON.stringify(arg.value)} in date:parse: expected a calendar date as YYYY-MM-DD`, arg.span);
      return undefined;
    }
    return { kind: 'date', days, span: t.span };
  }

  /** Body atoms must name something: a declaration, facts or rules. */
  checkDefined(): void {
    for (const r of this.rules) {
      for (const a of [...r.atoms, ...r.negated]) {
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
