/**
 * Chevrotain parser for the Soufflé dialect, building the AST directly (embedded actions). Directives have no
 * terminator, so the file is parsed one item at a time: each call parses one item and stops where the next
 * begins. After a syntax error parsing resumes at the next directive or after the next `.`, so one error
 * costs one item and the rest of the file is still checked.
 */
import { EmbeddedActionsParser, EOF, type IToken, type TokenType } from 'chevrotain';
import { errorAt, type CompareOp, type Diagnostic, type SourceSpan } from '@vixen/queryplan';
import type { ArithOp } from '../syntax/ast.js';
import { StringLit } from '../syntax/lexer.js';
import { afterToken, MessageProvider } from '../syntax/parser.js';
import { joinSpans, tokenSpan } from '../syntax/span.js';
import type { AggregateFn, Attribute, Branch, CompRef, IoOption, IoTarget, Name, SAtom, SFormula, SItem, SouffleAst, STerm } from './ast.js';
import * as T from './lexer.js';
import { preprocess } from './preprocess.js';
import { preference, SUBSUMPTION_FORMS } from './subsumption.js';

/** What the parser builds below the item level: values and formulas share expression syntax. */
type Parsed = STerm | SFormula;

const FORMULA_KINDS: ReadonlySet<string> = new Set(['atom', 'compare', 'not', 'bool', 'and', 'or']);
const isFormula = (p: Parsed): p is SFormula => FORMULA_KINDS.has(p.kind);

/** What a rule's alternatives amount to, when nothing of it matched at all. */
const RULE_DESCRIPTIONS: Record<string, string> = {
  item: "a directive (.decl, .input, .output, .type), a fact or a rule",
  callArgs: "'('",
  disjunction: 'an atom or a comparison',
  conjunction: 'an atom or a comparison',
  literal: 'an atom or a comparison',
  unary: 'a variable or constant',
  primary: 'a variable or constant',
};

/** Relation qualifiers after `.decl p(...)`; they are words, so only these are taken as qualifiers. */
const QUALIFIERS: ReadonlySet<string> = new Set([
  'input',
  'output',
  'printsize',
  'overridable',
  'inline',
  'no_inline',
  'magic',
  'no_magic',
  'brie',
  'btree',
  'btree_delete',
  'btree_min',
  'btree_max',
  'btree_sum',
  'eqrel',
]);

const COMPARE_OPS: ReadonlyMap<TokenType, CompareOp> = new Map([
  [T.Eq, '='],
  [T.Ne, '!='],
  [T.Lt, '<'],
  [T.Le, '<='],
  [T.Gt, '>'],
  [T.Ge, '>='],
]);
const AGGREGATES: ReadonlyMap<TokenType, AggregateFn> = new Map([
  [T.Count, 'count'],
  [T.Sum, 'sum'],
  [T.Min, 'min'],
  [T.Max, 'max'],
  [T.Mean, 'mean'],
]);
/** Soufflé's binary word operators, weakest first (its grammar's precedence); all group to the left. */
const WORD_PRECEDENCE: Readonly<Record<string, number>> = {
  lor: 1,
  lxor: 2,
  land: 3,
  bor: 4,
  bxor: 5,
  band: 6,
  bshl: 7,
  bshr: 7,
  bshru: 7,
};
const UNARY_WORD_OPS: ReadonlySet<string> = new Set(['bnot', 'lnot']);
const ESCAPES: Record<string, string> = { '"': '"', '\\': '\\', n: '\n', t: '\t', r: '\r' };

function describe(p: SFormula): string {
  return p.kind === 'atom' ? `the atom ${p.rel}(...)` : p.kind === 'compare' ? 'a comparison' : 'a formula';
}

class SouffleParser extends EmbeddedActionsParser {
  file = '';
  /** Well-formed syntax that still is wrong (bad escapes, formulas used as values...). */
  semantic: Diagnostic[] = [];

  constructor(readonly messages: MessageProvider) {
    super(T.allTokens, { maxLookahead: 3, errorMessageProvider: messages });
    this.performSelfAnalysis();
  }

  private span(t: IToken): SourceSpan {
    return tokenSpan(t, this.file);
  }

  private name(t: IToken): Name {
    return { name: t.image, span: this.span(t) };
  }

  /** A value; an atom in value position is a functor call (`cat(a, b)`), which `toLogic` reports. */
  private asTerm(p: Parsed): STerm {
    if (!isFormula(p)) return p;
    if (p.kind === 'atom') return { kind: 'call', name: p.rel, args: p.args, span: p.span, nameSpan: p.relSpan };
    this.semantic.push(errorAt(`expected a value but found ${describe(p)}`, p.span));
    return { kind: 'wildcard', span: p.span };
  }

