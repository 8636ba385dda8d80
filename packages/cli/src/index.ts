export { runCli, loadProgram } from './cli.js';
export { renderResults, writeOutputDir, type OutputFormat } from './format.js';
