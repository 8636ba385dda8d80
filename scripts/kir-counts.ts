/**
 * Kernel launches per program before and after the kernel-IR optimizations (issues #6, #8): the launch commands
 * of the lowered program (as planToKernels gave before the passes), of the optimized one without fusion, and of
 * the default. Static counts: a launch inside a fixpoint loop counts once.
 *
 *   npx tsx scripts/kir-counts.ts [FILE...]      (default: examples/tpch/q1..q22.logic)
 */
import { insertFrees, lowerPlan, pipeline, scheduleBlocks, type KirProgram } from '@vixen/kernel-ir';
import { compileFile } from '../packages/runtime/src/index.js';

const launches = (p: KirProgram): number => p.blocks.reduce((n, b) => n + b.commands.filter((c) => c.kind === 'launch').length, 0);

const files = process.argv.slice(2);
const targets = files.length > 0 ? files : Array.from({ length: 22 }, (_, i) => `examples/tpch/q${i + 1}.logic`);
const totals = [0, 0, 0];
console.log('program\tlowered\tno-fusion\tdefault');
for (const file of targets) {
  const prog = compileFile(file);
  const counts = [
    launches(pipeline(scheduleBlocks, insertFrees)(lowerPlan(prog.plan!))),
    launches(compileFile(file, { fusion: false }).kir),
    launches(prog.kir),
  ];
  counts.forEach((n, i) => (totals[i]! += n));
  console.log(`${file}\t${counts.join('\t')}`);
}
console.log(`total\t${totals.join('\t')}`);
