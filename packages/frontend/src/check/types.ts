/**
 * Typing. Declared columns are fixed; the others are inferred, first from fact literals, then by a fixpoint
 * over rules (body column types flow to variables, through assignments, to head columns). Then every fact,
 * rule, comparison and arithmetic expression is checked against the result and given typed terms and
 * run-time values. Unsuffixed literals adapt: an integer to any numeric type (int32 by default), a real to
 * float32 or decimal (float32 by default).
 */
import {
  aggregateType,
  BUILTINS,
  arithDefined,
  DECIMAL_SCALE,
  errorAt,
  compareValues,
  evalArith,
  evalBuiltin,
  formatSpan,
  parseDecimal,
  parseFloat32,
  valueHasType,
  zeroOf,
  type Column,
  type Diagnostic,
  type Row,
  type ScalarType,
  type SourceSpan,
  type Value,
} from '@vixen/queryplan';
import type {
  CheckedProgram,
  CoreRule,
  LiteralTerm,
  PredInfo,
  Relation,
  ResolvedProgram,
  SimpleTerm,
  TypedAggBinding,
  TypedAssignment,
  TypedAtom,
  TypedComparison,
  TypedRule,
  TypedTerm,
} from './program.js';

/** 'int' / 'real': only unsuffixed literals seen so far; they become int32 / float32 unless something says otherwise. */
type Inferred = ScalarType | 'int' | 'real';

const NUMERIC: ReadonlySet<Inferred> = new Set(['int32', 'int64', 'uint32', 'float32', 'decimal', 'int', 'real']);

function literalType(t: LiteralTerm): Inferred {
  switch (t.kind) {
    case 'string':
      return 'string';
    case 'bool':
      return 'boolean';
    case 'date':
      return 'date';
    case 'int':
      return t.suffix === 'L' ? 'int64' : t.suffix === 'u' ? 'uint32' : 'int';
    case 'real':
      return t.suffix === 'd' ? 'decimal' : t.suffix === 'f' ? 'float32' : 'real';
  }
}

/** The common type of two operand types, or undefined when they do not mix. */
function unify(a: Inferred, b: Inferred): Inferred | undefined {
  if (a === b) return a;
  const adapts = (lit: Inferred, other: Inferred): boolean =>
    (lit === 'int' && NUMERIC.has(other)) || (lit === 'real' && (other === 'float32' || other === 'decimal'));
  if (adapts(a, b)) return b;
  if (adapts(b, a)) return a;
  return undefined;
}

/** Inference keeps the first definite type; an adaptable literal type gives way to one it adapts to. */
function widen(current: Inferred | undefined, next: Inferred | undefined): Inferred | undefined {
  if (next === undefined) return current;
  if (current === undefined) return next;
  return unify(current, next) ?? current;
}

function settle(t: Inferred): ScalarType {
  return t === 'int' ? 'int32' : t === 'real' ? 'float32' : t;
}

function describeType(t: Inferred): string {
  return t === 'int' ? 'an integer' : t === 'real' ? 'a real number' : t;
}

function literalText(t: LiteralTerm): string {
  switch (t.kind) {
    case 'int':
      return `${t.value}${t.suffix}`;
    case 'real':
      return `${t.text}${t.suffix}`;
    case 'string':
      return JSON.stringify(t.value);
    case 'bool':
      return String(t.value);
    case 'date':
      return 'date:parse[...]';
  }
}

/** The value of a typed term made of constants only (arithmetic on them and calls of them), else undefined. */
function foldConstant(t: TypedTerm): Value | undefined {
  switch (t.kind) {
    case 'const':
      return t.value;
    case 'binary': {
      const l = foldConstant(t.left);
      const r = foldConstant(t.right);
      // A zero divisor is left to the run time, where it drops the binding.
      const byZero = (t.op === '/' || t.op === '%') && r !== undefined && compareValues(r, zeroOf(t.type)) === 0;
      return l === undefined || r === undefined || byZero ? undefined : evalArith(t.op, t.type, l, r);
    }
    case 'call': {
      const args = t.args.map(foldConstant);
      return args.every((a) => a !== undefined) ? evalBuiltin(t.fn, args as Value[]) : undefined;
    }
    case 'var':
    case 'wildcard':
      return undefined;
  }
}

function isLiteral(t: SimpleTerm): t is LiteralTerm {
  return t.kind === 'int' || t.kind === 'real' || t.kind === 'string' || t.kind === 'bool' || t.kind === 'date';
}

type VarTypes = Map<string, Inferred | undefined>;

