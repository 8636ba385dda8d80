/**
 * Syntax highlighting of LogiQL and Soufflé: CodeMirror stream parsers (tokens by regular expressions, enough for
 * colours; the real front end gives the diagnostics).
 */
import { StreamLanguage, type StreamParser } from '@codemirror/language';

interface CommentState {
  inComment: boolean;
}

/** `//` and `/* ... *\/` comments, strings and numbers, shared by both dialects; null where the dialect decides. */
function common(stream: Parameters<StreamParser<CommentState>['token']>[0], state: CommentState): string | null | undefined {
  if (state.inComment) {
    state.inComment = !stream.skipTo('*/');
    if (state.inComment) stream.skipToEnd();
    else stream.match('*/');
    return 'comment';
  }
  if (stream.match('//')) {
    stream.skipToEnd();
    return 'comment';
  }
  if (stream.match('/*')) {
    state.inComment = true;
    return 'comment';
  }
  if (stream.match(/^"(?:[^"\\]|\\.)*"?/)) return 'string';
  if (stream.match(/^-?\d+(?:\.\d+)?[dfu]?\b/)) return 'number';
  return undefined;
}

const LOGIQL_TYPES = /^(?:int32|uint32|int64|float32|decimal|date|string|boolean)\b/;
const LOGIQL_KEYWORDS = /^(?:agg|order|by|limit|include|sum|count|min|max|avg|true|false)\b/;

const logiqlParser: StreamParser<CommentState> = {
  name: 'logiql',
  startState: () => ({ inComment: false }),
  token(stream, state) {
    if (stream.eatSpace()) return null;
    const c = common(stream, state);
    if (c !== undefined) return c;
    if (stream.match(/^(?:<-|->|<<|>>|!=|<=|>=|=|!)/)) return 'operator';
    if (stream.match(LOGIQL_TYPES)) return 'typeName';
    if (stream.match(LOGIQL_KEYWORDS)) return 'keyword';
    if (stream.match(/^[A-Za-z_][\w:]*(?=\s*[([])/)) return 'variableName.function';
    if (stream.match(/^[A-Za-z_]\w*/)) return 'variableName';
    stream.next();
    return null;
  },
  languageData: { commentTokens: { line: '//', block: { open: '/*', close: '*/' } } },
};

const SOUFFLE_TYPES = /^(?:number|unsigned|float|symbol)\b/;
const SOUFFLE_KEYWORDS = /^(?:count|sum|min|max|mean|true|false|nil)\b/;

const souffleParser: StreamParser<CommentState> = {
  name: 'souffle',
  startState: () => ({ inComment: false }),
  token(stream, state) {
    if (stream.eatSpace()) return null;
    const c = common(stream, state);
    if (c !== undefined) return c;
    if (stream.match(/^\.[a-z_]+/)) return 'keyword';
    if (stream.match(/^#\w+/)) return 'meta';
    if (stream.match(/^(?::-|!=|<=|>=|=|!|<:)/)) return 'operator';
    if (stream.match(SOUFFLE_TYPES)) return 'typeName';
    if (stream.match(SOUFFLE_KEYWORDS)) return 'keyword';
    if (stream.match(/^[A-Za-z_]\w*(?=\s*\()/)) return 'variableName.function';
    if (stream.match(/^[A-Za-z_]\w*/)) return 'variableName';
    stream.next();
    return null;
  },
  languageData: { commentTokens: { line: '//', block: { open: '/*', close: '*/' } } },
};

export const logiql = StreamLanguage.define(logiqlParser);
export const souffle = StreamLanguage.define(souffleParser);
