import { expect } from 'vitest';
import type { QpProgram } from '@vixen/queryplan';
import { compileLogic, type FrontendOptions } from '../src/index.js';

export interface Located {
  message: string;
  file?: string;
  line?: number;
  column?: number;
}

/** Diagnostics of a one-file program, as message and position. */
export function errors(text: string, options?: FrontendOptions): Located[] {
  const r = compileLogic([{ path: 'main.logic', text }], options);
  expect(r.plan).toBeUndefined();
  return r.diagnostics.map((d) => ({ message: d.message, file: d.span?.file, line: d.span?.start.line, column: d.span?.start.column }));
}

/** Asserts exactly one diagnostic containing `message` at line:column. */
export function expectError(text: string, message: string, line: number, column: number, options?: FrontendOptions): void {
  const found = errors(text, options);
  expect(found).toHaveLength(1);
  expect(found[0]!.message).toContain(message);
  expect([found[0]!.line, found[0]!.column]).toEqual([line, column]);
}

export function plan(text: string): QpProgram {
  const r = compileLogic([{ path: 'main.logic', text }]);
  expect(r.diagnostics).toEqual([]);
  return r.plan!;
}

/** `p` without the commands' rule origins, for tests that compare commands exactly. */
export function withoutOrigins(p: QpProgram): QpProgram {
  return { ...p, blocks: p.blocks.map((b) => ({ ...b, commands: b.commands.map(({ rules: _, ...c }) => c) })) };
}
