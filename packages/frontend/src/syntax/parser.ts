/**
 * Chevrotain parser building the AST directly (embedded actions). The token stream is cut into clauses at
 * `.` tokens (a `.` only ever ends a clause), and each clause is parsed on its own, so one syntax error
 * costs one clause and the rest of the file is still checked.
 */
import { createTokenInstance, EmbeddedActionsParser, EOF, type IParserErrorMessageProvider, type IToken, type TokenType } from 'chevrotain';
import { errorAt, type CompareOp, type Diagnostic, type SourceSpan } from '@vixen/queryplan';
import type { ArithOp, Atom, Clause, FuncAtom, Formula, Head, IntLit, OrderKey, SourceAst, Term } from './ast.js';
import * as T from './lexer.js';
import { joinSpans, tokenSpan } from './span.js';

/** An expression as parsed: an atom `p(...)` is only meaningful at the top of a literal. */
type Parsed = Term | Atom;

const label = (tt: TokenType): string => tt.LABEL ?? tt.name;
const describe = (t: IToken): string => (t.tokenType === EOF ? 'end of input' : `'${t.image}'`);

function listLabels(labels: string[]): string {
  const unique = [...new Set(labels)];
  return unique.length === 1 ? unique[0]! : `${unique.slice(0, -1).join(', ')} or ${unique[unique.length - 1]}`;
}

/**
 * Messages say what was expected; `offending` remembers which lookahead token broke the match. `descriptions`
 * name what a rule's alternatives amount to (the Soufflé parser passes its own).
 */
export class MessageProvider implements IParserErrorMessageProvider {
  offending: IToken | undefined;

  constructor(private readonly descriptions: Record<string, string> = RULE_DESCRIPTIONS) {}

  buildMismatchTokenMessage(o: { expected: TokenType; actual: IToken }): string {
    this.offending = o.actual;
    return `expected ${label(o.expected)} but found ${describe(o.actual)}`;
  }
  buildNotAllInputParsedMessage(o: { firstRedundant: IToken }): string {
    this.offending = o.firstRedundant;
    return `expected '.' but found ${describe(o.firstRedundant)}`;
  }
  buildNoViableAltMessage(o: { expectedPathsPerAlt: TokenType[][][]; actual: IToken[]; ruleName: string }): string {
    return this.expectedOneOf(o.expectedPathsPerAlt.flat(), o.actual, this.descriptions[o.ruleName]);
  }
  buildEarlyExitMessage(o: { expectedIterationPaths: TokenType[][]; actual: IToken[]; ruleName: string }): string {
    return this.expectedOneOf(o.expectedIterationPaths, o.actual, this.descriptions[o.ruleName]);
  }

  /** Reports the first token where the input leaves every expected path. */
  private expectedOneOf(paths: TokenType[][], actual: IToken[], description?: string): string {
    const matches = (t: IToken, tt: TokenType): boolean =>
      t.tokenType === tt || (t.tokenType.CATEGORIES ?? []).includes(tt);
    let depth = 0;
    for (const p of paths) {
      let i = 0;
      while (i < p.length && i < actual.length && matches(actual[i]!, p[i]!)) i++;
      depth = Math.max(depth, i);
    }
    const at = Math.min(depth, actual.length - 1);
    if (at === 0 && description) {
      this.offending = actual[0]!;
      return `expected ${description} but found ${describe(actual[0]!)}`;
    }
    const expected = paths.filter((p) => p.length > at && p.slice(0, at).every((tt, i) => matches(actual[i]!, tt)));
    this.offending = actual[at]!;
    return `expected ${listLabels(expected.map((p) => label(p[at]!)))} but found ${describe(actual[at]!)}`;
  }
}

/** What a rule's alternatives amount to, when nothing of it matched at all. */
const RULE_DESCRIPTIONS: Record<string, string> = {
  clause: "a declaration, fact, rule, 'include' or 'order'",
  formula: 'an atom or a comparison',
  conjunction: 'an atom or a comparison',
  literal: 'an atom or a comparison',
  unary: 'a variable or constant',
  primary: 'a variable or constant',
};

const COMPARE_OPS: ReadonlyMap<TokenType, CompareOp> = new Map([
  [T.Eq, '='],
  [T.Ne, '!='],
  [T.Lt, '<'],
  [T.Le, '<='],
  [T.Gt, '>'],
  [T.Ge, '>='],
]);
const ESCAPES: Record<string, string> = { '"': '"', '\\': '\\', n: '\n', t: '\t' };

