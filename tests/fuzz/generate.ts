/**
 * Random well-typed, safe programs of the foundation subset for differential fuzzing.
 *
 * fast-check generates a *blueprint* of plain numbers and arrays; `buildProgram` turns it into a program
 * deterministically, picking every choice modulo what is available. So any blueprint — including every
 * shrunk one — builds a valid program: each variable's type is fixed by its first positive occurrence,
 * later uses only pick variables of the same type, and head columns only take bound variables or constants.
 *
 * To grow the language: add a `BodyLiteral` kind (assignment, ...), a blueprint field that drives
 * it, a case in `buildRule`, `renderLiteral` and `oracle.ts`, and a flag in `GenOptions`.
 */
import fc from 'fast-check';
import type { Row, ScalarType, Value } from '@vixen/queryplan';

/** The types the fuzzer generates. */
export type ColType = Extract<ScalarType, 'int32' | 'int64' | 'string'>;
export const COL_TYPES: readonly ColType[] = ['int32', 'int64', 'string'];

export type CmpOp = '=' | '!=' | '<' | '<=' | '>' | '>=';
export const CMP_OPS: readonly CmpOp[] = ['=', '!=', '<', '<=', '>', '>='];

export type Term =
  | { kind: 'var'; name: string; type: ColType }
  | { kind: 'const'; value: Value; type: ColType }
  | { kind: 'wild' };

export interface Atom {
  rel: string;
  args: Term[];
}

/**
 * Body literals. `assign` binds `name` to `from op by` (`+`/`-` of a bound variable and a variable or constant of
 * its type), after the atoms. `neg`: a negated atom of a base relation (always stratified), its variables bound by
 * the rule's atoms.
 */
export type BodyLiteral =
  | { kind: 'atom'; atom: Atom }
  | { kind: 'cmp'; op: CmpOp; left: Term; right: Term }
  | { kind: 'assign'; name: string; type: ColType; from: Term; op: '+' | '-'; by: Term }
  | { kind: 'neg'; atom: Atom };

export interface Rule {
  head: Atom;
  body: BodyLiteral[];
  /** `head <- agg<<result = fn(arg)>> body` (recursion through min or max: the head is a lattice relation). */
  agg?: { fn: 'min' | 'max'; result: string; arg: string };
}

export interface RelSpec {
  name: string;
  types: ColType[];
  kind: 'edb' | 'idb';
  /** Whether the source declares it (always for EDB). */
  declared: boolean;
  /** A lattice relation: per key (all columns but the last), the least (min) or greatest (max) value derived. */
  lattice?: 'min' | 'max';
}

export interface GenProgram {
  relations: RelSpec[];
  /** Facts given in the source text. */
  inlineFacts: Record<string, Row[]>;
  /** Facts given through the API's `facts` option. */
  apiFacts: Record<string, Row[]>;
  rules: Rule[];
  /** Write int64 constants with an `L` suffix even where the column type makes it unnecessary. */
  int64Suffix: boolean;
}

/** Small value domains so joins hit; index 0 shrinks first, the first few are the common ones. */
export const VALUES: { readonly [T in ColType]: readonly Value[] } = {
  int32: [0, 1, -1, 2, 3, -2, 7, -7, 100, 2147483647, -2147483648, 65535, 65536, -65536, 16777217, 255],
  int64: [
    0n,
    4294967296n,
    -1n,
    5000000000n,
    1n,
    -5000000000n,
    4294967295n,
    2n ** 40n,
    -(2n ** 32n),
    9223372036854775807n,
    -9223372036854775807n,
    2147483648n,
    -2147483649n,
    4294967297n,
    -(2n ** 63n),
    2n,
  ],
  string: [
    'a',
    'b',
    'with space',
    'quo"te',
    '',
    'ünï',
    '😀',
    'back\\slash',
    'tab\there',
    'line\nbreak',
    'A',
    'a ',
    '日本語',
    'z',
    'é',
    'e\u0301',
  ],
};

export interface GenOptions {
  edbs: { min: number; max: number };
  idbs: { min: number; max: number };
  rules: { min: number; max: number };
  facts: { max: number };
  bodyAtoms: { min: number; max: number };
  comparisons: { max: number };
  /**
   * Longest chain of links an EDB relation may hold. Up to 16 the chain runs through the value table (it wraps);
   * longer ones (long thin loops: a fixpoint of one iteration per link) run through the integers 0, 1, 2, ... (and
   * their int64 and string forms), which meet the table's small values at their start.
   */
  chain: { max: number };
  negations: { max: number };
}

