/**
 * A text file's bytes in chunks of whole lines for the device parser (parse-text.ts), read ahead: several positional
 * reads of the file are in flight at once (libuv runs them on its threads), each into memory of its own (ReadMemory:
 * the device's mapped upload buffers, so no byte of a chunk passes through the main thread) with room in front for
 * the part line the read before it ended with, so stitching copies a part line, never a chunk. The host looks at a
 * chunk's last bytes only; the device checks its text (UTF-8 included). The reads a load holds (queued, or a chunk
 * not yet handed to the device) are counted per device across every file loaded at once (TextChunkSlots), which
 * bounds the memory they take while several files load together.
 */
import { open, type FileHandle } from 'node:fs/promises';

/** The device leaves the file to the host parser. */
export class HostParses extends Error {}

/**
 * Read buffers held at once by every file a device loads: a file takes one before each read and gives it back once
 * the chunk is handed to the device (done()). A file holding none waits for one; a file holding some only takes a free one, or (`force`) one
 * past the limit when it cannot go on otherwise (a line longer than a read), so no two files wait on each other.
 */
export class TextChunkSlots {
  private free: number;
  private readonly waiting: Array<() => void> = [];

  constructor(limit: number) {
    this.free = limit;
  }

  take(force = false): boolean {
    if (this.free <= 0 && !force) return false;
    this.free--;
    return true;
  }

  wait(): Promise<void> {
    if (this.take()) return Promise.resolve();
    return new Promise((resolve) => this.waiting.push(resolve));
  }

  give(): void {
    const next = this.free >= 0 ? this.waiting.shift() : undefined;
    if (next) next();
    else this.free++;
  }
}

/** Memory reads land in: `bytes`, writable, views all of `buffer`. */
export interface ReadMemory<B> {
  take(size: number): Promise<{ buffer: B; bytes: Uint8Array }>;
  /** `buffer` is not needed any more (kept for a later take, or dropped). */
  give(buffer: B): void;
}

/** Host buffers (tests, and a reader with no device). */
export const hostMemory: ReadMemory<Uint8Array> = {
  take: (size) => {
    const bytes = new Uint8Array(size);
    return Promise.resolve({ buffer: bytes, bytes });
  },
  give: () => undefined,
};

/**
 * A chunk of whole lines: `bytes`, a view of `buffer` that starts 4-byte aligned (its first `lead` bytes are newlines
 * put there to align it, empty lines to a parser) with at least 3 bytes of room after it (uploads round up to words).
 */
export interface TextChunk<B> {
  buffer: B;
  bytes: Uint8Array;
  lead: number;
}

/** A read's memory: the bytes lie at [HEAD, HEAD + bytes). */
interface Piece<B> {
  buffer: B;
  mem: Uint8Array;
  bytes: number;
}

/** Room in front of each read for the part line before it; a longer one is copied with the read into new memory. */
const HEAD = 64 * 1024;
/** Bytes of a read's parts (see issue). */
const READ_PART = 16 * 2 ** 20;

export class TextChunkReader<B> {
  private offset = 0;
  private readonly reads: Promise<Piece<B>>[] = [];
  /** The part line the last read ended with. */
  private carry = new Uint8Array(4);
  private carried = 0;
  private first = true;
  /** Slots this file holds (reads queued, chunks given out and not yet done). */
  private held = 0;

  private constructor(
    private readonly fh: FileHandle,
    private size: number,
    private readonly chunkBytes: number,
    private readonly slots: TextChunkSlots,
    private readonly memory: ReadMemory<B>,
  ) {}

  static async open<B>(path: string, chunkBytes: number, slots: TextChunkSlots, memory: ReadMemory<B>): Promise<TextChunkReader<B>> {
    const fh = await open(path, 'r');
    try {
      return new TextChunkReader(fh, (await fh.stat()).size, chunkBytes, slots, memory);
    } catch (e) {
      await fh.close();
      throw e;
    }
  }

  /** The file's size when opened. */
  get fileBytes(): number {
    return this.size;
  }

  /** Reads queued ahead. */
  get queued(): number {
    return this.reads.length;
  }

  /** The size of each read's memory. */
  get pieceBytes(): number {
    return HEAD + this.chunkBytes + 4;
  }

  /**
   * Queues reads while this file holds fewer than `ahead` slots and the device has some free; with none held, waits
   * for one.
   */
  async fill(ahead: number): Promise<void> {
    while (this.offset < this.size && this.held < ahead) {
      if (this.held === 0) await this.slots.wait();
      else if (!this.slots.take()) return;
      this.issue();
    }
  }

