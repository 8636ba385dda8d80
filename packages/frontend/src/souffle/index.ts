/**
 * The Soufflé dialect (`.dl` files): parsed by its own parser, converted to LogiQL clauses, and from there
 * checked and lowered exactly like `.logic` files. Only `.output` relations are printed by default.
 */
import type { Diagnostic, QpProgram } from '@vixen/queryplan';
import type { SourceFile } from '../syntax/load.js';
import { expandComponents } from './components.js';
import { parseSouffleTokens } from './parser.js';
import { preprocess } from './preprocess.js';
import { lowerRecords } from './records.js';
import { toLogic, type SouffleProgram } from './to-logic.js';

export { parseSouffle } from './parser.js';
export { layoutWidth, type PrintLayout, type RecordLayouts } from './records.js';
export type { SouffleInput, SouffleIo, SouffleOutput, SouffleProgram } from './to-logic.js';

export function isSouffleFile(path: string): boolean {
  return path.endsWith('.dl');
}

/** Preprocesses (`#include`, `#define`), parses, expands components and converts Soufflé files. */
export function loadSouffle(
  files: SourceFile[],
  readFile: ((path: string) => string | undefined) | undefined,
  diagnostics: Diagnostic[],
): SouffleProgram & { sources: Map<string, string> } {
  const { runs, sources } = preprocess(files, readFile, diagnostics);
  const asts = runs.map((run) => {
    const parsed = parseSouffleTokens(run.tokens, run.file);
    diagnostics.push(...parsed.diagnostics);
    return parsed.ast;
  });
  const { asts: flat, layouts } = lowerRecords(expandComponents(asts, diagnostics), diagnostics);
  const program = toLogic(flat, diagnostics, layouts);
  if (Object.keys(layouts).length > 0) program.io.records = layouts;
  return { ...program, sources };
}

/** A relation declared in a `.dl` file is an output exactly when it is marked `.output`. */
export function souffleOutputs(plan: QpProgram, program: SouffleProgram): QpProgram {
  const relations = plan.relations.map((r) => (program.relations.has(r.name) ? { ...r, output: program.outputs.has(r.name) } : r));
  return { ...plan, relations };
}