  private asFormula(p: Parsed): SFormula {
    if (isFormula(p)) return p;
    if (p.kind === 'var' && (p.name === 'true' || p.name === 'false')) return { kind: 'bool', value: p.name === 'true', span: p.span };
    this.semantic.push(errorAt('expected an atom or a comparison', p.span));
    return { kind: 'and', items: [], span: p.span };
  }

  item = this.RULE('item', (): SItem =>
    this.OR([
      { ALT: () => this.SUBRULE(this.declItem) },
      { ALT: () => this.SUBRULE(this.ioItem) },
      { ALT: () => this.SUBRULE(this.typeItem) },
      { ALT: () => this.SUBRULE(this.clause) },
    ]),
  );

  private declItem = this.RULE('declItem', (): SItem => {
    const kw = this.CONSUME(T.Decl);
    const rel = this.CONSUME(T.Identifier);
    this.CONSUME(T.LParen);
    const attributes: Attribute[] = [];
    this.MANY_SEP({
      SEP: T.Comma,
      DEF: () => {
        const name = this.CONSUME2(T.Identifier);
        this.CONSUME(T.Colon);
        const type = this.CONSUME3(T.Identifier);
        this.ACTION(() => attributes.push({ name: this.name(name), type: this.name(type) }));
      },
    });
    let last = this.CONSUME(T.RParen);
    const qualifiers: Name[] = [];
    this.MANY({
      GATE: () => QUALIFIERS.has(this.LA(1).image),
      DEF: () => {
        last = this.CONSUME4(T.Identifier);
        this.ACTION(() => qualifiers.push(this.name(last)));
      },
    });
    // `choice-domain x, (y, z)`: parsed so that it is reported, not mistaken for the next clause.
    this.OPTION(() => {
      const choice = this.CONSUME(T.ChoiceDomain);
      this.AT_LEAST_ONE_SEP2({
        SEP: T.Comma,
        DEF: () =>
          this.OR([
            { ALT: () => (last = this.CONSUME5(T.Identifier)) },
            {
              ALT: () => {
                this.CONSUME2(T.LParen);
                this.AT_LEAST_ONE_SEP3({ SEP: T.Comma, DEF: () => this.CONSUME6(T.Identifier) });
                last = this.CONSUME2(T.RParen);
              },
            },
          ]),
      });
      this.ACTION(() => qualifiers.push(this.name(choice)));
    });
    return this.ACTION(() => ({
      kind: 'decl',
      rel: this.name(rel),
      attributes,
      qualifiers,
      span: joinSpans(this.span(kw), this.span(last)),
    }));
  });

  private ioItem = this.RULE('ioItem', (): SItem => {
    const kw = this.OR([
      { ALT: () => this.CONSUME(T.Input) },
      { ALT: () => this.CONSUME(T.Output) },
      { ALT: () => this.CONSUME(T.SizeDirective) },
    ]);
    const targets: IoTarget[] = [];
    let last = kw;
    this.AT_LEAST_ONE_SEP({
      SEP: T.Comma,
      DEF: () => {
        const rel = this.CONSUME(T.Identifier);
        last = rel;
        const options: IoOption[] = [];
        this.OPTION(() => {
          this.CONSUME(T.LParen);
          this.MANY_SEP({ SEP: T.Comma, DEF: () => options.push(this.SUBRULE(this.ioOption)) });
          last = this.CONSUME(T.RParen);
        });
        this.ACTION(() => targets.push({ rel: this.name(rel), options }));
      },
    });
    return this.ACTION((): SItem => {
      if (kw.image === '.limitsize') this.semantic.push(errorAt(`the ${kw.image} directive is not supported`, this.span(kw)));
      const direction = kw.tokenType === T.Input ? 'input' : kw.tokenType === T.Output ? 'output' : 'printsize';
      return { kind: 'io', direction, targets, span: joinSpans(this.span(kw), this.span(last)) };
    });
  });

  private ioOption = this.RULE('ioOption', (): IoOption => {
    const key = this.CONSUME(T.Identifier);
    this.CONSUME(T.Eq);
    const value = this.OR([
      { ALT: () => this.CONSUME(StringLit) },
      { ALT: () => this.CONSUME2(T.Identifier) },
      { ALT: () => this.CONSUME(T.IntLit) },
    ]);
    return this.ACTION(() => ({
      key: key.image,
      value: value.tokenType === StringLit ? this.decodeString(value) : value.image,
      span: joinSpans(this.span(key), this.span(value)),
    }));
  });

