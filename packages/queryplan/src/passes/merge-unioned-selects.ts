/**
 * Unions of selects of one relation become one select. The variants of a disjunction over one relation
 * (`cust(c) <- customer(c, x), x = "A" ; customer(c, x), x = "B".`) lower to
 *
 *   t1 := mapFilter R where F1 project P;  X := union X, t1
 *   t2 := mapFilter R where F2 project P;  X := union X, t2
 *
 * which here becomes `t1 := mapFilter R where (F1 or F2) project P; X := union X, t1`: one scan of R, and on the
 * GPU no second select and no merge and unique of the two.
 */
import { relationUses, type Predicate, type QpCommand, type QpProgram } from '../ir.js';
import { printExpr } from '../print.js';
import { unionOrigins } from '../rule-origin.js';
import type { QpPass } from '../pipeline.js';

type MapFilter = Extract<QpCommand, { kind: 'mapFilter' }>;

/** A filter's alternatives: one conjunction, or an `any`'s when that is all it is. */
function alternatives(filter: Predicate[]): Predicate[][] {
  const only = filter.length === 1 ? filter[0]! : undefined;
  return only?.kind === 'any' ? only.alternatives : [filter];
}

/** The filter holding where any of `alts` holds; an empty alternative holds everywhere. */
function disjunction(alts: Predicate[][]): Predicate[] {
  return alts.some((a) => a.length === 0) ? [] : [{ kind: 'any', alternatives: alts }];
}

export const mergeUnionedSelects = { name: 'merge-unioned-selects', required: false, run } satisfies QpPass;

function run(plan: QpProgram): QpProgram {
  const temp = new Set(plan.relations.filter((r) => r.kind === 'temp').map((r) => r.name));
  const { reads, writes } = relationUses(plan);
  // A temporary written and read once (by its union) holds nothing else: widening it changes nothing else.
  const privateTemp = (name: string): boolean => temp.has(name) && reads.get(name) === 1 && writes.get(name) === 1;
  const projection = (c: MapFilter): string => c.project.map(printExpr).join();

  const dropped = new Set<string>();
  const blocks = plan.blocks.map((b) => {
    const out: QpCommand[] = [];
    for (let i = 0; i < b.commands.length; i++) {
      const select = b.commands[i]!;
      const union = b.commands[i + 1];
      const prevSelect = out[out.length - 2];
      const prevUnion = out[out.length - 1];
      const merges =
        select.kind === 'mapFilter' &&
        union?.kind === 'union' &&
        union.right === select.target &&
        union.left === union.target &&
        prevSelect?.kind === 'mapFilter' &&
        prevUnion?.kind === 'union' &&
        prevUnion.target === union.target &&
        prevUnion.left === union.target &&
        prevUnion.right === prevSelect.target &&
        prevSelect.source === select.source &&
        // The second select must read what the first did: not the relation the first union wrote.
        select.source !== union.target &&
        projection(prevSelect) === projection(select) &&
        privateTemp(prevSelect.target) &&
        privateTemp(select.target);
      if (!merges) {
        out.push(select);
        continue;
      }
      out[out.length - 2] = {
        ...prevSelect,
        filter: disjunction([...alternatives(prevSelect.filter), ...alternatives(select.filter)]),
        ...unionOrigins(prevSelect.rules, select.rules),
      };
      out[out.length - 1] = { ...prevUnion, ...unionOrigins(prevUnion.rules, union.rules) };
      dropped.add(select.target);
      i++;
    }
    return { ...b, commands: out };
  });
  if (dropped.size === 0) return plan;
  return { ...plan, relations: plan.relations.filter((r) => !dropped.has(r.name)), blocks };
}
