/**
 * Soufflé AST -> LogiQL AST, so that `.dl` programs go through the same resolution, type, safety and
 * stratification checks and lowering as `.logic` ones. This pass does what only Soufflé has: type names and
 * `.type` aliases, `.input`/`.output` (an `.input` relation with rules reads its file into a helper), "every
 * relation is declared", multi-head rules and disjunctions and negations anywhere in a body (one clause per head
 * and disjunct, as Soufflé splits them: normalize.ts), and aggregates used as values (scoped as Soufflé scopes
 * them, witnesses included, and lifted into LogiQL aggregation rules: scoping.ts, witnesses.ts, aggregates.ts),
 * functors (functors.ts), the `$` counter where its numbering cannot show (counter.ts), subsumption that prefers
 * a least or greatest value as a lattice (subsumption.ts), and `eqrel` relations as their closure rules.
 */
import { errorAt, formatSpan, type Diagnostic, type ScalarType, type SourceSpan } from '@vixen/queryplan';
import type { Atom, Clause, Formula, SourceAst, Term } from '../syntax/ast.js';
import { liftAggregates, UNIT, type AggregateRule } from './aggregates.js';
import { dnf, extremes, normalizeAggregates, normalizeHead, renameTargets, simpleArguments, type Fresh } from './normalize.js';
import { allAtoms, type SClause } from './scoping.js';
import { functorTerm, specializeTests, STRING_FUNCTORS, testsAsComparisons } from './functors.js';
import { groundWitnesses } from './witnesses.js';
import type { PrintLayout, RecordLayouts } from './records.js';
import { concatTerm, symbolConcat } from './concat.js';
import { expandRanges } from './range.js';
import { LATTICE_QUALIFIERS, latticeRule } from './lattice.js';
import { numberCounters } from './counter.js';
import { subsumptionLattices } from './subsumption.js';
import type { IoTarget, Name, SAtom, SFormula, SItem, SouffleAst, STerm } from './ast.js';

const PRIMITIVES: Readonly<Record<string, ScalarType>> = { number: 'int32', unsigned: 'uint32', float: 'float32', symbol: 'string' };

/** Qualifiers that only tune Soufflé's data structures or optimizer: no effect on results. */
const IGNORED_QUALIFIERS: ReadonlySet<string> = new Set(['brie', 'btree', 'btree_delete', 'inline', 'no_inline', 'magic', 'no_magic', 'overridable']);


/** Soufflé's word operators (`x band y`, `lnot x`), each the built-in `int32:<name>`. */
const WORD_OPERATORS: ReadonlySet<string> = new Set(['band', 'bor', 'bxor', 'bshl', 'bshr', 'bshru', 'bnot', 'land', 'lor', 'lxor', 'lnot']);

/** Where an `.input` relation's facts come from: `filename` in the facts directory (or absolute), split at `delimiter`. */
export interface SouffleInput {
  filename: string;
  delimiter: string;
  /** How the file spells the relation's record and ADT attributes (records.ts), where it has some. */
  records?: PrintLayout[];
}

/**
 * Where an output relation goes: `filename` in the output directory (or absolute), framed lines on standard output
 * (`IO=stdout`), or its size on standard output (`printsize`).
 */
export type SouffleOutput = { kind: 'file'; filename: string; delimiter: string } | { kind: 'stdout'; delimiter: string } | { kind: 'size' };

/** A `.dl` program's IO directives, as Soufflé resolves them (defaults `<rel>.facts` and `<rel>.csv`, tab). */
export interface SouffleIo {
  inputs: Record<string, SouffleInput>;
  outputs: Record<string, SouffleOutput[]>;
  /** How the flattened record and ADT columns of relations print (records.ts); absent without records. */
  records?: RecordLayouts;
}

export interface SouffleProgram {
  /** The program as LogiQL clauses, one SourceAst per `.dl` file. */
  files: SourceAst[];
  /** Relations declared in `.dl` files, and the helper relations of their aggregates. */
  relations: Set<string>;
  /** Those of them marked `.output`: the only ones printed by default, as in Soufflé. */
  outputs: Set<string>;
  io: SouffleIo;
}

