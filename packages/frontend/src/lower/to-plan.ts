/**
 * Lowers the checked program to a QP: relation declarations, inline facts, and a CFG evaluating the strata
 * in order. A non-recursive stratum is straight-line code; a recursive one is a semi-naive loop block.
 */
import { ruleOrigin, type BasicBlock, type Column, type Expr, type OutputOrder, type Predicate, type QpCommand, type QpProgram, type RelationDecl, type ScalarType } from '@vixen/queryplan';
import type { CheckedProgram, TypedAggBinding, TypedRule, TypedTerm } from '../check/program.js';
import { compileRuleBody } from './rule-chain.js';
import type { Stratum } from './stratify.js';

const delta = (p: string): string => `$delta_${p}`;
const fresh = (p: string): string => `$new_${p}`;

class PlanBuilder {
  readonly relations: RelationDecl[];
  readonly blocks: BasicBlock[] = [];
  private current: BasicBlock = { label: 'entry', commands: [], terminator: { kind: 'halt' } };
  private temps = 0;

  constructor(
    private readonly program: CheckedProgram,
    private readonly orders: Record<string, OutputOrder>,
  ) {
    this.relations = program.relations.map((r) => ({
      name: r.name,
      columns: r.columns,
      kind: r.hasRules ? 'idb' : 'edb',
      // Constraint and dependency checks ($ names) are read by the runtime, not printed.
      output: r.hasRules && !r.name.startsWith('$'),
      span: r.span,
      ...(r.declaredKeys && !r.hasRules ? { keys: r.declaredKeys } : {}),
    }));
  }

  private columnsOf(name: string): Column[] {
    return this.relations.find((r) => r.name === name)!.columns;
  }

  private temp(name: string, columns: Column[]): string {
    this.relations.push({ name, columns, kind: 'temp', output: false });
    return name;
  }

  /** Evaluates `rule` reading `sources` per body atom, starting at atom `first`, and unions the result into `into`. */
  private emitRule(rule: TypedRule, sources: string[], first: number, into: string, commands: QpCommand[]): void {
    const newTemp = (columns: Column[]) => this.temp(`$t${++this.temps}`, columns);
    const emitted: QpCommand[] = [];
    if (rule.aggregate) {
      this.emitAggregate(rule, rule.aggregate, sources, into, emitted);
    } else {
      const chain = compileRuleBody(rule, sources, first, this.columnsOf(rule.head.pred), newTemp);
      emitted.push(...chain.commands, { kind: 'union', target: into, left: into, right: chain.result });
    }
    // Every command of the rule names it, so debugging views can point back at the source.
    const rules = [ruleOrigin(rule.span, rule.text)];
    commands.push(...emitted.map((c) => ({ ...c, rules })));
  }

  /**
   * `head <- agg<<...>> body`: the body's distinct bindings of all its variables (group key first), then one
   * aggregate command grouping by the key, then the head's column order.
   */
  private emitAggregate(rule: TypedRule, bindings: TypedAggBinding[], sources: string[], into: string, commands: QpCommand[]): void {
    const newTemp = (columns: Column[]) => this.temp(`$t${++this.temps}`, columns);
    const targets = new Set(bindings.map((b) => b.target));
    const types = new Map<string, ScalarType>();
    for (const a of rule.atoms) for (const t of a.args) if (t.kind === 'var') types.set(t.name, t.type);
    for (const a of rule.assignments) types.set(a.name, a.expr.type);
    const headVars = rule.head.args.map((t) => (t as Extract<TypedTerm, { kind: 'var' }>).name);
    const group = [...new Set(headVars.filter((v) => !targets.has(v)))];
    const determined = this.determinedWildcards(rule);
    const body = [...new Set([...group, ...bindings.flatMap((b) => (b.arg === undefined ? [] : [b.arg])), ...[...types.keys()].filter((v) => !determined.has(v))])];
    const columns = body.map((name) => ({ name, type: types.get(name)! }));
    const bodyHead = { pred: '$aggregate', args: columns.map((c): TypedTerm => ({ kind: 'var', ...c })), span: rule.head.span };
    const chain = compileRuleBody({ ...rule, head: bodyHead }, sources, 0, columns, newTemp);
    const resultColumns = [...columns.slice(0, group.length), ...bindings.map((b) => ({ name: b.target, type: b.type }))];
    const result = newTemp(resultColumns);
    const aggregates = bindings.map((b) => ({ fn: b.fn, ...(b.arg === undefined ? {} : { column: body.indexOf(b.arg) }), type: b.type }));
    commands.push(...chain.commands, { kind: 'aggregate', target: result, source: chain.result, groupBy: group.map((_, i) => i), aggregates });
    const names = resultColumns.map((c) => c.name);
    if (headVars.length === names.length && headVars.every((v, i) => v === names[i])) {
      commands.push({ kind: 'union', target: into, left: into, right: result });
      return;
    }
    const project = headVars.map((v): Expr => ({ kind: 'col', index: names.indexOf(v), type: resultColumns[names.indexOf(v)]!.type }));
    const headRows = newTemp(this.columnsOf(rule.head.pred));
    commands.push(
      { kind: 'mapFilter', target: headRows, source: result, filter: [], project },
      { kind: 'union', target: into, left: into, right: headRows },
    );
  }

