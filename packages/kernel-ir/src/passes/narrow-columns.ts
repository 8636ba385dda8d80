/**
 * Column narrowing: a kernel that projects (mapFilter, pipeline, hash or merge join) into a temporary read only
 * within its block computes and writes only the columns its readers need. Readers that name columns (aggregate,
 * mapFilter, pipeline scan, either side of a hash join) need those; a sort into a temporary needs its keys plus
 * what its own readers need (and is narrowed with it); any other reader needs every column. Rows keep their
 * number and order, so the multiset each reader sees is the same projection of it: e.g. the join rows SSB's
 * aggregates read, kept 20 columns wide for their set semantics until the unique was found redundant, shrink
 * to the group columns and the summed value before they are written and sorted. Repeated (fixpoint), narrowing
 * a reader's output narrows what the reader itself needs.
 */
import type { KirKernel, KirProgram, VarId } from '../ir.js';
import { BlockReaders } from '../analysis/block-readers.js';
import { columnsRead, readThrough } from '../analysis/column-reads.js';
import { substitute } from '../analysis/exprs.js';
import { liveOutSets } from '../analysis/liveness.js';
import type { KirPass } from '../compile.js';

export const narrowColumns = { name: 'narrow-columns', required: false, run } satisfies KirPass;

function run(p: KirProgram): KirProgram {
  const liveOut = liveOutSets(p);
  for (const b of p.blocks) {
    const rd = new BlockReaders(p, b, liveOut.get(b.label)!);
    const freed = new Set(b.commands.flatMap((c) => (c.kind === 'free' ? c.vars : [])));
    /** Columns the value command `i` writes needs downstream, or undefined for all (or unknown readers). */
    const needs = (i: number): Set<number> | undefined => {
      const v = rd.kernelAt(i)!.output;
      const readers = rd.readers(i);
      if (!readers || readers.length === 0 || freed.has(v)) return undefined;
      const need = new Set<number>();
      for (const n of readers) {
        const r = rd.kernelAt(n);
        if (!r) return undefined;
        const sortNeeds = (s: Extract<KirKernel, { kind: 'sort' }>): Set<number> | undefined => {
          if (p.variables[s.output]!.relation !== undefined) return undefined;
          const after = needs(n);
          return after && new Set([...s.keys, ...after]);
        };
        const cols = columnsRead(p, r, v, sortNeeds);
        if (!cols) return undefined;
        for (const x of cols) need.add(x);
      }
      return need;
    };
    for (let i = 0; i < b.commands.length; i++) {
      const k = rd.kernelAt(i);
      if (!k || !(k.kind === 'mapFilter' || k.kind === 'pipeline' || k.kind === 'hashJoin' || k.kind === 'mergeJoin')) continue;
      // An aggregating pipeline's output columns are its groups' (it projects only what it aggregates already).
      if (k.kind === 'pipeline' && k.aggregate) continue;
      if (p.variables[k.output]!.relation !== undefined) continue;
      const need = needs(i);
      const arity = p.variables[k.output]!.columns.length;
      if (!need || need.size === arity) continue;
      // Rows stay at least one column wide (a count reads none): zero-width rows would have no words to count.
      if (need.size === 0) need.add(0);
      if (need.size === arity) continue;
      return narrow(p, rd, i, [...need].sort((x, y) => x - y));
    }
  }
  return p;
}

/** Command `i` of the block `rd` reads writing only columns `keep` of its output, into a new variable; its readers (and sorts' readers) follow. */
function narrow(p: KirProgram, rd: BlockReaders, i: number, keep: number[]): KirProgram {
  const variables = [...p.variables];
  const kernels = [...p.kernels];
  const map = new Map(keep.map((c, n) => [c, n]));
  const fresh = (from: VarId): VarId => {
    const id = variables.length;
    variables.push({ id, name: `%k${id}`, columns: keep.map((c) => p.variables[from]!.columns[c]!) });
    return id;
  };
  const producer = rd.kernelAt(i)!;
  const out = fresh(producer.output);
  switch (producer.kind) {
    case 'mapFilter':
    case 'pipeline':
    case 'mergeJoin':
      kernels[producer.id] = { ...producer, output: out, project: keep.map((c) => substitute(producer.project[c]!)) };
      break;
    case 'hashJoin':
      kernels[producer.id] = { ...producer, output: out, project: keep.map((c) => producer.project[c]!) };
      break;
    default:
      throw new Error(`internal: narrowing a ${producer.kind} kernel`);
  }
  // Readers of the old value read the new one; a sort's output is narrowed the same way, and its readers follow.
  const follow = (at: number, from: VarId, to: VarId): void => {
    for (const n of rd.readers(at)!) {
      const r = kernels[rd.kernelAt(n)!.id]!;
      const next = readThrough(p, r, from, to, p.variables[from]!.columns, map);
      if (next.kind === 'sort') {
        const sorted = fresh(r.output);
        kernels[r.id] = { ...next, output: sorted };
        follow(n, r.output, sorted);
      } else kernels[r.id] = next;
    }
  };
  follow(i, producer.output, out);
  return { ...p, variables, kernels };
}