class LogicParser extends EmbeddedActionsParser {
  file = '';
  /** Well-formed syntax that still is wrong (bad escapes, atoms used as values). */
  semantic: Diagnostic[] = [];

  constructor(readonly messages: MessageProvider) {
    super(T.allTokens, { maxLookahead: 3, errorMessageProvider: messages });
    this.performSelfAnalysis();
  }

  private span(t: IToken): SourceSpan {
    return tokenSpan(t, this.file);
  }

  private asTerm(e: Parsed): Term {
    if (e.kind !== 'atom') return e;
    this.semantic.push(
      errorAt(`expected a variable or constant but found the atom ${e.pred}(...); atoms cannot be used as values`, e.span),
    );
    return { kind: 'wildcard', span: e.span };
  }

  clause = this.RULE('clause', (): Clause =>
    this.OR([
      { ALT: () => this.SUBRULE(this.includeClause) },
      { ALT: () => this.SUBRULE(this.orderClause) },
      { ALT: () => this.SUBRULE(this.headClause) },
    ]),
  );

  private includeClause = this.RULE('includeClause', (): Clause => {
    const kw = this.CONSUME(T.Include);
    const path = this.CONSUME(T.StringLit);
    const dot = this.CONSUME(T.Dot);
    return this.ACTION(() => ({
      kind: 'include',
      path: this.decodeString(path),
      span: joinSpans(this.span(kw), this.span(dot)),
      pathSpan: this.span(path),
    }));
  });

  private orderClause = this.RULE('orderClause', (): Clause => {
    const kw = this.CONSUME(T.Order);
    const pred = this.CONSUME(T.Identifier);
    this.CONSUME(T.By);
    const keys: OrderKey[] = [];
    this.AT_LEAST_ONE_SEP({ SEP: T.Comma, DEF: () => keys.push(this.SUBRULE(this.orderKey)) });
    let limit: IntLit | undefined;
    this.OPTION(() => {
      this.CONSUME(T.Limit);
      const n = this.SUBRULE(this.primary);
      this.ACTION(() => {
        if (n.kind === 'int') limit = n;
        else this.semantic.push(errorAt('expected an integer after limit', n.span));
      });
    });
    const dot = this.CONSUME(T.Dot);
    return this.ACTION(() => ({
      kind: 'order',
      pred: pred.image,
      keys,
      ...(limit ? { limit } : {}),
      span: joinSpans(this.span(kw), this.span(dot)),
      predSpan: this.span(pred),
    }));
  });

  private orderKey = this.RULE('orderKey', (): OrderKey => {
    const col = this.CONSUME(T.Identifier);
    const dir = this.OPTION(() => this.OR([{ ALT: () => this.CONSUME(T.Asc) }, { ALT: () => this.CONSUME(T.Desc) }]));
    return this.ACTION(() => ({
      column: col.image,
      descending: dir?.tokenType === T.Desc,
      span: joinSpans(this.span(col), this.span(dir ?? col)),
    }));
  });

  private headClause = this.RULE('headClause', (): Clause => {
    const head = this.SUBRULE(this.head);
    return this.OR([
      {
        ALT: () => {
          const dot = this.CONSUME(T.Dot);
          return this.ACTION((): Clause => ({ kind: 'fact', head, span: joinSpans(head.span, this.span(dot)) }));
        },
      },
      {
        ALT: () => {
          this.CONSUME(T.Arrow);
          const body = this.SUBRULE(this.formula);
          const dot = this.CONSUME2(T.Dot);
          return this.ACTION((): Clause => ({ kind: 'decl', head, body, span: joinSpans(head.span, this.span(dot)) }));
        },
      },
      {
        ALT: () => {
          this.CONSUME(T.LArrow);
          const body = this.SUBRULE2(this.formula);
          const dot = this.CONSUME3(T.Dot);
          return this.ACTION((): Clause => ({ kind: 'rule', head, body, span: joinSpans(head.span, this.span(dot)) }));
        },
      },
      {
        // `p(k, a), p(k, b) -> a = b.`: a key (functional dependency) of p.
        ALT: () => {
          this.CONSUME(T.Comma);
          const other = this.SUBRULE2(this.head);
          this.CONSUME2(T.Arrow);
          const body = this.SUBRULE3(this.formula);
          const dot = this.CONSUME4(T.Dot);
          return this.ACTION((): Clause => ({ kind: 'dependency', atoms: [head, other], body, span: joinSpans(head.span, this.span(dot)) }));
        },
      },
    ]);
  });

