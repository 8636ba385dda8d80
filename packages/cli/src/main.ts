#!/usr/bin/env node
/** `vixen`: a thin command-line layer over the @vixen/runtime API. */
import { filtersStderr, runFiltered } from './filtered-stderr.js';

// The CLI itself loads only where it runs: a parent that filters a child's stderr needs none of it.
process.exitCode = filtersStderr(process.argv) ? await runFiltered(process.argv) : await (await import('./cli.js')).runCli(process.argv);
