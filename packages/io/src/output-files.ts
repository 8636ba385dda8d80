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

/** Text in pieces of about this many characters, so huge relations are never one string. */
const CHUNK_CHARS = 1 << 20;

/** Calls `write` with the lines of `lines`, joined into chunks of about CHUNK_CHARS. */
export function writeLines(lines: Iterable<string>, write: (text: string) => void): void {
  let chunk: string[] = [];
  let size = 0;
  for (const line of lines) {
    chunk.push(line);
    size += line.length + 1;
    if (size >= CHUNK_CHARS) {
      write(chunk.join('\n') + '\n');
      chunk = [];
      size = 0;
    }
  }
  if (chunk.length > 0) write(chunk.join('\n') + '\n');
}