  private head = this.RULE('head', (): Head => {
    const name = this.CONSUME(T.Identifier);
    return this.OR([
      {
        ALT: () => {
          this.CONSUME(T.LParen);
          const args = this.SUBRULE(this.args);
          const close = this.CONSUME(T.RParen);
          return this.ACTION((): Head => this.atom(name, args, close));
        },
      },
      {
        ALT: () => {
          this.CONSUME(T.LBracket);
          const keys = this.SUBRULE2(this.args);
          this.CONSUME(T.RBracket);
          this.CONSUME(T.Eq);
          const values: Term[] = [];
          this.AT_LEAST_ONE_SEP({
            SEP: T.Comma,
            DEF: () => {
              const value = this.SUBRULE(this.expr);
              this.ACTION(() => values.push(this.asTerm(value)));
            },
          });
          return this.ACTION((): Head => this.funcAtom(name, keys, values));
        },
      },
    ]);
  });

  private atom(name: IToken, args: Term[], close: IToken): Atom {
    const predSpan = this.span(name);
    return { kind: 'atom', pred: name.image, args, span: joinSpans(predSpan, this.span(close)), predSpan };
  }

  private funcAtom(name: IToken, keys: Term[], values: Term[]): FuncAtom {
    const predSpan = this.span(name);
    return { kind: 'funcAtom', pred: name.image, keys, values, span: joinSpans(predSpan, values[values.length - 1]!.span), predSpan };
  }

  private args = this.RULE('args', (): Term[] => {
    const out: Term[] = [];
    this.MANY_SEP({
      SEP: T.Comma,
      DEF: () => {
        const e = this.SUBRULE(this.expr);
        this.ACTION(() => out.push(this.asTerm(e)));
      },
    });
    return out;
  });

  /** Disjunction of conjunctions: `;` binds weaker than `,`. */
  private formula = this.RULE('formula', (): Formula => {
    const items: Formula[] = [];
    this.AT_LEAST_ONE_SEP({ SEP: T.Semi, DEF: () => items.push(this.SUBRULE(this.conjunction)) });
    return this.ACTION(() =>
      items.length === 1 ? items[0]! : { kind: 'or', items, span: joinSpans(items[0]!.span, items[items.length - 1]!.span) },
    );
  });

  private conjunction = this.RULE('conjunction', (): Formula => {
    const items: Formula[] = [];
    this.AT_LEAST_ONE_SEP({ SEP: T.Comma, DEF: () => items.push(this.SUBRULE(this.literal)) });
    return this.ACTION(() =>
      items.length === 1 ? items[0]! : { kind: 'and', items, span: joinSpans(items[0]!.span, items[items.length - 1]!.span) },
    );
  });

  private literal = this.RULE('literal', (): Formula =>
    this.OR([
      {
        ALT: () => {
          const bang = this.CONSUME(T.Bang);
          const body = this.SUBRULE(this.literal);
          return this.ACTION((): Formula => ({ kind: 'not', body, span: joinSpans(this.span(bang), body.span) }));
        },
      },
      { ALT: () => this.SUBRULE(this.aggregate) },
      { ALT: () => this.SUBRULE(this.comparisonOrAtom) },
    ]),
  );

  /** `agg<<t = sum(v), ...>> body`: the body runs to the end of the enclosing conjunction. */
  private aggregate = this.RULE('aggregate', (): Formula => {
    const kw = this.CONSUME(T.Agg);
    this.CONSUME(T.LAngle2);
    const bindings: { target: IToken; fn: IToken; args: Term[]; close: IToken }[] = [];
    this.AT_LEAST_ONE_SEP({
      SEP: T.Comma,
      DEF: () => {
        const target = this.CONSUME(T.Identifier);
        this.CONSUME(T.Eq);
        const fn = this.CONSUME2(T.Identifier);
        this.CONSUME(T.LParen);
        const args = this.SUBRULE(this.args);
        const close = this.CONSUME(T.RParen);
        bindings.push({ target, fn, args, close });
      },
    });
    this.CONSUME(T.RAngle2);
    const body = this.SUBRULE(this.conjunction);
    return this.ACTION((): Formula => ({
      kind: 'agg',
      bindings: bindings.map((b) => ({
        target: b.target.image,
        fn: b.fn.image,
        args: b.args,
        span: joinSpans(this.span(b.target), this.span(b.close)),
      })),
      body,
      span: joinSpans(this.span(kw), body.span),
    }));
  });

