/**
 * Typing. Declared columns are fixed; the others are inferred, first from fact literals, then by a fixpoint
 * over rules (body column types flow to variables, variables to head columns). Then every fact, rule and
 * comparison is checked against the result and given typed terms and run-time values.
 */
import { errorAt, type Column, type Diagnostic, type Row, type ScalarType, type SourceSpan, type Value } from '@vixen/queryplan';
import type { IntLit } from '../syntax/ast.js';
import { formatLocation } from '../syntax/span.js';
import type {
  CheckedProgram,
  CoreRule,
  PredInfo,
  Relation,
  ResolvedProgram,
  SimpleTerm,
  TypedComparison,
  TypedRule,
  TypedTerm,
} from './program.js';

/** 'int': only unsuffixed integer literals seen so far; it becomes int32 unless something says int64. */
type Inferred = ScalarType | 'int';
type Literal = Extract<SimpleTerm, { kind: 'int' | 'string' }>;

const RANGES: Record<'int32' | 'int64', [bigint, bigint]> = {
  int32: [-(2n ** 31n), 2n ** 31n - 1n],
  int64: [-(2n ** 63n), 2n ** 63n - 1n],
};

function literalType(t: Literal): Inferred {
  return t.kind === 'string' ? 'string' : t.suffix === 'L' ? 'int64' : 'int';
}

/** Inference keeps the first definite type; an 'int' gives way to a definite numeric type. */
function widen(current: Inferred | undefined, next: Inferred | undefined): Inferred | undefined {
  if (next === undefined) return current;
  if (current === undefined || (current === 'int' && next !== 'string')) return next;
  return current;
}

function describeType(t: Inferred): string {
  return t === 'int' ? 'an integer' : t;
}