class Converter {
  private readonly types = new Map<string, Extract<SItem, { kind: 'type' }>>();
  private readonly resolvedTypes = new Map<string, ScalarType | undefined>();
  /** Declared relations, by name: false when the first declaration has a bad type (reported there). */
  private readonly decls = new Map<string, boolean>();
  /** Declared relations without attributes. */
  private readonly nullary = new Set<string>();
  /** Relations introduced for aggregates (never printed). */
  readonly helpers = new Set<string>();
  private freshCount = 0;
  /** Fresh variable and relation names (`$` keeps them apart from Soufflé names). */
  private readonly fresh: Fresh = (base) => `$${base}${++this.freshCount}`;
  readonly inputs = new Map<string, Name>();
  /** Relations declared `btree_min` or `btree_max`, with the aggregate their last column combines by. */
  readonly lattices = new Map<string, 'min' | 'max'>();
  /** Each declared relation's column types (undefined where a type is wrong), for `+` on symbols. */
  private readonly columnTypes = new Map<string, (ScalarType | undefined)[]>();
  readonly outputs = new Set<string>();
  readonly io: SouffleIo = { inputs: {}, outputs: {} };

  constructor(
    private readonly diagnostics: Diagnostic[],
    private readonly layouts: RecordLayouts,
  ) {}

  /** Each problem once: a rule's heads and disjuncts become clauses that may meet the same one. */
  private readonly reported = new Set<string>();

  private error(message: string, span: SourceSpan): undefined {
    const key = `${span.file}:${span.start.offset}:${message}`;
    if (!this.reported.has(key)) this.diagnostics.push(errorAt(message, span));
    this.reported.add(key);
    return undefined;
  }

  /** Reports each problem; true when there are none. */
  private none(problems: [string, SourceSpan][]): boolean {
    for (const [message, span] of problems) this.error(message, span);
    return problems.length === 0;
  }

  collectType(item: Extract<SItem, { kind: 'type' }>): void {
    const prior = this.types.get(item.name.name);
    // Older Soufflé programs declare `.type number` bare; it names the primitive type, so it changes nothing.
    const alt = item.alternatives[0];
    const bare = item.alternatives.length === 1 && alt!.name === 'symbol' && formatSpan(alt!.span) === formatSpan(item.name.span);
    if (PRIMITIVES[item.name.name] && bare) this.diagnostics.push({ severity: 'warning', message: `.type ${item.name.name} is the primitive type: the declaration is ignored`, span: item.name.span });
    else if (PRIMITIVES[item.name.name]) this.error(`cannot redefine the primitive type ${item.name.name}`, item.name.span);
    else if (prior) this.error(`duplicate type ${item.name.name} (first defined at ${formatSpan(prior.name.span)})`, item.name.span);
    else this.types.set(item.name.name, item);
  }

  /** The primitive type a type name stands for; undefined after reporting why there is none. */
  private scalar(t: Name, active: string[] = []): ScalarType | undefined {
    const primitive = PRIMITIVES[t.name];
    if (primitive) return primitive;
    if (this.resolvedTypes.has(t.name)) return this.resolvedTypes.get(t.name);
    const def = this.types.get(t.name);
    if (!def) return this.error(`unknown type ${t.name}: expected number, unsigned, float, symbol or a .type name`, t.span);
    if (active.includes(t.name)) return this.error(`type ${t.name} is defined in terms of itself`, def.name.span);
    // records.ts flattens the record and ADT types of attributes; one is left only inside another type.
    if (def.record || def.branches) return this.error(`type ${t.name} is a record or algebraic data type: records are not supported here`, t.span);
    const bases = def.alternatives.map((a) => this.scalar(a, [...active, t.name]));
    let result: ScalarType | undefined;
    if (bases.every((b) => b !== undefined)) {
      result = bases[0];
      if (bases.some((b) => b !== result)) {
        const names = [...new Set(bases)].map((b) => Object.keys(PRIMITIVES).find((k) => PRIMITIVES[k] === b));
        this.error(`union type ${t.name} mixes ${names.join(' and ')}: unions of different primitive types are not supported`, def.span);
        result = undefined;
      }
    }
    this.resolvedTypes.set(t.name, result);
    return result;
  }