  private comparisonOrAtom = this.RULE('comparisonOrAtom', (): Formula => {
    const left = this.SUBRULE(this.expr);
    let op: CompareOp | undefined;
    let right: Parsed | undefined;
    this.OPTION(() => {
      const t = this.OR([
        { ALT: () => this.CONSUME(T.Eq) },
        { ALT: () => this.CONSUME(T.Ne) },
        { ALT: () => this.CONSUME(T.Lt) },
        { ALT: () => this.CONSUME(T.Le) },
        { ALT: () => this.CONSUME(T.Gt) },
        { ALT: () => this.CONSUME(T.Ge) },
      ]);
      op = this.ACTION(() => COMPARE_OPS.get(t.tokenType));
      right = this.SUBRULE2(this.expr);
    });
    return this.ACTION((): Formula => {
      if (op === undefined || right === undefined) {
        if (left.kind === 'atom') return left;
        this.semantic.push(errorAt('expected an atom or a comparison', left.span));
        return { kind: 'and', items: [], span: left.span };
      }
      const value = this.asTerm(right);
      if (op === '=' && left.kind === 'apply') {
        const span = joinSpans(left.span, value.span);
        return { kind: 'funcAtom', pred: left.name, keys: left.args, values: [value], span, predSpan: left.nameSpan };
      }
      const l = this.asTerm(left);
      return { kind: 'compare', op, left: l, right: value, span: joinSpans(l.span, value.span) };
    });
  });

  private expr = this.RULE('expr', (): Parsed => {
    let left = this.SUBRULE(this.product);
    this.MANY(() => {
      const t = this.OR([{ ALT: () => this.CONSUME(T.Plus) }, { ALT: () => this.CONSUME(T.Minus) }]);
      const right = this.SUBRULE2(this.product);
      this.ACTION(() => (left = this.binary(t.image as ArithOp, left, right)));
    });
    return left;
  });

  private product = this.RULE('product', (): Parsed => {
    let left = this.SUBRULE(this.unary);
    this.MANY(() => {
      const t = this.OR([
        { ALT: () => this.CONSUME(T.Star) },
        { ALT: () => this.CONSUME(T.Slash) },
        { ALT: () => this.CONSUME(T.Percent) },
      ]);
      const right = this.SUBRULE2(this.unary);
      this.ACTION(() => (left = this.binary(t.image as ArithOp, left, right)));
    });
    return left;
  });

  private binary(op: ArithOp, left: Parsed, right: Parsed): Term {
    const l = this.asTerm(left);
    const r = this.asTerm(right);
    return { kind: 'binary', op, left: l, right: r, span: joinSpans(l.span, r.span) };
  }

  /** `-` folds into a following number literal (`-7` is a constant, not arithmetic). */
  private unary = this.RULE('unary', (): Parsed =>
    this.OR([
      {
        ALT: () => {
          const minus = this.CONSUME(T.Minus);
          const operand = this.SUBRULE(this.unary);
          return this.ACTION((): Term => {
            const span = joinSpans(this.span(minus), operand.span);
            if (operand.kind === 'int') return { ...operand, value: -operand.value, span };
            if (operand.kind === 'real') return { kind: 'real', text: `-${operand.text}`, span };
            return { kind: 'neg', operand: this.asTerm(operand), span };
          });
        },
      },
      { ALT: () => this.SUBRULE(this.primary) },
    ]),
  );

  private primary = this.RULE('primary', (): Parsed =>
    this.OR([
      {
        ALT: () => {
          const t = this.CONSUME(T.NumberLit);
          return this.ACTION(() => this.number(t));
        },
      },
      {
        ALT: () => {
          const t = this.CONSUME(T.StringLit);
          return this.ACTION((): Term => ({ kind: 'string', value: this.decodeString(t), span: this.span(t) }));
        },
      },
      {
        ALT: () => {
          const open = this.CONSUME(T.LParen);
          const inner = this.SUBRULE(this.expr);
          const close = this.CONSUME(T.RParen);
          return this.ACTION((): Parsed => ({ ...inner, span: joinSpans(this.span(open), this.span(close)) }));
        },
      },
      { ALT: () => this.SUBRULE(this.nameExpr) },
    ]),
  );

