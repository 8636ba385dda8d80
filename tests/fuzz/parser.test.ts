/**
 * Parser fuzzing: random strings, token soup and mutated golden programs. `compile` must either succeed or
 * throw a VixenError whose diagnostics all carry spans inside the source; never another exception, never a
 * hang. Each input is compiled in a worker thread and time-boxed, so a hang fails the test with its input.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { Worker } from 'node:worker_threads';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import type { Diagnostic, SourcePosition } from '@vixen/queryplan';

type CompileOutcome = { kind: 'ok' } | { kind: 'vixen'; diagnostics: Diagnostic[] } | { kind: 'crash'; error: string };

const FILE = 'fuzz.logic';
const TIME_BOX_MS = 5_000;
const SEED = 4242;

/** One worker compiles inputs one at a time; a timed-out worker is replaced. */
class BoxedCompiler {
  private worker!: Worker;
  /** Resolves once the worker has loaded the compiler: loading does not count against the time box. */
  private ready!: Promise<void>;
  private next = 0;

  constructor() {
    this.start();
  }

  private start(): void {
    this.worker = new Worker(new URL('./compile-worker.mjs', import.meta.url));
    this.ready = new Promise((resolve, reject) => {
      this.worker.once('message', () => resolve());
      this.worker.once('error', reject);
    });
  }

  async compile(source: string): Promise<CompileOutcome | 'timeout'> {
    await this.ready;
    const id = this.next++;
    return new Promise((resolve, reject) => {
      const onMessage = (m: { id: number; outcome: CompileOutcome }): void => {
        if (m.id !== id) return;
        clearTimeout(timer);
        this.worker.off('message', onMessage);
        this.worker.off('error', reject);
        resolve(m.outcome);
      };
      const timer = setTimeout(() => {
        this.worker.off('message', onMessage);
        this.worker.off('error', reject);
        void this.worker.terminate();
        this.start();
        resolve('timeout');
      }, TIME_BOX_MS);
      this.worker.on('message', onMessage);
      this.worker.once('error', reject);
      this.worker.postMessage({ id, source, filename: FILE });
    });
  }

  close(): Promise<number> {
    return this.worker.terminate();
  }
}

/** Line starts as chevrotain counts lines (`\n`, `\r\n`, `\r`). */
function lineStarts(text: string): number[] {
  const starts = [0];
  for (const m of text.matchAll(/\r\n?|\n/g)) starts.push(m.index + m[0].length);
  return starts;
}

/**
 * What is wrong with a position, or undefined. An exclusive end may sit one column past its line's last
 * character (or past the end of the text, for the one-column caret of "found end of input").
 */
function badPosition(text: string, starts: number[], p: SourcePosition, exclusiveEnd: boolean): string | undefined {
  const slack = exclusiveEnd ? 1 : 0;
  const limit = text.length + slack;
  if (!(p.offset >= 0 && p.offset <= limit)) return `offset ${p.offset} outside 0..${limit}`;
  if (!(p.line >= 1 && p.line <= starts.length)) return `line ${p.line} outside 1..${starts.length}`;
  // A line's columns run up to its line break (inclusive); the last line's up to the end of the text.
  const lineStart = starts[p.line - 1]!;
  const nextLine = p.line < starts.length ? starts[p.line]! : text.length + 1;
  const offset = lineStart + p.column - 1;
  if (!(p.column >= 1 && offset < nextLine + slack)) return `column ${p.column} outside line ${p.line}`;
  if (offset !== p.offset) return `line ${p.line} column ${p.column} is offset ${offset}, not ${p.offset}`;
  return undefined;
}

