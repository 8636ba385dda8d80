import fc from 'fast-check';
import { openGpu } from '@vixen/runtime';
import { programArb, renderProgram } from './generate.js';
import { checkProgram } from './differential.js';
import { evaluate } from './oracle.js';
const gpu = await openGpu();
const n = Number(process.argv[2] ?? 20);
const progs = fc.sample(programArb(), { numRuns: n, seed: Number(process.argv[3] ?? 1) });
let fails = 0; const t0 = performance.now();
let nonEmpty = 0, rec = 0, maxMs = 0, totalIdbRows = 0;
for (const [i, p] of progs.entries()) {
  const t = performance.now();
  const o = evaluate(p);
  const idbRows = p.relations.filter(r => r.kind === 'idb').map(r => o.get(r.name)!.length);
  if (idbRows.some(x => x > 0)) nonEmpty++;
  totalIdbRows += idbRows.reduce((a, b) => a + b, 0);
  if (p.rules.some(r => r.body.some(l => l.kind === 'atom' && l.atom.rel.startsWith('p')))) rec++;
  try { await checkProgram(gpu, p); } catch (e) { fails++; if (fails <= 4) console.log(`#${i}`, String(e).slice(0, 4000)); }
  const ms = performance.now() - t; if (ms > maxMs) { maxMs = ms; }
  if (ms > 2000) console.log('slow', i, ms, idbRows);
}
console.log({ fails, n, nonEmpty, rec, maxMs: Math.round(maxMs), avgIdbRows: totalIdbRows / n, total: Math.round(performance.now() - t0) });
gpu.dispose();