  /**
   * Wildcards of an aggregated body (fresh `$_` variables, see resolve.ts renameWildcards) that a key of their atom
   * determines: the atom's key columns are in the body's tuple, so leaving these out merges no tuples, and a base
   * relation need not load their columns (prune-columns). Keys are declared ones of base relations and the leading
   * columns of functional predicates (both checked at run time). Per atom, the key with the fewest wildcards of its own.
   */
  private determinedWildcards(rule: TypedRule): Set<string> {
    const out = new Set<string>();
    for (const a of rule.atoms) {
      const r = this.program.relations.find((x) => x.name === a.pred)!;
      const keys = [...(r.hasRules ? [] : (r.declaredKeys ?? []).map((k) => k.columns)), ...(r.keys !== undefined ? [Array.from({ length: r.keys }, (_, i) => i)] : [])];
      const wildcard = (i: number): boolean => {
        const t = a.args[i]!;
        return t.kind === 'var' && t.name.startsWith('$_');
      };
      const best = keys.reduce<readonly number[] | undefined>((b, k) => (b === undefined || k.filter(wildcard).length < b.filter(wildcard).length ? k : b), undefined);
      if (!best) continue;
      a.args.forEach((t, i) => {
        if (wildcard(i) && !best.includes(i)) out.add((t as Extract<TypedTerm, { kind: 'var' }>).name);
      });
    }
    return out;
  }

  stratum(s: Stratum): void {
    if (s.lattice) this.latticeStratum(s, s.lattice);
    else if (s.recursive) this.recursiveStratum(s);
    else for (const r of s.rules) this.emitRule(r, r.atoms.map((a) => a.pred), 0, r.head.pred, this.current.commands);
    for (const p of s.preds) this.limitIfRead(p);
  }

  /** A limited relation that rules read is cut to its limit once complete, before any reader runs. */
  limitIfRead(p: string): void {
    const order = this.orders[p];
    if (order?.limit === undefined) return;
    const read = this.program.rules.some((r) => [...r.atoms, ...r.negated].some((a) => a.pred === p));
    if (read) this.current.commands.push({ kind: 'limit', target: p, source: p, keys: order.keys, count: order.limit });
  }

