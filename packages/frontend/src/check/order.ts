/**
 * `order P by col [asc|desc], ... [limit N].` clauses against the checked relations: column names are the
 * relation's (its declaration's variables, else its first rule head's). A limit also applies when rules read P
 * (the plan limits P once it is complete), so no other predicate of P's recursive component may read it.
 */
import { errorAt, type Diagnostic, type OutputOrder } from '@vixen/queryplan';
import type { Stratum } from '../lower/stratify.js';
import type { CheckedProgram } from './program.js';

export function resolveOrders(program: CheckedProgram, diagnostics: Diagnostic[], strata: readonly Stratum[]): Record<string, OutputOrder> {
  const orders: Record<string, OutputOrder> = {};
  for (const c of program.orders) {
    const relation = program.relations.find((r) => r.name === c.pred && !r.name.startsWith('$'));
    if (!relation) {
      diagnostics.push(errorAt(`order: unknown predicate ${c.pred}; expected a predicate of this program`, c.predSpan));
      continue;
    }
    if (orders[c.pred]) {
      diagnostics.push(errorAt(`order: ${c.pred} already has an order clause`, c.predSpan));
      continue;
    }
    const names = relation.columns.map((col) => col.name);
    const keys: OutputOrder['keys'] = [];
    for (const k of c.keys) {
      const column = names.indexOf(k.column);
      if (column < 0) diagnostics.push(errorAt(`order: ${c.pred} has no column ${k.column}; expected one of ${names.join(', ')}`, k.span));
      else keys.push({ column, descending: k.descending });
    }
    if (keys.length !== c.keys.length) continue;
    const order: OutputOrder = { keys };
    if (c.limit) {
      const own = strata.find((s) => s.preds.includes(c.pred));
      // P's own recursive rules build P, so they read it whole; another predicate of its component cannot.
      const reader = own?.rules.find((r) => r.head.pred !== c.pred && [...r.atoms, ...r.negated].some((a) => a.pred === c.pred));
      if (c.limit.suffix !== '' || c.limit.value < 0n || c.limit.value > 2n ** 31n - 1n) {
        diagnostics.push(errorAt('order: expected a non-negative int32 limit', c.limit.span));
        continue;
      }
      if (reader) {
        diagnostics.push(
          errorAt(
            `order: ${c.pred} has a limit and is read by the rule for ${reader.head.pred}, which it depends on (recursion through a limit); ` +
              'expected rules that read a limited relation to come after it',
            c.span,
          ),
        );
        continue;
      }
      order.limit = Number(c.limit.value);
    }
    orders[c.pred] = order;
  }
  return orders;
}