  /** A `.decl` as a LogiQL declaration `p(x, y) -> int32(x), string(y).`; undefined when a type is wrong. */
  declaration(item: Extract<SItem, { kind: 'decl' }>): Clause | undefined {
    const name = item.rel.name;
    const types = item.attributes.map((a) => this.scalar(a.type));
    if (types.length === 0) this.nullary.add(name);
    for (const q of item.qualifiers) {
      if (q.name === 'input') this.input({ rel: item.rel, options: [] });
      else if (q.name === 'output') this.output({ rel: item.rel, options: [] });
      else if (q.name === 'eqrel') {
        if (types.length !== 2 || (complete(types) && types[0] !== types[1])) this.error(`an eqrel relation has two attributes of one type: ${name} has ${types.length === 2 ? 'two types' : types.length}`, q.span);
      }
      else if (q.name === 'printsize') this.printsize(item.rel);
      else if (LATTICE_QUALIFIERS[q.name]) {
        const value = types[types.length - 1];
        if (value === undefined || value === 'string') this.error(`a ${q.name} relation keeps the ${LATTICE_QUALIFIERS[q.name]} of its last column, which must be a number: ${name} has ${types.length === 0 ? 'no columns' : 'a symbol there'}`, q.span);
        else this.lattices.set(name, LATTICE_QUALIFIERS[q.name]!);
      }
      else if (q.name === 'btree_sum') this.error("the btree_sum qualifier is not supported: Soufflé's sums depend on its evaluation order", q.span);
      else if (q.name === 'choice-domain') this.error('choice-domain is not supported', q.span);
      else if (!IGNORED_QUALIFIERS.has(q.name)) this.error(`the ${q.name} qualifier is not supported`, q.span);
    }
    // A second declaration goes on to the LogiQL checks, which report the duplicate.
    if (!this.decls.has(name)) this.decls.set(name, complete(types));
    if (!this.columnTypes.has(name)) this.columnTypes.set(name, types);
    if (!complete(types)) return undefined;
    const head: Atom = {
      kind: 'atom',
      pred: item.rel.name,
      args: item.attributes.map((a) => ({ kind: 'var', name: a.name.name, span: a.name.span })),
      span: item.span,
      predSpan: item.rel.span,
    };
    const typeAtoms: Formula[] = item.attributes.map((a, i) => ({
      kind: 'atom',
      pred: types[i]!,
      args: [{ kind: 'var', name: a.name.name, span: a.name.span }],
      span: a.type.span,
      predSpan: a.type.span,
    }));
    return { kind: 'decl', head, body: { kind: 'and', items: typeAtoms, span: item.span }, span: item.span };
  }

  ioDirective(item: Extract<SItem, { kind: 'io' }>): void {
    for (const target of item.targets) {
      if (!this.decls.has(target.rel.name)) this.error(`undefined relation ${target.rel.name}: expected a .decl for it`, target.rel.span);
      else if (item.direction === 'input') this.input(target);
      else if (item.direction === 'printsize') this.printsize(target.rel, target.options[0]?.span);
      else this.output(target);
    }
  }

  /** `.input p(IO=file, filename="...", delimiter="...")`: a file in the facts directory, by default `p.facts`. */
  private input(target: IoTarget): void {
    const rel = target.rel.name;
    // How Soufflé spells a nullary tuple in an input file is not pinned down; refused rather than guessed.
    if (this.nullary.has(rel)) return void this.error(`reading a nullary relation from a file is not supported: ${rel}() has no attributes`, target.rel.span);
    const problems = this.optionProblems(target, ['file'], ['IO', 'filename', 'delimiter']);
    if (!this.none(problems)) return;
    this.inputs.set(rel, target.rel);
    const records = this.layouts[rel];
    this.io.inputs[rel] = { filename: option(target, 'filename') ?? `${rel}.facts`, delimiter: option(target, 'delimiter') ?? '\t', ...(records ? { records } : {}) };
  }

