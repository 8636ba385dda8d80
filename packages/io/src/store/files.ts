/**
 * Reading and writing a store's files, with their size and CRC-32 (node:zlib's, hardware CRC: about 5.9 GB/s on the
 * CPU machine, against 1.8 GB/s for sha256, and on workers beside a device load: every load verifies every file it
 * reads, and a corrupt file is never a wrong answer).
 */
import { readSync } from 'node:fs';
import { open, writeFile, type FileHandle } from 'node:fs/promises';
import { join } from 'node:path';
import { crc32 } from 'node:zlib';
import type { VixenError } from '@vixen/queryplan';
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

/** Bytes a worker reads at a time to checksum a file (small enough that the checksum reads them from the cache). */
const VERIFY_STEP = 1 << 20;

/**
 * The CRC-32 of an open file (`fd`, shared by the process's threads) and its bytes to the end, read on a worker from
 * the start; reading stops past `bytes` (a file longer than the manifest says is bad anyway).
 */
const verifyTask = defineTask('io/store-verify', import.meta.url, ({ fd, bytes }: { fd: number; bytes: number }) => {
  const buffer = Buffer.allocUnsafe(VERIFY_STEP);
  let crc = 0;
  let at = 0;
  for (;;) {
    const n = readSync(fd, buffer, 0, Math.min(VERIFY_STEP, bytes + 1 - at), at);
    if (n === 0) break;
    crc = crc32(buffer.subarray(0, n), crc);
    at += n;
    if (at > bytes) break;
  }
  return { crc, bytes: at };
});

/** Bytes read at a time into a file's shared buffer while a worker takes the CRC-32 of those before (readStoreFile). */
const SHARED_PIECE = 8 << 20;
/** Reads of a file's shared buffer in flight (readChecked): libuv's four threads, each with one queued behind. */
const READS_IN_FLIGHT = 8;

/**
 * The CRC-32 of `bytes` (shared memory, read into meanwhile) as they come: `pieces[0]` pieces of SHARED_PIECE bytes
 * are there (the last one shorter; -1: the reads failed and it stops). Waits for them with Atomics.wait.
 */
const crcAsReadTask = defineTask('io/store-crc-as-read', import.meta.url, ({ bytes, pieces }: { bytes: Uint8Array; pieces: Int32Array }) => {
  let crc = 0;
  for (let k = 0; k * SHARED_PIECE < bytes.length; ) {
    const there = Atomics.load(pieces, 0);
    if (there < 0) break;
    if (there === k) {
      Atomics.wait(pieces, 0, k);
      continue;
    }
    crc = checksum(bytes.subarray(k * SHARED_PIECE, there * SHARED_PIECE), crc);
    k = there;
  }
  return crc;
});

/**
 * A store file opened, its size checked, read from start to end in pieces (`read`, its CRC-32 taken on this thread,
 * checked by `finish`) or at any positions (`readAt`, while `verify` takes the CRC-32 on a worker): missing,
 * shorter, longer or changed is a VixenError naming the file.
 */
export class StoreFileReader {
  /** Bytes read and checked so far by `read`, in order. */
  private checked = 0;
  private crc = 0;

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

  /** Fills `into` with the file's bytes from `position`, unchecked (reads at other positions may be in flight). */
  readAt(into: Uint8Array, position: number): Promise<void> {
    return readExactly(this.handle, into, position, (at) => this.ended(at), STEP);
  }

  private ended(at: number): VixenError {
    return storeError(`store file ${this.path} ended after ${at} of ${this.file.bytes} bytes`);
  }

  /**
   * Checks the whole file's CRC-32 on a worker, which reads it itself from this open file (the bytes `readAt` gives:
   * a corrupt file reads the same both times, and the store is only ever replaced whole, never written in place). The
   * file must stay open until it settles.
   */
  async verify(): Promise<void> {
    const { crc, bytes } = await runInWorker(verifyTask, { fd: this.handle.fd, bytes: this.file.bytes });
    if (bytes < this.file.bytes) throw this.ended(bytes);
    if (bytes > this.file.bytes) throw storeError(`store file ${this.path} has more than the ${this.file.bytes} bytes the manifest says (rewritten: import the facts again)`);
    this.checkCrc(bytes, crc);
  }