export const DEFAULT_OPTIONS: GenOptions = {
  edbs: { min: 2, max: 4 },
  idbs: { min: 1, max: 4 },
  rules: { min: 1, max: 6 },
  facts: { max: 30 },
  bodyAtoms: { min: 1, max: 3 },
  comparisons: { max: 2 },
  chain: { max: 16 },
  negations: { max: 1 },
};

/** Long thin loops (scripts/fuzz.ts --long-loops): EDB chains of up to 200 links, fewer relations and rules. */
export const LONG_LOOP_OPTIONS: GenOptions = { ...DEFAULT_OPTIONS, idbs: { min: 1, max: 3 }, rules: { min: 1, max: 4 }, chain: { max: 200 } };

// ---------------------------------------------------------------- blueprint

const valueSeed = fc.oneof({ arbitrary: fc.nat({ max: 3 }), weight: 4 }, { arbitrary: fc.nat({ max: 15 }), weight: 1 });
const typesSeed = fc.array(fc.nat({ max: 2 }), { minLength: 1, maxLength: 3 });

/** An argument: 0-7 a variable (reuse if pick hits an existing one of the type), 8 a constant, 9 `_`. */
const argSeed = fc.record({ kind: fc.nat({ max: 9 }), pick: fc.nat({ max: 7 }), value: valueSeed });

export interface Blueprint {
  /** `chain`: rows follow a chain through the value table (long recursive derivations) instead of `rows`. */
  edbs: { types: number[]; rows: number[][]; where: number; chain: number }[];
  /** `rows`: seed facts for the derived relation, written in the source. */
  idbs: { types: number[]; declare: boolean; rows: number[][] }[];
  rules: {
    head: number;
    headArgs: { pick: number; value: number }[];
    atoms: { rel: number; args: { kind: number; pick: number; value: number }[] }[];
    cmps: { op: number; left: number; rightKind: number; right: number; value: number; flip: boolean; at: number }[];
    negs: { rel: number; args: { kind: number; pick: number; value: number }[]; at: number }[];
  }[];
  int64Suffix: boolean;
  /**
   * Long thin loops (GenOptions.chain over 16): a chain `link` of this many links of this type, and `walk`, the
   * nodes reachable along it from its first: one fixpoint iteration per link. Other rules may use both.
   */
  walk?: { links: number; type: number };
}

export function blueprintArb(o: GenOptions = DEFAULT_OPTIONS): fc.Arbitrary<Blueprint> {
  return fc.record({
    edbs: fc.array(
      fc.record({
        types: typesSeed,
        rows: fc.array(fc.array(valueSeed, { minLength: 3, maxLength: 3 }), { maxLength: o.facts.max, size: 'max' }),
        // 0-1 API facts, 2 inline, 3 split between both.
        where: fc.nat({ max: 3 }),
        // 0-3 random rows; otherwise a chain of that many links (value k, k+1, ... in each row).
        chain: fc.oneof(
          { arbitrary: fc.constant(0), weight: 4 },
          fc.integer({ min: 4, max: Math.min(16, o.chain.max) }),
          ...(o.chain.max > 16 ? [{ arbitrary: fc.integer({ min: 17, max: o.chain.max }), weight: 2 }] : []),
        ),
      }),
      { minLength: o.edbs.min, maxLength: o.edbs.max },
    ),
    idbs: fc.array(
      fc.record({
        types: typesSeed,
        declare: fc.boolean(),
        rows: fc.oneof({ arbitrary: fc.constant<number[][]>([]), weight: 3 }, fc.array(fc.array(valueSeed, { minLength: 3, maxLength: 3 }), { maxLength: 3 })),
      }),
      { minLength: o.idbs.min, maxLength: o.idbs.max },
    ),
    rules: fc.array(
      fc.record({
        head: fc.nat({ max: 7 }),
        headArgs: fc.array(fc.record({ pick: fc.nat({ max: 7 }), value: valueSeed }), { minLength: 3, maxLength: 3 }),
        atoms: fc.array(
          fc.record({ rel: fc.nat({ max: 15 }), args: fc.array(argSeed, { minLength: 3, maxLength: 3 }) }),
          { minLength: o.bodyAtoms.min, maxLength: o.bodyAtoms.max },
        ),
        cmps: fc.array(
          fc.record({
            op: fc.nat({ max: 5 }),
            left: fc.nat({ max: 7 }),
            // 0-1 another variable, 2 a constant.
            rightKind: fc.nat({ max: 2 }),
            right: fc.nat({ max: 7 }),
            value: valueSeed,
            flip: fc.boolean(),
            at: fc.nat({ max: 7 }),
          }),
          { maxLength: o.comparisons.max },
        ),
        negs: fc.array(fc.record({ rel: fc.nat({ max: 15 }), args: fc.array(argSeed, { minLength: 3, maxLength: 3 }), at: fc.nat({ max: 7 }) }), {
          maxLength: o.negations.max,
        }),
      }),
      { minLength: o.rules.min, maxLength: o.rules.max },
    ),
    int64Suffix: fc.boolean(),
    ...(o.chain.max > 16 ? { walk: fc.record({ links: fc.integer({ min: 17, max: o.chain.max }), type: fc.nat({ max: 2 }) }) } : {}),
  });
}

