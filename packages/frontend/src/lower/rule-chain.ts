/**
 * One rule body as a chain of QP commands: the first atom is a mapFilter (skipped when it would copy the
 * relation unchanged), each further atom a mapJoin on
 * the variables it shares with what came before (none: a product). Constants and repeated variables become
 * filters, comparisons are applied at the first step that binds all their variables, and each step keeps only
 * the variables still needed. The last step projects the head columns.
 */
import type { Column, Expr, Predicate, QpCommand, ScalarType } from '@vixen/queryplan';
import type { TypedAtom, TypedComparison, TypedRule, TypedTerm } from '../check/program.js';

export interface ChainResult {
  commands: QpCommand[];
  /** Temp relation holding the head tuples this body derives. */
  result: string;
}

function varsOf(terms: readonly TypedTerm[]): string[] {
  return terms.flatMap((t) => (t.kind === 'var' ? [t.name] : []));
}

/** Starts at atom `first`, then repeatedly takes the atom sharing most bound variables (ties: source order). */
export function joinOrder(atoms: readonly TypedAtom[], first: number): number[] {
  const order = [first];
  const bound = new Set(varsOf(atoms[first]!.args));
  const rest = atoms.map((_, i) => i).filter((i) => i !== first);
  while (rest.length > 0) {
    const shared = rest.map((i) => new Set(varsOf(atoms[i]!.args).filter((v) => bound.has(v))).size);
    const pick = shared.indexOf(Math.max(...shared));
    const [next] = rest.splice(pick, 1);
    order.push(next!);
    for (const v of varsOf(atoms[next!]!.args)) bound.add(v);
  }
  return order;
}

/**
 * @param sources relation read at each body atom position (a delta or the full relation)
 * @param first atom to start from (the delta atom of a semi-naive variant)
 */
export function compileRuleBody(
  rule: TypedRule,
  sources: readonly string[],
  first: number,
  headColumns: readonly Column[],
  newTemp: (columns: Column[]) => string,
): ChainResult {
  const order = joinOrder(rule.atoms, first);
  let pending: TypedComparison[] = [...rule.comparisons];
  const commands: QpCommand[] = [];
  // The current intermediate: its relation and the variable held in each column.
  let current: { name: string; vars: Column[] } | undefined;

  order.forEach((atomIndex, step) => {
    const atom = rule.atoms[atomIndex]!;
    const leftArity = current?.vars.length ?? 0;
    // Column of each bound variable in the step's input tuple (left columns, then the atom's).
    const at = new Map<string, { index: number; type: ScalarType }>();
    current?.vars.forEach((v, index) => at.set(v.name, { index, type: v.type }));
    const filter: Predicate[] = [];
    const leftKeys: number[] = [];
    const rightKeys: number[] = [];
    const col = (index: number, type: ScalarType): Expr => ({ kind: 'col', index, type });
    atom.args.forEach((t, j) => {
      const here = col(leftArity + j, t.type);
      if (t.kind === 'const') {
        filter.push({ kind: 'compare', op: '=', left: here, right: t });
      } else if (t.kind === 'var') {
        const seen = at.get(t.name);
        if (!seen) {
          at.set(t.name, { index: leftArity + j, type: t.type });
        } else if (seen.index < leftArity && !leftKeys.includes(seen.index)) {
          leftKeys.push(seen.index);
          rightKeys.push(j);
        } else {
          // Repeated within this atom (or a second match of a key): compare with the first occurrence.
          filter.push({ kind: 'compare', op: '=', left: here, right: col(seen.index, t.type) });
        }
      }
    });
    const expr = (t: TypedTerm): Expr => {
      switch (t.kind) {
        case 'const':
          return t;
        case 'var':
          return col(at.get(t.name)!.index, t.type);
        case 'wildcard':
          throw new Error('internal compiler error: _ outside a body atom passed the safety check');
      }
    };
    const ready = pending.filter((c) => [c.left, c.right].every((t) => t.kind !== 'var' || at.has(t.name)));
    pending = pending.filter((c) => !ready.includes(c));
    for (const c of ready) filter.push({ kind: 'compare', op: c.op, left: expr(c.left), right: expr(c.right) });

    const last = step === order.length - 1;
    let project: Expr[];
    let columns: Column[];
    if (last) {
      project = rule.head.args.map(expr);
      columns = [...headColumns];
    } else {
      const later = new Set([
        ...order.slice(step + 1).flatMap((i) => varsOf(rule.atoms[i]!.args)),
        ...pending.flatMap((c) => varsOf([c.left, c.right])),
        ...varsOf(rule.head.args),
      ]);
      const bound = [...at.entries()].map(([name, b]) => ({ name, ...b }));
      const keep = bound.filter((b) => later.has(b.name));
      // A relation needs a column: when nothing is needed later, keep one to carry "some match exists".
      const kept = keep.length > 0 ? keep : [bound[0] ?? { name: '_', index: leftArity, type: atom.args[0]!.type }];
      project = kept.map((b) => col(b.index, b.type));
      columns = kept.map((b) => ({ name: b.name, type: b.type }));
    }
    const source = sources[atomIndex]!;
    const identity =
      !current &&
      filter.length === 0 &&
      project.length === atom.args.length &&
      project.every((e, i) => e.kind === 'col' && e.index === i);
    if (identity && !last) {
      // The atom's relation is already the intermediate: join it directly.
      current = { name: source, vars: columns };
      return;
    }
    const target = newTemp(columns);
    commands.push(
      current
        ? { kind: 'mapJoin', target, left: current.name, right: source, leftKeys, rightKeys, filter, project }
        : { kind: 'mapFilter', target, source, filter, project },
    );
    current = { name: target, vars: columns };
  });
  return { commands, result: current!.name };
}
