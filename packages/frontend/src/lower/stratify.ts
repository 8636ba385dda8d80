/**
 * Strata: strongly connected components of the dependency graph of derived predicates, in evaluation
 * order (every stratum after those it reads, negated reads included). A component with a cycle, self-loops
 * included, is recursive. Recursion through negation or aggregation has no stratified meaning: `unstratifiedCycles` reports it.
 */
import { errorAt, type Diagnostic } from '@vixen/queryplan';
import type { CheckedProgram, TypedRule } from '../check/program.js';

export interface Stratum {
  preds: string[];
  recursive: boolean;
  rules: TypedRule[];
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
    return { preds, recursive, rules: program.rules.filter((r) => preds.includes(r.head.pred)) };
  });
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

/** One error per negated or aggregated atom whose predicate is in its rule's own stratum, naming the cycle. */
export function unstratifiedCycles(strata: readonly Stratum[]): Diagnostic[] {
  const diags: Diagnostic[] = [];
  for (const s of strata) {
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
      if (!r.aggregate) continue;
      for (const a of r.atoms.filter((a) => s.preds.includes(a.pred))) {
        const cycle = [r.head.pred, ...pathWithin(s, r.head.pred, a.pred).reverse()];
        diags.push(
          errorAt(
            `recursion through aggregation: ${r.head.pred} aggregates over ${a.pred}, which depends on ${r.head.pred} ` +
              `(cycle ${cycle.join(' -> ')}); expected aggregation over predicates computed in an earlier stratum`,
            a.span,
          ),
        );
      }
    }
  }
  return diags;
}
