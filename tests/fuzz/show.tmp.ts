import fc from 'fast-check';
import { programArb } from './generate.js';
import { describeProgram } from './differential.js';
import { evaluate } from './oracle.js';
for (const p of fc.sample(programArb(), { numRuns: 4, seed: 7 })) {
  console.log(describeProgram(p));
  const o = evaluate(p);
  console.log([...o].map(([k, v]) => `${k}:${v.length}`).join(' '));
}
