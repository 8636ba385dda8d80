/**
 * Reading and writing a store's files whole, with their size and CRC-32 (node:zlib's, hardware CRC: about
 * 5.9 GB/s on the CPU machine, against 1.8 GB/s for sha256; a load spends more on interleaving columns into rows
 * than on it, so every load verifies every file it reads, and a corrupt file is never a wrong answer).
 */
import { open, writeFile, type FileHandle } from 'node:fs/promises';
import { join } from 'node:path';
import { crc32 } from 'node:zlib';
import { storeError, type StoreFile } from './manifest.js';
import { runInWorker } from '../parallel/pool.js';
import { defineTask } from '../parallel/tasks.js';
import { readExactly } from '../read-exactly.js';

/** Bytes per read or checksum call (reads of more than 2 GiB fail; zlib takes 32-bit lengths). */
const STEP = 1 << 30;

/** CRC-32 of `bytes`, continuing from `crc`. */
export function checksum(bytes: Uint8Array, crc = 0): number {
  for (let at = 0; at < bytes.length; at += STEP) crc = crc32(bytes.subarray(at, at + STEP), crc);
  return crc;
}

/** `checksum` on a worker (StoreFileReader.checkShared). */
const checksumTask = defineTask('io/store-checksum', import.meta.url, ({ bytes, crc }: { bytes: Uint8Array; crc: number }) => checksum(bytes, crc));

/**
 * A store file read from start to end in pieces of the caller's choosing (into host memory, or on into a device's
 * staging buffers), its size checked on opening and its CRC-32 once every byte is read (`finish`): missing, shorter,
 * longer or changed is a VixenError naming the file.
 */
export class StoreFileReader {
  /** Bytes asked for so far (reads may be in flight), and bytes checked (in order). */
  private fetched = 0;
  private checked = 0;
  private crc = 0;
  /** The checksum so far where pieces go to `checkShared`. */
  private pending: Promise<number> | undefined;

  private constructor(
    readonly path: string,
    private readonly file: StoreFile,
    private readonly handle: FileHandle,
  ) {}

  static async open(dir: string, file: StoreFile): Promise<StoreFileReader> {
    const path = join(dir, file.file);
    const handle = await open(path, 'r').catch((e: NodeJS.ErrnoException) => {
      throw storeError(e.code === 'ENOENT' ? `store file missing: ${path}` : `cannot read store file ${path}: ${e.message}`);
    });
    try {
      const size = (await handle.stat()).size;
      if (size !== file.bytes) throw storeError(`store file ${path} has ${size} bytes, the manifest says ${file.bytes} (truncated or rewritten: import the facts again)`);
    } catch (e) {
      await handle.close();
      throw e;
    }
    return new StoreFileReader(path, file, handle);
  }

  /**
   * Fills `into` with the file's next bytes, unchecked: a second fetch may start before this one ends (it reads the
   * bytes after these). Each fetched piece goes to `check`, in order.
   */
  async fetch(into: Uint8Array): Promise<void> {
    const from = this.fetched;
    this.fetched += into.length;
    await readExactly(this.handle, into, from, (at) => storeError(`store file ${this.path} ended after ${at} of ${this.file.bytes} bytes`), STEP);
  }

  /** Adds the next fetched piece to the checksum. */
  check(bytes: Uint8Array): void {
    if (this.pending) throw new Error(`internal: ${this.path} checked on this thread after pieces checked on workers`);
    this.crc = checksum(bytes, this.crc);
    this.checked += bytes.length;
  }

  /**
   * `check` on a worker thread, for a piece in shared memory (a SharedArrayBuffer's), so that this thread copies it on
   * meanwhile; resolves once the piece is added (then it may be overwritten). Pieces are added in order.
   */
  checkShared(bytes: Uint8Array): Promise<void> {
    this.checked += bytes.length;
    const added = (this.pending ?? Promise.resolve(this.crc)).then((crc) => runInWorker(checksumTask, { bytes, crc }));
    this.pending = added;
    return added.then(() => undefined);
  }

  /** Fills `into` with the file's next bytes, checked. */
  async read(into: Uint8Array): Promise<void> {
    await this.fetch(into);
    this.check(into);
  }

  /** Checks that the whole file was read and its CRC-32 is the manifest's, and closes it. */
  async finish(): Promise<void> {
    await this.close();
    if (this.pending) this.crc = await this.pending;
    if (this.checked !== this.file.bytes) throw new Error(`internal: ${this.checked} of ${this.file.bytes} bytes of ${this.path} read`);
    if (this.crc !== this.file.crc32) throw storeError(`store file ${this.path} is corrupt: its CRC-32 differs from the manifest's (import the facts again)`);
  }

  close(): Promise<void> {
    return this.handle.close();
  }
}

/**
 * The bytes of `file` in the store `dir`, in a buffer of their own (so u32 and u64 views of it are aligned),
 * checked as StoreFileReader checks them.
 */
export async function readStoreFile(dir: string, file: StoreFile): Promise<Uint8Array> {
  const reader = await StoreFileReader.open(dir, file);
  const bytes = new Uint8Array(file.bytes);
  try {
    await reader.read(bytes);
  } catch (e) {
    await reader.close();
    throw e;
  }
  await reader.finish();
  return bytes;
}

/** Writes `bytes` as `file` of the store being built in `dir`; returns its manifest entry. */
export async function writeStoreFile(dir: string, file: string, bytes: Uint8Array): Promise<StoreFile> {
  await writeFile(join(dir, file), bytes);
  return { file, bytes: bytes.length, crc32: checksum(bytes) };
}

/** The bytes of `words` (a view, not a copy). */
export const wordBytes = (words: Uint32Array): Uint8Array => new Uint8Array(words.buffer, words.byteOffset, words.byteLength);
