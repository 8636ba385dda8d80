/**
 * Soufflé records (`.type P = [x: number, y: symbol]`, `[a, b]`, `nil`) and algebraic data types
 * (`.type T = A {x: number} | B {}`, `$A(1)`), lowered before conversion by flattening: a column of a record
 * type becomes a tag column (0 for nil, 1 for a record) followed by its fields' columns, a column of an ADT a
 * branch column (the branch's index) followed by every branch's fields' columns, fields of the branch not taken
 * (and of nil) holding 0, 0.0 or "". Equal values then have equal columns, so joins, `=` and `!=` on records are
 * column-wise, and a record never needs an id: no value is made during evaluation, so fixpoints stay as they
 * are. Soufflé instead interns records in a table of ids; the answers are the same, only ordering differs
 * (Soufflé compares record ids), so `<` and friends on records are refused. A recursive type (a list) has no
 * finite set of columns: it is a located "not supported" error. `RecordLayouts` tell io how Soufflé spells the
 * columns in files (`[1, a]`, `nil`, `$A(1)`), to print outputs and read `.input` files.
 */
import { errorAt, type Diagnostic, type SourceSpan } from '@vixen/queryplan';
import type { Attribute, Name, SAtom, SFormula, SItem, SouffleAst, STerm } from './ast.js';
import { allAtoms, mapTerm } from './scoping.js';

/** How one declared attribute's columns print: a plain value, a record, or an ADT (serialisable, for io). */
export type PrintLayout =
  | { kind: 'value' }
  | { kind: 'record'; fields: PrintLayout[] }
  | { kind: 'adt'; branches: { name: string; fields: PrintLayout[] }[] };

/** Print layouts of the relations that have record or ADT attributes, per declared attribute. */
export type RecordLayouts = Record<string, PrintLayout[]>;

type Primitive = 'number' | 'unsigned' | 'float' | 'symbol';
const PRIMITIVES: ReadonlySet<string> = new Set(['number', 'unsigned', 'float', 'symbol']);

/** The columns a type stands for: a value column of type `type`, or a record's or ADT's columns. */
type Layout =
  | { kind: 'value'; type: Name; primitive: Primitive }
  | { kind: 'record'; type: string; fields: Layout[] }
  | { kind: 'adt'; type: string; branches: { name: string; fields: Layout[] }[] };

type TypeItem = Extract<SItem, { kind: 'type' }>;
type Problems = [string, SourceSpan][];

/** How many flattened columns a record or ADT attribute has (a Layout is a PrintLayout too). */
export function layoutWidth(l: PrintLayout): number {
  switch (l.kind) {
    case 'value':
      return 1;
    case 'record':
      return 1 + l.fields.reduce((n, f) => n + layoutWidth(f), 0);
    case 'adt':
      return 1 + l.branches.reduce((n, b) => n + b.fields.reduce((m, f) => m + layoutWidth(f), 0), 0);
  }
}

function printLayout(l: Layout): PrintLayout {
  switch (l.kind) {
    case 'value':
      return { kind: 'value' };
    case 'record':
      return { kind: 'record', fields: l.fields.map(printLayout) };
    case 'adt':
      return { kind: 'adt', branches: l.branches.map((b) => ({ name: b.name, fields: b.fields.map(printLayout) })) };
  }
}

/** Leaf column types (tags are numbers), in column order. */
function leafTypes(l: Layout, at: Name): Name[] {
  const tag: Name = { name: 'number', span: at.span };
  switch (l.kind) {
    case 'value':
      return [l.type];
    case 'record':
      return [tag, ...l.fields.flatMap((f) => leafTypes(f, at))];
    case 'adt':
      return [tag, ...l.branches.flatMap((b) => b.fields.flatMap((f) => leafTypes(f, at)))];
  }
}

const ZERO: Readonly<Record<Primitive, (span: SourceSpan) => STerm>> = {
  number: (span) => int(0, span),
  unsigned: (span) => ({ kind: 'int', value: 0n, unsigned: true, span }),
  float: (span) => ({ kind: 'float', text: '0.0', span }),
  symbol: (span) => ({ kind: 'string', value: '', span }),
};