  private typeItem = this.RULE('typeItem', (): SItem =>
    this.OR([
      {
        ALT: () => {
          const kw = this.CONSUME(T.Type);
          const name = this.CONSUME(T.Identifier);
          const alternatives: IToken[] = [];
          let record: Attribute[] | undefined;
          const branches: Branch[] = [];
          let last: IToken | undefined;
          // Before Soufflé 2.0 a bare `.type T` declared a symbol type (`.type T <: symbol`).
          this.OPTION3(() => this.OR2([
            {
              ALT: () => {
                this.CONSUME(T.Subtype);
                alternatives.push(this.CONSUME2(T.Identifier));
              },
            },
            {
              ALT: () => {
                this.CONSUME(T.Eq);
                this.OR4([
                  {
                    ALT: () => {
                      this.CONSUME(T.LBracket);
                      record = this.SUBRULE(this.fields);
                      last = this.CONSUME(T.RBracket);
                    },
                  },
                  {
                    ALT: () =>
                      this.AT_LEAST_ONE_SEP({
                        SEP: T.Pipe,
                        DEF: () => {
                          const alt = this.CONSUME3(T.Identifier);
                          alternatives.push(alt);
                          last = alt;
                          // `A {x: number} | B {}`: an algebraic data type.
                          this.OPTION2(() => {
                            this.CONSUME(T.LBrace);
                            const fields = this.SUBRULE2(this.fields);
                            last = this.CONSUME(T.RBrace);
                            this.ACTION(() => branches.push({ name: this.name(alt), fields }));
                          });
                        },
                      }),
                  },
                ]);
              },
            },
          ]));
          return this.ACTION((): SItem => {
            if (alternatives.length === 0 && !record) {
              const span = this.span(name);
              return { kind: 'type', name: this.name(name), alternatives: [{ name: 'symbol', span }], span: joinSpans(this.span(kw), span) };
            }
            const span = joinSpans(this.span(kw), this.span(last ?? alternatives[alternatives.length - 1]!));
            if (record) return { kind: 'type', name: this.name(name), alternatives: [], record, span };
            if (branches.length > 0) {
              const bare = alternatives.find((a) => !branches.some((b) => b.name.name === a.image));
              if (bare) this.semantic.push(errorAt(`expected '{' after the branch ${bare.image}: an algebraic data type's branches all have fields in braces`, this.span(bare)));
              return { kind: 'type', name: this.name(name), alternatives: [], branches, span };
            }
            return { kind: 'type', name: this.name(name), alternatives: alternatives.map((t) => this.name(t)), span };
          });
        },
      },
      {
        // Pre-2.0 spelling: `.number_type T` is `.type T <: number`.
        ALT: () => {
          const kw = this.OR3([{ ALT: () => this.CONSUME(T.NumberType) }, { ALT: () => this.CONSUME(T.SymbolType) }]);
          const name = this.CONSUME4(T.Identifier);
          return this.ACTION((): SItem => {
            const span = this.span(kw);
            const base = kw.tokenType === T.NumberType ? 'number' : 'symbol';
            return { kind: 'type', name: this.name(name), alternatives: [{ name: base, span }], span: joinSpans(span, this.span(name)) };
          });
        },
      },
    ]),
  );

  /** `x: number, y: symbol` in record and ADT types. */
  private fields = this.RULE('fields', (): Attribute[] => {
    const fields: Attribute[] = [];
    this.MANY_SEP({
      SEP: T.Comma,
      DEF: () => {
        const name = this.CONSUME(T.Identifier);
        this.CONSUME(T.Colon);
        const type = this.CONSUME2(T.Identifier);
        this.ACTION(() => fields.push({ name: this.name(name), type: this.name(type) }));
      },
    });
    return fields;
  });

  /** A fact `p(1, "a").` or a rule `h(x), g(x) :- body.` */
  private clause = this.RULE('clause', (): SItem => {
    const heads: SAtom[] = [];
    this.AT_LEAST_ONE_SEP({ SEP: T.Comma, DEF: () => heads.push(this.SUBRULE(this.atom)) });
    return this.OR([
      {
        ALT: () => {
          const dot = this.CONSUME(T.Dot);
          return this.ACTION((): SItem => {
            const span = joinSpans(heads[0]!.span, this.span(dot));
            if (heads.length > 1) this.semantic.push(errorAt("expected ':-' after several heads: a fact has one atom", span));
            return { kind: 'fact', atom: heads[0]!, span };
          });
        },
      },
      {
        ALT: () => {
          this.CONSUME(T.If);
          const body = this.SUBRULE(this.disjunction);
          const dot = this.CONSUME2(T.Dot);
          return this.ACTION((): SItem => ({
            kind: 'rule',
            heads,
            body: this.asFormula(body),
            span: joinSpans(heads[0]!.span, this.span(dot)),
          }));
        },
      },
      {
        // `r(x) <= r(y) :- body.`
        ALT: () => {
          const le = this.CONSUME(T.Le);
          const dominating = this.SUBRULE2(this.atom);
          this.CONSUME2(T.If);
          const body = this.SUBRULE2(this.disjunction);
          const dot = this.CONSUME3(T.Dot);
          return this.ACTION((): SItem => {
            const span = joinSpans(heads[0]!.span, this.span(dot));
            const fn = heads.length === 1 ? preference(heads[0]!, dominating, this.asFormula(body)) : undefined;
            if (fn) return { kind: 'subsume', rel: { name: dominating.rel, span: dominating.relSpan }, fn, span };
            this.semantic.push(errorAt(SUBSUMPTION_FORMS, this.span(le)));
            return { kind: 'fact', atom: heads[0]!, span };
          });
        },
      },
    ]);
  });