  /** `.output p(IO=file, filename=..., delimiter=...)` (default `p.csv` in the output directory) or `IO=stdout`. */
  private output(target: IoTarget): void {
    const rel = target.rel.name;
    const problems = this.optionProblems(target, ['file', 'stdout'], ['IO', 'filename', 'delimiter']);
    if (!this.none(problems)) return;
    this.outputs.add(rel);
    const delimiter = option(target, 'delimiter') ?? '\t';
    const out: SouffleOutput =
      option(target, 'IO') === 'stdout' ? { kind: 'stdout', delimiter } : { kind: 'file', filename: option(target, 'filename') ?? `${rel}.csv`, delimiter };
    (this.io.outputs[rel] ??= []).push(out);
  }

  /** `printsize`: Soufflé prints `<rel>\t<number of tuples>` on stdout; the relation is an output for that. */
  private printsize(rel: Name, option?: SourceSpan): void {
    if (option) return void this.error('.printsize takes no IO options', option);
    this.outputs.add(rel.name);
    (this.io.outputs[rel.name] ??= []).push({ kind: 'size' });
  }

  private optionProblems(target: IoTarget, kinds: string[], keys: string[]): [string, SourceSpan][] {
    const problems: [string, SourceSpan][] = [];
    for (const o of target.options) {
      if (!keys.includes(o.key)) problems.push([`the IO option ${o.key} is not supported (expected ${keys.join(', ')})`, o.span]);
      else if (o.key === 'IO' && !kinds.includes(o.value)) problems.push([`IO=${o.value} is not supported: expected ${kinds.map((k) => `IO=${k}`).join(' or ')}`, o.span]);
      else if (o.key !== 'IO' && o.value === '') problems.push([`the IO option ${o.key} must not be empty`, o.span]);
      else if (o.key === 'filename' && option(target, 'IO') === 'stdout') problems.push(['filename is meaningless with IO=stdout', o.span]);
    }
    return problems;
  }

  /** Subsumption makes `rel` a lattice (subsumption.ts), as `btree_min` or `btree_max` would. */
  subsumes(rel: string, fn: 'min' | 'max', items: readonly SItem[]): void {
    const at = items.find((i): i is Extract<SItem, { kind: 'subsume' }> => i.kind === 'subsume' && i.rel.name === rel)!.rel.span;
    const types = this.columnTypes.get(rel);
    const prior = this.lattices.get(rel);
    if (!types) this.error(`undefined relation ${rel}: expected a .decl for it`, at);
    else if (prior && prior !== fn) this.error(`subsumption on ${rel} is not supported: it keeps the ${fn}, its declaration the ${prior}`, at);
    else if (types[types.length - 1] === 'string') this.error(`subsumption on ${rel} is not supported: it prefers by the last column, which is a symbol`, at);
    else if (types.every((t) => t !== undefined)) this.lattices.set(rel, fn);
  }

  /** The type of column `column` of relation `rel`; undefined where it is wrong or there is none. */
  columnType(rel: string, column: number): ScalarType | undefined {
    return this.columnTypes.get(rel)?.[column];
  }

  /** Every relation a clause names must be declared; the clause is dropped if one is not. */
  private defined(atoms: SAtom[]): boolean {
    const undefinedAt = atoms.filter((a) => !this.decls.has(a.rel));
    const ok = this.none(undefinedAt.map((a) => [`undefined relation ${a.rel}: expected a .decl for it`, a.relSpan]));
    return ok && atoms.every((a) => this.decls.get(a.rel));
  }

  fact(item: Extract<SItem, { kind: 'fact' }>): Clause | undefined {
    const head = this.atom({ ...item.atom, args: item.atom.args.map((t) => concatTerm(t, new Set())) });
    if (!this.defined([item.atom]) || !head) return undefined;
    return { kind: 'fact', head, span: item.span };
  }

