/** What every CLI command shares: checking its options with zod, writing a JSON report file, the bench description, --parse. */
import { writeFileSync } from 'node:fs';
import { Option } from 'commander';
import { z } from 'zod';
import { VixenError } from '@vixen/queryplan';

/** The runtime's PARSE_MODES, written out: the CLI loads the engine only for commands that run (engine.ts). */
export const PARSE_MODES = ['host', 'device', 'auto'] as const;

/** `--parse`: where facts text is parsed (RunOptions.parse), for `run` and the `.tbl` benches. */
export const parseOption = (): Option =>
  new Option('--parse <where>', 'parse facts files on the host, on the device, or auto (the device for large files on a GPU)')
    .choices(PARSE_MODES)
    .default('auto');

/** Validates options with zod; a bad option is a user error naming the flag as typed (`--edge-factor`). */
export function parseOptions<T extends z.ZodType>(schema: T, raw: unknown): z.infer<T> {
  const r = schema.safeParse(raw);
  if (r.success) return r.data;
  const flag = (path: readonly PropertyKey[]): string => path.map(String).join('.').replace(/[A-Z]/g, (c) => `-${c.toLowerCase()}`);
  throw new VixenError({ severity: 'error', message: r.error.issues.map((i) => `option --${flag(i.path)}: ${i.message}`).join('; ') });
}

/** Writes `report` as indented JSON to `path` and says so on `err`; a file that cannot be written is a user error. */
export function writeJsonReport(path: string, report: unknown, err: (s: string) => void): void {
  try {
    writeFileSync(path, JSON.stringify(report, null, 2) + '\n');
  } catch (e) {
    throw new VixenError({ severity: 'error', message: `cannot write ${path}: ${(e as Error).message}` });
  }
  err(`wrote ${path}\n`);
}

/** `vixen bench`'s description, also shown by the stand-in cli.ts lists in `vixen --help` without loading it. */
export const BENCH_DESCRIPTION = 'benchmark the GPU operators, the TPC-H and SSB queries and the graph workloads';