  /**
   * Fills `into` (shared memory, the file's size) with the whole file, read in pieces on libuv's threads, `inFlight`
   * at a time, while a worker takes the CRC-32 of the pieces read so far from the start, and checks it: the file read
   * once, its checksum on no thread of ours. Pieces read one after another were one thread's read speed: TPC-H's
   * order comments (84 MB at SF 1) were the last bytes a store load waited for.
   */
  async readChecked(into: Uint8Array, inFlight = READS_IN_FLIGHT): Promise<void> {
    const pieces = new Int32Array(new SharedArrayBuffer(4));
    const crc = runInWorker(crcAsReadTask, { bytes: into, pieces });
    const tell = (n: number): void => {
      Atomics.store(pieces, 0, n);
      Atomics.notify(pieces, 0);
    };
    const count = Math.ceil(into.length / SHARED_PIECE);
    const read = new Uint8Array(count);
    /** Pieces taken by a lane, and read from the start (the worker checks those). */
    let taken = 0;
    let ready = 0;
    let failed = false;
    const lane = async (): Promise<void> => {
      while (!failed && taken < count) {
        const k = taken++;
        try {
          await this.readAt(into.subarray(k * SHARED_PIECE, (k + 1) * SHARED_PIECE), k * SHARED_PIECE);
        } catch (e) {
          failed = true;
          throw e;
        }
        read[k] = 1;
        const before = ready;
        while (ready < count && read[ready] === 1) ready++;
        if (ready > before) tell(ready);
      }
    };
    // Every lane settled before an error is thrown: no read writes into `into` after.
    const lanes = await Promise.allSettled(Array.from({ length: Math.max(1, Math.min(inFlight, count)) }, lane));
    const rejected = lanes.find((l) => l.status === 'rejected');
    if (rejected) {
      tell(-1);
      await crc.catch(() => undefined);
      throw rejected.reason;
    }
    this.checkCrc(into.length, await crc);
  }

  private checkCrc(bytes: number, crc: number): void {
    if (bytes !== this.file.bytes) throw new Error(`internal: ${bytes} of ${this.file.bytes} bytes of ${this.path} checked`);
    if (crc !== this.file.crc32) throw storeError(`store file ${this.path} is corrupt: its CRC-32 differs from the manifest's (import the facts again)`);
  }

  /** Fills `into` with the file's next bytes, checked on this thread. */
  async read(into: Uint8Array): Promise<void> {
    await this.readAt(into, this.checked);
    this.crc = checksum(into, this.crc);
    this.checked += into.length;
  }

  /** Checks that `read` read the whole file and its CRC-32 is the manifest's, and closes it. */
  async finish(): Promise<void> {
    await this.close();
    this.checkCrc(this.checked, this.crc);
  }

  close(): Promise<void> {
    return this.handle.close();
  }
}

/** Bytes of a file past which readStoreFile checks it on a worker rather than on this thread. */
const VERIFIED_ON_WORKER = 1 << 20;

/**
 * The bytes of `file` in the store `dir`, in a buffer of their own (so u32 and u64 views of it are aligned),
 * checked as StoreFileReader checks them: a large file's CRC-32 on a worker as its pieces are read (readChecked; a
 * run's dictionary of order comments is 84 MB at TPC-H SF 1; its checksum held the thread that hands out the pieces).
 */
export async function readStoreFile(dir: string, file: StoreFile): Promise<Uint8Array> {
  const reader = await StoreFileReader.open(dir, file);
  if (file.bytes < VERIFIED_ON_WORKER) {
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
  const bytes = new Uint8Array(new SharedArrayBuffer(file.bytes));
  try {
    await reader.readChecked(bytes);
  } finally {
    await reader.close();
  }
  return bytes;
}

/** Writes `bytes` as `file` of the store being built in `dir`; returns its manifest entry. */
export async function writeStoreFile(dir: string, file: string, bytes: Uint8Array): Promise<StoreFile> {
  await writeFile(join(dir, file), bytes);
  return { file, bytes: bytes.length, crc32: checksum(bytes) };
}

/** The bytes of `words` (a view, not a copy). */
export const wordBytes = (words: Uint32Array): Uint8Array => new Uint8Array(words.buffer, words.byteOffset, words.byteLength);