  /** A variable, `_`, an atom `p(args)` or a functional application `f[args]`. */
  private nameExpr = this.RULE('nameExpr', (): Parsed => {
    const name = this.CONSUME(T.Identifier);
    let result: Parsed | undefined;
    this.OPTION(() =>
      this.OR([
        {
          ALT: () => {
            this.CONSUME(T.LParen);
            const args = this.SUBRULE(this.args);
            const close = this.CONSUME(T.RParen);
            this.ACTION(() => (result = this.atom(name, args, close)));
          },
        },
        {
          ALT: () => {
            this.CONSUME(T.LBracket);
            const args = this.SUBRULE2(this.args);
            const close = this.CONSUME(T.RBracket);
            this.ACTION(() => {
              const nameSpan = this.span(name);
              result = { kind: 'apply', name: name.image, args, span: joinSpans(nameSpan, this.span(close)), nameSpan };
            });
          },
        },
      ]),
    );
    return this.ACTION((): Parsed => {
      if (result) return result;
      const span = this.span(name);
      return name.image === '_' ? { kind: 'wildcard', span } : { kind: 'var', name: name.image, span };
    });
  });

  private number(t: IToken): Term {
    const span = this.span(t);
    const m = /^([0-9]+)([Lu]?)$/.exec(t.image);
    if (m) return { kind: 'int', value: BigInt(m[1]!), suffix: m[2] as IntLit['suffix'], span };
    return { kind: 'real', text: t.image, span };
  }

  private decodeString(t: IToken): string {
    return t.image.slice(1, -1).replace(/\\(.)/g, (whole, c: string, at: number) => {
      const decoded = ESCAPES[c];
      if (decoded !== undefined) return decoded;
      const start = { line: t.startLine!, column: t.startColumn! + 1 + at, offset: t.startOffset + 1 + at };
      const end = { ...start, column: start.column + 2, offset: start.offset + 2 };
      this.semantic.push(
        errorAt(`unknown escape sequence ${whole} in string; expected \\", \\\\, \\n or \\t`, { file: this.file, start, end }),
      );
      return c;
    });
  }
}

let shared: LogicParser | undefined;

/** Parses one file's tokens; returns the clauses that parsed and a diagnostic per broken clause. */
export function parseTokens(tokens: IToken[], file: string): { ast: SourceAst; diagnostics: Diagnostic[] } {
  shared ??= new LogicParser(new MessageProvider());
  const parser = shared;
  parser.file = file;
  parser.semantic = [];
  const clauses: Clause[] = [];
  const diagnostics: Diagnostic[] = [];
  let start = 0;
  while (start < tokens.length) {
    let end = start;
    while (end < tokens.length && tokens[end]!.tokenType !== T.Dot) end++;
    const segment = tokens.slice(start, end + 1);
    const segmentStart = start;
    start = end + 1;
    parser.messages.offending = undefined;
    parser.input = segment;
    const clause = parser.clause();
    const error = parser.errors[0];
    if (!error) {
      clauses.push(clause);
      continue;
    }
    const at = parser.messages.offending ?? error.token;
    const unended = missingDot(parser, segment, segment.indexOf(at));
    if (unended) {
      // The clause before `at` is whole: report the '.' it lacks where it belongs, and parse on from `at`.
      clauses.push(unended.clause);
      diagnostics.push(errorAt(`expected '.' to end the clause before ${describe(at)} on line ${at.startLine}`, unended.span));
      start = segmentStart + segment.indexOf(at);
      continue;
    }
    // At end of input there is no token to point at: point just past the clause's last token.
    const span =
      at.tokenType === EOF ? afterToken(segment[segment.length - 1]!, file) : tokenSpan(at, file);
    diagnostics.push(errorAt(error.message, span));
  }
  diagnostics.push(...parser.semantic);
  return { ast: { file, clauses }, diagnostics };
}

/**
 * When the token at `index` (where parsing failed) starts a later line than the token before it, and the tokens
 * before it make a whole clause once a '.' is added, that clause: the likely mistake is a '.' forgotten at the end
 * of the line, not something wrong with the next one.
 */
function missingDot(parser: LogicParser, segment: IToken[], index: number): { clause: Clause; span: SourceSpan } | undefined {
  const last = segment[index - 1];
  const next = segment[index];
  if (index <= 0 || !last || !next || next.tokenType === EOF || (next.startLine ?? 0) <= (last.endLine ?? 0)) return undefined;
  const span = afterToken(last, parser.file);
  const dot = createTokenInstance(T.Dot, '.', span.start.offset, span.start.offset, span.start.line, span.start.line, span.start.column, span.start.column);
  const semantic = parser.semantic.length;
  parser.input = [...segment.slice(0, index), dot];
  const clause = parser.clause();
  if (parser.errors.length === 0) return { clause, span };
  parser.semantic.length = semantic;
  return undefined;
}

export function afterToken(t: IToken, file: string): SourceSpan {
  const { end } = tokenSpan(t, file);
  return { file, start: end, end: { ...end, column: end.column + 1, offset: end.offset + 1 } };
}