  private atom = this.RULE('atom', (): SAtom => {
    const rel = this.CONSUME(T.Identifier);
    this.CONSUME(T.LParen);
    const args = this.SUBRULE(this.args);
    const close = this.CONSUME(T.RParen);
    return this.ACTION(() => this.makeAtom(rel, args, close));
  });

  private makeAtom(rel: IToken, args: STerm[], close: IToken): SAtom {
    const relSpan = this.span(rel);
    return { kind: 'atom', rel: rel.image, args, span: joinSpans(relSpan, this.span(close)), relSpan };
  }

  private args = this.RULE('args', (): STerm[] => {
    const out: STerm[] = [];
    this.MANY_SEP({
      SEP: T.Comma,
      DEF: () => {
        const e = this.SUBRULE(this.expr);
        this.ACTION(() => out.push(this.asTerm(e)));
      },
    });
    return out;
  });

  /** `;` binds weaker than `,`. */
  private disjunction = this.RULE('disjunction', (): Parsed => {
    const items: Parsed[] = [];
    this.AT_LEAST_ONE_SEP({ SEP: T.Semi, DEF: () => items.push(this.SUBRULE(this.conjunction)) });
    return this.ACTION(() => this.group('or', items));
  });

  private conjunction = this.RULE('conjunction', (): Parsed => {
    const items: Parsed[] = [];
    this.AT_LEAST_ONE_SEP({ SEP: T.Comma, DEF: () => items.push(this.SUBRULE(this.literal)) });
    return this.ACTION(() => this.group('and', items));
  });

  /** One item stays what it is (a parenthesized value, say); several must be formulas. */
  private group(kind: 'and' | 'or', items: Parsed[]): Parsed {
    if (items.length === 1) return items[0]!;
    const formulas = items.map((p) => this.asFormula(p));
    return { kind, items: formulas, span: joinSpans(formulas[0]!.span, formulas[formulas.length - 1]!.span) };
  }

  private literal = this.RULE('literal', (): Parsed =>
    this.OR([
      {
        ALT: () => {
          const bang = this.CONSUME(T.Bang);
          const body = this.SUBRULE(this.literal);
          return this.ACTION((): Parsed => {
            const f = this.asFormula(body);
            return { kind: 'not', body: f, span: joinSpans(this.span(bang), f.span) };
          });
        },
      },
      { ALT: () => this.SUBRULE(this.comparison) },
    ]),
  );

  /** `a op b`, or a lone expression (an atom, or a parenthesized formula) for the caller to judge. */
  private comparison = this.RULE('comparison', (): Parsed => {
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
    return this.ACTION((): Parsed => {
      if (op === undefined || right === undefined) return left;
      const l = this.asTerm(left);
      const r = this.asTerm(right);
      return { kind: 'compare', op, left: l, right: r, span: joinSpans(l.span, r.span) };
    });
  });

  /** Sums joined by Soufflé's binary word operators (`x band 3`), grouped by their precedence (wordTree). */
  private expr = this.RULE('expr', (): Parsed => {
    const operands: Parsed[] = [this.SUBRULE(this.sum)];
    const ops: IToken[] = [];
    this.MANY(() => {
      ops.push(this.CONSUME(T.WordOp));
      operands.push(this.SUBRULE2(this.sum));
    });
    return this.ACTION(() => this.wordTree(operands, ops));
  });

  /** `a op1 b op2 c ...` with the tighter operator first, left to right among equals (operator precedence parsing). */
  private wordTree(operands: Parsed[], ops: IToken[]): Parsed {
    const out: Parsed[] = [operands[0]!];
    const pending: IToken[] = [];
    for (const t of ops) {
      if (WORD_PRECEDENCE[t.image] === undefined) this.semantic.push(errorAt(`${t.image} takes one operand, as in ${t.image} x`, this.span(t)));
    }
    const precedence = (t: IToken): number => WORD_PRECEDENCE[t.image] ?? 0;
    const reduce = (): void => {
      const right = out.pop()!;
      const left = out.pop()!;
      out.push(this.wordCall(pending.pop()!, [left, right]));
    };
    ops.forEach((op, i) => {
      while (pending.length > 0 && precedence(pending[pending.length - 1]!) >= precedence(op)) reduce();
      pending.push(op);
      out.push(operands[i + 1]!);
    });
    while (pending.length > 0) reduce();
    return out[0]!;
  }

  /** A word operator as the call `band(a, b)`: lowered like the functors (to-logic.ts). */
  private wordCall(op: IToken, operands: Parsed[]): STerm {
    const args = operands.map((p) => this.asTerm(p));
    const nameSpan = this.span(op);
    const span = joinSpans(args.length === 1 ? nameSpan : args[0]!.span, args[args.length - 1]!.span);
    return { kind: 'call', name: op.image, args, span, nameSpan };
  }