  /**
   * One LogiQL rule per head and disjunct of the body, as Soufflé splits rules before its scoping analyses, plus
   * the rules of its aggregates (see normalize.ts, witnesses.ts, aggregates.ts).
   */
  rules(rule: Extract<SItem, { kind: 'rule' }>): Clause[] {
    const concat = symbolConcat(rule, (rel, i) => this.columnType(rel, i));
    const tests = { ...concat, body: testsAsComparisons(concat.body, (name) => this.decls.has(name)) };
    return specializeTests(tests, (rel) => this.factsOnly(rel)).flatMap((copy) => this.ruleClauses({ ...tests, ...copy }));
  }

  /** Facts of each relation, and the relations with rules (see factsOnly). */
  private readonly facts = new Map<string, SAtom[]>();
  private readonly ruleHeads = new Set<string>();

  knowClauses(items: SItem[]): void {
    for (const item of items) {
      if (item.kind === 'fact') this.facts.set(item.atom.rel, [...(this.facts.get(item.atom.rel) ?? []), item.atom]);
      if (item.kind === 'rule') for (const h of item.heads) this.ruleHeads.add(h.rel);
    }
  }

  /** The facts of a relation that has nothing else (no rules, no input file); undefined for others. */
  private factsOnly(rel: string): SAtom[] | undefined {
    if (!this.decls.has(rel) || this.ruleHeads.has(rel) || this.inputs.has(rel)) return undefined;
    return this.facts.get(rel) ?? [];
  }

  private ruleClauses(item: Extract<SItem, { kind: 'rule' }>): Clause[] {
    if (!this.defined([...item.heads, ...allAtoms(item.body)])) return [];
    const problems: [string, SourceSpan][] = [];
    const heads = item.heads.map((h) => normalizeHead(h, problems));
    const clauses = dnf(normalizeAggregates(item.body, problems)).flatMap((body) =>
      heads.flatMap((head) => {
        // Aggregates leave the head first, so that their witnesses are found; the copies witnesses add may put
        // aggregates in atoms again.
        const grounded = groundWitnesses(simpleArguments({ head, body }, this.fresh), this.fresh, problems);
        const simple = simpleArguments(grounded, this.fresh);
        return extremes(simple, this.fresh, problems).map((c) => renameTargets(c, this.fresh));
      }),
    );
    if (!this.none(problems)) return [];
    return clauses.flatMap((c) => this.lowered(c, item.span));
  }

  /** A normalised clause as LogiQL: its rule, its aggregates' rules and their materialised bodies' rules. */
  private lowered(clause: SClause, span: SourceSpan): Clause[] {
    const problems: [string, SourceSpan][] = [];
    const lifted = liftAggregates(clause, this.fresh, problems);
    if (!this.none(problems)) return [];
    for (const a of lifted.aggregates) this.helpers.add(a.head.rel);
    for (const h of lifted.helpers) this.helpers.add(h.head.rel);
    if (lifted.usesUnit) this.helpers.add(UNIT);
    const head = this.atom(lifted.clause.head);
    // `p(1) :- true.` is a fact.
    if (lifted.clause.body.length === 0) return head ? [{ kind: 'fact', head, span }] : [];
    const disjuncts = this.disjuncts(lifted.clause.body, span)?.map((d) => this.grounded(d, span));
    const aggregates = lifted.aggregates.flatMap((a) => this.aggregateRule(a));
    const helpers = lifted.helpers.flatMap((h) => this.lowered(h, h.head.span));
    if (!head || !disjuncts) return [];
    const body: Formula = disjuncts.length === 1 ? conj(disjuncts[0]!) : { kind: 'or', items: disjuncts.map(conj), span };
    return [{ kind: 'rule', head, body, span }, ...aggregates, ...helpers];
  }