/** Synthesized type of a term from its variables' types; undefined when unknown or ill-typed. */
function synth(t: SimpleTerm, vars: ReadonlyMap<string, Inferred | undefined>): Inferred | undefined {
  switch (t.kind) {
    case 'var':
      return vars.get(t.name);
    case 'wildcard':
      return undefined;
    case 'binary': {
      const l = synth(t.left, vars);
      const r = synth(t.right, vars);
      return l === undefined || r === undefined ? undefined : unify(l, r);
    }
    case 'call':
      return BUILTINS[t.fn].result;
    default:
      return literalType(t);
  }
}

const RANGES: Record<'int32' | 'int64' | 'uint32', [bigint, bigint]> = {
  int32: [-(2n ** 31n), 2n ** 31n - 1n],
  int64: [-(2n ** 63n), 2n ** 63n - 1n],
  uint32: [0n, 2n ** 32n - 1n],
};

/** How a literal is named in a mismatch message. */
function describeLiteral(t: LiteralTerm): string {
  switch (t.kind) {
    case 'string':
      return `string ${literalText(t)}`;
    case 'bool':
      return `boolean ${literalText(t)}`;
    case 'date':
      return 'a date';
    case 'int':
    case 'real': {
      const type = literalType(t);
      return type === 'int' ? `integer ${literalText(t)}` : type === 'real' ? `real number ${literalText(t)}` : `${type} literal ${literalText(t)}`;
    }
  }
}

interface VarInfo {
  type: ScalarType;
  where: string;
}

class TypeChecker {
  private readonly types = new Map<string, (ScalarType | undefined)[]>();

  constructor(
    private readonly program: ResolvedProgram,
    private readonly diagnostics: Diagnostic[],
  ) {}

  private error(message: string, span: SourceSpan): void {
    this.diagnostics.push(errorAt(message, span));
  }

  infer(): void {
    const inferred = new Map<string, (Inferred | undefined)[]>();
    const fixed = (p: PredInfo, i: number): boolean => p.decl?.columns[i]?.type !== undefined;
    for (const p of this.program.preds.values()) {
      const cols: (Inferred | undefined)[] = Array.from({ length: p.arity }, (_, i) => p.decl?.columns[i]?.type);
      for (const f of p.facts) {
        f.args.forEach((t, i) => {
          if (!fixed(p, i) && isLiteral(t)) cols[i] = widen(cols[i], literalType(t));
        });
      }
      inferred.set(p.name, cols);
    }
    for (let changed = true; changed; ) {
      changed = false;
      for (const rule of this.program.rules) {
        const vars: VarTypes = new Map();
        for (const a of rule.atoms) {
          const cols = inferred.get(a.pred)!;
          a.args.forEach((t, i) => {
            if (t.kind === 'var') vars.set(t.name, widen(vars.get(t.name), cols[i]));
          });
        }
        for (const a of rule.assignments) {
          const t = synth(a.expr, vars);
          vars.set(a.name, t === undefined ? undefined : settle(t));
        }
        bindAggregates(rule, vars);
        const head = this.program.preds.get(rule.head.pred)!;
        const cols = inferred.get(head.name)!;
        rule.head.args.forEach((t, i) => {
          if (fixed(head, i) || t.kind === 'wildcard') return;
          const next = widen(cols[i], synth(t, vars));
          if (next !== cols[i]) {
            cols[i] = next;
            changed = true;
          }
        });
      }
    }
    const illTypedHeads = new Set<string>();
    // A head column whose arithmetic or aggregate does not type-check is reported there, not as "cannot infer".
    for (const rule of this.program.rules) {
      const vars: VarTypes = new Map();
      for (const a of rule.atoms) a.args.forEach((t, i) => t.kind === 'var' && vars.set(t.name, widen(vars.get(t.name), inferred.get(a.pred)![i])));
      for (const a of rule.assignments) vars.set(a.name, synth(a.expr, vars));
      bindAggregates(rule, vars);
      const illTyped = (t: SimpleTerm) => t.kind === 'binary' && synth(t, vars) === undefined;
      const badAggregate = rule.aggregate?.some((b) => b.arg !== undefined && vars.get(b.arg) !== undefined && vars.get(b.target) === undefined);
      if (badAggregate || rule.head.args.some(illTyped) || rule.assignments.some((a) => illTyped(a.expr))) illTypedHeads.add(rule.head.pred);
    }
    const blocked = this.blocked(illTypedHeads);
    for (const p of this.program.preds.values()) {
      const cols = inferred.get(p.name)!.map((t) => (t === undefined ? undefined : settle(t)));
      cols.forEach((t, i) => {
        // Declared and blocked predicates had their problem reported already.
        if (t === undefined && !p.declared && !blocked.has(p.name)) {
          this.error(
            `cannot infer the type of column ${i + 1} of ${p.name}; expected a declaration such as ${p.name}(...) -> int32(x), ...`,
            p.span,
          );
        }
      });
      this.types.set(p.name, cols);
    }
  }

