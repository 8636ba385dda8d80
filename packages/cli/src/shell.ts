/**
 * `vixen shell`: an interactive session over one device. Declarations, facts and rules typed in are checked at
 * once (an error is shown at its column and the clause is not kept); `?- body.` asks a query and prints its answer
 * with its time. With a facts directory the base relations stay resident on the device between queries (runtime
 * Database), so each query pays only for its own kernels.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { join } from 'node:path';
import { createInterface, type Completer } from 'node:readline';
import type { Readable } from 'node:stream';
import { parse, type SourceFile } from '@vixen/frontend';
import { printKir } from '@vixen/kernel-ir';
import { isInternalName, printPlan, renderDiagnostics, VixenError, type RelationDecl } from '@vixen/queryplan';
import { locateFileFacts, readTextFile } from '@vixen/io';
import { compile, Database, DeviceFault, openGpu, RunLimitError, type Gpu, type Program, type RunResult } from '@vixen/runtime';
import { ConstraintViolations, renderResults, writeOutputDir } from './format.js';
import { formatProfile, missingFactsWarning } from './report.js';

export interface ShellOptions {
  input: Readable;
  out: (s: string) => void;
  err: (s: string) => void;
  /** A program to start from (its declarations, facts and rules). */
  file?: string;
  /** Facts directory of the base relations, which then stay resident on the device. */
  factsDir?: string;
  backend?: 'auto' | 'vulkan' | 'opengles';
  /** Show prompts and offer completion (a terminal). */
  interactive: boolean;
}

const SHELL_FILE = '<shell>';

const HELP = `Type declarations, facts and rules, ending each clause with '.'; they are checked and kept.
?- body.       ask a query, e.g. ?- path(1, x).  (prints the values of its variables)
.plan          the query plan of the last query (or of the program)
.kernels       its kernel IR
.profile       turn per-kernel profiles of queries on or off
.load DIR      read base relations from DIR (they stay on the device)
.save DIR      write every derived relation to DIR/<relation>.csv
.help          this text
.quit          leave (or end of input)
`;

const COMMANDS = ['.help', '.plan', '.kernels', '.profile', '.load', '.save', '.quit'];

/** Completions of the word before the cursor: dot commands at the start of a line, else relation names. */
export function completions(names: readonly string[], line: string): [string[], string] {
  const word = /(^\.\w*|[A-Za-z_][A-Za-z0-9_:]*)$/.exec(line)?.[0] ?? '';
  const pool = word.startsWith('.') ? COMMANDS : names;
  return [pool.filter((n) => n.startsWith(word)), word];
}

/** Variables of a query body in order of first appearance (`_` is none). */
function queryVariables(body: string): string[] {
  const { ast, diagnostics } = parse(`q_(0) <- ${body}.`, SHELL_FILE);
  if (diagnostics.length > 0) return [];
  const found: Array<{ name: string; at: number }> = [];
  const walk = (node: unknown): void => {
    if (Array.isArray(node)) node.forEach(walk);
    else if (node && typeof node === 'object') {
      const n = node as { kind?: string; name?: string; span?: { start: { offset: number } } };
      if (n.kind === 'var' && n.name && n.span) found.push({ name: n.name, at: n.span.start.offset });
      else for (const [k, v] of Object.entries(node)) if (k !== 'span') walk(v);
    }
  };
  walk(ast.clauses);
  return [...new Set(found.sort((a, b) => a.at - b.at).map((f) => f.name))];
}

