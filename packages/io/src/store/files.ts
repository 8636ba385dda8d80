/**
 * Reading and writing a store's files whole, with their size and CRC-32 (node:zlib's, hardware CRC: about
 * 5.9 GB/s on the CPU machine, against 1.8 GB/s for sha256; a load spends more on interleaving columns into rows
 * than on it, so every load verifies every file it reads, and a corrupt file is never a wrong answer).
 */
import { open, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { crc32 } from 'node:zlib';
import { storeError, type StoreFile } from './manifest.js';

/** Bytes per read or checksum call (reads of more than 2 GiB fail; zlib takes 32-bit lengths). */
const STEP = 1 << 30;

/** CRC-32 of `bytes`, continuing from `crc`. */
export function checksum(bytes: Uint8Array, crc = 0): number {
  for (let at = 0; at < bytes.length; at += STEP) crc = crc32(bytes.subarray(at, at + STEP), crc);
  return crc;
}

/**
 * The bytes of `file` in the store `dir`, in a buffer of their own (so u32 and u64 views of it are aligned),
 * checked against the manifest: missing, shorter, longer or changed is a VixenError naming the file.
 */
export async function readStoreFile(dir: string, file: StoreFile): Promise<Uint8Array> {
  const path = join(dir, file.file);
  const handle = await open(path, 'r').catch((e: NodeJS.ErrnoException) => {
    throw storeError(e.code === 'ENOENT' ? `store file missing: ${path}` : `cannot read store file ${path}: ${e.message}`);
  });
  try {
    const size = (await handle.stat()).size;
    if (size !== file.bytes) throw storeError(`store file ${path} has ${size} bytes, the manifest says ${file.bytes} (truncated or rewritten: import the facts again)`);
    const bytes = new Uint8Array(size);
    for (let at = 0; at < size; ) {
      const { bytesRead } = await handle.read(bytes, at, Math.min(STEP, size - at), at);
      if (bytesRead === 0) throw storeError(`store file ${path} ended after ${at} of ${size} bytes`);
      at += bytesRead;
    }
    if (checksum(bytes) !== file.crc32) throw storeError(`store file ${path} is corrupt: its CRC-32 differs from the manifest's (import the facts again)`);
    return bytes;
  } finally {
    await handle.close();
  }
}

/** Writes `bytes` as `file` of the store being built in `dir`; returns its manifest entry. */
export async function writeStoreFile(dir: string, file: string, bytes: Uint8Array): Promise<StoreFile> {
  await writeFile(join(dir, file), bytes);
  return { file, bytes: bytes.length, crc32: checksum(bytes) };
}

/** The bytes of `words` (a view, not a copy). */
export const wordBytes = (words: Uint32Array): Uint8Array => new Uint8Array(words.buffer, words.byteOffset, words.byteLength);