  /** Incomplete predicates, `seeds`, and those whose rules read them: an unknown type there is a consequence, not a cause. */
  private blocked(seeds: ReadonlySet<string>): Set<string> {
    const blocked = new Set([...this.program.incomplete, ...seeds]);
    for (let grew = true; grew; ) {
      grew = false;
      for (const r of this.program.rules) {
        if (!blocked.has(r.head.pred) && [...r.atoms, ...r.negated].some((a) => blocked.has(a.pred))) {
          blocked.add(r.head.pred);
          grew = true;
        }
      }
    }
    return blocked;
  }

  /** The run-time value of literal `t` at type `expected`, or undefined after reporting why not. */
  private constant(t: LiteralTerm, expected: ScalarType, what: string): Value | undefined {
    const lit = literalType(t);
    if (unify(lit, expected) !== expected) {
      this.error(`type mismatch: expected ${expected} for ${what} but found ${describeLiteral(t)}`, t.span);
      return undefined;
    }
    const checked = (v: Value | undefined, problem: string): Value | undefined => {
      if (v !== undefined && valueHasType(expected, v)) return v;
      this.error(`bad literal ${literalText(t)}: ${problem}`, t.span);
      return undefined;
    };
    switch (t.kind) {
      case 'string':
        return t.value;
      case 'bool':
        return t.value;
      case 'date':
        return t.days;
      case 'int':
        switch (expected) {
          case 'int32':
          case 'int64':
          case 'uint32': {
            const [lo, hi] = RANGES[expected];
            if (t.value < lo || t.value > hi) {
              this.error(`${expected} literal ${t.value} is out of range (expected ${lo} to ${hi})`, t.span);
              return undefined;
            }
            return expected === 'int64' ? t.value : Number(t.value);
          }
          case 'decimal':
            return checked(t.value * DECIMAL_SCALE, 'out of the decimal range');
          default:
            return checked(parseFloat32(t.value.toString()), 'out of the float32 range');
        }
      case 'real':
        if (expected === 'decimal') return checked(parseDecimal(t.text), 'decimals have at most 4 fractional digits and fit in 64 bits');
        return checked(parseFloat32(t.text), 'out of the float32 range');
    }
  }

  /** Reports the first operator whose operands do not mix; false when there is one. */
  private checkArith(t: SimpleTerm, vars: VarTypes): boolean {
    if (t.kind !== 'binary') return true;
    if (!this.checkArith(t.left, vars) || !this.checkArith(t.right, vars)) return false;
    const l = synth(t.left, vars);
    const r = synth(t.right, vars);
    if (l === undefined || r === undefined || unify(l, r) !== undefined) return true;
    this.error(`type mismatch in arithmetic: cannot apply ${t.op} to ${describeType(l)} and ${describeType(r)}`, t.span);
    return false;
  }