// ---------------------------------------------------------------- building

function value(type: ColType, seed: number): Value {
  const table = VALUES[type];
  return table[seed % table.length]!;
}

/** Value `k` of a long chain (more links than the value table has values): the integer k in the column's type. */
function chainValue(type: ColType, k: number): Value {
  return type === 'int32' ? k : type === 'int64' ? BigInt(k) : `n${k}`;
}

function typeOf(seed: number): ColType {
  return COL_TYPES[seed % COL_TYPES.length]!;
}

/** A key that tells every typed value apart (1 vs 1n vs "1"). */
export function rowKey(row: readonly Value[]): string {
  return JSON.stringify(row.map((v) => (typeof v === 'bigint' ? `${v}n` : typeof v === 'number' ? v : `s${v}`)));
}

/**
 * `grounded` are the EDB relations and the heads of earlier rules: the first atom comes from them, so most
 * relations derive something; later atoms may name any relation (self, mutual and non-linear recursion).
 */
function buildRule(bp: Blueprint['rules'][number], head: RelSpec, grounded: RelSpec[], bodyRels: RelSpec[], bases: RelSpec[]): Rule {
  const vars: { name: string; type: ColType }[] = [];
  const body: BodyLiteral[] = [];
  for (const [n, a] of bp.atoms.entries()) {
    const from = n === 0 ? grounded : bodyRels;
    const rel = from[a.rel % from.length]!;
    const before = vars.length;
    const args = rel.types.map((type, i): Term => {
      const s = a.args[i]!;
      if (s.kind >= 9) return { kind: 'wild' };
      if (s.kind >= 8) return { kind: 'const', value: value(type, s.value), type };
      // Reuse a variable of the same type (a join) or take a fresh one; kind 0 may also repeat one of
      // this atom's own variables (a filter, which is rarer because it keeps few rows).
      const same = vars.filter((v, k) => v.type === type && (s.kind === 0 || k < before));
      const reuse = same[s.pick % (same.length + 1)];
      if (reuse) return { kind: 'var', ...reuse };
      const fresh = { name: `v${vars.length}`, type };
      vars.push(fresh);
      return { kind: 'var', ...fresh };
    });
    body.push({ kind: 'atom', atom: { rel: rel.name, args } });
  }
  const atomCount = body.length;
  for (const c of bp.cmps) {
    if (vars.length === 0) break;
    const left = vars[c.left % vars.length]!;
    const same = vars.filter((v) => v.type === left.type && v.name !== left.name);
    const other = same[c.right % Math.max(1, same.length)];
    const right: Term =
      c.rightKind < 2 && other ? { kind: 'var', ...other } : { kind: 'const', value: value(left.type, c.value), type: left.type };
    const l: Term = { kind: 'var', ...left };
    const lit: BodyLiteral = c.flip ? { kind: 'cmp', op: CMP_OPS[c.op % 6]!, left: right, right: l } : { kind: 'cmp', op: CMP_OPS[c.op % 6]!, left: l, right };
    // Comparisons may stand before the atoms that bind their variables: order in a body does not matter.
    body.splice(c.at % (atomCount + 1), 0, lit);
  }
  for (const n of bp.negs) {
    const rel = bases[n.rel % bases.length]!;
    // Each argument a variable the atoms bound (of its type; mostly), a constant or `_`.
    const args = rel.types.map((type, i): Term => {
      const s = n.args[i]!;
      const same = vars.filter((v) => v.type === type);
      if (s.kind < 7 && same.length > 0) return { kind: 'var', ...same[s.pick % same.length]! };
      return s.kind < 9 ? { kind: 'const', value: value(type, s.value), type } : { kind: 'wild' };
    });
    body.splice(n.at % (body.length + 1), 0, { kind: 'neg', atom: { rel: rel.name, args } });
  }
  const headArgs = head.types.map((type, i): Term => {
    const s = bp.headArgs[i]!;
    const same = vars.filter((v) => v.type === type);
    const v = same[s.pick % Math.max(1, same.length)];
    return v ? { kind: 'var', ...v } : { kind: 'const', value: value(type, s.value), type };
  });
  return { head: { rel: head.name, args: headArgs }, body };
}

