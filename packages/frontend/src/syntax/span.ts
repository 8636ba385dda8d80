import type { IToken } from 'chevrotain';
import type { SourceSpan } from '@vixen/queryplan';

/** Span of one token; chevrotain end positions are inclusive, ours are exclusive. */
export function tokenSpan(t: IToken, file: string): SourceSpan {
  return {
    file,
    start: { line: t.startLine ?? 1, column: t.startColumn ?? 1, offset: t.startOffset },
    end: { line: t.endLine ?? 1, column: (t.endColumn ?? 0) + 1, offset: (t.endOffset ?? t.startOffset) + 1 },
  };
}

/** Span covering `a` through `b` (same file). */
export function joinSpans(a: SourceSpan, b: SourceSpan): SourceSpan {
  return { file: a.file, start: a.start, end: b.end };
}
