/**
 * Soufflé's records and ADT values in `.input` files (`[1, "a b"]`, `nil`, `$A(1, [2, c])`, `$B`), read as its
 * ReadStream reads them and turned into the flattened columns the front end lays records out in (records.ts):
 * a tag, then the fields; a branch index, then every branch's fields, absent ones at 0 or "". The texts come
 * back per column, to be converted and checked like any other field.
 */
import { layoutWidth, type PrintLayout } from '@vixen/frontend';
import type { ScalarType } from '@vixen/queryplan';

/** A record that does not parse: what was expected. */
class RecordSyntaxError extends Error {}

const NUMBER = /^[+-]?(?:0[xX][0-9a-fA-F]+|0[bB][01]+|(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?|nan|inf)/;

class Reader {
  pos = 0;
  constructor(
    private readonly text: string,
    private readonly types: readonly (ScalarType | undefined)[],
  ) {}

  private space(): void {
    while (this.pos < this.text.length && /\s/.test(this.text[this.pos]!)) this.pos++;
  }

  private expect(c: string): void {
    this.space();
    if (this.text[this.pos] !== c) {
      const found = this.pos < this.text.length ? `'${this.text[this.pos]}'` : 'the end of the field';
      throw new RecordSyntaxError(`expected '${c}', found ${found}`);
    }
    this.pos++;
  }

  /** The columns of one value of layout `l`, whose first column is `column`. */
  value(l: PrintLayout, column: number, stop: string, out: string[]): void {
    this.space();
    switch (l.kind) {
      case 'value':
        return void out.push(this.types[column] === 'string' ? this.symbol(stop) : this.number());
      case 'record': {
        if (this.text.startsWith('nil', this.pos)) {
          this.pos += 3;
          return this.defaults(column, layoutWidth(l), out);
        }
        this.expect('[');
        out.push('1');
        let next = column + 1;
        l.fields.forEach((f, i) => {
          if (i > 0) this.expect(',');
          this.value(f, next, ',]', out);
          next += layoutWidth(f);
        });
        return this.expect(']');
      }
      case 'adt': {
        this.expect('$');
        const name = /^[A-Za-z0-9_?.]*/.exec(this.text.slice(this.pos))![0];
        const index = l.branches.findIndex((b) => b.name === name);
        if (index < 0) throw new RecordSyntaxError(`expected a branch ($${l.branches.map((b) => b.name).join(', $')}), found $${name}`);
        this.pos += name.length;
        out.push(String(index));
        let next = column + 1;
        l.branches.forEach((b, j) => {
          const width = b.fields.reduce((n, f) => n + layoutWidth(f), 0);
          if (j !== index) this.defaults(next, width, out);
          else if (b.fields.length > 0) {
            this.expect('(');
            let at = next;
            b.fields.forEach((f, i) => {
              if (i > 0) this.expect(',');
              this.value(f, at, ',)', out);
              at += layoutWidth(f);
            });
            this.expect(')');
          }
          next += width;
        });
      }
    }
  }

  private defaults(column: number, width: number, out: string[]): void {
    for (let i = column; i < column + width; i++) out.push(this.types[i] === 'string' ? '' : '0');
  }

  /** A double-quoted symbol with backslash escapes, or the text up to one of `stop`. */
  private symbol(stop: string): string {
    if (this.text[this.pos] === '"') {
      let s = '';
      for (let i = this.pos + 1; i < this.text.length; i++) {
        const c = this.text[i]!;
        if (c === '\\' && i + 1 < this.text.length) s += this.text[++i];
        else if (c === '"') {
          this.pos = i + 1;
          return s;
        } else s += c;
      }
      throw new RecordSyntaxError('unterminated quoted symbol');
    }
    let end = this.pos;
    while (end < this.text.length && !stop.includes(this.text[end]!)) end++;
    if (end === this.text.length) throw new RecordSyntaxError(`expected one of ${[...stop].map((c) => `'${c}'`).join(', ')} after the symbol`);
    const s = this.text.slice(this.pos, end);
    this.pos = end;
    return s;
  }

  private number(): string {
    const m = NUMBER.exec(this.text.slice(this.pos));
    if (!m) throw new RecordSyntaxError('expected a number');
    this.pos += m[0].length;
    return m[0];
  }

  end(): void {
    this.space();
    if (this.pos < this.text.length) throw new RecordSyntaxError(`unexpected text after the value: ${this.text.slice(this.pos, this.pos + 20)}`);
  }
}

/** Whether `text` closes every bracket it opens (outside quotes): a record split at a delimiter inside it does not. */
function balanced(text: string): boolean {
  let depth = 0;
  let quoted = false;
  for (let i = 0; i < text.length; i++) {
    const c = text[i]!;
    if (quoted) {
      if (c === '\\') i++;
      else if (c === '"') quoted = false;
    } else if (c === '"') quoted = true;
    else if (c === '[' || c === '(') depth++;
    else if (c === ']' || c === ')') depth--;
  }
  return depth <= 0 && !quoted;
}

/**
 * The flattened fields of one line of a relation with record attributes: `fields` as split at `delimiter`
 * (fields of a record holding the delimiter are joined again), each attribute of `layout` read from its field.
 * `types` are the flattened columns' types. Throws RecordSyntaxError naming the attribute's field index.
 */
export function souffleRecordFields(fields: string[], delimiter: string, layout: readonly PrintLayout[], types: readonly (ScalarType | undefined)[]): string[] {
  const joined: string[] = [];
  for (const f of fields) {
    const last = joined.length - 1;
    if (last >= 0 && layout[last]?.kind !== 'value' && !balanced(joined[last]!)) joined[last] += delimiter + f;
    else joined.push(f);
  }
  if (joined.length !== layout.length) throw new RecordFieldError(`expected ${layout.length} fields, found ${joined.length}`, Math.min(layout.length, joined.length - 1));
  const out: string[] = [];
  let column = 0;
  joined.forEach((text, i) => {
    const l = layout[i]!;
    if (l.kind === 'value') out.push(text);
    else {
      const reader = new Reader(text, types);
      try {
        reader.value(l, column, '', out);
        reader.end();
      } catch (e) {
        if (e instanceof RecordSyntaxError) throw new RecordFieldError(e.message, i);
        throw e;
      }
    }
    column += layoutWidth(l);
  });
  return out;
}

/** A record field of a line that does not parse, with the index of its field on the line. */
export class RecordFieldError extends Error {
  constructor(
    message: string,
    readonly field: number,
  ) {
    super(message);
  }
}