/** Problems with a compile outcome: a crash, a timeout, or a diagnostic without a valid span. */
function problems(source: string, outcome: CompileOutcome | 'timeout'): string[] {
  if (outcome === 'timeout') return [`compile did not finish within ${TIME_BOX_MS} ms`];
  if (outcome.kind === 'crash') return [`non-VixenError exception: ${outcome.error}`];
  if (outcome.kind === 'ok') return [];
  if (outcome.diagnostics.length === 0) return ['VixenError without diagnostics'];
  const starts = lineStarts(source);
  const out: string[] = [];
  for (const d of outcome.diagnostics) {
    const where = `diagnostic "${d.message}"`;
    if (!d.span) {
      out.push(`${where} has no span`);
      continue;
    }
    if (d.span.file !== FILE) out.push(`${where} names file ${d.span.file}`);
    const s = badPosition(source, starts, d.span.start, false);
    const e = badPosition(source, starts, d.span.end, true);
    if (s) out.push(`${where}: start ${s}`);
    if (e) out.push(`${where}: end ${e}`);
    if (!s && !e && d.span.end.offset < d.span.start.offset) out.push(`${where}: end before start`);
    if (d.span.end.offset > source.length && d.span.end.offset !== d.span.start.offset + 1) out.push(`${where}: end past the input`);
  }
  return out;
}

// ---------------------------------------------------------------- inputs

const casesDir = join(import.meta.dirname, '..', 'cases');
const goldens = readdirSync(casesDir)
  .sort()
  .map((c) => readFileSync(join(casesDir, c, 'program.logic'), 'utf8'));

/** Tokens of the language, valid and broken, so soups get past the lexer into the parser and checks. */
const TOKENS = [
  ...['p', 'q', 'edge', 'path', 'x', 'y', 'z', '_', 'string:length', 'int32', 'int64', 'string', 'uint32', 'decimal'],
  ...['include', 'order', 'by', 'limit', 'agg', 'asc', 'desc', 'count', 'sum', 'date:parse'],
  ...['0', '42', '-7', '3.25', '1e-3', '42u', '42L', '19.99d', '2147483648', '99999999999999999999', '9223372036854775808L'],
  ...['"a"', '"quo\\"te"', '"\\n"', '"\\q"', '"unclosed', '"ü 😀"', '""'],
  ...['->', '<-', '<<', '>>', '<=', '>=', '!=', '<', '>', '=', '!', '(', ')', '[', ']', ',', ';', '.', '+', '-', '*', '/', '%'],
  ...['// c\n', '/* c */', '/* unclosed', ' ', '\n', '\r\n', '\r', '\t'],
];
const token = fc.constantFrom(...TOKENS);
const soup = fc.array(token, { maxLength: 40 }).map((ts) => ts.join(''));
const spacedSoup = fc.array(token, { maxLength: 40 }).map((ts) => ts.join(' '));
const SPECIAL_CHARS = [...'()[],.;:_-<>=!"\\/*%+ \n\r\t\u00a0\u2028\u0000\uFEFF😀ü'];
const randomText = fc.oneof(
  fc.string({ unit: 'binary', maxLength: 60 }),
  fc.string({ unit: fc.constantFrom(...SPECIAL_CHARS, ...'abxyzLu0179'), maxLength: 60 }),
);

type Mutation =
  | { kind: 'delete'; at: number; length: number }
  | { kind: 'insert'; at: number; text: string }
  | { kind: 'swap'; at: number; other: number }
  | { kind: 'duplicate'; at: number; length: number };

const mutation: fc.Arbitrary<Mutation> = fc.oneof(
  fc.record({ kind: fc.constant('delete' as const), at: fc.nat(), length: fc.integer({ min: 1, max: 8 }) }),
  fc.record({ kind: fc.constant('insert' as const), at: fc.nat(), text: fc.oneof(token, fc.constantFrom(...SPECIAL_CHARS)) }),
  fc.record({ kind: fc.constant('swap' as const), at: fc.nat(), other: fc.nat() }),
  fc.record({ kind: fc.constant('duplicate' as const), at: fc.nat(), length: fc.integer({ min: 1, max: 20 }) }),
);

