/** Rule origins (ir.ts RuleOrigin): made from a rule's span and text, merged when passes merge work, printed short. */
import type { SourceSpan } from './diagnostics.js';
import type { RuleOrigin } from './ir.js';

const MAX_TEXT = 60;

/** The origin of a rule written at `span` as `text` (whitespace collapsed, cut to about 60 characters). */
export function ruleOrigin(span: SourceSpan, text: string): RuleOrigin {
  const flat = text.replace(/\s+/g, ' ').trim();
  return { file: span.file, line: span.start.line, text: flat.length > MAX_TEXT ? `${flat.slice(0, MAX_TEXT - 3)}...` : flat };
}

/** `{ rules }`: the origins of all of `lists`, each once, in first-seen order; `{}` when there are none (to spread). */
export function unionOrigins(...lists: ReadonlyArray<readonly RuleOrigin[] | undefined>): { rules?: RuleOrigin[] } {
  const seen = new Map<string, RuleOrigin>();
  for (const list of lists) {
    for (const o of list ?? []) {
      const key = `${o.file}:${o.line}:${o.text}`;
      if (!seen.has(key)) seen.set(key, o);
    }
  }
  return seen.size === 0 ? {} : { rules: [...seen.values()] };
}

/** `f.logic:3: p(x) <- q(x)`: the file's base name, the line and the text. */
export function printOrigin(o: RuleOrigin): string {
  const base = o.file.split(/[\\/]/).pop() ?? o.file;
  return `${base}:${o.line}${o.text === '' ? '' : `: ${o.text}`}`;
}

/** `  // a.logic:3: ...; a.logic:5: ...` after a printed command or kernel; empty without origins. */
export function originComment(rules: readonly RuleOrigin[] | undefined): string {
  return rules === undefined || rules.length === 0 ? '' : `  // ${rules.map(printOrigin).join('; ')}`;
}
