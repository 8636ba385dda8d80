/** Diagnostics are data: every stage reports problems as values and one renderer prints them. */

export interface SourcePosition {
  /** 1-based line. */
  line: number;
  /** 1-based column. */
  column: number;
  /** 0-based character offset into the file text. */
  offset: number;
}

export interface SourceSpan {
  file: string;
  start: SourcePosition;
  end: SourcePosition;
}

export type Severity = 'error' | 'warning' | 'note';

export interface Diagnostic {
  severity: Severity;
  message: string;
  span?: SourceSpan;
}

/** Thrown for user errors (bad programs, bad facts, bad options). Carries diagnostics, never a stack for users. */
export class VixenError extends Error {
  readonly diagnostics: Diagnostic[];
  /** Source texts the diagnostics point into, so a renderer can show the lines. */
  readonly sources: SourceTexts | undefined;
  constructor(diagnostics: Diagnostic[] | Diagnostic, sources?: SourceTexts) {
    const list = Array.isArray(diagnostics) ? diagnostics : [diagnostics];
    // Located as the CLI shows it (`file:line:column: message`), so API users who print e.message see where.
    super(list.map((d) => (d.span ? `${formatSpan(d.span)}: ${d.message}` : d.message)).join('\n'));
    this.name = 'VixenError';
    this.diagnostics = list;
    this.sources = sources;
  }
}

/** `file:line:column` of a span's start. */
export function formatSpan(span: SourceSpan): string {
  return `${span.file}:${span.start.line}:${span.start.column}`;
}

export function errorAt(message: string, span?: SourceSpan): Diagnostic {
  return span ? { severity: 'error', message, span } : { severity: 'error', message };
}

/** Source texts by file name, so the renderer can show the offending line. */
export type SourceTexts = ReadonlyMap<string, string>;

/**
 * Renders `file:line:col: error: message`, then the source line and a caret under the span.
 * Diagnostics without a span render as `error: message`.
 */
export function renderDiagnostic(d: Diagnostic, sources?: SourceTexts): string {
  if (!d.span) return `${d.severity}: ${d.message}`;
  const { file, start, end } = d.span;
  const head = `${formatSpan(d.span)}: ${d.severity}: ${d.message}`;
  const text = sources?.get(file);
  if (text === undefined) return head;
  const lineText = text.split(/\r?\n/)[start.line - 1];
  if (lineText === undefined) return head;
  let width = end.line === start.line ? Math.max(1, end.column - start.column) : 1;
  let shown = lineText;
  let caretAt = Math.max(0, start.column - 1);
  if (lineText.length > MAX_SHOWN_LINE) {
    // A window around the span, so a 10 MB line does not become a 10 MB message.
    const from = Math.max(0, caretAt - 60);
    const to = Math.min(lineText.length, from + MAX_SHOWN_LINE);
    shown = `${from > 0 ? '...' : ''}${lineText.slice(from, to)}${to < lineText.length ? '...' : ''}`;
    width = Math.max(1, Math.min(width, to - caretAt));
    caretAt += (from > 0 ? 3 : 0) - from;
  }
  const gutter = String(start.line);
  const pad = ' '.repeat(gutter.length);
  const caretLine = ' '.repeat(caretAt) + '^'.repeat(width);
  return `${head}\n${pad} |\n${gutter} | ${shown}\n${pad} | ${caretLine}`;
}

/** Longest source line shown whole under a diagnostic. */
const MAX_SHOWN_LINE = 160;

export function renderDiagnostics(list: readonly Diagnostic[], sources?: SourceTexts): string {
  return list.map((d) => renderDiagnostic(d, sources)).join('\n\n');
}
