/**
 * The Soufflé dialect (`.dl` files): parsed by its own parser, converted to LogiQL clauses, and from there
 * checked and lowered exactly like `.logic` files. Only `.output` relations are printed by default.
 */
import type { Diagnostic, QpProgram } from '@vixen/queryplan';
import type { SourceFile } from '../syntax/load.js';
import { parseSouffle } from './parser.js';
import { toLogic, type SouffleProgram } from './to-logic.js';

export { parseSouffle } from './parser.js';
export type { SouffleProgram } from './to-logic.js';

export function isSouffleFile(path: string): boolean {
  return path.endsWith('.dl');
}

/** Parses and converts `.dl` files (Soufflé has no includes: the C preprocessor's are not run). */
export function loadSouffle(files: SourceFile[], diagnostics: Diagnostic[]): SouffleProgram & { sources: Map<string, string> } {
  const asts = files.map((f) => {
    const parsed = parseSouffle(f.text, f.path);
    diagnostics.push(...parsed.diagnostics);
    return parsed.ast;
  });
  return { ...toLogic(asts, diagnostics), sources: new Map(files.map((f) => [f.path, f.text])) };
}

/** A relation declared in a `.dl` file is an output exactly when it is marked `.output`. */
export function souffleOutputs(plan: QpProgram, program: SouffleProgram): QpProgram {
  const relations = plan.relations.map((r) => (program.relations.has(r.name) ? { ...r, output: program.outputs.has(r.name) } : r));
  return { ...plan, relations };
}
