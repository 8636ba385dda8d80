/**
 * A tiny reference interpreter for kernel IR, for tests only. It orders rows the way the device does
 * (unsigned words: int32 as u32, int64 as (lo, hi), strings by dictionary id = string order) and checks,
 * as it runs, the contracts lowering relies on: kernel inputs sorted as required, every QP relation
 * variable canonical after every command, and no read of a freed (or never written) temporary.
 */
import { applyOutputOrder, compareRows, compareValues, evalAggregate, evalExpr, predicateHolds, rowKey, type Aggregate, type Row, type ScalarType, type Value } from '@vixen/queryplan';
import { kernelInputs, type KirKernel, type KirProgram, type VarId } from '../src/index.js';

function words(v: Value, t: ScalarType): Array<number | string> {
  switch (t) {
    case 'int32':
    case 'uint32':
    case 'date':
      return [(v as number) >>> 0];
    case 'float32':
      return [new Uint32Array(new Float32Array([v as number]).buffer)[0]!];
    case 'boolean':
      return [v ? 1 : 0];
    case 'int64':
    case 'decimal': {
      const u = BigInt.asUintN(64, v as bigint);
      return [Number(u & 0xffffffffn), Number(u >> 32n)];
    }
    case 'string':
      return [v as string];
  }
}

/** Device order of two rows on the given key columns. */
export function compareOnKeys(a: Row, b: Row, keys: readonly number[], types: readonly ScalarType[]): number {
  for (const k of keys) {
    const wa = words(a[k]!, types[k]!);
    const wb = words(b[k]!, types[k]!);
    for (let i = 0; i < wa.length; i++) {
      if (wa[i]! < wb[i]!) return -1;
      if (wa[i]! > wb[i]!) return 1;
    }
  }
  return 0;
}

const all = (n: number): number[] => Array.from({ length: n }, (_, i) => i);

function isSorted(rows: readonly Row[], keys: readonly number[], types: readonly ScalarType[], strict: boolean): boolean {
  return rows.every((r, i) => i === 0 || compareOnKeys(rows[i - 1]!, r, keys, types) < (strict ? 0 : 1));
}

function dropAdjacentDuplicates(rows: readonly Row[], types: readonly ScalarType[]): Row[] {
  const keys = all(types.length);
  return rows.filter((r, i) => i === 0 || compareOnKeys(rows[i - 1]!, r, keys, types) !== 0);
}



const FREED = Symbol('freed');

export interface RunResult {
  /** Final contents of every QP relation whose variable was not freed. */
  relations: Map<string, Row[]>;
  /** Kernel launches executed. */
  launches: number;
  /** Names of the variables a kernel wrote that were not freed or cleared by halt (buffers still held). */
  heldAtHalt: string[];
}

/** Per group of equal `groupBy` columns (in order of first appearance): those columns, then each aggregate. */
function aggregateRows(rows: readonly Row[], groupBy: readonly number[], aggregates: readonly Aggregate[], types: readonly ScalarType[]): Row[] {
  const groups = new Map<string, Row[]>();
  for (const r of rows) {
    const key = rowKey(groupBy.map((c) => r[c]!));
    groups.set(key, [...(groups.get(key) ?? []), r]);
  }
  const argType = (c: number | undefined) => (c === undefined ? undefined : types[c]);
  return [...groups.values()].map((g) => [
    ...groupBy.map((c) => g[0]![c]!),
    ...aggregates.map((a) => evalAggregate(a.fn, argType(a.column), a.column === undefined ? [] : g.map((r) => r[a.column!]!), g.length, a.fn)),
  ]);
}