function literalText(t: IntLit): string {
  return `${t.value}${t.suffix}`;
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
          if (!fixed(p, i) && (t.kind === 'int' || t.kind === 'string')) cols[i] = widen(cols[i], literalType(t));
        });
      }
      inferred.set(p.name, cols);
    }
    for (let changed = true; changed; ) {
      changed = false;
      for (const rule of this.program.rules) {
        const vars = new Map<string, Inferred | undefined>();
        for (const a of rule.atoms) {
          const cols = inferred.get(a.pred)!;
          a.args.forEach((t, i) => {
            if (t.kind === 'var') vars.set(t.name, widen(vars.get(t.name), cols[i]));
          });
        }
        const head = this.program.preds.get(rule.head.pred)!;
        const cols = inferred.get(head.name)!;
        rule.head.args.forEach((t, i) => {
          if (fixed(head, i) || t.kind === 'wildcard') return;
          const next = widen(cols[i], t.kind === 'var' ? vars.get(t.name) : literalType(t));
          if (next !== cols[i]) {
            cols[i] = next;
            changed = true;
          }
        });
      }
    }
    const blocked = this.blocked();
    for (const p of this.program.preds.values()) {
      const cols = inferred.get(p.name)!.map((t) => (t === 'int' ? 'int32' : t));
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

  /** Incomplete predicates and those whose rules read them: an unknown type there is a consequence, not a cause. */
  private blocked(): Set<string> {
    const blocked = new Set(this.program.incomplete);
    for (let grew = true; grew; ) {
      grew = false;
      for (const r of this.program.rules) {
        if (!blocked.has(r.head.pred) && r.atoms.some((a) => blocked.has(a.pred))) {
          blocked.add(r.head.pred);
          grew = true;
        }
      }
    }
    return blocked;
  }

  /** The run-time value of literal `t` at type `expected`, or undefined after reporting why not. */
  private constant(t: Literal, expected: ScalarType, what: string): Value | undefined {
    if (t.kind === 'string') {
      if (expected === 'string') return t.value;
      this.error(`type mismatch: expected ${expected} for ${what} but found string ${JSON.stringify(t.value)}`, t.span);
      return undefined;
    }
    if (expected === 'string') {
      this.error(`type mismatch: expected string for ${what} but found integer ${literalText(t)}`, t.span);
      return undefined;
    }
    if (expected === 'int32' && t.suffix === 'L') {
      this.error(`type mismatch: expected int32 for ${what} but found int64 literal ${literalText(t)}`, t.span);
      return undefined;
    }
    const [lo, hi] = RANGES[expected];
    if (t.value < lo || t.value > hi) {
      this.error(`${expected} literal ${t.value} is out of range (expected ${lo} to ${hi})`, t.span);
      return undefined;
    }
    return expected === 'int32' ? Number(t.value) : t.value;
  }

  facts(p: PredInfo): Row[] {
    const cols = this.types.get(p.name)!;
    const rows: Row[] = [];
    const seen = new Set<string>();
    for (const f of p.facts) {
      const row = f.args.map((t, i) =>
        cols[i] !== undefined && (t.kind === 'int' || t.kind === 'string')
          ? this.constant(t, cols[i], `column ${i + 1} of ${p.name}`)
          : undefined,
      );
      if (row.some((v) => v === undefined)) continue;
      // Set semantics: a repeated fact adds nothing.
      const key = JSON.stringify(row, (_, v: unknown) => (typeof v === 'bigint' ? `${v}n` : v));
      if (!seen.has(key)) rows.push(row as Row);
      seen.add(key);
    }
    return rows;
  }

  rule(rule: CoreRule): TypedRule | undefined {
    const vars = new Map<string, { type: ScalarType; where: string }>();
    const atoms = rule.atoms.map((a) => ({
      pred: a.pred,
      args: a.args.map((t, i): TypedTerm | undefined => {
        const type = this.types.get(a.pred)![i];
        if (type === undefined) return undefined;
        const what = `column ${i + 1} of ${a.pred}`;
        switch (t.kind) {
          case 'wildcard':
            return { kind: 'wildcard', type };
          case 'var': {
            const prior = vars.get(t.name);
            if (!prior) {
              vars.set(t.name, { type, where: `${what} at ${formatLocation(t.span)}` });
            } else if (prior.type !== type) {
              this.error(`type mismatch: variable ${t.name} is ${prior.type} (${prior.where}) but ${what} is ${type}`, t.span);
              return undefined;
            }
            return { kind: 'var', name: t.name, type };
          }
          case 'int':
          case 'string': {
            const value = this.constant(t, type, what);
            return value === undefined ? undefined : { kind: 'const', type, value };
          }
        }
      }),
    }));
    const headTypes = this.types.get(rule.head.pred)!;
    const headArgs = rule.head.args.map((t, i): TypedTerm | undefined => {
      const type = headTypes[i];
      const what = `column ${i + 1} of ${rule.head.pred}`;
      if (type === undefined || t.kind === 'wildcard') return undefined;
      if (t.kind !== 'var') {
        const value = this.constant(t, type, what);
        return value === undefined ? undefined : { kind: 'const', type, value };
      }
      const bound = vars.get(t.name);
      if (bound && bound.type !== type) {
        const found = `variable ${t.name} is ${bound.type} (${bound.where})`;
        this.error(`type mismatch: expected ${type} for ${what} but ${found}`, t.span);
      }
      return bound?.type === type ? { kind: 'var', name: t.name, type } : undefined;
    });
    const comparisons = rule.comparisons.map((c): TypedComparison | undefined => {
      const typeOf = (t: SimpleTerm): Inferred | undefined =>
        t.kind === 'var' ? vars.get(t.name)?.type : t.kind === 'wildcard' ? undefined : literalType(t);
      const lt = typeOf(c.left);
      const rt = typeOf(c.right);
      if (lt === undefined || rt === undefined) return undefined;
      const numeric = (t: Inferred): boolean => t !== 'string';
      if (lt !== rt && !((lt === 'int' && numeric(rt)) || (rt === 'int' && numeric(lt)))) {
        this.error(`type mismatch: cannot compare ${describeType(lt)} with ${describeType(rt)}`, c.span);
        return undefined;
      }
      const type: ScalarType = lt !== 'int' ? lt : rt !== 'int' ? rt : 'int32';
      const operand = (t: SimpleTerm): TypedTerm | undefined => {
        if (t.kind === 'var') return { kind: 'var', name: t.name, type };
        if (t.kind === 'wildcard') return undefined;
        const value = this.constant(t, type, 'the comparison');
        return value === undefined ? undefined : { kind: 'const', type, value };
      };
      const left = operand(c.left);
      const right = operand(c.right);
      return left && right ? { op: c.op, left, right } : undefined;
    });
    const complete = <T>(xs: (T | undefined)[]): xs is T[] => xs.every((x) => x !== undefined);
    if (!atoms.every((a) => complete(a.args)) || !complete(headArgs) || !complete(comparisons)) return undefined;
    return {
      head: { pred: rule.head.pred, args: headArgs as TypedTerm[] },
      atoms: atoms.map((a) => ({ pred: a.pred, args: a.args as TypedTerm[] })),
      comparisons: comparisons as TypedComparison[],
    };
  }

  relation(p: PredInfo): Relation {
    const types = this.types.get(p.name)!;
    const names = columnNames(p, this.program.rules);
    // An untyped column was reported; the placeholder only keeps the (then unused) relation well-formed.
    const columns: Column[] = types.map((type, i) => ({ name: names[i]!, type: type ?? 'int32' }));
    return { name: p.name, columns, hasRules: p.hasRules, facts: this.facts(p), span: p.span };
  }
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
  return { relations, rules };
}