  private sum = this.RULE('sum', (): Parsed => {
    let left = this.SUBRULE(this.product);
    this.MANY(() => {
      const t = this.OR([{ ALT: () => this.CONSUME(T.Plus) }, { ALT: () => this.CONSUME(T.Minus) }]);
      const right = this.SUBRULE2(this.product);
      this.ACTION(() => (left = this.binary(t.image as ArithOp, left, right)));
    });
    return left;
  });

  private product = this.RULE('product', (): Parsed => {
    let left = this.SUBRULE(this.power);
    this.MANY(() => {
      const t = this.OR([
        { ALT: () => this.CONSUME(T.Star) },
        { ALT: () => this.CONSUME(T.Slash) },
        { ALT: () => this.CONSUME(T.Percent) },
      ]);
      const right = this.SUBRULE2(this.power);
      this.ACTION(() => (left = this.binary(t.image as ArithOp, left, right)));
    });
    return left;
  });

  private power = this.RULE('power', (): Parsed => {
    let left = this.SUBRULE(this.unary);
    this.MANY(() => {
      this.CONSUME(T.Caret);
      const right = this.SUBRULE2(this.unary);
      this.ACTION(() => (left = this.binary('^', left, right)));
    });
    return left;
  });

  private binary(op: ArithOp | '^', left: Parsed, right: Parsed): STerm {
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
          return this.ACTION((): STerm => {
            const span = joinSpans(this.span(minus), operand.span);
            if (operand.kind === 'int') return { ...operand, value: -operand.value, span };
            if (operand.kind === 'float') return { kind: 'float', text: `-${operand.text}`, span };
            return { kind: 'neg', operand: this.asTerm(operand), span };
          });
        },
      },
      {
        ALT: () => {
          const op = this.CONSUME(T.WordOp);
          const operand = this.SUBRULE2(this.unary);
          return this.ACTION((): STerm => {
            if (!UNARY_WORD_OPS.has(op.image)) this.semantic.push(errorAt(`expected an operand before ${op.image}`, this.span(op)));
            return this.wordCall(op, [operand]);
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
          const t = this.CONSUME(T.IntLit);
          return this.ACTION((): STerm => {
            const unsigned = t.image.endsWith('u');
            const value = BigInt(unsigned ? t.image.slice(0, -1) : t.image);
            return { kind: 'int', value, unsigned, span: this.span(t) };
          });
        },
      },
      {
        ALT: () => {
          const t = this.CONSUME(T.FloatLit);
          return this.ACTION((): STerm => ({ kind: 'float', text: t.image, span: this.span(t) }));
        },
      },
      {
        ALT: () => {
          const t = this.CONSUME(StringLit);
          return this.ACTION((): STerm => ({ kind: 'string', value: this.decodeString(t), span: this.span(t) }));
        },
      },
      {
        ALT: () => {
          const open = this.CONSUME(T.LParen);
          const inner = this.SUBRULE(this.disjunction);
          const close = this.CONSUME(T.RParen);
          return this.ACTION((): Parsed => ({ ...inner, span: joinSpans(this.span(open), this.span(close)) }));
        },
      },
      { ALT: () => this.SUBRULE(this.aggregate) },
      { ALT: () => this.SUBRULE(this.nameExpr) },
      {
        ALT: () => {
          const open = this.CONSUME(T.LBracket);
          const args = this.SUBRULE2(this.args);
          const close = this.CONSUME(T.RBracket);
          return this.ACTION((): STerm => ({ kind: 'record', args, span: joinSpans(this.span(open), this.span(close)) }));
        },
      },
      {
        ALT: () => {
          const at = this.CONSUME(T.UserFunctor);
          const call = this.SUBRULE(this.callArgs);
          return this.unsupported(`user-defined functors are not supported: ${at.image}`, at, call?.close ?? at);
        },
      },
      {
        ALT: () => {
          const dollar = this.CONSUME(T.Dollar);
          const call = this.SUBRULE2(this.callArgs);
          return this.ACTION((): STerm => {
            const nameSpan = this.span(dollar);
            const span = joinSpans(nameSpan, this.span(call?.close ?? dollar));
            // A bare `$` is the old spelling of autoinc() (counter.ts).
            if (dollar.image === '$') return { kind: 'call', name: 'autoinc', args: call?.args ?? [], span, nameSpan };
            return { kind: 'branch', name: dollar.image.slice(1), args: call?.args ?? [], span, nameSpan };
          });
        },
      },
    ]),
  );

  /** Optional `(args)` after a functor or constructor name, with its closing parenthesis. */
  private callArgs = this.RULE('callArgs', (): { args: STerm[]; close: IToken } | undefined =>
    this.OPTION(() => {
      this.CONSUME(T.LParen);
      const args = this.SUBRULE(this.args);
      const close = this.CONSUME(T.RParen);
      return { args, close };
    }),
  );

  /** A construct outside the subset, reported at its first token; the item it is in is then dropped. */
  private unsupported(message: string, first: IToken, last: IToken): STerm {
    return this.ACTION((): STerm => {
      this.semantic.push(errorAt(message, this.span(first)));
      return { kind: 'wildcard', span: joinSpans(this.span(first), this.span(last)) };
    });
  }

  /**
   * `count : { body }`, `sum x : { body }`, or with a single atom as the body: `count : edge(x, _)`; `min(a, b)`
   * and `max(a, b)` without a `:` after the parenthesis are Soufflé's functors.
   */
  private aggregate = this.RULE('aggregate', (): STerm => {
    const kw = this.OR([
      { ALT: () => this.CONSUME(T.Count) },
      { ALT: () => this.CONSUME(T.Sum) },
      { ALT: () => this.CONSUME(T.Min) },
      { ALT: () => this.CONSUME(T.Max) },
      { ALT: () => this.CONSUME(T.Mean) },
    ]);
    return this.OR3({
      IGNORE_AMBIGUITIES: true,
      DEF: [
        {
          GATE: () => (kw.tokenType === T.Min || kw.tokenType === T.Max) && this.callFollows(),
          ALT: () => {
            this.CONSUME(T.LParen);
            const args = this.SUBRULE(this.args);
            const close = this.CONSUME(T.RParen);
            return this.ACTION((): STerm => {
              const nameSpan = this.span(kw);
              if (args.length < 2) this.semantic.push(errorAt(`the ${kw.image} functor takes two arguments or more`, nameSpan));
              return { kind: 'call', name: kw.image, args, span: joinSpans(nameSpan, this.span(close)), nameSpan };
            });
          },
        },
        { ALT: () => this.SUBRULE(this.aggregateRest, { ARGS: [kw] }) },
      ],
    });
  });

  /** Whether a parenthesized list follows that is not an aggregate's target (no `:` after it). */
  private callFollows(): boolean {
    if (this.LA(1).tokenType !== T.LParen) return false;
    for (let i = 1, depth = 0; this.LA(i).tokenType !== EOF; i++) {
      const type = this.LA(i).tokenType;
      if (type === T.LParen) depth++;
      else if (type === T.RParen && --depth === 0) return this.LA(i + 1).tokenType !== T.Colon;
    }
    return false;
  }

  /** An aggregate after its keyword. */
  private aggregateRest = this.RULE('aggregateRest', (kw: IToken): STerm => {
    const target = this.OPTION(() => this.SUBRULE(this.expr));
    let end = kw;
    const body = this.OPTION2(() => {
      this.CONSUME(T.Colon);
      return this.OR2([
        {
          ALT: () => {
            this.CONSUME(T.LBrace);
            const inner = this.SUBRULE(this.disjunction);
            end = this.CONSUME(T.RBrace);
            return inner;
          },
        },
        { ALT: (): Parsed => this.SUBRULE(this.atom) },
      ]);
    });
    return this.ACTION((): STerm => {
      const fn = AGGREGATES.get(kw.tokenType)!;
      const fnSpan = this.span(kw);
      if (body === undefined) {
        const span = target ? joinSpans(fnSpan, target.span) : fnSpan;
        // Arguments `(a, b)` parsed as a formula with complaints of their own: the missing `:` is the problem.
        this.semantic = this.semantic.filter((d) => !d.span || d.span.start.offset < span.start.offset || d.span.end.offset > span.end.offset);
        this.semantic.push(errorAt(`expected ':' after ${fn}, as in ${fn} x : { ... }`, fnSpan));
        return { kind: 'wildcard', span };
      }
      const formula = this.asFormula(body);
      const span = joinSpans(fnSpan, end === kw ? formula.span : this.span(end));
      // Soufflé's mean is always a float; Vixen's avg of integers is a decimal: not the same values.
      if (fn === 'mean') this.semantic.push(errorAt('the mean aggregate is not supported', fnSpan));
      if (fn === 'count' && target) this.semantic.push(errorAt("expected ':' after count: count takes no expression", target.span));
      if (fn !== 'count' && !target) this.semantic.push(errorAt(`expected an expression after ${fn}, as in ${fn} x : { ... }`, fnSpan));
      return { kind: 'aggregate', fn, ...(target && fn !== 'count' ? { target: this.asTerm(target) } : {}), body: formula, span, fnSpan };
    });
  });

  /** A variable, `_`, or an atom `p(args)`. */
  private nameExpr = this.RULE('nameExpr', (): Parsed => {
    const name = this.CONSUME(T.Identifier);
    let atom: SAtom | undefined;
    this.OPTION(() => {
      this.CONSUME(T.LParen);
      const args = this.SUBRULE(this.args);
      const close = this.CONSUME(T.RParen);
      this.ACTION(() => (atom = this.makeAtom(name, args, close)));
    });
    return this.ACTION((): Parsed => {
      if (atom) return atom;
      const span = this.span(name);
      return name.image === '_' ? { kind: 'wildcard', span } : { kind: 'var', name: name.image, span };
    });
  });

  private decodeString(t: IToken): string {
    return t.image.slice(1, -1).replace(/\\(.)/g, (whole, c: string, at: number) => {
      const decoded = ESCAPES[c];
      if (decoded !== undefined) return decoded;
      const start = { line: t.startLine!, column: t.startColumn! + 1 + at, offset: t.startOffset + 1 + at };
      const end = { ...start, column: start.column + 2, offset: start.offset + 2 };
      this.semantic.push(
        errorAt(`unknown escape sequence ${whole} in string; expected \\", \\\\, \\n, \\t or \\r`, { file: this.file, start, end }),
      );
      return c;
    });
  }
}

