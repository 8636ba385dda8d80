/**
 * Strata: strongly connected components of the dependency graph of derived predicates, in evaluation
 * order (every stratum after those it reads, negated reads included). A component with a cycle, self-loops
 * included, is recursive. Recursion through negation, count, sum or avg has no stratified meaning:
 * `unstratifiedCycles` reports it. A recursive component with min (or max) aggregate rules is a lattice stratum
 * (LANGUAGE.md "Recursion through min and max"): each predicate holds, per key (all columns but the last), the
 * least (greatest) value of its derivations; `unstratifiedCycles` checks that it has that shape.
 */
import { errorAt, type Constraint, type Diagnostic } from '@vixen/queryplan';
import type { CheckedProgram, TypedRule } from '../check/program.js';

export interface Stratum {
  preds: string[];
  recursive: boolean;
  rules: TypedRule[];
  /** Set on a recursive stratum with min or max aggregate rules: the one kind its predicates combine values by. */
  lattice?: 'min' | 'max';
}

export function stratify(program: CheckedProgram): Stratum[] {
  const derived = program.relations.filter((r) => r.hasRules).map((r) => r.name);
  const reads = new Map<string, Set<string>>(derived.map((p) => [p, new Set<string>()]));
  for (const rule of program.rules) {
    for (const a of [...rule.atoms, ...rule.negated]) if (reads.has(a.pred)) reads.get(rule.head.pred)!.add(a.pred);
  }

  // Tarjan's algorithm along "reads" edges emits each component after every component it reads.
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const components: string[][] = [];
  const visit = (p: string): void => {
    index.set(p, index.size);
    low.set(p, index.get(p)!);
    stack.push(p);
    onStack.add(p);
    for (const q of reads.get(p)!) {
      if (!index.has(q)) {
        visit(q);
        low.set(p, Math.min(low.get(p)!, low.get(q)!));
      } else if (onStack.has(q)) {
        low.set(p, Math.min(low.get(p)!, index.get(q)!));
      }
    }
    if (low.get(p) !== index.get(p)) return;
    const component: string[] = [];
    let q: string;
    do {
      q = stack.pop()!;
      onStack.delete(q);
      component.push(q);
    } while (q !== p);
    components.push(component);
  };
  for (const p of derived) if (!index.has(p)) visit(p);

  return components.map((component) => {
    const preds = derived.filter((p) => component.includes(p));
    const recursive = preds.length > 1 || reads.get(preds[0]!)!.has(preds[0]!);
    const rules = program.rules.filter((r) => preds.includes(r.head.pred));
    const lattice = recursive ? rules.flatMap((r) => r.aggregate ?? []).find((b) => b.fn === 'min' || b.fn === 'max')?.fn : undefined;
    return { preds, recursive, rules, ...(lattice === 'min' || lattice === 'max' ? { lattice } : {}) };
  });
}

/**
 * The program without the functional-dependency checks of lattice predicates whose key is all columns but the
 * value: their lowering keeps one value per such key, so the check (a self-join) could never find a violation.
 */
export function withoutLatticeChecks(program: CheckedProgram, strata: readonly Stratum[]): { program: CheckedProgram; strata: Stratum[] } {
  const lattice = new Set(strata.filter((s) => s.lattice).flatMap((s) => s.preds));
  const arity = (name: string): number => program.relations.find((r) => r.name === name)!.columns.length;
  // Only a dependency of the value on all other columns: `p[k] = a, v` still has `a` to check.
  const implied = (c: Constraint): boolean => c.kind === 'functional' && lattice.has(c.text) && c.keys === arity(c.text) - 1;
  const checks = new Set(program.constraints.filter(implied).map((c) => c.relation));
  return {
    program: {
      ...program,
      relations: program.relations.filter((r) => !checks.has(r.name)),
      rules: program.rules.filter((r) => !checks.has(r.head.pred)),
      constraints: program.constraints.filter((c) => !checks.has(c.relation)),
    },
    strata: strata.filter((s) => !s.preds.every((p) => checks.has(p))),
  };
}

/** Shortest path from `from` to `to` along "is read by" edges inside one stratum (both ends included). */
function pathWithin(s: Stratum, from: string, to: string): string[] {
  const prev = new Map<string, string>([[from, from]]);
  const queue = [from];
  while (queue.length > 0) {
    const p = queue.shift()!;
    if (p === to) break;
    for (const r of s.rules.filter((r) => r.atoms.concat(r.negated).some((a) => a.pred === p))) {
      if (!prev.has(r.head.pred)) {
        prev.set(r.head.pred, p);
        queue.push(r.head.pred);
      }
    }
  }
  const path = [to];
  while (path[0] !== from) path.unshift(prev.get(path[0]!)!);
  return path;
}

