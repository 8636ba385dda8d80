/**
 * A string column's dictionary: its distinct strings in JS code-unit order (sortDistinct), as UTF-8 bytes back to
 * back plus `strings + 1` u64 offsets (two little-endian u32 words each, lo then hi, as int64 words are); the column
 * holds ids into it. One per column rather than one per store: a load reads the dictionaries of the columns it
 * keeps only (TPC-H Q1's two flag columns have 3 and 2 strings; one store dictionary was 42 MB at SF 0.1).
 */
import { constants, isAscii } from 'node:buffer';
import { join } from 'node:path';
import { readStoreFile, wordBytes, writeStoreFile } from './files.js';
import type { VixenError } from '@vixen/queryplan';
import type { AsciiStrings, SortedStrings } from '../encoding.js';
import { storeError, type StoreDictionaryFiles } from './manifest.js';

/**
 * Writes `strings` (sorted, distinct) as `<column>.strings` and `<column>.offsets` of the store being built in
 * `dir` (`column`: the column file's name without `.u32`); returns the manifest's entry.
 */
export async function writeDictionary(dir: string, column: string, strings: readonly string[]): Promise<StoreDictionaryFiles> {
  const offsets = new Uint32Array(2 * (strings.length + 1));
  let total = 0;
  strings.forEach((s, i) => {
    total += Buffer.byteLength(s, 'utf8');
    offsets[2 * i + 2] = total >>> 0;
    offsets[2 * i + 3] = Math.floor(total / 2 ** 32);
  });
  if (total > constants.MAX_LENGTH) throw storeError(`the store's strings take ${total} bytes, more than this Node reads into one buffer (${constants.MAX_LENGTH})`);
  const bytes = Buffer.allocUnsafe(total);
  let at = 0;
  for (const s of strings) at += bytes.write(s, at, 'utf8');
  return {
    strings: strings.length,
    bytes: await writeStoreFile(dir, `${column}.strings`, bytes),
    offsets: await writeStoreFile(dir, `${column}.offsets`, wordBytes(offsets)),
  };
}

/** Bytes of ASCII text StoreDictionary.texts decodes at a time. */
const TEXT_WINDOW = 64 * 2 ** 20;

/**
 * A column's dictionary, read (and verified) whole; strings are decoded one at a time, when asked for. ASCII text
 * (TPC-H's, most names and comments) is also offered as its bytes, which a run's dictionary merges without decoding.
 */
export class StoreDictionary implements SortedStrings {
  readonly ascii: AsciiStrings | undefined;

  private constructor(
    private readonly path: string,
    private readonly bytes: Buffer,
    private readonly offsets: Uint32Array,
    readonly size: number,
  ) {
    this.ascii = this.asciiStrings();
  }

  static async read(dir: string, dictionary: StoreDictionaryFiles): Promise<StoreDictionary> {
    if (dictionary.offsets.bytes !== 8 * (dictionary.strings + 1)) {
      throw storeError(`${join(dir, dictionary.offsets.file)}: ${dictionary.offsets.bytes} bytes of offsets for ${dictionary.strings} strings (corrupt manifest)`);
    }
    const [bytes, offsets] = await Promise.all([readStoreFile(dir, dictionary.bytes), readStoreFile(dir, dictionary.offsets)]);
    const words = new Uint32Array(offsets.buffer, offsets.byteOffset, offsets.byteLength / 4);
    return new StoreDictionary(join(dir, dictionary.bytes.file), Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength), words, dictionary.strings);
  }

  /** The strings' bytes and starts when all are ASCII and fit u32 offsets, the offsets checked. */
  private asciiStrings(): AsciiStrings | undefined {
    if (this.bytes.length >= 2 ** 32 || !isAscii(this.bytes)) return undefined;
    const starts = new Uint32Array(this.size + 1);
    let last = 0;
    for (let i = 0; i <= this.size; i++) {
      const at = this.offsets[2 * i]!;
      if (this.offsets[2 * i + 1] !== 0 || at < last || at > this.bytes.length) throw this.corrupt(Math.max(0, i - 1));
      starts[i] = last = at;
    }
    return { bytes: this.bytes, starts };
  }

  /**
   * Every string, in id order. ASCII text is decoded once as a whole and cut into slices, not decoded string by
   * string.
   */
  texts(): string[] {
    const starts = this.ascii?.starts;
    if (!starts) return Array.from({ length: this.size }, (_, id) => this.text(id));
    const out = new Array<string>(this.size);
    // Windows of whole strings, each decoded once: one string of all of them could pass V8's longest string.
    for (let id = 0; id < this.size; ) {
      const from = starts[id]!;
      let last = id;
      while (last + 1 < this.size && starts[last + 2]! - from <= TEXT_WINDOW) last++;
      const window = this.bytes.toString('latin1', from, starts[last + 1]!);
      for (; id <= last; id++) out[id] = window.slice(starts[id]! - from, starts[id + 1]! - from);
    }
    return out;
  }

  text(id: number): string {
    const starts = this.ascii?.starts;
    if (starts && id >= 0 && id < this.size) return this.bytes.toString('latin1', starts[id]!, starts[id + 1]!);
    return this.bytes.toString('utf8', ...this.span(id));
  }

  /** The byte range of string `id`, checked against the bytes. */
  private span(id: number): [number, number] {
    const start = this.offsets[2 * id]! + this.offsets[2 * id + 1]! * 2 ** 32;
    const end = this.offsets[2 * id + 2]! + this.offsets[2 * id + 3]! * 2 ** 32;
    if (!(start <= end && end <= this.bytes.length)) throw this.corrupt(id);
    return [start, end];
  }

  private corrupt(id: number): VixenError {
    return storeError(`store dictionary ${this.path}: string ${id} lies outside its bytes (corrupt store)`);
  }
}