let shared: SouffleParser | undefined;

/** Index of the first token at or after `from` where a new item may start: a directive, or just after a `.`. */
function resumeAt(tokens: IToken[], from: number, itemStart: number): number {
  for (let i = Math.max(from, itemStart + 1); i < tokens.length; i++) {
    if (T.DIRECTIVES.includes(tokens[i]!.tokenType)) return i;
    if (i - 1 >= itemStart && tokens[i - 1]!.tokenType === T.Dot) return i;
  }
  return tokens.length;
}

/** Index just past the `{ ... }` block (braces balanced) that follows `from`: a component's body. */
function afterBraces(tokens: IToken[], from: number): number {
  let depth = 0;
  for (let i = from; i < tokens.length; i++) {
    const type = tokens[i]!.tokenType;
    if (type === T.LBrace) depth++;
    else if (type === T.RBrace && --depth === 0) return i + 1;
  }
  return tokens.length;
}

/**
 * Pragmas that only tune how Soufflé evaluates or reports a program (optimisations, threads, warnings, profiles,
 * its compiler, old syntax it accepts anyway): ignored here.
 */
const IGNORED_PRAGMAS: ReadonlySet<string> = new Set([
  'auto-schedule',
  'compile',
  'debug-report',
  'index-stats',
  'legacy',
  'profile',
  'magic-transform',
  'magic-transform-exclude',
  'inline-exclude',
  'disable-transformers',
  'jobs',
  'no-warn',
  'RamSIPS',
  'verbose',
]);

