/** Reading a byte range of an open file whole: fs reads may return fewer bytes than asked for. */
import { readSync } from 'node:fs';
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

/**
 * readExactly on this thread (readSync): for a worker thread, which has nothing else to do meanwhile, where 16
 * workers' asynchronous reads would queue for libuv's few threads.
 */
export function readExactlySync(file: FileHandle, into: Uint8Array, position: number, ended: (at: number) => Error): void {
  for (let done = 0; done < into.length; ) {
    const bytesRead = readSync(file.fd, into, done, into.length - done, position + done);
    if (bytesRead === 0) throw ended(position + done);
    done += bytesRead;
  }
}