  /**
   * A conjunction with no positive atom (`r("x") :- !p("a").`, `r(1) :- 1 < 2.`) reads the one-row unit
   * relation: Soufflé evaluates such bodies once, LogiQL wants an atom to range over.
   */
  private grounded(conjunction: Formula[], span: SourceSpan): Formula[] {
    if (conjunction.some((f) => f.kind === 'atom')) return conjunction;
    this.helpers.add(UNIT);
    return [{ kind: 'atom', pred: UNIT, args: [{ kind: 'wildcard', span }], span, predSpan: span }, ...conjunction];
  }

  /** `$aggK(g..., r) <- agg<<r = fn(v)>> body`: the body is a conjunction free of aggregates. */
  private aggregateRule(a: AggregateRule): Clause[] {
    const head = this.atom(a.head);
    const disjuncts = this.disjuncts(a.body, a.span);
    if (!head || !disjuncts) return [];
    const args: Term[] = a.arg === undefined ? [] : [{ kind: 'var', name: a.arg, span: a.span }];
    const binding = { target: a.result, fn: a.fn, args, span: a.span };
    const body: Formula = { kind: 'agg', bindings: [binding], body: conj(disjuncts[0]!), span: a.span };
    return [{ kind: 'rule', head, body, span: a.span }];
  }

  /** Relations that are `.input` and also have rules. */
  inputsWithRules(items: SItem[]): string[] {
    const heads = new Set(items.flatMap((item) => (item.kind === 'rule' ? item.heads.map((h) => h.rel) : [])));
    return [...this.inputs.keys()].filter((rel) => heads.has(rel));
  }

  /**
   * Facts files feed base relations only, so an `.input` relation with rules reads its file into a helper
   * relation `$input_p` and gets the rule `p(x...) <- $input_p(x...)`, as Soufflé unions loaded and derived tuples.
   */
  inputHelper(rel: string, decl: Clause | undefined): Clause[] {
    if (decl?.kind !== 'decl' || decl.head.kind !== 'atom') return [];
    const helper = `$input_${rel}`;
    this.helpers.add(helper);
    this.io.inputs[helper] = this.io.inputs[rel]!;
    delete this.io.inputs[rel];
    const head = decl.head;
    const read: Atom = { ...head, pred: helper };
    return [
      { ...decl, head: read },
      { kind: 'rule', head, body: read, span: decl.span },
    ];
  }

  /** A declared relation with no way to get tuples is worth a warning. */
  checkSources(items: SItem[]): void {
    const heads = new Set(items.flatMap((item) => (item.kind === 'rule' ? item.heads.map((h) => h.rel) : [])));
    const facts = new Set(items.flatMap((item) => (item.kind === 'fact' ? [item.atom.rel] : [])));
    for (const item of items) {
      const rel = item.kind === 'decl' ? item.rel : undefined;
      if (rel && this.decls.get(rel.name) && !heads.has(rel.name) && !facts.has(rel.name) && !this.inputs.has(rel.name)) {
        this.diagnostics.push({ severity: 'warning', message: `relation ${rel.name} has no facts or rules and is not .input: it is always empty`, span: rel.span });
      }
    }
  }

  /** A body as LogiQL conjunctions (its disjunctive normal form); undefined when a term is unsupported. */
  private disjuncts(body: SFormula[], span: SourceSpan): Formula[][] | undefined {
    const out = dnf(and(body, span)).map((c) => c.map((l) => this.literal(l)));
    return out.every((c) => complete(c)) ? (out as Formula[][]) : undefined;
  }

  /** An atom, a comparison or the negation of one. */
  private literal(f: SFormula): Formula | undefined {
    switch (f.kind) {
      case 'atom':
        return this.atom(f);
      case 'compare': {
        // `ord(a) = ord(b)` holds where `a = b` does, whatever the symbol table's numbers (ord alone is refused).
        const ords = [f.left, f.right].map((t) => (t.kind === 'call' && t.name === 'ord' && t.args.length === 1 ? t.args[0]! : undefined));
        if ((f.op === '=' || f.op === '!=') && ords[0] && ords[1]) return this.literal({ ...f, left: ords[0], right: ords[1] });
        const left = this.term(f.left);
        const right = this.term(f.right);
        return left && right && { kind: 'compare', op: f.op, left, right, span: f.span };
      }
      case 'not': {
        const body = this.literal(f.body);
        return body && { kind: 'not', body, span: f.span };
      }
      case 'bool':
      case 'and':
      case 'or':
        throw new Error('literal expected: bodies are in disjunctive normal form');
    }
  }

