/**
 * Name resolution: collects declarations, facts and rules across files into one predicate table, checks
 * arities, finds undeclared predicates, and reduces rules to the core forms lowering handles, reporting
 * every not-yet-supported form where it stands.
 */
import { AGGREGATE_FNS, BUILTINS, constantArgs, didYouMean, errorAt, formatSpan, isBuiltin, parseDate, SCALAR_TYPES, type AggregateFn, type BuiltinFn, type Constraint, type CompareOp, type Diagnostic, type ScalarType, type SourceSpan } from '@vixen/queryplan';
import { conjuncts, type AggBinding, type Atom, type Clause, type Formula, type FuncAtom, type Head, type SourceAst, type Term } from '../syntax/ast.js';
import type { CoreAggBinding, CoreAtom, CoreComparison, CoreRule, DeclaredColumn, OrderClause, PredInfo, ResolvedProgram, SimpleTerm } from './program.js';

/** Every primitive type of the language. */
const TYPE_NAMES = new Set<string>(SCALAR_TYPES);

const NOT_SUPPORTED = {
  apply: 'functional applications as values (f[x] + 1) are not supported yet; bind the value first: f[x] = v, ... v + 1',
  or: 'disjunction (;) inside another formula is not supported yet; write it at the top of the rule body',
  agg: 'bad aggregate use: agg<< >> must be the whole rule body (head <- agg<<t = sum(v)>> body)',
} as const;

/** Atom form of a functional atom: the keys, then the values. */
function flatten(f: FuncAtom): Atom {
  return { kind: 'atom', pred: f.pred, args: [...f.keys, ...f.values], span: f.span, predSpan: f.predSpan };
}

/** `!(a op b)` is the comparison with the opposite operator. */
const NEGATED_OP: Record<CompareOp, CompareOp> = { '=': '!=', '!=': '=', '<': '>=', '<=': '>', '>': '<=', '>=': '<' };

/** Where a term stands decides what it may be: constants only in facts, no arithmetic in body atoms. */
type TermPlace = 'fact' | 'atom' | 'value';