export function runKir(p: KirProgram, maxSteps = 10_000): RunResult {
  const state = new Map<VarId, Row[] | typeof FREED>();
  const written = new Set<VarId>();
  const types = (v: VarId): ScalarType[] => p.variables[v]!.columns;
  const canonical = (cols: readonly ScalarType[], rows: Row[]): Row[] => {
    const keys = all(cols.length);
    return dropAdjacentDuplicates([...rows].sort((a, b) => compareOnKeys(a, b, keys, cols)), cols);
  };
  // As the runtime loads: canonical with every loaded column, then only those the device keeps (deviceColumns).
  const decls = new Map(p.relations.map((r) => [r.name, r]));
  for (const v of p.variables) {
    if (v.relation === undefined) continue;
    const decl = decls.get(v.relation)!;
    const rows = canonical(decl.columns.map((c) => c.type), p.facts[v.relation] ?? []);
    const kept = decl.deviceColumns;
    state.set(v.id, kept ? rows.map((r) => kept.map((c) => r[c]!)) : rows);
  }
  const read = (v: VarId): Row[] => {
    const rows = state.get(v);
    if (rows === FREED) throw new Error(`read of freed variable ${p.variables[v]!.name}`);
    if (rows === undefined) throw new Error(`read of never-written variable ${p.variables[v]!.name}`);
    return rows;
  };
  const requireSorted = (k: KirKernel, v: VarId, keys: readonly number[], strict: boolean): Row[] => {
    const rows = read(v);
    if (!isSorted(rows, keys, types(v), strict)) throw new Error(`kernel ${k.id} (${k.kind}): input ${p.variables[v]!.name} not sorted by (${keys.join(', ')})`);
    return rows;
  };
  const exec = (k: KirKernel): Row[] => {
    switch (k.kind) {
      case 'mapFilter': {
        const rows = read(k.input).filter((t) => k.filter.every((f) => predicateHolds(f, t))).map((t) => k.project.map((e) => evalExpr(e, t)));
        // An unordered select may emit its rows in any order: reversed here, so that a reader that needs the
        // order gives a wrong result in the tests.
        return k.unordered ? rows.reverse() : rows;
      }
      case 'sort':
        return [...read(k.input)].sort((a, b) => compareOnKeys(a, b, k.keys, types(k.input)));
      case 'unique': {
        if (k.hashed) return read(k.input).filter((t, i, rows) => rows.findIndex((r) => compareRows(r, t) === 0) === i);
        return dropAdjacentDuplicates(requireSorted(k, k.input, all(types(k.input).length), false), types(k.input));
      }
      case 'mergeJoin': {
        // Each left row binary-searches the right side: only that side must be sorted (by the join keys).
        const left = read(k.left);
        const right = requireSorted(k, k.right, k.rightKeys, false);
        const out: Row[] = [];
        for (const l of left) {
          for (const r of right) {
            if (!k.leftKeys.every((lk, i) => compareValues(l[lk]!, r[k.rightKeys[i]!]!) === 0)) continue;
            const t = [...l, ...r];
            if (k.filter.every((f) => predicateHolds(f, t))) out.push(k.project.map((e) => evalExpr(e, t)));
          }
        }
        return out;
      }
      case 'hashJoin': {
        // No input order needed; output order is unspecified, so emit it shuffled (reversed) to catch consumers that assume one.
        const build = read(k.build);
        const out: Row[] = [];
        for (const pr of read(k.probe)) {
          for (const b of build) {
            if (!k.buildKeys.every((bk, i) => compareValues(b[bk]!, pr[k.probeKeys[i]!]!) === 0)) continue;
            out.push(k.project.map((c) => (c.side === 'build' ? b : pr)[c.column]!));
          }
        }
        return out.reverse();
      }
      case 'pipeline': {
        // Every combination of matching build rows per kept input row; emitted reversed, as hashJoin's.
        let rows = read(k.input).filter((t) => k.filter.every((f) => predicateHolds(f, t))).map((t) => ({ t, row: [...t] }));
        for (const pr of k.probes) {
          const build = read(pr.build).filter((b) => (pr.buildFilter ?? []).every((f) => predicateHolds(f, b)));
          const matches = (t: Row, b: Row): boolean => pr.buildKeys.every((bk, i) => compareValues(b[bk]!, evalExpr(pr.probeKeys[i]!, t)) === 0);
          if (pr.negated) {
            rows = rows.filter(({ t }) => !build.some((b) => matches(t, b)));
            continue;
          }
          rows = rows.flatMap(({ t, row }) =>
            build.filter((b) => pr.buildKeys.every((bk, i) => compareValues(b[bk]!, evalExpr(pr.probeKeys[i]!, t)) === 0)).map((b) => ({ t, row: [...row, ...b] })),
          );
        }
        const out = rows.filter(({ row }) => k.check.every((f) => predicateHolds(f, row))).map(({ row }) => k.project.map((e) => evalExpr(e, row))).reverse();
        // An aggregating pipeline's groups come in no particular order: reversed too.
        return k.aggregate ? aggregateRows(out, k.aggregate.groupBy, k.aggregate.aggregates, k.project.map((e) => e.type)).reverse() : out;
      }
      case 'difference': {
        const keys = all(types(k.left).length);
        const right = requireSorted(k, k.right, keys, true);
        return requireSorted(k, k.left, keys, true).filter((l) => !right.some((r) => compareOnKeys(l, r, keys, types(k.left)) === 0));
      }
      case 'concat':
        return [...read(k.left), ...read(k.right)];
      case 'merge': {
        const left = requireSorted(k, k.left, k.keys, false);
        const right = requireSorted(k, k.right, k.keys, false);
        // Stable sort of left ++ right keeps left rows first among equal keys, as the kernel does.
        return [...left, ...right].sort((a, b) => compareOnKeys(a, b, k.keys, types(k.left)));
      }
      case 'copy':
        return read(k.input);
      case 'limit': {
        const chosen = applyOutputOrder([...read(k.input)].sort(compareRows), { keys: k.keys, limit: k.count });
        return chosen.sort((a, b) => compareOnKeys(a, b, all(types(k.input).length), types(k.input)));
      }
      case 'aggregate':
        return aggregateRows(requireSorted(k, k.input, k.groupBy, false), k.groupBy, k.aggregates, types(k.input));
    }
  };
  /** Relation variables a hashed unique wrote last: duplicate-free, in any order. */
  const unordered = new Set<VarId>();
  const checkCanonical = (where: string): void => {
    for (const v of p.variables) {
      const rows = state.get(v.id);
      if (v.relation === undefined || rows === undefined || rows === FREED) continue;
      // A base relation keeping some of its columns is canonical by all of them, not by those it keeps.
      if (decls.get(v.relation)?.deviceColumns) continue;
      const sorted = unordered.has(v.id) ? [...rows].sort((a, b) => compareRows(a, b)) : rows;
      if (!isSorted(sorted, all(v.columns.length), v.columns, true)) throw new Error(`${where}: relation ${v.name} not canonical`);
    }
  };

  const blocks = new Map(p.blocks.map((b) => [b.label, b]));
  let label = p.entry;
  let launches = 0;
  for (let steps = 0; steps < maxSteps; steps++) {
    const b = blocks.get(label)!;
    b.commands.forEach((c, i) => {
      switch (c.kind) {
        case 'launch': {
          const k = p.kernels[c.kernel]!;
          kernelInputs(k).forEach(read);
          state.set(k.output, exec(k));
          written.add(k.output);
          if (k.kind === 'unique' && k.hashed) unordered.add(k.output);
          else unordered.delete(k.output);
          launches++;
          break;
        }
        case 'free':
          for (const v of c.vars) {
            state.set(v, FREED);
            written.delete(v);
          }
          break;
        case 'clear':
          state.set(c.var, []);
          written.delete(c.var);
          break;
      }
      checkCanonical(`${label}[${i}]`);
    });
    const t = b.terminator;
    if (t.kind === 'halt') {
      const relations = new Map<string, Row[]>();
      for (const [name, v] of Object.entries(p.relationVars)) {
        const rows = state.get(v);
        if (rows !== FREED) relations.set(name, [...(rows ?? [])].sort(compareRows));
      }
      const heldAtHalt = [...written].sort((a, b) => a - b).map((v) => p.variables[v]!.name);
      return { relations, launches, heldAtHalt };
    }
    label = t.kind === 'jump' ? t.target : t.condition.vars.every((v) => read(v).length === 0) ? t.ifTrue : t.ifFalse;
  }
  throw new Error(`no halt within ${maxSteps} block steps`);
}
