/**
 * Result files written all or nothing: each under a temporary name first, renamed into place only when every one
 * was written, so a failure (or an interrupted run) leaves earlier results intact.
 */
import { closeSync, mkdirSync, openSync, renameSync, rmSync, writeSync } from 'node:fs';
import { dirname } from 'node:path';
import { VixenError } from '@vixen/queryplan';

export interface OutputFile {
  path: string;
  /** Writes the file's text through `out`, in as many pieces as it likes. */
  write(out: (text: string) => void): void;
}

/**
 * Makes `dir` and writes `files` (in it or elsewhere) atomically as a set; a failure is a user error saying what
 * could not be written (`what`).
 */
export function writeFilesAtomically(dir: string, files: readonly OutputFile[], what: string): string[] {
  const staged: Array<{ tmp: string; path: string }> = [];
  try {
    mkdirSync(dir, { recursive: true });
    for (const file of files) {
      mkdirSync(dirname(file.path), { recursive: true });
      const tmp = `${file.path}.tmp-${process.pid}`;
      staged.push({ tmp, path: file.path });
      const fd = openSync(tmp, 'w');
      try {
        file.write((text) => writeSync(fd, text));
      } finally {
        closeSync(fd);
      }
    }
  } catch (e) {
    for (const { tmp } of staged) rmSync(tmp, { force: true });
    throw new VixenError({ severity: 'error', message: `cannot write ${what}: ${(e as Error).message}` });
  }
  for (const { tmp, path } of staged) renameSync(tmp, path);
  return staged.map((s) => s.path);
}
