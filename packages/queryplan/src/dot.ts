/** Graphviz DOT view of a QP program's control-flow graph: one record node per block (entry drawn bold). */
import type { QpProgram } from './ir.js';
import { printCommand, printTerminator } from './print.js';

/** A DOT quoted-string ID. */
function quoteId(s: string): string {
  return `"${s.replace(/\\/g, '\\\\').replace(/"/g, '\\"')}"`;
}

/** One record-label field; braces, bars and angle brackets are record syntax, so they are escaped. */
function recordField(text: string): string {
  return text.replace(/\\/g, '\\\\').replace(/[{}|<>"]/g, (ch) => `\\${ch}`);
}

export function planToDot(p: QpProgram): string {
  const out = ['digraph qp {', '  node [shape=record, fontname="monospace"];'];
  for (const b of p.blocks) {
    const body = b.commands.map((c) => `${recordField(printCommand(c))}\\l`).join('');
    const fields = [`block ${recordField(b.label)}:`, ...(body ? [body] : []), `${recordField(printTerminator(b.terminator))}\\l`];
    const style = b.label === p.entry ? ', style=bold' : '';
    out.push(`  ${quoteId(b.label)} [label="{${fields.join('|')}}"${style}];`);
  }
  for (const b of p.blocks) {
    const t = b.terminator;
    switch (t.kind) {
      case 'jump':
        out.push(`  ${quoteId(b.label)} -> ${quoteId(t.target)};`);
        break;
      case 'branch':
        out.push(`  ${quoteId(b.label)} -> ${quoteId(t.ifTrue)} [label="true"];`);
        out.push(`  ${quoteId(b.label)} -> ${quoteId(t.ifFalse)} [label="false"];`);
        break;
      case 'halt':
        break;
    }
  }
  out.push('}');
  return out.join('\n') + '\n';
}