/** A clause is complete when its text (comments aside) ends with '.'. */
const complete = (text: string): boolean => /\.\s*$/.test(text.replace(/\/\/[^"\n]*$/gm, ''));

class Session {
  private base: SourceFile[] = [];
  /** Clauses typed in so far that checked. */
  private typed = '';
  /** The session's program as checked last (its relation names complete and may not name a query). */
  private program: Program;
  /** The program of the last query (else the session's), for .plan and .kernels. */
  private last: Program;
  private profile = false;
  private db: Database | undefined;
  /** Base relations already named as having no facts. */
  private readonly warned = new Set<string>();

  constructor(
    /** Replaced by a new device when the device fails (see run). */
    public gpu: Gpu,
    private readonly options: ShellOptions,
  ) {
    if (options.file) this.base = [{ path: options.file, text: readTextFile(options.file, 'program file') }];
    if (options.factsDir) this.db = new Database(gpu, options.factsDir);
    this.program = this.last = compile(this.files(''));
  }

  get names(): string[] {
    return this.program.relations.map((r) => r.name).filter((n) => !isInternalName(n));
  }

  private files(extra: string): SourceFile[] {
    return [...this.base, { path: SHELL_FILE, text: this.typed + extra }];
  }

  /** Handles one complete statement; user errors are shown and the session goes on. */
  async statement(text: string): Promise<boolean> {
    const { err } = this.options;
    try {
      if (text.startsWith('.')) return await this.command(text);
      if (text.startsWith('?-')) await this.query(text.slice(2).trim().replace(/\.\s*$/, ''));
      else {
        // Kept only when the whole program still compiles with it.
        this.program = this.last = compile(this.files(text + '\n'));
        this.typed += text + '\n';
      }
    } catch (e) {
      if (e instanceof VixenError || e instanceof RunLimitError) err(renderDiagnostics(e.diagnostics, e.sources) + '\n');
      else if (e instanceof ConstraintViolations) err(e.message);
      else throw e;
    }
    return true;
  }

  private async command(line: string): Promise<boolean> {
    const { out, err } = this.options;
    const [name, ...rest] = line.split(/\s+/);
    const arg = rest.join(' ').trim();
    switch (name) {
      case '.help':
        out(HELP);
        return true;
      case '.quit':
      case '.exit':
        return false;
      case '.plan':
        out(printPlan(this.last.plan!) + '\n');
        return true;
      case '.kernels':
        out(printKir(this.last.kir) + '\n');
        return true;
      case '.profile':
        this.profile = !this.profile;
        out(`profile ${this.profile ? 'on' : 'off'}\n`);
        return true;
      case '.load':
        if (!arg) throw new VixenError({ severity: 'error', message: '.load needs a facts directory' });
        this.db?.clear();
        this.db = new Database(this.gpu, arg);
        out(`base relations now come from ${arg}\n`);
        return true;
      case '.save': {
        if (!arg) throw new VixenError({ severity: 'error', message: '.save needs a directory' });
        const prog = compile(this.files(''));
        const result = await this.run(prog, prog.outputNames);
        for (const path of writeOutputDir(arg, result.tables, new Map(prog.relations.map((r) => [r.name, r])))) err(`wrote ${path}\n`);
        return true;
      }
      default:
        err(`error: unknown command ${name}; .help lists them\n`);
        return true;
    }
  }

  private async query(body: string): Promise<void> {
    const taken = new Set(this.names);
    let head = 'query';
    for (let i = 1; taken.has(head); i++) head = `query_${i}`;
    const vars = queryVariables(body);
    // A query without variables asks whether the body holds.
    const rule = vars.length > 0 ? `${head}(${vars.join(', ')}) <- ${body}.` : `${head}(yes) <- ${body}, yes = 1.`;
    const prog = compile(this.files(rule + '\n'), { outputs: [head] });
    this.last = prog;
    const start = performance.now();
    const result = await this.run(prog, [head]);
    const ms = performance.now() - start;
    const table = result.tables.get(head)!;
    const decls = new Map<string, RelationDecl>(prog.relations.map((r) => [r.name, r]));
    if (vars.length > 0) renderResults('table', result.tables, decls, this.options.out);
    else this.options.out(table.size > 0 ? 'yes\n' : 'no\n');
    this.options.out(`(${table.size} row${table.size === 1 ? '' : 's'}, ${ms.toFixed(1)} ms)\n`);
    if (this.profile) this.options.err(formatProfile(result.stats, prog.plan));
  }

  /** Runs `prog` on the session's facts; violated constraints are the answer instead (ConstraintViolations). */
  private async newDevice(): Promise<void> {
    this.gpu.dispose();
    this.gpu = await openGpu(this.options.backend ? { backend: this.options.backend } : {});
    if (this.db) this.db = new Database(this.gpu, this.db.factsDir);
    this.options.err(`the device failed: opened a new one (${this.gpu.adapterName})\n`);
  }

  private async run(prog: Program, outputs: readonly string[]): Promise<RunResult> {
    const options = { outputs, profile: this.profile };
    let result: RunResult;
    try {
      if (this.db) result = await this.db.run(prog, options);
      else {
        // Each base relation without facts is named once a session.
        const unwarned = prog.relationsWithoutFacts({}).filter((r) => !this.warned.has(r));
        for (const r of unwarned) this.warned.add(r);
        this.options.err(missingFactsWarning(unwarned));
        result = await prog.run({ ...options, gpu: this.gpu });
      }
    } catch (e) {
      // A failed (or lost) device runs nothing more: the session goes on with a new one, its facts loaded again.
      if (e instanceof DeviceFault && e.failsDevice) await this.newDevice();
      throw e;
    }
    if (result.violations.length === 0) return result;
    const violations = this.db ? await locateFileFacts(result.violations, prog.relations, this.db.factsDir) : result.violations;
    throw new ConstraintViolations(violations, new Map(prog.relations.map((r) => [r.name, r])));
  }
}

/** Lines typed in terminal sessions, oldest first, kept across sessions. */
const HISTORY_FILE = join(homedir(), '.vixen_history');
const HISTORY_LINES = 1000;

/** The saved history, newest first (as readline keeps it); none when there is no file yet. */
function readHistory(): string[] {
  try {
    return readFileSync(HISTORY_FILE, 'utf8').split('\n').filter((l) => l.length > 0).reverse().slice(0, HISTORY_LINES);
  } catch {
    return [];
  }
}

/** Runs a session until `.quit` or the end of input. */
export async function runShell(options: ShellOptions): Promise<void> {
  const gpu = await openGpu(options.backend ? { backend: options.backend } : {});
  let session: Session;
  try {
    session = new Session(gpu, options);
  } catch (e) {
    gpu.dispose();
    throw e;
  }
  try {
    const completer: Completer = (line) => completions(session.names, line);
    const rl = createInterface({
      input: options.input,
      ...(options.interactive ? { output: process.stdout, completer, terminal: true, history: readHistory(), historySize: HISTORY_LINES } : { terminal: false }),
    });
    // Kept for the next session; a history file that cannot be written costs only the history.
    rl.on('history', (history: string[]) => {
      try {
        writeFileSync(HISTORY_FILE, [...history].reverse().join('\n') + '\n');
      } catch {
        /* the session goes on */
      }
    });
    const prompt = (more: boolean) => {
      if (!options.interactive) return;
      rl.setPrompt(more ? '   ...> ' : 'vixen> ');
      rl.prompt();
    };
    if (options.interactive) options.out(`vixen shell on ${session.gpu.adapterName}; .help for help\n`);
    prompt(false);
    let pending = '';
    for await (const line of rl) {
      const text = pending ? `${pending}\n${line}` : line;
      if (!pending && text.trim() === '') {
        prompt(false);
        continue;
      }
      if (!text.trimStart().startsWith('.') && !complete(text)) {
        pending = text;
        prompt(true);
        continue;
      }
      pending = '';
      if (!(await session.statement(text.trim()))) break;
      prompt(false);
    }
    rl.close();
    if (pending.trim() !== '') options.err(`error: input ended inside a clause (no '.' after it): ${pending.trim()}\n`);
  } finally {
    session.gpu.dispose();
  }
}