  /** `t` typed at `expected`; undefined after reporting why not. */
  private elaborate(t: SimpleTerm, expected: ScalarType, what: string, vars: ReadonlyMap<string, VarInfo>): TypedTerm | undefined {
    switch (t.kind) {
      case 'wildcard':
        return undefined;
      case 'var': {
        const bound = vars.get(t.name);
        if (bound && bound.type !== expected) {
          this.error(`type mismatch: expected ${expected} for ${what} but variable ${t.name} is ${bound.type} (${bound.where})`, t.span);
        }
        return bound?.type === expected ? { kind: 'var', name: t.name, type: expected } : undefined;
      }
      case 'call': {
        const sig = BUILTINS[t.fn];
        if (sig.result !== expected) {
          this.error(`type mismatch: expected ${expected} for ${what} but ${t.fn} gives ${sig.result}`, t.span);
          return undefined;
        }
        const typed = t.args.map((a, k) => this.elaborate(a, sig.args[k]!, `argument ${k + 1} of ${t.fn}`, vars));
        if (!complete(typed)) return undefined;
        // Constants are folded: a table built-in's constant arguments must be values, and a call on constants
        // needs no device code at all.
        const values = typed.map(foldConstant);
        const args = typed.map((a, k): TypedTerm => (values[k] === undefined ? a : { kind: 'const', type: a.type, value: values[k] }));
        if (t.fn === 'string:substring' && (values[2] as number) < 0) {
          this.error(`the length (argument 3) of string:substring must not be negative, found ${values[2]}`, t.args[2]!.span);
          return undefined;
        }
        if (values.every((v) => v !== undefined)) return { kind: 'const', type: expected, value: evalBuiltin(t.fn, values as Value[]) };
        return { kind: 'call', fn: t.fn, args, type: expected };
      }
      case 'binary': {
        const types = varTypes(vars);
        if (!this.checkArith(t, types)) return undefined;
        const found = synth(t, types);
        if (found !== undefined && unify(found, expected) !== expected) {
          this.error(`type mismatch: expected ${expected} for ${what} but the arithmetic gives ${describeType(found)}`, t.span);
          return undefined;
        }
        if (!arithDefined(t.op, expected)) {
          this.error(`type mismatch: operator ${t.op} is not defined on ${expected}`, t.span);
          return undefined;
        }
        const left = this.elaborate(t.left, expected, what, vars);
        const right = this.elaborate(t.right, expected, what, vars);
        return left && right ? { kind: 'binary', op: t.op, left, right, type: expected } : undefined;
      }
      default: {
        const value = this.constant(t, expected, what);
        return value === undefined ? undefined : { kind: 'const', type: expected, value };
      }
    }
  }

  /** The typed inline facts of `p` without repeats, and where each was written. */
  facts(p: PredInfo): { rows: Row[]; spans: SourceSpan[] } {
    const cols = this.types.get(p.name)!;
    const rows: Row[] = [];
    const spans: SourceSpan[] = [];
    const seen = new Set<string>();
    for (const f of p.facts) {
      const row = f.args.map((t, i) =>
        cols[i] !== undefined && isLiteral(t) ? this.constant(t, cols[i], `column ${i + 1} of ${p.name}`) : undefined,
      );
      if (row.some((v) => v === undefined)) continue;
      // Set semantics: a repeated fact adds nothing.
      const key = JSON.stringify(row, (_, v: unknown) => (typeof v === 'bigint' ? `${v}n` : v));
      if (!seen.has(key)) {
        rows.push(row as Row);
        spans.push(f.span);
      }
      seen.add(key);
    }
    return { rows, spans };
  }

  /** A body atom's typed arguments; positive atoms bind their new variables, negated ones only read. */
  private atom(a: CoreRule['atoms'][number], vars: Map<string, VarInfo>, binds: boolean): TypedAtom | undefined {
    const args = a.args.map((t, i): TypedTerm | undefined => {
      const type = this.types.get(a.pred)![i];
      if (type === undefined) return undefined;
      const what = `column ${i + 1} of ${a.pred}`;
      switch (t.kind) {
        case 'wildcard':
          return { kind: 'wildcard', type };
        case 'var': {
          const prior = vars.get(t.name);
          if (!prior) {
            if (binds) vars.set(t.name, { type, where: `${what} at ${formatSpan(t.span)}` });
          } else if (prior.type !== type) {
            this.error(`type mismatch: variable ${t.name} is ${prior.type} (${prior.where}) but ${what} is ${type}`, t.span);
            return undefined;
          }
          return { kind: 'var', name: t.name, type };
        }
        case 'binary':
        case 'call':
          return undefined;
        default: {
          const value = this.constant(t, type, what);
          return value === undefined ? undefined : { kind: 'const', type, value };
        }
      }
    });
    return complete(args) ? { pred: a.pred, args, span: a.span } : undefined;
  }