  private issue(): void {
    this.held++;
    const at = this.offset;
    const n = Math.min(this.chunkBytes, this.size - at);
    this.offset += n;
    // Through a resolved promise: a take that throws is a failed read, its slot accounted like any other's.
    const read = Promise.resolve(this.pieceBytes).then((size) => this.memory.take(size)).then(async ({ buffer, bytes: mem }) => {
      try {
        // In parts read at once (libuv's threads), so a file's first chunk, which the device waits for, comes sooner.
        const parts = Array.from({ length: Math.ceil(n / READ_PART) }, (_, j) => this.fh.read(mem, HEAD + j * READ_PART, Math.min(READ_PART, n - j * READ_PART), at + j * READ_PART));
        let bytesRead = 0;
        // Every part settled before the memory may go back (a failed read's siblings still write into it).
        for (const part of await Promise.allSettled(parts)) {
          if (part.status === 'rejected') throw part.reason;
          bytesRead += part.value.bytesRead;
          if (part.value.bytesRead < READ_PART) break;
        }
        // A file that shrank while read: its end is where a read came short.
        if (bytesRead < n) this.size = Math.min(this.size, at + bytesRead);
        return { buffer, mem, bytes: bytesRead };
      } catch (e) {
        this.memory.give(buffer);
        throw e;
      }
    });
    // Awaited in order by next(); until then a failure must not go unhandled.
    read.catch(() => undefined);
    this.reads.push(read);
  }

  /**
   * The next chunk of whole lines (each at least a read long where the file has that many bytes left), a UTF-8 BOM
   * at the start dropped, the last ending with a newline added where the file does not end with one; undefined at
   * the end. Give each back with done().
   */
  async next(): Promise<TextChunk<B> | undefined> {
    for (;;) {
      // A file holding slots for chunks it has not finished takes one past the limit rather than wait.
      if (this.reads.length === 0 && this.offset < this.size) {
        this.slots.take(true);
        this.issue();
      }
      const read = this.reads.shift();
      if (!read) return this.lastLine();
      let piece: Piece<B>;
      try {
        piece = await read;
      } catch (e) {
        this.giveSlot();
        throw e;
      }
      let { buffer, mem } = piece;
      let start = HEAD - this.carried;
      if (this.carried > HEAD) {
        const big = await this.memory.take(this.carried + piece.bytes + 8);
        big.bytes.set(mem.subarray(HEAD, HEAD + piece.bytes), this.carried);
        // The new memory holds the read's slot.
        this.memory.give(buffer);
        ({ buffer, bytes: mem } = big);
        start = 0;
      }
      mem.set(this.carry.subarray(0, this.carried), start);
      const end = start + this.carried + piece.bytes;
      this.carried = 0;
      if (this.first && end - start >= 3 && mem[start] === 0xef && mem[start + 1] === 0xbb && mem[start + 2] === 0xbf) start += 3;
      this.first = false;
      if (this.reads.length === 0 && this.offset >= this.size) return this.ending(buffer, mem, start, end);
      const nl = mem.lastIndexOf(10, end - 1);
      if (nl < start) {
        this.keep(mem, start, end);
        this.release(buffer);
        continue;
      }
      this.keep(mem, nl + 1, end);
      return aligned(buffer, mem, start, nl + 1);
    }
  }

  /** The last chunk, [start, end) of `mem`, with a final newline. */
  private ending(buffer: B, mem: Uint8Array, start: number, end: number): TextChunk<B> | undefined {
    if (end === start) {
      this.release(buffer);
      return undefined;
    }
    // The host keeps a CR that ends the file (it strips one only before a newline).
    if (mem[end - 1] === 13) {
      this.release(buffer);
      throw new HostParses();
    }
    if (mem[end - 1] !== 10) mem[end++] = 10;
    return aligned(buffer, mem, start, end);
  }

  /** The part line left at the end, made a chunk (only where the last read came short of the file's stat size). */
  private async lastLine(): Promise<TextChunk<B> | undefined> {
    if (this.carried === 0) return undefined;
    const n = this.carried;
    this.carried = 0;
    this.held++;
    this.slots.take(true);
    const { buffer, bytes } = await this.memory.take(n + 8);
    bytes.set(this.carry.subarray(0, n));
    return this.ending(buffer, bytes, 0, n);
  }

  private keep(mem: Uint8Array, start: number, end: number): void {
    const n = end - start;
    if (this.carry.length < n) this.carry = new Uint8Array(Math.max(n, 2 * this.carry.length));
    this.carry.set(mem.subarray(start, end));
    this.carried = n;
  }

  /** Gives back the memory of a chunk next() returned. */
  done(chunk: TextChunk<B>): void {
    this.release(chunk.buffer);
  }

  private release(buffer: B): void {
    this.memory.give(buffer);
    this.giveSlot();
  }

  private giveSlot(): void {
    this.held--;
    this.slots.give();
  }

  /** Waits for the reads still queued, gives their memory and slots back and closes the file. */
  async close(): Promise<void> {
    for (const read of this.reads.splice(0)) {
      const piece = await read.catch(() => undefined);
      if (piece) this.memory.give(piece.buffer);
      this.giveSlot();
    }
    await this.fh.close();
  }
}

/** [start, end) of `mem` as a chunk starting 4-byte aligned: the bytes before it, up to 3, made newlines. */
function aligned<B>(buffer: B, mem: Uint8Array, start: number, end: number): TextChunk<B> {
  const from = start - (start % 4);
  mem.fill(10, from, start);
  return { buffer, bytes: mem.subarray(from, end), lead: start - from };
}
