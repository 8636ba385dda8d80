/** Reading a byte range of an open file whole: fs reads may return fewer bytes than asked for. */
import type { FileHandle } from 'node:fs/promises';

/**
 * Fills `into` with the bytes of `file` from `position`, continuing short reads, at most `step` bytes a call (a
 * single read is capped near 2 GiB); a file that ends first throws `ended(at)`, `at` the byte it ended at.
 */
export async function readExactly(file: FileHandle, into: Uint8Array, position: number, ended: (at: number) => Error, step = into.length): Promise<void> {
  for (let done = 0; done < into.length; ) {
    const { bytesRead } = await file.read(into, done, Math.min(step, into.length - done), position + done);
    if (bytesRead === 0) throw ended(position + done);
    done += bytesRead;
  }
}
