/**
 * Random programs that recurse through min or max (lattice relations, LANGUAGE.md "Recursion through min and
 * max") for differential fuzzing, in the generator form of generate.ts so that the same oracle, renderer and
 * property check them. A program has edge-like base relations `eI(x, y, w)`, one or two lattice relations of one
 * kind `LJ(key..., value)` (keys int32, one or two columns; values int32, int64 or string) seeded by facts and by
 * plain rules, and step rules that carry a value along an edge, as aggregates or plain rules, reading any lattice
 * relation (self and mutual recursion); each lattice relation has an aggregate step reading itself. Steps are monotone, so the best value over all derivations is a fixpoint
 * that naive and semi-naive evaluation reach alike: a min value grows by w >= 0 along an edge, a max one shrinks,
 * a string is copied. A plain relation may read a lattice one in a later stratum.
 */
import fc from 'fast-check';
import type { Row, Value } from '@vixen/queryplan';
import { CMP_OPS, type BodyLiteral, type ColType, type GenProgram, type RelSpec, type Rule, type Term } from './generate.js';

export interface LatticeBlueprint {
  max: boolean;
  keys: number;
  value: number;
  edbs: { rows: number[][]; chain: number; where: number }[];
  lattices: { facts: number[][] }[];
  seeds: { target: number; edb: number; fromEdge: boolean; value: number }[];
  steps: { target: number; from: number; edb: number; agg: boolean; byEdge: boolean; by: number; cmp: number; cmpValue: number }[];
  reader: { from: number; op: number; value: number } | null;
}

const small = fc.nat({ max: 7 });

export function latticeBlueprintArb(): fc.Arbitrary<LatticeBlueprint> {
  return fc.record({
    max: fc.boolean(),
    keys: fc.integer({ min: 1, max: 2 }),
    value: fc.nat({ max: 2 }),
    edbs: fc.array(
      fc.record({
        rows: fc.array(fc.array(small, { minLength: 3, maxLength: 3 }), { maxLength: 14 }),
        // 0: random rows; otherwise a chain of that many links closed into a cycle.
        chain: fc.oneof({ arbitrary: fc.constant(0), weight: 3 }, fc.integer({ min: 3, max: 12 })),
        // 0-1 API facts, 2 inline.
        where: fc.nat({ max: 2 }),
      }),
      { minLength: 1, maxLength: 2 },
    ),
    lattices: fc.array(fc.record({ facts: fc.array(fc.array(small, { minLength: 3, maxLength: 3 }), { maxLength: 3 }) }), { minLength: 1, maxLength: 2 }),
    seeds: fc.array(fc.record({ target: small, edb: small, fromEdge: fc.boolean(), value: small }), { minLength: 1, maxLength: 2 }),
    steps: fc.array(
      fc.record({ target: small, from: small, edb: small, agg: fc.boolean(), byEdge: fc.boolean(), by: fc.nat({ max: 3 }), cmp: fc.nat({ max: 12 }), cmpValue: small }),
      { minLength: 1, maxLength: 3 },
    ),
    reader: fc.option(fc.record({ from: small, op: fc.nat({ max: 5 }), value: small }), { nil: null }),
  });
}

const VALUE_TYPES: readonly ColType[] = ['int32', 'int64', 'string'];
const STRINGS = ['a', 'b', 'c', 'z', 'é'];

/** The lattice value a seed number stands for. */
function latticeValue(type: ColType, n: number): Value {
  switch (type) {
    case 'int32':
      return n * 3;
    case 'int64':
      return 5000000000n + BigInt(n);
    case 'string':
      return STRINGS[n % STRINGS.length]!;
  }
}

const v = (name: string, type: ColType): Term => ({ kind: 'var', name, type });
const int = (value: number): Term => ({ kind: 'const', value, type: 'int32' });

