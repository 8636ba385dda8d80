export { runCli, loadProgram, EXIT_LIMIT } from './cli.js';
export { renderResults, writeOutputDir, type OutputFormat } from './format.js';
export { DawnNoiseFilter } from './dawn-noise.js';
export { completions, runShell, type ShellOptions } from './shell.js';
export { buildJs, type BuildJsOptions } from './build-js.js';