/** `.pragma "key" ["value"]` at `start`: a note for the ignored ones, an error for others; where the next item starts. */
function pragma(tokens: IToken[], start: number, file: string, diagnostics: Diagnostic[]): number {
  const at = tokenSpan(tokens[start]!, file);
  let end = start + 1;
  while (end < start + 3 && tokens[end]?.tokenType === StringLit) end++;
  const key = tokens[start + 1]?.tokenType === StringLit ? tokens[start + 1]!.image.slice(1, -1) : undefined;
  if (key === undefined) diagnostics.push(errorAt('expected a quoted pragma name after .pragma, as in .pragma "magic-transform" "*"', at));
  else if (!IGNORED_PRAGMAS.has(key)) diagnostics.push(errorAt(`the pragma "${key}" is not supported`, at));
  else diagnostics.push({ severity: 'warning', message: `.pragma "${key}" ignored: it only tunes how Soufflé evaluates the program`, span: at });
  return end;
}

/**
 * The component directives, read token by token (their bodies are items like any other): `.comp` with its
 * header and body, `.init` and `.override`. Returns the item (undefined after reporting why there is none) and
 * where the next item starts.
 */
function componentItem(tokens: IToken[], start: number, file: string, diagnostics: Diagnostic[]): { item?: SItem; end: number } {
  const kw = tokens[start]!;
  let at = start + 1;
  const span = (t: IToken): SourceSpan => tokenSpan(t, file);
  const name = (t: IToken): Name => ({ name: t.image, span: span(t) });
  const is = (type: TokenType): boolean => tokens[at]?.tokenType === type;
  const fail = (what: string): { end: number } => {
    const t = tokens[at];
    diagnostics.push(errorAt(`expected ${what} in ${kw.image}`, t ? span(t) : afterToken(tokens[at - 1]!, file)));
    return { end: kw.image === '.comp' ? afterBraces(tokens, start) : resumeAt(tokens, at, start) };
  };
  const identifier = (): IToken | undefined => (is(T.Identifier) ? tokens[at++] : undefined);
  /** `<A, B>` after a component name, if there. */
  const typeList = (): Name[] | undefined => {
    const names: Name[] = [];
    if (!is(T.Lt)) return names;
    at++;
    for (;;) {
      const t = identifier();
      if (!t) return undefined;
      names.push(name(t));
      if (is(T.Gt)) break;
      if (!is(T.Comma)) return undefined;
      at++;
    }
    at++;
    return names;
  };
  const compRef = (): CompRef | undefined => {
    const t = identifier();
    const args = t && typeList();
    return t && args ? { name: name(t), args } : undefined;
  };
  if (kw.image === '.override') {
    const rel = identifier();
    return rel ? { item: { kind: 'override', rel: name(rel), span: joinSpans(span(kw), span(rel)) }, end: at } : fail('a relation name');
  }
  if (kw.image === '.init') {
    const instance = identifier();
    if (!instance) return fail('an instance name');
    if (!is(T.Eq)) return fail("'='");
    at++;
    const comp = compRef();
    if (!comp) return fail('a component, as in .init g = Graph<number>');
    return { item: { kind: 'init', name: name(instance), comp, span: joinSpans(span(kw), span(tokens[at - 1]!)) }, end: at };
  }
  const compName = identifier();
  const params = compName && typeList();
  if (!compName || !params) return fail('a component name, as in .comp Graph<N> { ... }');
  const bases: CompRef[] = [];
  if (is(T.Colon)) {
    do {
      at++;
      const base = compRef();
      if (!base) return fail('a base component');
      bases.push(base);
    } while (is(T.Comma));
  }
  if (!is(T.LBrace)) return fail("'{'");
  const end = afterBraces(tokens, at);
  if (tokens[end - 1]?.tokenType !== T.RBrace) {
    diagnostics.push(errorAt(`unclosed '{' of component ${compName.image}`, span(tokens[at]!)));
    return { end };
  }
  const body = parseSouffleTokens(tokens.slice(at + 1, end - 1), file);
  diagnostics.push(...body.diagnostics);
  const item: SItem = { kind: 'comp', name: name(compName), params, bases, items: body.ast.items, span: joinSpans(span(kw), span(tokens[end - 1]!)) };
  return { item, end };
}