class Resolver {
  readonly preds = new Map<string, PredInfo>();
  readonly rules: CoreRule[] = [];
  readonly incomplete = new Set<string>();
  readonly constraints: Constraint[] = [];

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
    const info = this.entry(atom.pred, atom.args.length, atom.predSpan);
    if (info.arity === atom.args.length) return true;
    const how = info.declared ? 'declared' : 'first used';
    this.error(
      `arity mismatch: ${atom.pred} expects ${plural(info.arity, 'argument')} ` +
        `(${how} at ${formatSpan(info.span)}), found ${atom.args.length}`,
      atom.span,
    );
    return false;
  }

  /** Records a use of functional atom `f`: its key and value counts must match the predicate's. */
  private useFunctional(f: FuncAtom): boolean {
    const info = this.preds.get(f.pred);
    if (info?.keys !== undefined) {
      const how = info.declared ? 'declared' : 'first used';
      const values = info.arity - info.keys;
      if (info.keys !== f.keys.length || values !== f.values.length) {
        this.error(
          `arity mismatch: ${f.pred}[...] expects ${plural(info.keys, 'key')} and ${plural(values, 'value')} ` +
            `(${how} at ${formatSpan(info.span)}), found ${plural(f.keys.length, 'key')} and ${plural(f.values.length, 'value')}`,
          f.span,
        );
        return false;
      }
    }
    if (!this.use(flatten(f))) return false;
    this.preds.get(f.pred)!.keys ??= f.keys.length;
    return true;
  }

  /** Records a use of a head (atom or functional); built-ins cannot be defined. */
  private useHead(head: Head): boolean {
    if (isBuiltinName(head.pred)) {
      this.error(`${head.pred} is ${isBuiltin(head.pred) ? 'a built-in' : 'in a built-in namespace'}: facts and rules cannot define it`, head.predSpan);
      return false;
    }
    return head.kind === 'funcAtom' ? this.useFunctional(head) : this.use(head);
  }

  declaration(fullHead: Head, body: Formula, span: SourceSpan): void {
    const head = fullHead.kind === 'funcAtom' ? flatten(fullHead) : fullHead;
    const typeAtoms = conjuncts(body);
    const existing = this.preds.get(head.pred);
    if (existing?.declared) {
      const first = formatSpan(existing.decl!.span);
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
    if (fullHead.kind === 'funcAtom') info.keys = fullHead.keys.length;
  }

  fact(fullHead: Head): void {
    const head = fullHead.kind === 'funcAtom' ? flatten(fullHead) : fullHead;
    const args = head.args.map((t) => this.simpleTerm(t, 'fact'));
    if (!this.useHead(fullHead) || args.some((t) => !t)) return;
    this.preds.get(head.pred)!.facts.push({ pred: head.pred, args: args as SimpleTerm[], span: head.span });
  }

  /** A rule; a body `a ; b` is one rule per disjunct. */
  rule(fullHead: Head, body: Formula, span: SourceSpan, text: string): void {
    const head = fullHead.kind === 'funcAtom' ? flatten(fullHead) : fullHead;
    let headOk = this.useHead(fullHead);
    if (headOk) this.preds.get(head.pred)!.hasRules = true;
    const coreHead = this.coreAtom(head, 'value');
    headOk &&= coreHead !== undefined;
    const disjuncts = body.kind === 'or' ? body.items : [body];
    for (const d of disjuncts) {
      const aggregate = d.kind === 'agg' ? this.aggregate(d.bindings, head) : undefined;
      const rule = this.ruleBody(d.kind === 'agg' ? d.body : d);
      if (headOk && rule && aggregate !== false) {
        const core: CoreRule = { head: coreHead!, ...rule, assignments: [], span, text };
        this.rules.push(aggregate ? { ...core, aggregate, atoms: renameWildcards(core.atoms) } : core);
      } else {
        this.incomplete.add(head.pred);
      }
    }
  }

  /** The bindings of `agg<<...>>`, or false after reporting what is wrong with them. */
  private aggregate(bindings: AggBinding[], head: Atom): CoreAggBinding[] | false {
    let ok = true;
    for (const t of head.args) {
      if (t.kind !== 'var') {
        this.error('bad aggregate use: the head of an aggregation takes variables only (the group key and the aggregate results)', t.span);
        ok = false;
      }
    }
    const out: CoreAggBinding[] = [];
    for (const b of bindings) {
      if (!(AGGREGATE_FNS as readonly string[]).includes(b.fn)) {
        this.error(`bad aggregate use: unknown aggregate ${b.fn}; expected count, sum, min, max or avg`, b.span);
        ok = false;
        continue;
      }
      const fn = b.fn as AggregateFn;
      const arg = b.args[0];
      if (fn === 'count' ? b.args.length !== 0 : b.args.length !== 1 || arg?.kind !== 'var') {
        this.error(`bad aggregate use: expected ${fn === 'count' ? 'count() with no argument' : `one variable, as in ${fn}(v)`}`, b.span);
        ok = false;
        continue;
      }
      out.push({ target: b.target, fn, ...(arg?.kind === 'var' ? { arg: arg.name } : {}), span: b.span });
    }
    return ok && out;
  }

  private ruleBody(body: Formula): Pick<CoreRule, 'atoms' | 'negated' | 'comparisons'> | undefined {
    let ok = true;
    const atoms: CoreAtom[] = [];
    const negated: CoreAtom[] = [];
    const comparisons: CoreComparison[] = [];
    const literal = (f: Formula, positive: boolean): void => {
      switch (f.kind) {
        case 'atom': {
          if (isBuiltin(f.pred)) {
            const form = this.builtinAtom(f, f.pred);
            if (form) return literal(form, positive);
            ok = false;
            return;
          }
          if (isBuiltinName(f.pred)) {
            this.error(unknownBuiltin(f.pred), f.predSpan);
            ok = false;
            return;
          }
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
        case 'funcAtom': {
          if (isBuiltin(f.pred) || isBuiltinName(f.pred)) {
            const c = this.builtinComparison(f, positive);
            if (c) comparisons.push(c);
            else ok = false;
            return;
          }
          if (!this.useFunctional(f)) ok = false;
          else return literal(flatten(f), positive);
          return;
        }
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

  /**
   * A built-in written as an atom. A test (boolean result) with its arguments, `string:like(s, "%a%")`, holds
   * when the call is true: the functional form `string:like[s, "%a%"] = true`. With one argument more it is
   * the functional form of any built-in: `string:length(s, n)` is `string:length[s] = n`.
   */
  private builtinAtom(a: Atom, fn: BuiltinFn): FuncAtom | undefined {
    const arity = BUILTINS[fn].args.length;
    const isTest = BUILTINS[fn].result === 'boolean';
    if (a.args.length !== arity + 1 && !(isTest && a.args.length === arity)) {
      this.error(`${fn} expects ${plural(arity, 'argument')}${isTest ? '' : ' and its result'}, found ${a.args.length}`, a.span);
      return undefined;
    }
    const test = a.args.length === arity;
    const values: Term[] = test ? [{ kind: 'var', name: 'true', span: a.span }] : a.args.slice(arity);
    return { kind: 'funcAtom', pred: fn, keys: a.args.slice(0, arity), values, span: a.span, predSpan: a.predSpan };
  }

  /** `date:year[d] = y` is the comparison (or assignment) y = date:year[d]; negated, y != date:year[d]. */
  private builtinComparison(f: FuncAtom, positive: boolean): CoreComparison | undefined {
    const call = this.apply({ kind: 'apply', name: f.pred, args: f.keys, span: f.span, nameSpan: f.predSpan });
    const value = f.values.length === 1 ? this.simpleTerm(f.values[0]!, 'value') : undefined;
    if (f.values.length !== 1) this.error(`${f.pred}[...] has one value, found ${f.values.length}`, f.span);
    return call && value ? { op: positive ? '=' : '!=', left: value, right: call, span: f.span } : undefined;
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
      case 'apply': {
        const applied = this.apply(t);
        if (applied?.kind !== 'call' || place === 'value') return applied;
        this.error(`expected a variable or constant ${place === 'fact' ? 'in a fact' : 'in a body atom'}, not ${t.name}[...]; bind it with = first (q(y), y = ${t.name}[x])`, t.span);
        return undefined;
      }
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

  /** A built-in applied as a value: `date:parse["YYYY-MM-DD"]` is a constant, folded here; the others calls. */
  private apply(t: Extract<Term, { kind: 'apply' }>): SimpleTerm | undefined {
    if (isBuiltin(t.name)) {
      const arity = BUILTINS[t.name].args.length;
      if (t.args.length !== arity) {
        this.error(`${t.name} expects ${plural(arity, 'argument')}, found ${t.args.length}`, t.span);
        return undefined;
      }
      const args = t.args.map((a) => this.simpleTerm(a, 'value'));
      if (args.some((a) => a === undefined)) return undefined;
      const loose = constantArgs(t.name).find((k) => !isGround(args[k]!));
      if (loose !== undefined) {
        const type = BUILTINS[t.name].args[loose] === 'string' ? 'string' : 'integer';
        this.error(`argument ${loose + 1} of ${t.name} must be a constant ${type}: the device looks ${t.name} up in a table built per constant`, t.args[loose]!.span);
        return undefined;
      }
      return { kind: 'call', fn: t.name, args: args as SimpleTerm[], span: t.span };
    }
    if (t.name !== 'date:parse') {
      this.error(isBuiltinName(t.name) ? unknownBuiltin(t.name) : NOT_SUPPORTED.apply, isBuiltinName(t.name) ? t.nameSpan : t.span);
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

  /**
   * `lhs -> rhs` with something other than type atoms on the right: its violations are the lhs tuples for which
   * some conjunct of rhs fails, one rule per conjunct (an atom becomes a negated atom whose variables not bound by
   * lhs are wildcards, `!a` a positive atom, a comparison its negation; type atoms hold by typing).
   */
  constraint(fullLhs: Head, rhs: Formula, span: SourceSpan, text: string): void {
    const lhs = fullLhs.kind === 'funcAtom' ? flatten(fullLhs) : fullLhs;
    const relation = `$constraint${this.constraints.length + 1}`;
    let fresh = 0;
    const args = lhs.args.map((t): Term => (t.kind === 'wildcard' ? { kind: 'var', name: `$_${++fresh}`, span: t.span } : t));
    const lhsAtom = this.useHead(fullLhs) ? this.coreAtom({ ...lhs, args }, 'atom') : undefined;
    this.constraints.push({ kind: 'constraint', relation, text, span });
    const info = this.entry(relation, args.length, lhs.predSpan);
    info.hasRules = true;
    if (!lhsAtom) return void this.incomplete.add(relation);
    const bound = new Set(lhsAtom.args.flatMap((t) => (t.kind === 'var' ? [t.name] : [])));
    const head: CoreAtom = { ...lhsAtom, pred: relation };
    const rule = (parts: Partial<CoreRule>): void =>
      void this.rules.push({ head, atoms: [lhsAtom], negated: [], comparisons: [], assignments: [], span, text, ...parts });
    for (const c of conjuncts(rhs)) {
      if (c.kind === 'atom' && TYPE_NAMES.has(c.pred)) continue;
      // A built-in test: violated where its comparison fails.
      const negatedBody = c.kind === 'not' ? c.body : undefined;
      const test = negatedBody ?? c;
      if ((test.kind === 'atom' && isBuiltin(test.pred)) || (test.kind === 'funcAtom' && (isBuiltin(test.pred) || isBuiltinName(test.pred)))) {
        const form = test.kind === 'atom' ? this.builtinAtom(test, test.pred as BuiltinFn) : test;
        const cmp = form && this.builtinComparison(form, negatedBody === undefined);
        if (cmp) rule({ comparisons: [{ ...cmp, op: NEGATED_OP[cmp.op] }] });
        else this.incomplete.add(relation);
        continue;
      }
      const negatedAtom = c.kind === 'not' && (c.body.kind === 'atom' || c.body.kind === 'funcAtom') ? c.body : undefined;
      const atom = c.kind === 'atom' || c.kind === 'funcAtom' ? c : negatedAtom;
      if (atom) {
        const flat = atom.kind === 'funcAtom' ? flatten(atom) : atom;
        const ok = atom.kind === 'funcAtom' ? this.useFunctional(atom) : this.use(atom);
        const core = ok ? this.coreAtom(flat, 'atom') : undefined;
        if (!core) {
          this.incomplete.add(relation);
          continue;
        }
        if (negatedAtom) {
          rule({ atoms: [lhsAtom, core] });
        } else {
          const unbound = (t: SimpleTerm): SimpleTerm => (t.kind === 'var' && !bound.has(t.name) ? { kind: 'wildcard', span: t.span } : t);
          rule({ negated: [{ ...core, args: core.args.map(unbound) }] });
        }
      } else if (c.kind === 'compare') {
        const left = this.simpleTerm(c.left, 'value');
        const right = this.simpleTerm(c.right, 'value');
        if (left && right) rule({ comparisons: [{ op: NEGATED_OP[c.op], left, right, span: c.span }] });
        else this.incomplete.add(relation);
      } else {
        this.error('expected atoms, negated atoms or comparisons on the right of an integrity constraint', c.span);
        this.incomplete.add(relation);
      }
    }
  }

  /**
   * `p(x1, .., xn), p(y1, .., yn) -> xi = yi, ...`: a key of base relation p. Positions with one variable in both
   * atoms are the key; every other position needs its equality on the right (the key determines the whole row).
   */
  dependency(atoms: [Head, Head], body: Formula, span: SourceSpan, text: string): void {
    const form = 'expected a key: two atoms of one predicate with distinct variables, e.g. p(k, a), p(k, b) -> a = b';
    const [a, b] = atoms;
    if (a.kind !== 'atom' || b.kind !== 'atom' || a.pred !== b.pred || a.args.length !== b.args.length) return this.error(form, span);
    const names = (atom: Atom): string[] | undefined => {
      const vars = atom.args.flatMap((t) => (t.kind === 'var' ? [t.name] : []));
      return vars.length === atom.args.length && new Set(vars).size === vars.length ? vars : undefined;
    };
    const left = names(a);
    const right = names(b);
    if (!left || !right) return this.error(`${form} (no wildcards, constants or repeated variables)`, span);
    const key = left.flatMap((v, i) => (v === right[i] ? [i] : []));
    const free = left.flatMap((v, i) => (v === right[i] ? [] : [i]));
    if (key.length === 0 || left.some((v, i) => !key.includes(i) && right.includes(v))) {
      return this.error(`${form}: the key's variables stand at the same positions in both atoms, the others differ`, span);
    }
    const equated = new Set<number>();
    for (const c of conjuncts(body)) {
      const pair = c.kind === 'compare' && c.op === '=' && c.left.kind === 'var' && c.right.kind === 'var' ? [c.left.name, c.right.name] : undefined;
      const i = pair && free.find((j) => (pair[0] === left[j] && pair[1] === right[j]) || (pair[0] === right[j] && pair[1] === left[j]));
      if (i === undefined || equated.has(i)) return this.error(`${form}: expected only equalities of a column's two variables on the right`, c.span);
      equated.add(i);
    }
    const missing = free.filter((i) => !equated.has(i));
    if (missing.length > 0) return this.error(`${form}: the right side must equate ${missing.map((i) => `${left[i]} = ${right[i]}`).join(', ')}`, span);
    if (!this.use(a)) return;
    const info = this.preds.get(a.pred)!;
    (info.declaredKeys ??= []).push({ columns: key, text, span });
  }

  /** Keys are declared for base relations: a derived one has no facts load to check them at. */
  checkKeys(): void {
    for (const info of this.preds.values()) {
      for (const key of info.hasRules ? (info.declaredKeys ?? []) : []) {
        this.error(`${info.name} is derived by rules: keys can be declared for base relations only`, key.span!);
      }
    }
  }

  /**
   * A functional predicate's dependency check: its tuples that share the key with a tuple of other values.
   * Rules: $functional_p(k, a) <- p(k, a), p(k, b), a_i != b_i (one rule per value column i).
   */
  functionalChecks(): void {
    for (const info of [...this.preds.values()]) {
      if (info.keys === undefined || info.arity === info.keys || !(info.declared || info.facts.length > 0 || info.hasRules)) continue;
      const relation = `$functional_${info.name}`;
      const span = info.decl?.span ?? info.span;
      const v = (name: string): SimpleTerm => ({ kind: 'var', name, span });
      const cols = Array.from({ length: info.arity }, (_, i) => i);
      const a = cols.map((i) => v(i < info.keys! ? `$k${i}` : `$a${i}`));
      const b = cols.map((i) => v(i < info.keys! ? `$k${i}` : `$b${i}`));
      this.entry(relation, info.arity, span).hasRules = true;
      this.constraints.push({ kind: 'functional', relation, text: info.name, keys: info.keys, span });
      for (let i = info.keys; i < info.arity; i++) {
        this.rules.push({
          head: { pred: relation, args: a, span },
          atoms: [
            { pred: info.name, args: a, span },
            { pred: info.name, args: b, span },
          ],
          negated: [],
          comparisons: [{ op: '!=', left: a[i]!, right: b[i]!, span }],
          assignments: [],
          span,
          text: `functional check of ${info.name}`,
        });
      }
    }
  }

  /** Body atoms must name something: a declaration, facts or rules. */
  checkDefined(): void {
    for (const r of this.rules) {
      for (const a of [...r.atoms, ...r.negated]) {
        const info = this.preds.get(a.pred)!;
        if (!info.declared && info.facts.length === 0 && !info.hasRules) {
          const defined = [...this.preds.values()].filter((p) => p.declared || p.facts.length > 0 || p.hasRules).map((p) => p.name);
          this.error(`undeclared predicate ${a.pred}: expected a declaration, facts or rules for it${didYouMean(a.pred, defined)}`, a.span);
          this.incomplete.add(a.pred);
        }
      }
    }
  }
}

/** Names in a built-in namespace (`string:`, `date:`, `int32:`, ...) are reserved for built-ins. */
function isBuiltinName(name: string): boolean {
  const ns = name.split(':')[0]!;
  return name.includes(':') && (TYPE_NAMES.has(ns) || ns === 'date' || ns === 'string');
}

/** A term without variables or wildcards: a constant (after folding). */
function isGround(t: SimpleTerm): boolean {
  switch (t.kind) {
    case 'var':
    case 'wildcard':
      return false;
    case 'binary':
      return isGround(t.left) && isGround(t.right);
    case 'call':
      return t.args.every(isGround);
    default:
      return true;
  }
}

function unknownBuiltin(name: string): string {
  return `unknown built-in ${name}; expected one of date:parse, ${Object.keys(BUILTINS).join(', ')}`;
}

/** `_` in the positive atoms of an aggregated body: a fresh variable each, so every distinct tuple counts. */
function renameWildcards(atoms: CoreAtom[]): CoreAtom[] {
  let n = 0;
  return atoms.map((a) => ({ ...a, args: a.args.map((t): SimpleTerm => (t.kind === 'wildcard' ? { kind: 'var', name: `$_${++n}`, span: t.span } : t)) }));
}

function plural(n: number, word: string): string {
  return `${n} ${word}${n === 1 ? '' : 's'}`;
}

/** Whether `head -> body` declares types (else it is an integrity constraint). */
function isTypeDeclaration(body: Formula): boolean {
  return conjuncts(body).every((a) => a.kind === 'atom' && TYPE_NAMES.has(a.pred));
}

/** A clause's source text, as a constraint is reported: whitespace collapsed, without the final `.`. */
function clauseText(span: SourceSpan, sources: ReadonlyMap<string, string>): string {
  const text = sources.get(span.file)?.slice(span.start.offset, span.end.offset) ?? '';
  return text.replace(/\.$/, '').replace(/\s+/g, ' ').trim();
}

export function resolve(files: SourceAst[], diagnostics: Diagnostic[], sources: ReadonlyMap<string, string> = new Map()): ResolvedProgram {
  const r = new Resolver(diagnostics);
  const clauses: Clause[] = files.flatMap((f) => f.clauses);
  const orders: OrderClause[] = [];
  // Declarations first, so every use is checked against them wherever they stand.
  for (const c of clauses) if (c.kind === 'decl' && isTypeDeclaration(c.body)) r.declaration(c.head, c.body, c.span);
  for (const c of clauses) {
    switch (c.kind) {
      case 'fact':
        r.fact(c.head);
        break;
      case 'rule':
        r.rule(c.head, c.body, c.span, clauseText(c.span, sources));
        break;
      case 'order':
        orders.push(c);
        break;
      case 'decl':
        if (!isTypeDeclaration(c.body)) r.constraint(c.head, c.body, c.span, clauseText(c.span, sources));
        break;
      case 'dependency':
        r.dependency(c.atoms, c.body, c.span, clauseText(c.span, sources));
        break;
      case 'include':
        break;
    }
  }
  r.checkDefined();
  r.checkKeys();
  r.functionalChecks();
  return { preds: r.preds, rules: r.rules, incomplete: r.incomplete, constraints: r.constraints, orders };
}