/** Applies a mutation at character positions (modulo the length); swaps exchange two characters. */
function mutate(text: string, m: Mutation): string {
  const n = text.length;
  const at = n === 0 ? 0 : m.at % (n + 1);
  switch (m.kind) {
    case 'delete':
      return text.slice(0, at) + text.slice(at + m.length);
    case 'insert':
      return text.slice(0, at) + m.text + text.slice(at);
    case 'swap': {
      if (n < 2) return text;
      const [i, j] = [at % n, m.other % n].sort((a, b) => a - b) as [number, number];
      return text.slice(0, i) + text[j] + text.slice(i + 1, j) + text[i] + text.slice(j + 1);
    }
    case 'duplicate':
      return text.slice(0, at + m.length) + text.slice(at, at + m.length) + text.slice(at + m.length);
  }
}

/** Token-level mutation: split into tokens and whitespace, then delete/duplicate/swap whole tokens. */
function tokenMutate(text: string, ops: { op: number; at: number; other: number }[]): string {
  const parts = text.match(/"(?:[^"\\\n]|\\.)*"|[A-Za-z_][A-Za-z0-9_:]*|[0-9.]+[uLd]?|->|<-|<=|>=|!=|\s+|./gs) ?? [];
  for (const { op, at, other } of ops) {
    if (parts.length === 0) break;
    const i = at % parts.length;
    const j = other % parts.length;
    if (op === 0) parts.splice(i, 1);
    else if (op === 1) parts.splice(i, 0, parts[j]!);
    else [parts[i], parts[j]] = [parts[j]!, parts[i]!];
  }
  return parts.join('');
}

const mutatedGolden = fc.oneof(
  fc.tuple(fc.constantFrom(...goldens), fc.array(mutation, { minLength: 1, maxLength: 4 })).map(([g, ms]) => ms.reduce(mutate, g)),
  fc
    .tuple(fc.constantFrom(...goldens), fc.array(fc.record({ op: fc.nat({ max: 2 }), at: fc.nat(), other: fc.nat() }), { minLength: 1, maxLength: 4 }))
    .map(([g, ops]) => tokenMutate(g, ops)),
);

// ---------------------------------------------------------------- tests

let compiler: BoxedCompiler;
beforeAll(() => {
  compiler = new BoxedCompiler();
});
afterAll(async () => {
  await compiler?.close();
});

type Tally = Record<CompileOutcome['kind'], number>;

/** Runs the property over `input`; returns how the compiles ended, so tests can see they were not vacuous. */
async function check(input: fc.Arbitrary<string>, runs: number, seed: number): Promise<Tally> {
  const tally: Tally = { ok: 0, vixen: 0, crash: 0 };
  await fc.assert(
    fc.asyncProperty(input, async (source) => {
      const outcome = await compiler.compile(source);
      const found = problems(source, outcome);
      if (found.length > 0) throw new Error(`${found.join('\n')}\n--- input (JSON) ---\n${JSON.stringify(source)}`);
      if (outcome !== 'timeout') tally[outcome.kind]++;
    }),
    { seed, numRuns: runs },
  );
  return tally;
}

describe('parser fuzzing', () => {
  test('golden programs compile cleanly in the worker', async () => {
    for (const g of goldens) expect(await compiler.compile(g)).toEqual({ kind: 'ok' });
  });
  test('random strings', async () => {
    const tally = await check(randomText, 2000, SEED);
    expect(tally.vixen).toBeGreaterThan(1000);
  });
  test('token soup', async () => {
    const tally = await check(fc.oneof(soup, spacedSoup), 3000, SEED + 1);
    expect(tally.vixen).toBeGreaterThan(1000);
  });
  test('mutated golden programs', async () => {
    // Many mutations keep the program valid (inside comments, duplicated rules); many break it.
    const tally = await check(mutatedGolden, 5000, SEED + 2);
    expect(tally.ok).toBeGreaterThan(250);
    expect(tally.vixen).toBeGreaterThan(2500);
  });
});
