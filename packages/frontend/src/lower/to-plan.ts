/**
 * Lowers the checked program to a QP: relation declarations, inline facts, and a CFG evaluating the strata
 * in order. A non-recursive stratum is straight-line code; a recursive one is a semi-naive loop block.
 */
import type { BasicBlock, Column, QpCommand, QpProgram, RelationDecl } from '@vixen/queryplan';
import type { CheckedProgram, TypedRule } from '../check/program.js';
import { compileRuleBody } from './rule-chain.js';
import type { Stratum } from './stratify.js';

const delta = (p: string): string => `$delta_${p}`;
const fresh = (p: string): string => `$new_${p}`;

class PlanBuilder {
  readonly relations: RelationDecl[];
  readonly blocks: BasicBlock[] = [];
  private current: BasicBlock = { label: 'entry', commands: [], terminator: { kind: 'halt' } };
  private temps = 0;

  constructor(private readonly program: CheckedProgram) {
    this.relations = program.relations.map((r) => ({
      name: r.name,
      columns: r.columns,
      kind: r.hasRules ? 'idb' : 'edb',
      output: r.hasRules,
      span: r.span,
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
    const chain = compileRuleBody(rule, sources, first, this.columnsOf(rule.head.pred), (columns) =>
      this.temp(`$t${++this.temps}`, columns),
    );
    commands.push(...chain.commands, { kind: 'union', target: into, left: into, right: chain.result });
  }

  stratum(s: Stratum): void {
    if (!s.recursive) {
      for (const r of s.rules) this.emitRule(r, r.atoms.map((a) => a.pred), 0, r.head.pred, this.current.commands);
      return;
    }
    const inScc = (pred: string): boolean => s.preds.includes(pred);
    // Init: rules not reading the component, then every tuple so far (facts included) is the first delta.
    for (const r of s.rules.filter((r) => !r.atoms.some((a) => inScc(a.pred)))) {
      this.emitRule(r, r.atoms.map((a) => a.pred), 0, r.head.pred, this.current.commands);
    }
    for (const p of s.preds) {
      this.temp(delta(p), this.columnsOf(p));
      this.temp(fresh(p), this.columnsOf(p));
      this.current.commands.push({ kind: 'copy', target: delta(p), source: p });
    }
    // Loop: each rule once per body atom in the component, reading that atom's delta and full relations elsewhere.
    const name = s.preds[0]!;
    const loop: BasicBlock = { label: `loop_${name}`, commands: [], terminator: { kind: 'halt' } };
    for (const r of s.rules) {
      r.atoms.forEach((a, i) => {
        if (!inScc(a.pred)) return;
        const sources = r.atoms.map((b, j) => (j === i ? delta(b.pred) : b.pred));
        this.emitRule(r, sources, i, fresh(r.head.pred), loop.commands);
      });
    }
    for (const p of s.preds) {
      loop.commands.push(
        { kind: 'difference', target: fresh(p), left: fresh(p), right: p },
        { kind: 'union', target: p, left: p, right: fresh(p) },
        { kind: 'copy', target: delta(p), source: fresh(p) },
        { kind: 'clear', target: fresh(p) },
      );
    }
    const after = `after_${name}`;
    loop.terminator = {
      kind: 'branch',
      condition: { kind: 'empty', relations: s.preds.map(delta) },
      ifTrue: after,
      ifFalse: loop.label,
    };
    this.current.terminator = { kind: 'jump', target: loop.label };
    this.blocks.push(this.current, loop);
    this.current = { label: after, commands: [], terminator: { kind: 'halt' } };
  }

  finish(): QpProgram {
    this.blocks.push(this.current);
    const facts = Object.fromEntries(this.program.relations.filter((r) => r.facts.length > 0).map((r) => [r.name, r.facts]));
    return { relations: this.relations, facts, blocks: this.blocks, entry: 'entry' };
  }
}

export function toPlan(program: CheckedProgram, strata: Stratum[]): QpProgram {
  const builder = new PlanBuilder(program);
  for (const s of strata) builder.stratum(s);
  return builder.finish();
}
