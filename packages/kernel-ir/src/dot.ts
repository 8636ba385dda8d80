/**
 * Graphviz DOT views of control-flow graphs: one record node per block (entry drawn bold), its commands one per
 * line, optional notes (profile numbers) under each command and block. Several CFGs go into one graph as clusters,
 * so `vixen explain --dot` can show the query plan next to its kernels.
 */
import type { KirProgram, VarId } from './ir.js';
import { formatCommand, formatTerminator } from './print.js';

export interface DotBlock {
  label: string;
  /** Command lines, then the terminator line. */
  lines: string[];
  /** Extra text under each line (same indices as `lines`); absent or empty adds nothing. */
  lineNotes?: ReadonlyArray<string | undefined>;
  /** Extra text after the block's title. */
  note?: string;
  successors: Array<{ target: string; label?: string }>;
}

export interface DotCfg {
  title: string;
  entry: string;
  blocks: DotBlock[];
}

/** Optional text per block and per command (by block label and command index), e.g. profile numbers. */
export interface CfgNotes {
  block?: (label: string) => string | undefined;
  command?: (label: string, index: number) => string | undefined;
}

/** A DOT quoted-string ID. */
function quoteId(s: string): string {
  return `"${s.replace(/\\/g, '\\\\').replace(/"/g, '\\"')}"`;
}

/** One record-label field; braces, bars and angle brackets are record syntax, so they are escaped. */
function recordField(text: string): string {
  return text.replace(/\\/g, '\\\\').replace(/[{}|<>"]/g, (ch) => `\\${ch}`);
}

function cfgStatements(cfg: DotCfg, prefix: string, indent: string): string[] {
  const id = (label: string): string => quoteId(prefix + label);
  const out: string[] = [];
  for (const b of cfg.blocks) {
    const title = `block ${b.label}:${b.note ? `  [${b.note}]` : ''}`;
    const body = b.lines
      .map((line, i) => {
        const note = b.lineNotes?.[i];
        return `${recordField(line)}\\l${note ? `${recordField(`    ${note}`)}\\l` : ''}`;
      })
      .join('');
    const style = b.label === cfg.entry ? ', style=bold' : '';
    out.push(`${indent}${id(b.label)} [label="{${recordField(title)}|${body}}"${style}];`);
  }
  for (const b of cfg.blocks) {
    for (const s of b.successors) {
      out.push(`${indent}${id(b.label)} -> ${id(s.target)}${s.label ? ` [label=${quoteId(s.label)}]` : ''};`);
    }
  }
  return out;
}

/** One CFG as a plain digraph; several as clusters of one digraph (node IDs prefixed by cluster number). */
export function cfgToDot(cfgs: readonly DotCfg[]): string {
  const out = ['digraph cfg {', '  node [shape=record, fontname="monospace"];'];
  if (cfgs.length === 1) out.push(...cfgStatements(cfgs[0]!, '', '  '));
  else {
    cfgs.forEach((cfg, i) => {
      out.push(`  subgraph cluster_${i} {`, `    label=${quoteId(cfg.title)};`, ...cfgStatements(cfg, `${i}:`, '    '), '  }');
    });
  }
  out.push('}');
  return out.join('\n') + '\n';
}

/** A block's out-edges (QP and KIR terminators share this shape); branch edges say which outcome they take. */
export function terminatorEdges(
  t: { kind: 'jump'; target: string } | { kind: 'branch'; ifTrue: string; ifFalse: string } | { kind: 'halt' },
): DotBlock['successors'] {
  switch (t.kind) {
    case 'jump':
      return [{ target: t.target }];
    case 'branch':
      return [
        { target: t.ifTrue, label: 'true' },
        { target: t.ifFalse, label: 'false' },
      ];
    case 'halt':
      return [];
  }
}

export function kirDotCfg(p: KirProgram, notes: CfgNotes = {}): DotCfg {
  const name = (v: VarId): string => p.variables[v]?.name ?? `<v${v}>`;
  return {
    title: 'kernel IR',
    entry: p.entry,
    blocks: p.blocks.map((b) => {
      const note = notes.block?.(b.label);
      return {
        label: b.label,
        lines: [...b.commands.map((c) => formatCommand(p, c, name)), formatTerminator(b.terminator, name)],
        lineNotes: b.commands.map((_, i) => notes.command?.(b.label, i)),
        ...(note ? { note } : {}),
        successors: terminatorEdges(b.terminator),
      };
    }),
  };
}

/** The kernel CFG as Graphviz DOT. */
export function kirToDot(p: KirProgram, notes: CfgNotes = {}): string {
  return cfgToDot([kirDotCfg(p, notes)]);
}