  private atom(a: SAtom): Atom | undefined {
    const args = a.args.map((t) => this.term(t));
    return complete(args) ? { kind: 'atom', pred: a.rel, args, span: a.span, predSpan: a.relSpan } : undefined;
  }

  private term(t: STerm): Term | undefined {
    switch (t.kind) {
      case 'var':
        return t.name === 'nil' ? this.error('nil is a record: expected a value of a record type here', t.span) : t;
      case 'wildcard':
      case 'string':
        return t;
      case 'int':
        return { kind: 'int', value: t.value, suffix: t.unsigned ? 'u' : '', span: t.span };
      case 'float':
        return { kind: 'real', text: t.text, span: t.span };
      case 'neg': {
        const operand = this.term(t.operand);
        return operand && { kind: 'neg', operand, span: t.span };
      }
      case 'binary': {
        if (t.op === '^') return this.error('the power operator ^ is not supported yet', t.span);
        const left = this.term(t.left);
        const right = this.term(t.right);
        return left && right && { kind: 'binary', op: t.op, left, right, span: t.span };
      }
      case 'call':
        if (t.name === 'as') return this.error('type casts as(...) are not supported', t.nameSpan);
        if (WORD_OPERATORS.has(t.name)) {
          // Soufflé's bitwise and logical operators on numbers (the parser makes them calls).
          const args = t.args.map((a) => this.term(a));
          return complete(args) ? { kind: 'apply', name: `int32:${t.name}`, args, span: t.span, nameSpan: t.nameSpan } : undefined;
        }
        if (STRING_FUNCTORS.has(t.name)) {
          const args = t.args.map((a) => this.term(a));
          if (!complete(args)) return undefined;
          const problems: [string, SourceSpan][] = [];
          const term = functorTerm(t, args, problems, (message) => this.diagnostics.push({ severity: 'warning', message, span: t.nameSpan }));
          this.none(problems);
          return term;
        }
        return this.error(`functors are not supported: ${t.name}(...) (expected a variable, constant or arithmetic)`, t.nameSpan);
      case 'aggregate':
        // Rules lift their aggregates first: one here stands in a fact.
        return this.error(`facts must be ground: expected a constant, not an aggregate`, t.fnSpan);
      case 'record':
      case 'branch':
        throw new Error('records and ADT values are flattened before conversion (records.ts)');
    }
  }
}

function and(items: SFormula[], span: SourceSpan): SFormula {
  return items.length === 1 ? items[0]! : { kind: 'and', items, span };
}

function conj(items: Formula[]): Formula {
  return items.length === 1 ? items[0]! : { kind: 'and', items, span: joinAll(items.map((f) => f.span)) };
}

/** The value of IO option `key`, if given. */
function option(target: IoTarget, key: string): string | undefined {
  return target.options.find((o) => o.key === key)?.value;
}

function complete<T>(xs: (T | undefined)[]): xs is T[] {
  return xs.every((x) => x !== undefined);
}

function joinAll(spans: SourceSpan[]): SourceSpan {
  return { file: spans[0]!.file, start: spans[0]!.start, end: spans[spans.length - 1]!.end };
}

/**
 * The rules that make an `eqrel` relation an equivalence: symmetric, transitive, and reflexive over the elements
 * it relates. Soufflé stores such relations as union-find; as rules, the closure is the same set of pairs.
 */
