/**
 * Kernel launches per program before and after the kernel-IR optimizations (issues #6, #8): the launch commands
 * of the lowered program (every optional KIR pass disabled), of the optimized one without fusion, and of
 * the default. Static counts: a launch inside a fixpoint loop counts once.
 *
 *   npx tsx scripts/kir-counts.ts [--join-strategy S] [FILE...]      (default: examples/tpch/q1..q22.logic)
 */
import { parseArgs } from 'node:util';
import { JOIN_STRATEGIES, type JoinStrategy, type KirProgram } from '@vixen/kernel-ir';
import { compileFile, compilerPasses } from '../packages/runtime/src/index.js';

/** The optional KIR passes: without them, what is left is the lowered program, scheduled and freed. */
const optimizations = compilerPasses().filter((p) => p.stage === 'KIR' && !p.required).map((p) => p.name);
const launches = (p: KirProgram): number => p.blocks.reduce((n, b) => n + b.commands.filter((c) => c.kind === 'launch').length, 0);

const { values, positionals: files } = parseArgs({ options: { 'join-strategy': { type: 'string', default: 'auto' } }, allowPositionals: true });
const joinStrategy = values['join-strategy'] as JoinStrategy;
if (!JOIN_STRATEGIES.includes(joinStrategy)) throw new Error(`--join-strategy must be one of ${JOIN_STRATEGIES.join(', ')}`);
const targets = files.length > 0 ? files : Array.from({ length: 22 }, (_, i) => `examples/tpch/q${i + 1}.logic`);
const totals = [0, 0, 0];
console.log('program\tlowered\tno-fusion\tdefault');
for (const file of targets) {
  const prog = compileFile(file, { joinStrategy });
  const counts = [
    launches(compileFile(file, { joinStrategy, passes: { disable: optimizations } }).kir),
    launches(compileFile(file, { joinStrategy, fusion: false }).kir),
    launches(prog.kir),
  ];
  counts.forEach((n, i) => (totals[i]! += n));
  console.log(`${file}\t${counts.join('\t')}`);
}
console.log(`total\t${totals.join('\t')}`);