/** The columns of a value absent from `l`: nil's fields, a branch not taken. */
function defaults(l: Layout, span: SourceSpan): STerm[] {
  switch (l.kind) {
    case 'value':
      return [ZERO[l.primitive](span)];
    case 'record':
      return [int(0, span), ...l.fields.flatMap((f) => defaults(f, span))];
    case 'adt':
      return [int(0, span), ...l.branches.flatMap((b) => b.fields.flatMap((f) => defaults(f, span)))];
  }
}

function int(value: number, span: SourceSpan): STerm {
  return { kind: 'int', value: BigInt(value), unsigned: false, span };
}

/**
 * Which columns of term `t` (of layout `l`) are not fixed by a tag: nil fixes all its fields, a branch the
 * fields of the branches it is not. Two values with equal tags agree on such columns.
 */
function decisive(t: STerm, l: Layout): boolean[] {
  const all = (n: number): boolean[] => Array.from({ length: n }, () => true);
  if (l.kind === 'value') return [true];
  if (l.kind === 'record') {
    if (t.kind === 'var' && t.name === 'nil') return [true, ...Array.from({ length: layoutWidth(l) - 1 }, () => false)];
    if (t.kind === 'record' && t.args.length === l.fields.length) return [true, ...t.args.flatMap((a, i) => decisive(a, l.fields[i]!))];
    return all(layoutWidth(l));
  }
  if (t.kind !== 'branch') return all(layoutWidth(l));
  const index = l.branches.findIndex((b) => b.name === t.name);
  if (index < 0 || l.branches[index]!.fields.length !== t.args.length) return all(layoutWidth(l));
  const fields = l.branches.flatMap((b, j) => (j === index ? t.args.flatMap((a, i) => decisive(a, b.fields[i]!)) : b.fields.flatMap((f) => Array.from({ length: layoutWidth(f) }, () => false))));
  return [true, ...fields];
}

function zip(a: boolean[], b: boolean[]): boolean[] {
  return a.map((x, i) => x && b[i]!);
}

function sameConstant(a: STerm, b: STerm): boolean {
  if (a.kind === 'int' && b.kind === 'int') return a.value === b.value && a.unsigned === b.unsigned;
  if (a.kind === 'string' && b.kind === 'string') return a.value === b.value;
  return a.kind === 'float' && b.kind === 'float' && a.text === b.text;
}

function sameType(a: Layout, b: Layout): boolean {
  return a.kind === 'value' ? b.kind === 'value' : b.kind === a.kind && b.type === a.type;
}

function describe(l: Layout): string {
  return l.kind === 'value' ? l.type.name : l.type;
}

class Types {
  private readonly items = new Map<string, TypeItem>();
  private readonly layouts = new Map<string, Layout | undefined>();

  constructor(items: SItem[], private readonly problems: Problems) {
    for (const item of items) if (item.kind === 'type' && !this.items.has(item.name.name)) this.items.set(item.name.name, item);
  }

  /** Whether `t` is a record or ADT type (directly or through an alias). */
  isStructured(t: Name): boolean {
    for (let item = this.items.get(t.name), seen = 0; item && seen < 64; seen++) {
      if (item.record || item.branches) return true;
      if (item.alternatives.length !== 1) return false;
      item = this.items.get(item.alternatives[0]!.name);
    }
    return false;
  }

  /** The layout of type `t`; undefined after reporting why it has none. */
  layout(t: Name, active: string[] = []): Layout | undefined {
    if (PRIMITIVES.has(t.name)) return { kind: 'value', type: t, primitive: t.name as Primitive };
    if (this.layouts.has(t.name)) return this.layouts.get(t.name);
    const item = this.items.get(t.name);
    // Unknown types are the converter's to report.
    if (!item) return { kind: 'value', type: t, primitive: 'symbol' };
    if (active.includes(t.name)) {
      this.problems.push([`recursive record types are not supported: ${t.name} contains itself (${[...active.slice(active.indexOf(t.name)), t.name].join(' -> ')})`, item.name.span]);
      return undefined;
    }
    const inner = [...active, t.name];
    const fields = (fs: Attribute[]): Layout[] | undefined => {
      const ls = fs.map((f) => this.layout(f.type, inner));
      return ls.every((l) => l !== undefined) ? (ls as Layout[]) : undefined;
    };
    let result: Layout | undefined;
    if (item.record) {
      const fs = fields(item.record);
      result = fs && { kind: 'record', type: t.name, fields: fs };
    } else if (item.branches) {
      // Branches indexed in name order; the index decides only how rows sort (ordering comparisons are refused).
      const sorted = [...item.branches].sort((a, b) => (a.name.name < b.name.name ? -1 : a.name.name > b.name.name ? 1 : 0));
      const branches = sorted.map((b) => ({ name: b.name.name, fields: fields(b.fields) }));
      result = branches.every((b) => b.fields) ? { kind: 'adt', type: t.name, branches: branches as { name: string; fields: Layout[] }[] } : undefined;
    } else {
      const alts = item.alternatives.map((a) => this.layout(a, inner));
      if (alts.some((a) => a === undefined)) result = undefined;
      else if (alts.some((a) => a!.kind !== 'value')) {
        if (alts.length === 1) result = alts[0];
        else {
          this.problems.push([`unions of record or algebraic data types are not supported: ${t.name}`, item.name.span]);
          result = undefined;
        }
      } else result = { kind: 'value', type: t, primitive: (alts[0] as Extract<Layout, { kind: 'value' }>).primitive };
    }
    this.layouts.set(t.name, result);
    return result;
  }
}

