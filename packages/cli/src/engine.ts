/**
 * What the CLI's commands run, imported by cli.ts on first use: `vixen --help` and command-line errors load only
 * commander, zod and the command definitions, not the compiler, Dawn and the readers (about 1 MB of JavaScript).
 */
export { compileFile, compilerPasses, DeviceFault, openGpu, parseByteSize, Program, RunLimitError } from '@vixen/runtime';
export { importStore, readTextFile, writeSouffleOutputs } from '@vixen/io';
export { printKir } from '@vixen/kernel-ir';
export { KeyViolationError, planToDot, printPlan } from '@vixen/queryplan';
export { buildBundle } from './bundle.js';
export { checkOutputDir, ConstraintViolations, renderCounts, renderResults, souffleRecordResults, writeOutputDir } from './format.js';
export { loadProgressBar } from './load-progress.js';
export { explainDot, explainText, formatPasses, formatProfile, formatStats, missingFactsWarning, progressLine } from './report.js';
export { runShell } from './shell.js';
