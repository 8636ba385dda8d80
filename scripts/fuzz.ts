/**
 * Differential fuzzing for a while: `pnpm exec tsx scripts/fuzz.ts --minutes N [--seed S] [--verbose] [--long-loops]`.
 * Runs the property of tests/fuzz/differential.test.ts in batches with seeds S, S+1, ... (S random by
 * default) until the time is up (odd seeds: programs recursing through min or max), and prints every mismatch
 * with its shrunk program. Exits 1 on mismatches.
 * `--verbose` prints every program tried. `--long-loops` generates long thin loops: base relations that are chains of
 * up to 300 links, so fixpoints run hundreds of iterations of small deltas (batched loop control, issue 44).
 */
import { parseArgs } from 'node:util';
import fc from 'fast-check';
import { openGpu } from '@vixen/runtime';
import { differentialProperty, LONG_LOOP, type FuzzStats } from '../tests/fuzz/differential.js';
import { LONG_LOOP_OPTIONS, renderProgram, type GenProgram } from '../tests/fuzz/generate.js';

const BATCH = 100;

const { values } = parseArgs({
  options: {
    minutes: { type: 'string', default: '1' },
    seed: { type: 'string' },
    verbose: { type: 'boolean', default: false },
    'long-loops': { type: 'boolean', default: false },
  },
});
const minutes = Number(values.minutes);
if (!(minutes > 0)) throw new Error(`--minutes must be a positive number, got ${values.minutes}`);
const firstSeed = values.seed !== undefined ? Number(values.seed) : Math.floor(Math.random() * 2 ** 31);
if (!Number.isSafeInteger(firstSeed)) throw new Error(`--seed must be an integer, got ${values.seed}`);

// Mesa's EGL needs this to run headless (vitest.config.ts sets it for the tests).
process.env['EGL_PLATFORM'] ??= 'surfaceless';
const gpu = await openGpu();
const deadline = Date.now() + minutes * 60_000;
console.log(`fuzzing for ${minutes} min on ${gpu.adapterName}, seeds from ${firstSeed}`);

const stats: FuzzStats = { programs: 0 };
const onProgram = values.verbose ? (p: GenProgram) => console.log(`--- program ${stats.programs}\n${renderProgram(p)}`) : undefined;
let tried = 0;
const mismatches: { seed: number; path: string | null; first: string }[] = [];
try {
  for (let seed = firstSeed; Date.now() < deadline; seed++) {
    // Every other batch: programs recursing through min or max, unless --long-loops asks for long thin loops.
    const lattice = !values['long-loops'] && seed % 2 === 1;
    const generator = values['long-loops'] ? { generator: LONG_LOOP_OPTIONS } : { lattice };
    const result = await fc.check(differentialProperty(gpu, stats, { ...generator, ...(onProgram ? { onProgram } : {}) }), {
      seed,
      numRuns: BATCH,
      interruptAfterTimeLimit: Math.max(1, deadline - Date.now()),
      markInterruptAsFailure: false,
    });
    tried += result.numRuns;
    if (result.failed) {
      // The property's error names the shrunk program and its facts.
      const error = result.errorInstance instanceof Error ? result.errorInstance.message : String(result.errorInstance);
      mismatches.push({ seed, path: result.counterexamplePath, first: error.split('\n')[0]! });
      console.log(`\n=== MISMATCH (seed ${seed}, path ${result.counterexamplePath}, shrunk ${result.numShrinks} times) ===\n${error}`);
    }
    console.log(`seed ${seed}${lattice ? ' (min/max recursion)' : ''}: ${result.numRuns} programs${result.interrupted ? ' (time up)' : ''}; ${tried} tried, ${mismatches.length} mismatches`);
  }
} finally {
  gpu.dispose();
}
console.log(
  `\ndone: ${tried} programs tried (${stats.programs} checked, shrinking included; ${stats.longLoops ?? 0} with a loop of ${LONG_LOOP}+ iterations, ${stats.inKernel ?? 0} with in-kernel iterations), ${mismatches.length} mismatches`,
);
for (const m of mismatches) console.log(`  seed ${m.seed} path ${m.path}: ${m.first}`);
process.exitCode = mismatches.length > 0 ? 1 : 0;