/** Lowers the records of one clause: the variables' layouts found first, then every term flattened. */
class ClauseLowering {
  private readonly vars = new Map<string, Layout>();

  constructor(
    private readonly relations: ReadonlyMap<string, (Layout | undefined)[]>,
    private readonly problems: Problems,
  ) {}

  /** Finds the layouts of the clause's variables from the positions they stand in. */
  infer(formulas: SFormula[]): void {
    const compares: [STerm, STerm][] = [];
    const visit = (f: SFormula): void => {
      switch (f.kind) {
        case 'atom':
          f.args.forEach((t, i) => {
            const l = this.relations.get(f.rel)?.[i];
            if (l) this.assign(t, l);
            this.visitTerm(t, visit);
          });
          return;
        case 'compare':
          if (f.op === '=' || f.op === '!=') compares.push([f.left, f.right]);
          this.visitTerm(f.left, visit);
          this.visitTerm(f.right, visit);
          return;
        case 'not':
          return visit(f.body);
        case 'bool':
          return;
        case 'and':
        case 'or':
          return f.items.forEach(visit);
      }
    };
    formulas.forEach(visit);
    for (let before = -1; before !== this.vars.size; ) {
      before = this.vars.size;
      for (const [l, r] of compares) {
        const known = this.layoutOf(l) ?? this.layoutOf(r);
        if (known) {
          this.assign(l, known);
          this.assign(r, known);
        }
      }
    }
  }

  /** Looks into the aggregates of a term (their bodies hold atoms too). */
  private visitTerm(t: STerm, visit: (f: SFormula) => void): void {
    mapTerm(t, (u) => {
      if (u.kind === 'aggregate') visit(u.body);
      return undefined;
    });
  }

  private layoutOf(t: STerm): Layout | undefined {
    return t.kind === 'var' ? this.vars.get(t.name) : undefined;
  }

  private assign(t: STerm, l: Layout): void {
    if (l.kind === 'value') return;
    if (t.kind === 'var' && t.name !== 'nil') {
      const prior = this.vars.get(t.name);
      if (!prior) this.vars.set(t.name, l);
      else if (!sameType(prior, l)) this.problems.push([`variable ${t.name} is of type ${describe(prior)} and of type ${describe(l)}`, t.span]);
    } else if (t.kind === 'record' && l.kind === 'record' && t.args.length === l.fields.length) {
      t.args.forEach((a, i) => this.assign(a, l.fields[i]!));
    } else if (t.kind === 'branch' && l.kind === 'adt') {
      const branch = l.branches.find((b) => b.name === t.name);
      if (branch && branch.fields.length === t.args.length) t.args.forEach((a, i) => this.assign(a, branch.fields[i]!));
    }
  }