/**
 * The undeclared relations whose columns the front end cannot all infer from the rules (e.g. `p(x) <- p(x).`
 * alone): they get a declaration.
 */
function needDeclaration(rels: RelSpec[], rules: Rule[]): Set<string> {
  const known = new Map(rels.map((r) => [r.name, r.types.map(() => r.declared)]));
  for (let changed = true; changed; ) {
    changed = false;
    for (const rule of rules) {
      const typed = new Set<string>();
      for (const lit of rule.body) {
        if (lit.kind !== 'atom') continue;
        lit.atom.args.forEach((t, i) => {
          if (t.kind === 'var' && known.get(lit.atom.rel)![i]) typed.add(t.name);
        });
      }
      const cols = known.get(rule.head.rel)!;
      rule.head.args.forEach((t, i) => {
        // Constants type their column: int64 ones carry `L` in heads of undeclared relations (see render).
        if (!cols[i] && (t.kind === 'const' || (t.kind === 'var' && typed.has(t.name)))) {
          cols[i] = true;
          changed = true;
        }
      });
    }
  }
  return new Set(rels.filter((r) => !known.get(r.name)!.every(Boolean)).map((r) => r.name));
}

export function buildProgram(bp: Blueprint): GenProgram {
  const edbs: RelSpec[] = bp.edbs.map((e, i) => ({ name: `e${i}`, types: e.types.map(typeOf), kind: 'edb', declared: true }));
  const idbSpecs: RelSpec[] = bp.idbs.map((d, i) => ({ name: `p${i}`, types: d.types.map(typeOf), kind: 'idb', declared: d.declare }));
  // Only relations that head some rule exist; bodies may use any of them (self, mutual, non-linear recursion).
  const heads = bp.rules.map((r) => idbSpecs[r.head % idbSpecs.length]!);
  const idbs = idbSpecs.filter((d) => heads.includes(d));
  const walk = bp.walk && walkRules(bp.walk.links, typeOf(bp.walk.type));
  const bodyRels = [...edbs, ...idbs, ...(walk ? [walk.link, walk.walk] : [])];
  const rules = [
    ...(walk?.rules ?? []),
    ...bp.rules.map((r, i) => buildRule(r, heads[i]!, [...edbs, ...(walk ? [walk.walk] : []), ...new Set(heads.slice(0, i))], bodyRels, edbs)),
  ];
  if (walk) {
    edbs.push(walk.link);
    idbs.push(walk.walk);
  }

  const mustDeclare = needDeclaration([...edbs, ...idbs], rules);
  for (const d of idbs) if (mustDeclare.has(d.name)) d.declared = true;

  const inlineFacts: Record<string, Row[]> = {};
  const apiFacts: Record<string, Row[]> = {};
  bp.edbs.forEach((e, i) => {
    const rel = edbs[i]!;
    const seeds = e.chain > 0 ? Array.from({ length: e.chain }, (_, k) => [k, k + 1, k + 2]) : e.rows;
    const long = e.chain > 16;
    const rows = seeds.map((row) => rel.types.map((t, c) => (long ? chainValue(t, row[c]!) : value(t, row[c]!))));
    // Duplicate rows are legal input (set semantics) and are kept.
    const half = Math.ceil(rows.length / 2);
    const [inline, api] = e.where === 2 ? [rows, []] : e.where === 3 ? [rows.slice(0, half), rows.slice(half)] : [[], rows];
    if (inline.length > 0) inlineFacts[rel.name] = inline;
    if (api.length > 0) apiFacts[rel.name] = api;
  });
  if (walk) inlineFacts[walk.link.name] = walk.facts;
  bp.idbs.forEach((d, i) => {
    const rel = idbSpecs[i]!;
    if (idbs.includes(rel) && d.rows.length > 0) inlineFacts[rel.name] = d.rows.map((seeds) => rel.types.map((t, c) => value(t, seeds[c]!)));
  });
  return { relations: [...edbs, ...idbs], inlineFacts, apiFacts, rules, int64Suffix: bp.int64Suffix };
}

