/**
 * Column pruning of base relations: an EDB column that no command reads (bound to `_` in every rule) is dropped
 * from the relation, and the declaration records which columns of its facts it keeps (`pruned`), so the facts
 * loaders parse and intern only those and the device holds narrower rows.
 *
 * Sound under set semantics: a mapFilter or mapJoin reading the relation only sees the kept columns, so the set
 * it builds from the projected relation is the same. Commands that see whole rows keep every column: aggregates
 * (they count distinct rows), copy, union, difference and limit, and a relation some command writes. Output
 * relations (printed in full) and constraint relations are never narrowed. At least one column stays, so a
 * relation read only for being non-empty keeps rows.
 */
import type { Column, Expr, QpCommand, QpProgram, RelationDecl } from '../ir.js';
import type { QpPass } from '../pipeline.js';
import { mapOperands, predicateOperands } from '../predicate.js';

function exprColumns(e: Expr, out: Set<number>): void {
  switch (e.kind) {
    case 'col':
      out.add(e.index);
      return;
    case 'const':
      return;
    case 'binary':
      exprColumns(e.left, out);
      exprColumns(e.right, out);
      return;
    case 'call':
      for (const a of e.args) exprColumns(a, out);
      return;
  }
}

function renumber(e: Expr, to: (index: number) => number): Expr {
  switch (e.kind) {
    case 'col':
      return { ...e, index: to(e.index) };
    case 'const':
      return e;
    case 'binary':
      return { ...e, left: renumber(e.left, to), right: renumber(e.right, to) };
    case 'call':
      return { ...e, args: e.args.map((a) => renumber(a, to)) };
  }
}

/** Columns of the input tuple (one relation, or left ++ right of a join) that a command's expressions read. */
function readColumns(c: Extract<QpCommand, { kind: 'mapFilter' | 'mapJoin' }>): Set<number> {
  const out = new Set<number>();
  for (const e of [...c.filter.flatMap(predicateOperands), ...c.project]) exprColumns(e, out);
  return out;
}

export const pruneColumns = { name: 'prune-columns', required: false, run } satisfies QpPass;

function run(plan: QpProgram): QpProgram {
  const decls = new Map(plan.relations.map((r) => [r.name, r]));
  /** Used columns of each base relation that may be narrowed. */
  const used = new Map<string, Set<number>>();
  for (const r of plan.relations) if (r.kind === 'edb' && !r.output && !r.pruned) used.set(r.name, new Set());
  const all = (name: string): void => {
    if (used.has(name)) decls.get(name)!.columns.forEach((_, i) => used.get(name)!.add(i));
  };
  for (const c of plan.constraints ?? []) all(c.relation);
  for (const b of plan.blocks) {
    for (const c of b.commands) {
      all(c.target);
      if (c.kind === 'mapFilter') {
        for (const i of readColumns(c)) used.get(c.source)?.add(i);
      } else if (c.kind === 'mapJoin') {
        const arity = decls.get(c.left)!.columns.length;
        const read = readColumns(c);
        for (const i of [...read, ...c.leftKeys]) if (i < arity) used.get(c.left)?.add(i);
        for (const i of [...[...read].filter((i) => i >= arity).map((i) => i - arity), ...c.rightKeys]) used.get(c.right)?.add(i);
      } else if (c.kind !== 'clear') {
        // aggregate, copy, union, difference, limit: whole rows.
        if ('source' in c) all(c.source);
        if ('left' in c) {
          all(c.left);
          all(c.right);
        }
      }
    }
  }
  /** Kept source columns by relation, for the relations that lose some. */
  const keep = new Map<string, number[]>();
  for (const [name, cols] of used) {
    const arity = decls.get(name)!.columns.length;
    if (cols.size === arity || arity === 0) continue;
    keep.set(name, cols.size > 0 ? [...cols].sort((a, b) => a - b) : [0]);
  }
  if (keep.size === 0) return plan;

  /** Old column index -> new one, per narrowed relation. */
  const index = new Map([...keep].map(([name, k]) => [name, new Map(k.map((old, i) => [old, i]))]));
  const at = (name: string, i: number): number => index.get(name)?.get(i) ?? i;
  const arity = (name: string): number => keep.get(name)?.length ?? decls.get(name)!.columns.length;
  const rewrite = (c: QpCommand): QpCommand => {
    if (c.kind === 'mapFilter' && keep.has(c.source)) {
      const to = (i: number) => at(c.source, i);
      return {
        ...c,
        filter: c.filter.map((p) => mapOperands(p, (e) => renumber(e, to))),
        project: c.project.map((e) => renumber(e, to)),
      };
    }
    if (c.kind === 'mapJoin' && (keep.has(c.left) || keep.has(c.right))) {
      const oldArity = decls.get(c.left)!.columns.length;
      const newArity = arity(c.left);
      const to = (i: number) => (i < oldArity ? at(c.left, i) : newArity + at(c.right, i - oldArity));
      return {
        ...c,
        leftKeys: c.leftKeys.map((i) => at(c.left, i)),
        rightKeys: c.rightKeys.map((i) => at(c.right, i)),
        filter: c.filter.map((p) => mapOperands(p, (e) => renumber(e, to))),
        project: c.project.map((e) => renumber(e, to)),
      };
    }
    return c;
  };
  const narrow = (r: RelationDecl): RelationDecl => {
    const k = keep.get(r.name);
    if (!k) return r;
    const columns: Column[] = k.map((i) => r.columns[i]!);
    // A key survives when all its columns do; the others say nothing about the narrowed rows the program reads.
    const keys = r.keys?.filter((key) => key.columns.every((c) => k.includes(c))).map((key) => ({ ...key, columns: key.columns.map((c) => k.indexOf(c)) }));
    const narrowed: RelationDecl = { ...r, columns, pruned: { sourceColumns: r.columns, loadColumns: k } };
    if (keys?.length) narrowed.keys = keys;
    else delete narrowed.keys;
    return narrowed;
  };
  const facts = Object.fromEntries(
    Object.entries(plan.facts).map(([name, rows]) => {
      const k = keep.get(name);
      return [name, k ? rows.map((row) => k.map((i) => row[i]!)) : rows];
    }),
  );
  return {
    ...plan,
    relations: plan.relations.map(narrow),
    facts,
    blocks: plan.blocks.map((b) => ({ ...b, commands: b.commands.map(rewrite) })),
  };
}
