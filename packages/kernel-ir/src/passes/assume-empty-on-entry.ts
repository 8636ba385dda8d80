/**
 * Records which relations the program assumes empty when it starts (`KirProgram.emptyOnEntry`, see
 * analysis/properties.ts): the property analysis of the passes after it starts from there, and the runtime refuses
 * rows for those relations. Without it nothing is assumed empty, and fewer kernels are found redundant.
 */
import { emptyOnEntry } from '../analysis/properties.js';
import type { KirPass, KirPassContext } from '../compile.js';
import type { KirProgram } from '../ir.js';

export const assumeEmptyOnEntry = { name: 'assume-empty-on-entry', required: false, run } satisfies KirPass;

function run(p: KirProgram, ctx: KirPassContext): KirProgram {
  return { ...p, emptyOnEntry: emptyOnEntry(p, ctx.seeded) };
}
