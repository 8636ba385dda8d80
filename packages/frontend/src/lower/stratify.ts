/**
 * Strata: strongly connected components of the dependency graph of derived predicates, in evaluation
 * order (every stratum after those it reads). A component with a cycle, self-loops included, is recursive.
 */
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
    for (const a of rule.atoms) if (reads.has(a.pred)) reads.get(rule.head.pred)!.add(a.pred);
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