/** `link`, a chain of `links` links through chainValue, and `walk(y) <- walk(x), link(x, y)` from its first node. */
function walkRules(links: number, type: ColType): { link: RelSpec; walk: RelSpec; rules: Rule[]; facts: Row[] } {
  const link: RelSpec = { name: 'link', types: [type, type], kind: 'edb', declared: true };
  const walk: RelSpec = { name: 'walk', types: [type], kind: 'idb', declared: true };
  const v = (name: string): Term => ({ kind: 'var', name, type });
  const rules: Rule[] = [
    { head: { rel: 'walk', args: [v('x')] }, body: [{ kind: 'atom', atom: { rel: 'link', args: [v('x'), { kind: 'wild' }] } }, { kind: 'cmp', op: '=', left: v('x'), right: { kind: 'const', value: chainValue(type, 0), type } }] },
    { head: { rel: 'walk', args: [v('y')] }, body: [{ kind: 'atom', atom: { rel: 'walk', args: [v('x')] } }, { kind: 'atom', atom: { rel: 'link', args: [v('x'), v('y')] } }] },
  ];
  const facts = Array.from({ length: links }, (_, k): Row => [chainValue(type, k), chainValue(type, k + 1)]);
  return { link, walk, rules, facts };
}

export function programArb(o: GenOptions = DEFAULT_OPTIONS): fc.Arbitrary<GenProgram> {
  return blueprintArb(o).map(buildProgram);
}

// ---------------------------------------------------------------- rendering

export function escapeString(s: string): string {
  return s.replace(/[\\"\n\t]/g, (c) => (c === '\n' ? '\\n' : c === '\t' ? '\\t' : `\\${c}`));
}

function renderConst(v: Value, type: ColType, suffix: boolean): string {
  switch (type) {
    case 'string':
      return `"${escapeString(v as string)}"`;
    case 'int64':
      return `${v}${suffix ? 'L' : ''}`;
    case 'int32':
      return String(v);
  }
}

function renderTerm(t: Term, suffix: boolean): string {
  switch (t.kind) {
    case 'var':
      return t.name;
    case 'wild':
      return '_';
    case 'const':
      return renderConst(t.value, t.type, suffix);
  }
}

function renderAtom(a: Atom, suffix: boolean): string {
  return `${a.rel}(${a.args.map((t) => renderTerm(t, suffix)).join(', ')})`;
}

function renderLiteral(l: BodyLiteral, suffix: boolean): string {
  switch (l.kind) {
    case 'atom':
      return renderAtom(l.atom, suffix);
    case 'cmp':
      return `${renderTerm(l.left, suffix)} ${l.op} ${renderTerm(l.right, suffix)}`;
    case 'assign':
      return `${l.name} = ${renderTerm(l.from, suffix)} ${l.op} ${renderTerm(l.by, suffix)}`;
    case 'neg':
      return `!${renderAtom(l.atom, suffix)}`;
  }
}

export function renderProgram(p: GenProgram): string {
  const lines: string[] = [];
  for (const r of p.relations.filter((r) => r.declared)) {
    const cols = r.types.map((_, i) => `c${i}`);
    lines.push(`${r.name}(${cols.join(', ')}) -> ${r.types.map((t, i) => `${t}(c${i})`).join(', ')}.`);
  }
  for (const [name, rows] of Object.entries(p.inlineFacts)) {
    const types = p.relations.find((r) => r.name === name)!.types;
    for (const row of rows) lines.push(`${name}(${row.map((v, i) => renderConst(v, types[i]!, p.int64Suffix)).join(', ')}).`);
  }
  const declared = new Set(p.relations.filter((r) => r.declared).map((r) => r.name));
  for (const rule of p.rules) {
    // An unsuffixed integer in the head of an undeclared relation would make its column int32.
    const head = renderAtom(rule.head, p.int64Suffix || !declared.has(rule.head.rel));
    const agg = rule.agg ? `agg<<${rule.agg.result} = ${rule.agg.fn}(${rule.agg.arg})>> ` : '';
    lines.push(`${head} <- ${agg}${rule.body.map((l) => renderLiteral(l, p.int64Suffix)).join(', ')}.`);
  }
  return lines.join('\n') + '\n';
}

/** The API facts as TypeScript-ish text, for failure reports. */
export function renderApiFacts(p: GenProgram): string {
  const show = (v: Value): string => (typeof v === 'bigint' ? `${v}n` : JSON.stringify(v));
  return Object.entries(p.apiFacts)
    .map(([name, rows]) => `${name}: [${rows.map((r) => `[${r.map(show).join(', ')}]`).join(', ')}]`)
    .join('\n');
}

/** Every relation of the program, EDB and IDB: a run is asked for all of them. */
export function relationNames(p: GenProgram): string[] {
  return p.relations.map((r) => r.name);
}