function eqrelClosure(decl: Extract<SItem, { kind: 'decl' }>): SItem[] {
  const span = decl.qualifiers.find((q) => q.name === 'eqrel')!.span;
  const v = (name: string): STerm => ({ kind: 'var', name, span });
  const atom = (...args: STerm[]): SAtom => ({ kind: 'atom', rel: decl.rel.name, args, span, relSpan: span });
  const rule = (head: SAtom, ...body: SAtom[]): SItem => ({ kind: 'rule', heads: [head], body: body.length === 1 ? body[0]! : { kind: 'and', items: body, span }, span });
  return [
    rule(atom(v('y'), v('x')), atom(v('x'), v('y'))),
    rule(atom(v('x'), v('z')), atom(v('x'), v('y')), atom(v('y'), v('z'))),
    rule(atom(v('x'), v('x')), atom(v('x'), { kind: 'wildcard', span })),
  ];
}

export function toLogic(parsed: SouffleAst[], diagnostics: Diagnostic[], layouts: RecordLayouts = {}): SouffleProgram {
  const c = new Converter(diagnostics, layouts);
  const isEqrel = (item: SItem): item is Extract<SItem, { kind: 'decl' }> =>
    item.kind === 'decl' && item.attributes.length === 2 && item.qualifiers.some((q) => q.name === 'eqrel');
  const asts = expandRanges(parsed, diagnostics).map((ast) => ({ ...ast, items: [...ast.items, ...ast.items.filter(isEqrel).flatMap(eqrelClosure)] }));
  const items = asts.flatMap((ast) => ast.items);
  // Types and declarations first: Soufflé lets uses come before them.
  for (const item of items) if (item.kind === 'type') c.collectType(item);
  const decls = new Map<SItem, Clause | undefined>(items.flatMap((item) => (item.kind === 'decl' ? [[item, c.declaration(item)]] : [])));
  for (const item of items) if (item.kind === 'io') c.ioDirective(item);
  for (const [rel, fn] of subsumptionLattices(items, diagnostics)) c.subsumes(rel, fn, items);
  c.checkSources(items);
  c.knowClauses(items);
  const counted = numberCounters(items, { outputs: c.outputs, inputs: new Set(c.inputs.keys()), columnType: (rel, i) => c.columnType(rel, i) }, diagnostics);
  const files = asts.map((ast): SourceAst => {
    const clauses = ast.items.flatMap((item): Clause[] => {
      switch (item.kind) {
        case 'decl': {
          const decl = decls.get(item);
          const lattice = c.lattices.get(item.rel.name);
          return !decl ? [] : lattice ? [decl, latticeRule(item.rel.name, item.attributes.length, lattice, item.span)] : [decl];
        }
        case 'fact': {
          const fact = c.fact(item);
          return fact ? [fact] : [];
        }
        case 'rule': {
          // A rule with a refused counter is dropped (its error is reported).
          const rule = counted.has(item) ? counted.get(item) : item;
          return rule?.kind === 'rule' ? c.rules(rule) : [];
        }
        case 'type':
        case 'io':
        // Lattices now (subsumptionLattices).
        case 'subsume':
        // Expanded before conversion (components.ts).
        case 'comp':
        case 'init':
        case 'override':
          return [];
      }
    });
    return { file: ast.file, clauses };
  });
  if (c.helpers.has(UNIT)) {
    const span = items.find((item) => item.kind === 'rule')!.span;
    const zero: Term = { kind: 'int', value: 0n, suffix: '', span };
    files.push({ file: files[0]!.file, clauses: [{ kind: 'fact', head: { kind: 'atom', pred: UNIT, args: [zero], span, predSpan: span }, span }] });
  }
  const declsByName = new Map([...decls].flatMap(([item, clause]) => (item.kind === 'decl' ? [[item.rel.name, clause] as const] : [])));
  const inputHelpers = c.inputsWithRules(items).flatMap((rel) => c.inputHelper(rel, declsByName.get(rel)));
  if (inputHelpers.length > 0) files.push({ file: files[0]!.file, clauses: inputHelpers });
  const relations = new Set([...items.flatMap((item) => (item.kind === 'decl' ? [item.rel.name] : [])), ...c.helpers]);
  return { files, relations, outputs: c.outputs, io: c.io };
}