/** `head -> a -> ... -> head` along "reads" edges: the cycle through `head`'s read of `a` (both in stratum `s`). */
function cycleThrough(s: Stratum, head: string, a: string): string {
  return [head, ...pathWithin(s, head, a).reverse()].join(' -> ');
}

/**
 * One error per negated or aggregated atom whose predicate is in its rule's own stratum, naming the cycle; min
 * and max aggregates may recurse where the whole stratum is one lattice (`latticeErrors`).
 */
export function unstratifiedCycles(strata: readonly Stratum[]): Diagnostic[] {
  const diags: Diagnostic[] = [];
  for (const s of strata) {
    // Negation in the cycle is the error to fix first: the lattice's shape is checked without it.
    const negates = s.rules.some((r) => r.negated.some((a) => s.preds.includes(a.pred)));
    if (s.lattice && !negates) diags.push(...latticeErrors(s, s.lattice));
    for (const r of s.rules) {
      for (const a of r.negated.filter((a) => s.preds.includes(a.pred))) {
        // head reads !a and, through the stratum, a reads head back: head -> a -> ... -> head.
        const cycle = [r.head.pred, ...pathWithin(s, r.head.pred, a.pred).reverse()];
        diags.push(
          errorAt(
            `recursion through negation: ${r.head.pred} negates ${a.pred}, which depends on ${r.head.pred} ` +
              `(cycle ${cycle.join(' -> ')}); expected negation of predicates computed in an earlier stratum`,
            a.span,
          ),
        );
      }
      if (!r.aggregate || s.lattice) continue;
      for (const a of r.atoms.filter((a) => s.preds.includes(a.pred))) {
        const cycle = [r.head.pred, ...pathWithin(s, r.head.pred, a.pred).reverse()];
        diags.push(
          errorAt(
            `recursion through aggregation: ${r.head.pred} aggregates over ${a.pred}, which depends on ${r.head.pred} ` +
              `(cycle ${cycle.join(' -> ')}); expected aggregation over predicates computed in an earlier stratum ` +
              `(only min and max may recurse)`,
            a.span,
          ),
        );
      }
    }
  }
  return diags;
}

/**
 * A lattice stratum's shape: every rule of its predicates is a plain rule or an aggregate of the stratum's one kind
 * with one result, the head's last column (the value; the other columns are the key); every predicate has such an
 * aggregate rule, so none of them is a set whose rows would keep values that later improved.
 */
function latticeErrors(s: Stratum, kind: 'min' | 'max'): Diagnostic[] {
  const diags: Diagnostic[] = [];
  /** A cycle through `head`: through an atom of the stratum that one of its rules reads, else through a reader of it. */
  const cycleOf = (head: string): string => {
    const reader = s.rules.find((r) => r.head.pred === head && r.atoms.some((a) => s.preds.includes(a.pred)));
    const a = reader?.atoms.find((a) => s.preds.includes(a.pred));
    if (a) return cycleThrough(s, head, a.pred);
    const other = s.rules.find((r) => r.atoms.some((a) => a.pred === head))!;
    return cycleThrough(s, other.head.pred, head);
  };
  for (const r of s.rules) {
    const bindings = r.aggregate ?? [];
    const other = bindings.find((b) => b.fn !== kind);
    const head = r.head.pred;
    if (other) {
      diags.push(
        errorAt(
          `recursion through ${kind} and ${other.fn}: ${head} has a ${other.fn} rule in a cycle through ${kind} (cycle ${cycleOf(head)}); ` +
            `expected the rules of a recursive ${kind} to be ${kind} aggregates or plain rules (only one kind of min or max may recurse)`,
          r.span,
        ),
      );
      continue;
    }
    const last = r.head.args[r.head.args.length - 1];
    const target = last?.kind === 'var' ? last.name : undefined;
    if (bindings.length > 1 || (bindings.length === 1 && bindings[0]!.target !== target)) {
      diags.push(
        errorAt(
          `recursion through ${kind}: ${head} (cycle ${cycleOf(head)}) must hold one ${kind} value per key; ` +
            `expected one aggregate whose result is the head's last column, as in ${head}[k] = v <- agg<<v = ${kind}(x)>> ...`,
          r.span,
        ),
      );
    }
  }
  for (const p of s.preds) {
    if (s.rules.some((r) => r.head.pred === p && r.aggregate)) continue;
    const rule = s.rules.find((r) => r.head.pred === p)!;
    diags.push(
      errorAt(
        `recursion through ${kind}: ${p} is in a cycle through ${kind} (cycle ${cycleOf(p)}) but has no ${kind} rule; ` +
          `expected every predicate of the cycle to combine its values by ${kind} (give ${p} a ${kind} aggregate rule)`,
        rule.span,
      ),
    );
  }
  return diags;
}
