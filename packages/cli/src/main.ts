#!/usr/bin/env node
/** `vixen`: a thin command-line layer over the @vixen/runtime API. */
import { runCli } from './cli.js';

process.exitCode = await runCli(process.argv);