const COMPONENT_DIRECTIVES: ReadonlySet<string> = new Set(['.comp', '.init', '.override']);

/** Parses one file's tokens: the items that parsed, and a diagnostic per broken item. */
export function parseSouffleTokens(tokens: IToken[], file: string): { ast: SouffleAst; diagnostics: Diagnostic[] } {
  shared ??= new SouffleParser(new MessageProvider(RULE_DESCRIPTIONS));
  const parser = shared;
  const items: SItem[] = [];
  const diagnostics: Diagnostic[] = [];
  let start = 0;
  while (start < tokens.length) {
    const first = tokens[start]!;
    if (first.tokenType === T.OtherDirective && first.image === '.pragma') {
      start = pragma(tokens, start, file, diagnostics);
      continue;
    }
    if (first.tokenType === T.OtherDirective && COMPONENT_DIRECTIVES.has(first.image)) {
      const { item, end } = componentItem(tokens, start, file, diagnostics);
      if (item) items.push(item);
      start = end;
      continue;
    }
    if (first.tokenType === T.OtherDirective) {
      diagnostics.push(errorAt(`the ${first.image} directive is not supported`, tokenSpan(first, file)));
      start = resumeAt(tokens, start + 1, start);
      continue;
    }
    // A component's body is parsed by a nested call: the file is set per item.
    parser.file = file;
    parser.semantic = [];
    parser.messages.offending = undefined;
    parser.input = tokens.slice(start);
    const item = parser.item();
    // Stopping before the end of the input is how an item ends, not an error.
    const rest = parser.errors.find((e) => e.name === 'NotAllInputParsedException');
    const error = parser.errors.find((e) => e.name !== 'NotAllInputParsedException');
    if (!error) {
      diagnostics.push(...parser.semantic);
      // An item with a semantic error is dropped: what it would add is unreliable.
      if (parser.semantic.length === 0) items.push(item);
      start = rest ? tokens.indexOf(rest.token, start) : tokens.length;
      continue;
    }
    const at = parser.messages.offending ?? error.token;
    // At end of input there is no token to point at: point just past the item's last token.
    const span = at.tokenType === EOF ? afterToken(tokens[tokens.length - 1]!, file) : tokenSpan(at, file);
    diagnostics.push(errorAt(error.message, span));
    start = at.tokenType === EOF ? tokens.length : resumeAt(tokens, tokens.indexOf(at, start), start);
  }
  return { ast: { file, items }, diagnostics };
}

/** Parses one file on its own (no includes are read; `#define`s apply). */
export function parseSouffle(text: string, file: string): { ast: SouffleAst; diagnostics: Diagnostic[] } {
  const diagnostics: Diagnostic[] = [];
  const { runs } = preprocess([{ path: file, text }], undefined, diagnostics);
  const items = runs.flatMap((run) => {
    const parsed = parseSouffleTokens(run.tokens, run.file);
    diagnostics.push(...parsed.diagnostics);
    return parsed.ast.items;
  });
  return { ast: { file, items }, diagnostics };
}
