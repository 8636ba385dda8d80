/** Opening a facts file, and what to say when it cannot be read (missing, a directory, no permission). */
import { open, type FileHandle } from 'node:fs/promises';
import { VixenError, errorAt, type Diagnostic } from '@vixen/queryplan';

export function readProblem(path: string, e: unknown): Diagnostic {
  const code = (e as NodeJS.ErrnoException).code;
  if (code === 'ENOENT') return errorAt(`facts file not found: ${path}`);
  if (code === 'EISDIR') return errorAt(`facts file is a directory: ${path}`);
  return errorAt(`cannot read facts file ${path}: ${e instanceof Error ? e.message : String(e)}`);
}

/** An open regular file and its size (the binary readers read ranges of it), or a VixenError. */
export async function openFactsFile(path: string): Promise<{ handle: FileHandle; size: number }> {
  const handle = await open(path).catch((e: unknown) => {
    throw new VixenError(readProblem(path, e));
  });
  const info = await handle.stat();
  if (info.isDirectory()) {
    await handle.close();
    throw new VixenError(readProblem(path, { code: 'EISDIR' }));
  }
  return { handle, size: info.size };
}