  /** The columns of term `t` standing where a value of layout `l` is expected. */
  columns(t: STerm, l: Layout): STerm[] {
    if (l.kind === 'value') return [this.value(t)];
    const w = layoutWidth(l);
    const fail = (message: string): STerm[] => {
      this.problems.push([message, t.kind === 'branch' ? t.nameSpan : t.span]);
      return Array.from({ length: w }, () => ({ kind: 'wildcard', span: t.span }));
    };
    if (t.kind === 'wildcard') return Array.from({ length: w }, () => ({ kind: 'wildcard', span: t.span }));
    if (t.kind === 'var' && t.name === 'nil') return l.kind === 'record' ? defaults(l, t.span) : fail(`nil is a record: expected a value of type ${l.type}`);
    if (t.kind === 'var') {
      const own = this.vars.get(t.name);
      if (own && !sameType(own, l)) return fail(`variable ${t.name} is of type ${describe(own)}, expected ${l.type}`);
      return Array.from({ length: w }, (_, i) => ({ kind: 'var', name: `${t.name}$${i}`, span: t.span }));
    }
    if (l.kind === 'record') {
      if (t.kind !== 'record') return fail(`expected a record of type ${l.type}`);
      if (t.args.length !== l.fields.length) return fail(`a record of type ${l.type} has ${l.fields.length} field(s), found ${t.args.length}`);
      return [int(1, t.span), ...t.args.flatMap((a, i) => this.columns(a, l.fields[i]!))];
    }
    if (t.kind !== 'branch') return fail(`expected a branch of type ${l.type} ($${l.branches.map((b) => b.name).join(', $')})`);
    const index = l.branches.findIndex((b) => b.name === t.name);
    if (index < 0) return fail(`$${t.name} is no branch of type ${l.type} (expected $${l.branches.map((b) => b.name).join(', $')})`);
    const branch = l.branches[index]!;
    if (t.args.length !== branch.fields.length) return fail(`$${t.name} has ${branch.fields.length} field(s), found ${t.args.length}`);
    const fields = l.branches.flatMap((b, j) => (j === index ? t.args.flatMap((a, i) => this.columns(a, b.fields[i]!)) : b.fields.flatMap((f) => defaults(f, t.span))));
    return [int(index, t.span), ...fields];
  }

  /** A term standing for a plain value: records may occur only inside its aggregates' bodies. */
  private value(t: STerm): STerm {
    return mapTerm(t, (u) => {
      switch (u.kind) {
        case 'aggregate': {
          const target = u.target && this.value(u.target);
          return { ...u, ...(target ? { target } : {}), body: this.formula(u.body) };
        }
        case 'record':
          this.problems.push([`expected a value, found a record`, u.span]);
          return { kind: 'wildcard', span: u.span };
        case 'branch':
          this.problems.push([`expected a value, found the branch $${u.name}`, u.nameSpan]);
          return { kind: 'wildcard', span: u.span };
        case 'var': {
          const l = u.name === 'nil' ? undefined : this.vars.get(u.name);
          if (u.name === 'nil' || l) this.problems.push([`${u.name} is a record or ADT value: records are supported only as relation arguments and in = and != comparisons`, u.span]);
          return u;
        }
        default:
          return undefined;
      }
    });
  }

  atom(a: SAtom): SAtom {
    const layouts = this.relations.get(a.rel);
    if (!layouts) return { ...a, args: a.args.map((t) => this.value(t)) };
    if (layouts.length !== a.args.length) return a; // the converter reports the arity
    return { ...a, args: a.args.flatMap((t, i) => (layouts[i] ? this.columns(t, layouts[i]!) : [this.value(t)])) };
  }

  formula(f: SFormula): SFormula {
    switch (f.kind) {
      case 'atom':
        return this.atom(f);
      case 'compare': {
        const l = this.layoutOf(f.left) ?? this.layoutOf(f.right);
        if (!l) return { ...f, left: this.value(f.left), right: this.value(f.right) };
        if (f.op !== '=' && f.op !== '!=') {
          this.problems.push([`comparing records or ADT values with ${f.op} is not supported: Soufflé orders them by record ids`, f.span]);
          return f;
        }
        const left = this.columns(f.left, l);
        const right = this.columns(f.right, l);
        // Where a side is nil or a branch, its tag decides the columns it leaves at their defaults.
        const relevant = f.op === '!=' ? zip(decisive(f.left, l), decisive(f.right, l)) : left.map(() => true);
        // `_` inside a record matches anything (`l = [x, _]`), and equal constants (tags) need no test.
        const pairs = left.flatMap((t, i): SFormula[] => {
          const u = right[i]!;
          if (!relevant[i]) return [];
          if (t.kind === 'wildcard' || u.kind === 'wildcard') {
            if (f.op === '!=') this.problems.push(['_ is not allowed in a != comparison of records', f.span]);
            return [];
          }
          if (sameConstant(t, u)) return f.op === '=' ? [] : [{ kind: 'bool', value: false, span: f.span }];
          return [{ kind: 'compare', op: f.op, left: t, right: u, span: f.span }];
        });
        if (pairs.length === 0) return { kind: 'bool', value: true, span: f.span };
        return pairs.length === 1 ? pairs[0]! : { kind: f.op === '=' ? 'and' : 'or', items: pairs, span: f.span };
      }
      case 'not':
        return { ...f, body: this.formula(f.body) };
      case 'bool':
        return f;
      case 'and':
      case 'or':
        return { ...f, items: f.items.map((i) => this.formula(i)) };
    }
  }
}