  rule(rule: CoreRule): TypedRule | undefined {
    const vars = new Map<string, VarInfo>();
    const atoms = rule.atoms.map((a) => this.atom(a, vars, true));
    const assignments = rule.assignments.map((a): TypedAssignment | undefined => {
      const types = varTypes(vars);
      const found = synth(a.expr, types);
      if (found === undefined) {
        this.checkArith(a.expr, types);
        return undefined;
      }
      const type = settle(found);
      const expr = this.elaborate(a.expr, type, `the assignment to ${a.name}`, vars);
      vars.set(a.name, { type, where: `assigned at ${formatSpan(a.span)}` });
      return expr && { name: a.name, expr };
    });
    const aggregate = rule.aggregate?.map((b): TypedAggBinding | undefined => {
      const arg = b.arg === undefined ? undefined : vars.get(b.arg);
      if (b.arg !== undefined && !arg) return undefined;
      const type = aggregateType(b.fn, arg?.type);
      if (!type) {
        this.error(`bad aggregate use: ${b.fn} needs a numeric argument but ${b.arg} is ${arg!.type}`, b.span);
        return undefined;
      }
      vars.set(b.target, { type, where: `the ${b.fn} at ${formatSpan(b.span)}` });
      return { target: b.target, fn: b.fn, ...(b.arg !== undefined ? { arg: b.arg } : {}), type };
    });
    const negated = rule.negated.map((a) => this.atom(a, vars, false));
    const headTypes = this.types.get(rule.head.pred)!;
    const headArgs = rule.head.args.map((t, i): TypedTerm | undefined => {
      const type = headTypes[i];
      return type === undefined ? undefined : this.elaborate(t, type, `column ${i + 1} of ${rule.head.pred}`, vars);
    });
    const comparisons = rule.comparisons.map((c): TypedComparison | undefined => {
      const types = varTypes(vars);
      const lt = synth(c.left, types);
      const rt = synth(c.right, types);
      if (lt === undefined || rt === undefined) {
        if (this.checkArith(c.left, types)) this.checkArith(c.right, types);
        return undefined;
      }
      const common = unify(lt, rt);
      if (common === undefined) {
        this.error(`type mismatch: cannot compare ${describeType(lt)} with ${describeType(rt)}`, c.span);
        return undefined;
      }
      const type = settle(common);
      const left = this.elaborate(c.left, type, 'the comparison', vars);
      const right = this.elaborate(c.right, type, 'the comparison', vars);
      return left && right ? { op: c.op, left, right } : undefined;
    });
    if (!complete(atoms) || !complete(negated) || !complete(headArgs) || !complete(comparisons) || !complete(assignments)) {
      return undefined;
    }
    if (aggregate && !complete(aggregate)) return undefined;
    return {
      head: { pred: rule.head.pred, args: headArgs, span: rule.head.span },
      atoms,
      negated,
      comparisons,
      assignments,
      ...(aggregate ? { aggregate } : {}),
      span: rule.span,
      text: rule.text,
    };
  }

  relation(p: PredInfo): Relation {
    const types = this.types.get(p.name)!;
    const names = columnNames(p, this.program.rules);
    // An untyped column was reported; the placeholder only keeps the (then unused) relation well-formed.
    const columns: Column[] = types.map((type, i) => ({ name: names[i]!, type: type ?? 'int32' }));
    const facts = this.facts(p);
    return { name: p.name, columns, hasRules: p.hasRules, facts: facts.rows, factSpans: facts.spans, span: p.span, ...(p.keys !== undefined ? { keys: p.keys } : {}), ...(p.declaredKeys ? { declaredKeys: p.declaredKeys } : {}) };
  }
}

/** Types of aggregate results during inference (unknown while the argument's type is). */
function bindAggregates(rule: CoreRule, vars: VarTypes): void {
  for (const b of rule.aggregate ?? []) {
    const arg = b.arg === undefined ? undefined : vars.get(b.arg);
    vars.set(b.target, b.arg !== undefined && arg === undefined ? undefined : aggregateType(b.fn, arg === undefined ? undefined : settle(arg)));
  }
}

function complete<T>(xs: (T | undefined)[]): xs is T[] {
  return xs.every((x) => x !== undefined);
}

function varTypes(vars: ReadonlyMap<string, VarInfo>): VarTypes {
  return new Map([...vars].map(([name, v]) => [name, v.type]));
}

/** Column names for printing: the declaration's variables, else the first rule head's, else c0, c1, ... */
function columnNames(p: PredInfo, rules: CoreRule[]): string[] {
  const fallback = Array.from({ length: p.arity }, (_, i) => `c${i}`);
  const fromHead = rules.find((r) => r.head.pred === p.name)?.head.args.map((t) => (t.kind === 'var' ? t.name : ''));
  const names = p.decl?.columns.map((c) => c.name) ?? fromHead ?? fallback;
  return names.map((n, i) => (n === '' || names.indexOf(n) !== i ? fallback[i]! : n));
}

export function checkTypes(program: ResolvedProgram, diagnostics: Diagnostic[]): CheckedProgram {
  const checker = new TypeChecker(program, diagnostics);
  checker.infer();
  const relations = [...program.preds.values()].map((p) => checker.relation(p));
  const rules = program.rules.map((r) => checker.rule(r)).filter((r): r is TypedRule => r !== undefined);
  return { relations, rules, constraints: program.constraints, orders: program.orders };
}