  /**
   * A semi-naive loop: init rules (those not reading the component), then every tuple so far (facts included) is
   * the first delta; each iteration runs each rule once per body atom in the component, reading that atom's delta
   * and full relations elsewhere, into `$new_p`, and `merge` folds `$new_p` into p and the next delta.
   */
  private semiNaiveLoop(s: Stratum, initial: (p: string) => QpCommand[], merge: (p: string) => QpCommand[]): void {
    const inScc = (pred: string): boolean => s.preds.includes(pred);
    for (const r of s.rules.filter((r) => !r.atoms.some((a) => inScc(a.pred)))) {
      this.emitRule(r, r.atoms.map((a) => a.pred), 0, r.head.pred, this.current.commands);
    }
    for (const p of s.preds) {
      this.temp(delta(p), this.columnsOf(p));
      this.temp(fresh(p), this.columnsOf(p));
      this.current.commands.push(...initial(p), { kind: 'copy', target: delta(p), source: p });
    }
    const name = s.preds[0]!;
    const loop: BasicBlock = { label: `loop_${name}`, commands: [], terminator: { kind: 'halt' } };
    for (const r of s.rules) {
      r.atoms.forEach((a, i) => {
        if (!inScc(a.pred)) return;
        const sources = r.atoms.map((b, j) => (j === i ? delta(b.pred) : b.pred));
        this.emitRule(r, sources, i, fresh(r.head.pred), loop.commands);
      });
    }
    for (const p of s.preds) loop.commands.push(...merge(p), { kind: 'clear', target: fresh(p) });
    const after = `after_${name}`;
    loop.terminator = { kind: 'branch', condition: { kind: 'empty', relations: s.preds.map(delta) }, ifTrue: after, ifFalse: loop.label };
    this.current.terminator = { kind: 'jump', target: loop.label };
    this.blocks.push(this.current, loop);
    this.current = { label: after, commands: [], terminator: { kind: 'halt' } };
  }

  /** Set semantics: the new tuples not yet in p are the next delta. */
  private recursiveStratum(s: Stratum): void {
    this.semiNaiveLoop(
      s,
      () => [],
      (p) => [
        { kind: 'difference', target: fresh(p), left: fresh(p), right: p },
        { kind: 'union', target: p, left: p, right: fresh(p) },
        { kind: 'copy', target: delta(p), source: fresh(p) },
      ],
    );
  }

  /**
   * A recursive stratum through min (max): each predicate holds one row per key (all columns but the last) with
   * the best value so far. Semi-naive over improved keys: `$delta_p` holds the rows whose value improved (or whose
   * key is new) in the last iteration; the rules read it as in `recursiveStratum`, writing candidate rows into
   * `$new_p`. p's rows and the candidates, merged (both sorted), are cut to the best row per key by a segmented
   * aggregate over the merged order; the rows of that which p lacks are the next delta. Joins and sorts work on the
   * candidates alone; the merge, the aggregate and the difference are linear passes over p (no join with p, no sort
   * of its rows).
   */
  private latticeStratum(s: Stratum, fn: 'min' | 'max'): void {
    const best = (p: string, target: string, source: string): QpCommand => {
      const columns = this.columnsOf(p);
      const keys = columns.slice(1).map((_, i) => i);
      return { kind: 'aggregate', target, source, groupBy: keys, aggregates: [{ fn, column: keys.length, type: columns[keys.length]!.type }] };
    };
    // Plain rules and facts may give a key several values: keep the best.
    this.semiNaiveLoop(s, (p) => [best(p, p, p)], (p) => {
      const merged = this.temp(`$t${++this.temps}`, this.columnsOf(p));
      return [
        { kind: 'union', target: merged, left: p, right: fresh(p) },
        best(p, merged, merged),
        { kind: 'difference', target: delta(p), left: merged, right: p },
        { kind: 'copy', target: p, source: merged },
      ];
    });
  }

  finish(): QpProgram {
    this.blocks.push(this.current);
    const withFacts = this.program.relations.filter((r) => r.facts.length > 0);
    const facts = Object.fromEntries(withFacts.map((r) => [r.name, r.facts]));
    const factSpans = Object.fromEntries(withFacts.map((r) => [r.name, r.factSpans]));
    const { constraints } = this.program;
    return {
      relations: this.relations,
      facts,
      factSpans,
      blocks: this.blocks,
      entry: 'entry',
      ...(Object.keys(this.orders).length > 0 ? { orders: this.orders } : {}),
      ...(constraints.length > 0 ? { constraints } : {}),
    };
  }
}

export function toPlan(program: CheckedProgram, strata: Stratum[], orders: Record<string, OutputOrder> = {}): QpProgram {
  const builder = new PlanBuilder(program, orders);
  // Base relations are complete from the start.
  for (const r of program.relations) if (!r.hasRules) builder.limitIfRead(r.name);
  for (const s of strata) builder.stratum(s);
  return builder.finish();
}