/**
 * The program with record and ADT columns flattened (see the file comment), and the print layouts of the
 * relations that had them. Relations whose types cannot be lowered are dropped with the clauses that use them,
 * after a located error.
 */
export function lowerRecords(asts: SouffleAst[], diagnostics: Diagnostic[]): { asts: SouffleAst[]; layouts: RecordLayouts } {
  const items = asts.flatMap((a) => a.items);
  const problems: Problems = [];
  const types = new Types(items, problems);
  const relations = new Map<string, (Layout | undefined)[]>();
  const dropped = new Set<string>();
  const layouts: RecordLayouts = {};
  for (const item of items) {
    if (item.kind !== 'decl' || relations.has(item.rel.name) || !item.attributes.some((a) => types.isStructured(a.type))) continue;
    const ls = item.attributes.map((a) => (types.isStructured(a.type) ? types.layout(a.type) : undefined));
    if (ls.some((l, i) => l === undefined && types.isStructured(item.attributes[i]!.type))) {
      const at = item.attributes.find((a, i) => ls[i] === undefined && types.isStructured(a.type))!;
      problems.push([`relation ${item.rel.name} is not supported: its attribute ${at.name.name} has a recursive or unsupported record type ${at.type.name}`, at.type.span]);
      dropped.add(item.rel.name);
      continue;
    }
    relations.set(item.rel.name, ls);
    layouts[item.rel.name] = ls.map((l) => (l ? printLayout(l) : { kind: 'value' }));
  }
  const uses = (atoms: SAtom[]): boolean => atoms.some((a) => dropped.has(a.rel));
  const lowerItem = (item: SItem): SItem[] => {
    switch (item.kind) {
      case 'decl': {
        if (dropped.has(item.rel.name)) return [];
        const ls = relations.get(item.rel.name);
        if (!ls) return [item];
        const attributes = item.attributes.flatMap((a, i) => {
          const l = ls[i];
          if (!l) return [a];
          return leafTypes(l, a.type).map((type, k): Attribute => ({ name: { ...a.name, name: `${a.name.name}$${k}` }, type: { ...type, span: a.type.span } }));
        });
        return [{ ...item, attributes }];
      }
      case 'io': {
        const targets = item.targets.filter((t) => !dropped.has(t.rel.name));
        return targets.length > 0 ? [{ ...item, targets }] : [];
      }
      // A clause with a record problem is dropped after its error: what is left of it would only mislead.
      case 'fact': {
        if (uses([item.atom])) return [];
        const before = problems.length;
        const c = new ClauseLowering(relations, problems);
        c.infer([item.atom]);
        const lowered: SItem = { ...item, atom: c.atom(item.atom) };
        return problems.length === before ? [lowered] : [];
      }
      case 'rule': {
        if (uses([...item.heads, ...allAtoms(item.body)])) return [];
        const before = problems.length;
        const c = new ClauseLowering(relations, problems);
        c.infer([...item.heads, item.body]);
        const lowered: SItem = { ...item, heads: item.heads.map((h) => c.atom(h)), body: c.formula(item.body) };
        return problems.length === before ? [lowered] : [];
      }
      case 'subsume':
        // The preference is on the last column: a record there is several columns.
        if (relations.has(item.rel.name)) problems.push([`subsumption on ${item.rel.name} is not supported: it has record attributes`, item.span]);
        return relations.has(item.rel.name) || dropped.has(item.rel.name) ? [] : [item];
      case 'type':
      case 'comp':
      case 'init':
      case 'override':
        return [item];
    }
  };
  const lowered = asts.map((ast) => ({ ...ast, items: ast.items.flatMap(lowerItem) }));
  const seen = new Set<string>();
  for (const [message, span] of problems) {
    const key = `${span.file}:${span.start.offset}:${message}`;
    if (!seen.has(key)) diagnostics.push(errorAt(message, span));
    seen.add(key);
  }
  return { asts: lowered, layouts };
}
