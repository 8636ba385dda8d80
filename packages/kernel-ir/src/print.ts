/** Human-readable kernel IR, for `--dump-kir`, debugging and tests. */
import { printAggregate, printExpr, printOrderKeys, printOrigin, printPredicate, type Expr, type Predicate } from '@vixen/queryplan';
import type { KirCommand, KirKernel, KirProgram, KirTerminator, VarId } from './ir.js';


const columnList = (cols: readonly number[]): string => `(${cols.map((c) => `#${c}`).join(', ')})`;

function formatMap(filter: readonly Predicate[], project: readonly Expr[]): string {
  const where = filter.length > 0 ? ` where ${filter.map(printPredicate).join(' and ')}` : '';
  return `${where} -> (${project.map(printExpr).join(', ')})`;
}

function formatKernel(k: KirKernel, name: (v: VarId) => string): string {
  const rhs = ((): string => {
    switch (k.kind) {
      case 'mapFilter':
        return `mapFilter ${name(k.input)}${formatMap(k.filter, k.project)}${k.unordered ? ' (any order)' : ''}`;
      case 'sort':
        return `sort ${name(k.input)} by ${columnList(k.keys)}`;
      case 'unique':
        return `unique ${name(k.input)}${k.hashed ? ' (hashed)' : ''}`;
      case 'mergeJoin':
        return (
          `mergeJoin ${name(k.left)} on ${columnList(k.leftKeys)}, ${name(k.right)} on ${columnList(k.rightKeys)}` +
          formatMap(k.filter, k.project)
        );
      case 'hashJoin': {
        const cols = k.project.map((c) => `${c.side}.#${c.column}`).join(', ');
        return `hashJoin build ${name(k.build)} on ${columnList(k.buildKeys)}, probe ${name(k.probe)} on ${columnList(k.probeKeys)} -> (${cols})`;
      }
      case 'pipeline': {
        const where = k.filter.length > 0 ? ` where ${k.filter.map(printPredicate).join(' and ')}` : '';
        const probes = k.probes.map((pr) => {
          const kept = pr.buildFilter?.length ? ` where ${pr.buildFilter.map(printPredicate).join(' and ')}` : '';
          return `, ${pr.negated ? 'absent from' : 'probe'} ${name(pr.build)}${kept} on ${columnList(pr.buildKeys)} = (${pr.probeKeys.map(printExpr).join(', ')})`;
        });
        const check = k.check.length > 0 ? ` check ${k.check.map(printPredicate).join(' and ')}` : '';
        const aggregate = k.aggregate ? ` aggregate by ${columnList(k.aggregate.groupBy)} compute (${k.aggregate.aggregates.map(printAggregate).join(', ')})` : '';
        return `pipeline ${name(k.input)}${where}${probes.join('')}${check} -> (${k.project.map(printExpr).join(', ')})${aggregate}`;
      }
      case 'difference':
      case 'concat':
        return `${k.kind} ${name(k.left)}, ${name(k.right)}`;
      case 'merge':
        return `merge ${name(k.left)}, ${name(k.right)} by ${columnList(k.keys)}`;
      case 'copy':
        return `copy ${name(k.input)}`;
      case 'aggregate':
        return `aggregate ${name(k.input)} by ${columnList(k.groupBy)} compute (${k.aggregates.map(printAggregate).join(', ')})`;
      case 'limit':
        return `limit ${name(k.input)} by (${printOrderKeys(k.keys)}) to ${k.count}`;
    }
  })();
  return `${name(k.output)} := ${rhs}`;
}

export function formatCommand(p: KirProgram, c: KirCommand, name: (v: VarId) => string): string {
  switch (c.kind) {
    case 'launch': {
      const k = p.kernels[c.kernel];
      if (!k) return `launch <missing kernel ${c.kernel}>`;
      // Fusion is described by shape and by the rules fused (`rules`), not by the lowering's kernel ids, which
      // later passes give to other kernels.
      const count = (fused: readonly number[]): string => `fused ${fused.length} kernels`;
      const fused =
        k.kind === 'mapFilter' && k.fused
          ? ` (${count(k.fused)})`
          : k.kind === 'pipeline'
            ? k.fused.length === 1
              ? ' (hashed aggregate)'
              : ` (${count(k.fused)}: scan+filter, ${k.probes.length} probe${k.probes.length === 1 ? '' : 's'}, ${k.aggregate ? 'hash aggregate' : 'project'})`
            : '';
      const rules = k.rules && k.rules.length > 0 ? ` from ${k.rules.map(printOrigin).join('; ')}` : '';
      return `${formatKernel(k, name)}  // k${c.kernel}${fused}${rules}`;
    }
    case 'free':
      return `free ${c.vars.map(name).join(', ')}`;
    case 'clear':
      return `clear ${name(c.var)}`;
  }
}

export function formatTerminator(t: KirTerminator, name: (v: VarId) => string): string {
  switch (t.kind) {
    case 'jump':
      return `jump ${t.target}`;
    case 'branch':
      return `branch empty(${t.condition.vars.map(name).join(', ')}) ? ${t.ifTrue} : ${t.ifFalse}`;
    case 'halt':
      return 'halt';
  }
}

export function printKir(p: KirProgram): string {
  // Tolerates bad ids (prints them as `<v7>`), so invalid programs can still be dumped for debugging.
  const name = (v: VarId): string => p.variables[v]?.name ?? `<v${v}>`;
  const decls = new Map(p.relations.map((r) => [r.name, r]));
  const lines = ['variables:'];
  for (const v of p.variables) {
    const decl = v.relation === undefined ? undefined : decls.get(v.relation);
    const kind = v.relation === undefined ? undefined : (decl?.kind ?? '?');
    const rel = kind === undefined ? '' : v.name === v.relation ? `  [${kind}]` : `  [${kind} ${v.relation}]`;
    const device = decl?.deviceColumns ? `  columns ${decl.deviceColumns.join(', ')} of ${decl.columns.length} kept after loading` : '';
    lines.push(`  ${v.id} ${v.name}: (${v.columns.join(', ')})${rel}${device}`);
  }
  lines.push(`entry: ${p.entry}`);
  for (const b of p.blocks) {
    lines.push('', `${b.label}:`);
    for (const c of b.commands) lines.push(`  ${formatCommand(p, c, name)}`);
    lines.push(`  ${formatTerminator(b.terminator, name)}`);
  }
  return lines.join('\n') + '\n';
}
