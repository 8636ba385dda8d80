import fc from 'fast-check';
import { openGpu } from '@vixen/runtime';
import { DEFAULT_OPTIONS, programArb } from './generate.js';
import { checkProgram } from './differential.js';
const gpu = await openGpu();
const n = Number(process.argv[2] ?? 20);
const opts = { ...DEFAULT_OPTIONS, facts: { max: Number(process.argv[4] ?? 30) }, rules: { min: 1, max: 8 } };
const progs = fc.sample(programArb(opts), { numRuns: n, seed: Number(process.argv[3] ?? 1) });
let fails = 0; const t0 = performance.now();
for (const [i, p] of progs.entries()) {
  try { await checkProgram(gpu, p); } catch (e) { fails++; if (fails <= 4) console.log(`#${i}`, String(e).slice(0, 4000)); }
}
console.log({ fails, n, total: Math.round(performance.now() - t0) });
gpu.dispose();