export function buildLatticeProgram(bp: LatticeBlueprint): GenProgram {
  const kind = bp.max ? 'max' : 'min';
  const valueType = VALUE_TYPES[bp.value]!;
  const edbs: RelSpec[] = bp.edbs.map((_, i) => ({ name: `e${i}`, types: ['int32', 'int32', 'int32'], kind: 'edb', declared: true }));
  const keyTypes: ColType[] = Array.from({ length: bp.keys }, () => 'int32');
  // Lattice relation i gets step i as an aggregate reading itself, so that each is recursive through the kind.
  const latticeBps = bp.lattices.slice(0, bp.steps.length);
  const steps = bp.steps.map((s, i) => (i < latticeBps.length ? { ...s, target: i, from: i, agg: true } : s));
  const lattices: RelSpec[] = latticeBps.map((_, i) => ({ name: `l${i}`, types: [...keyTypes, valueType], kind: 'idb', declared: true, lattice: kind }));
  const pick = <T>(xs: readonly T[], n: number): T => xs[n % xs.length]!;
  const inlineFacts: Record<string, Row[]> = {};
  const apiFacts: Record<string, Row[]> = {};
  bp.edbs.forEach((e, i) => {
    const rows: Row[] = e.chain > 0 ? Array.from({ length: e.chain }, (_, k) => [k, (k + 1) % e.chain, (k * 5) % 4]) : e.rows.map((r) => [...r]);
    if (rows.length > 0) (e.where === 2 ? inlineFacts : apiFacts)[edbs[i]!.name] = rows;
  });
  latticeBps.forEach((l, i) => {
    // Several facts may give one key: the best one counts.
    if (l.facts.length > 0) inlineFacts[lattices[i]!.name] = l.facts.map((f) => [...f.slice(0, bp.keys), latticeValue(valueType, f[2]!)]);
  });

  /** Key variables of an atom over edge `x -> y`: (x) or (a, x). */
  const keyVars = (last: string): Term[] => (bp.keys === 1 ? [v(last, 'int32')] : [v('a', 'int32'), v(last, 'int32')]);
  const rules: Rule[] = [];
  for (const s of bp.seeds) {
    const e = pick(edbs, s.edb);
    const fromEdge = s.fromEdge && valueType === 'int32';
    const value: Term = fromEdge ? v('w', 'int32') : { kind: 'const', value: latticeValue(valueType, s.value), type: valueType };
    // (x) <- e(x, _, w), or (x, y) <- e(x, y, w): the key is the edge's start, or the edge.
    const atomArgs: Term[] = bp.keys === 1 ? [v('x', 'int32'), { kind: 'wild' }, fromEdge ? v('w', 'int32') : { kind: 'wild' }] : [v('x', 'int32'), v('y', 'int32'), fromEdge ? v('w', 'int32') : { kind: 'wild' }];
    const head = bp.keys === 1 ? [v('x', 'int32'), value] : [v('x', 'int32'), v('y', 'int32'), value];
    rules.push({ head: { rel: pick(lattices, s.target).name, args: head }, body: [{ kind: 'atom', atom: { rel: e.name, args: atomArgs } }] });
  }
  for (const s of steps) {
    const from = pick(lattices, s.from);
    const target = pick(lattices, s.target);
    const e = pick(edbs, s.edb);
    const body: BodyLiteral[] = [
      { kind: 'atom', atom: { rel: from.name, args: [...keyVars('x'), v('u', valueType)] } },
      { kind: 'atom', atom: { rel: e.name, args: [v('x', 'int32'), v('y', 'int32'), v('w', 'int32')] } },
    ];
    // A min value grows along an edge and a max one shrinks (by the edge's weight or a constant >= 0); strings are copied.
    let carried = 'u';
    if (valueType !== 'string') {
      const by: Term = s.byEdge && valueType === 'int32' ? v('w', 'int32') : { kind: 'const', value: valueType === 'int64' ? BigInt(s.by) : s.by, type: valueType };
      body.push({ kind: 'assign', name: 't', type: valueType, from: v('u', valueType), op: bp.max ? '-' : '+', by });
      carried = 't';
    }
    // Comparisons on keys keep the step monotone.
    if (s.cmp < CMP_OPS.length) body.push({ kind: 'cmp', op: CMP_OPS[s.cmp]!, left: v('y', 'int32'), right: int(s.cmpValue) });
    const result = s.agg ? 'r' : carried;
    rules.push({
      head: { rel: target.name, args: [...keyVars('y'), v(result, valueType)] },
      body,
      ...(s.agg ? { agg: { fn: kind, result, arg: carried } } : {}),
    });
  }
  const relations: RelSpec[] = [...edbs, ...lattices];
  if (bp.reader) {
    const from = pick(lattices, bp.reader.from);
    const reader: RelSpec = { name: 'q', types: [...keyTypes, valueType], kind: 'idb', declared: true };
    relations.push(reader);
    const args = [...keyVars('x'), v('u', valueType)];
    const bound: Term = { kind: 'const', value: latticeValue(valueType, bp.reader.value), type: valueType };
    rules.push({ head: { rel: 'q', args }, body: [{ kind: 'atom', atom: { rel: from.name, args } }, { kind: 'cmp', op: CMP_OPS[bp.reader.op]!, left: v('u', valueType), right: bound }] });
  }
  return { relations, inlineFacts, apiFacts, rules, int64Suffix: true };
}

export function latticeProgramArb(): fc.Arbitrary<GenProgram> {
  return latticeBlueprintArb().map(buildLatticeProgram);
}
