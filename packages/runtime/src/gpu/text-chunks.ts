/**
 * A text file's bytes in chunks of whole lines for the device parser (parse-text.ts), read ahead: several positional
 * reads of the file are in flight at once (libuv runs them on its threads), each into a buffer of its own with room
 * in front for the part line the read before it ended with, so stitching copies a part line, never a chunk. The
 * buffers a load holds (read, being parsed, or waiting for their strings to be cut) are counted per device across
 * every file loaded at once (TextChunkSlots), which bounds host and device memory while several files load together.
 */
import { isAscii, isUtf8 } from 'node:buffer';
import { open, type FileHandle } from 'node:fs/promises';

/** The device leaves the file to the host parser. */
export class HostParses extends Error {}

/**
 * Chunk buffers held at once by every file a device loads: a file takes one before each read and gives it back once
 * the chunk is done. A file holding none waits for one; a file holding some only takes a free one, or (`force`) one
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

/** A chunk of whole lines: a view of a buffer with at least 3 bytes of room after it (uploads round up to words). */
export interface TextChunk {
  bytes: Buffer;
  /** Only ASCII bytes: strings decode as latin1, cheaper than UTF-8. */
  ascii: boolean;
}

/** A read's buffer: the bytes lie at [HEAD, HEAD + bytes). */
interface Piece {
  buf: Buffer;
  bytes: number;
}

/** Room in front of each read for the part line before it; a longer one is copied with the read into a new buffer. */
const HEAD = 64 * 1024;

export class TextChunkReader {
  private offset = 0;
  private readonly reads: Promise<Piece>[] = [];
  /** The part line the last read ended with (with room for a newline and padding after it). */
  private carry = Buffer.alloc(4);
  private carried = 0;
  private first = true;
  private readonly spare: Buffer[] = [];
  /** Slots this file holds (reads queued, chunks given out and not yet done). */
  private held = 0;

  private constructor(
    private readonly fh: FileHandle,
    private size: number,
    private readonly chunkBytes: number,
    private readonly slots: TextChunkSlots,
  ) {}

  static async open(path: string, chunkBytes: number, slots: TextChunkSlots): Promise<TextChunkReader> {
    const fh = await open(path, 'r');
    try {
      return new TextChunkReader(fh, (await fh.stat()).size, chunkBytes, slots);
    } catch (e) {
      await fh.close();
      throw e;
    }
  }

  /** Whether bytes are left to read or to hand out. */
  get more(): boolean {
    return this.offset < this.size || this.reads.length > 0 || this.carried > 0;
  }

  /** Reads queued ahead. */
  get queued(): number {
    return this.reads.length;
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
    const buf = this.spare.pop() ?? Buffer.allocUnsafeSlow(HEAD + this.chunkBytes + 4);
    const read = this.fh.read(buf, HEAD, n, at).then(({ bytesRead }) => {
      // A file that shrank while read: its end is where a read came short.
      if (bytesRead < n) this.size = Math.min(this.size, at + bytesRead);
      return { buf, bytes: bytesRead };
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
  async next(): Promise<TextChunk | undefined> {
    for (;;) {
      // A file holding slots for chunks it has not finished takes one past the limit rather than wait.
      if (this.reads.length === 0 && this.offset < this.size) {
        this.slots.take(true);
        this.issue();
      }
      const read = this.reads.shift();
      if (!read) return this.lastLine();
      const { buf, bytes } = await read;
      let start = HEAD - this.carried;
      let chunk = buf;
      if (this.carried > HEAD) {
        chunk = Buffer.allocUnsafeSlow(this.carried + bytes + 4);
        buf.copy(chunk, this.carried, HEAD, HEAD + bytes);
        // The new buffer holds the read's slot.
        this.recycle(buf);
        start = 0;
      }
      this.carry.copy(chunk, start, 0, this.carried);
      const end = start + this.carried + bytes;
      this.carried = 0;
      if (this.first && end - start >= 3 && chunk[start] === 0xef && chunk[start + 1] === 0xbb && chunk[start + 2] === 0xbf) start += 3;
      this.first = false;
      if (this.reads.length === 0 && this.offset >= this.size) return this.ending(chunk, start, end);
      const nl = chunk.lastIndexOf(10, end - 1);
      if (nl < start) {
        this.keep(chunk, start, end);
        this.done(chunk);
        continue;
      }
      this.keep(chunk, nl + 1, end);
      return this.checked(chunk, start, nl + 1);
    }
  }

  /** The last chunk, [start, end) of `buf`, with a final newline. */
  private ending(buf: Buffer, start: number, end: number): TextChunk | undefined {
    if (end === start) {
      this.done(buf);
      return undefined;
    }
    // The host keeps a CR that ends the file (it strips one only before a newline).
    if (buf[end - 1] === 13) {
      this.done(buf);
      throw new HostParses();
    }
    if (buf[end - 1] !== 10) buf[end++] = 10;
    return this.checked(buf, start, end);
  }

  /** The part line left at the end, made a chunk (only where the last read came short of the file's stat size). */
  private lastLine(): TextChunk | undefined {
    if (this.carried === 0) return undefined;
    const buf = Buffer.allocUnsafeSlow(this.carried + 4);
    this.carry.copy(buf, 0, 0, this.carried);
    const n = this.carried;
    this.carried = 0;
    this.held++;
    this.slots.take(true);
    return this.ending(buf, 0, n);
  }

  /** [start, end) of `buf` when it is UTF-8 (whole lines, so no character is cut); the host reports invalid text. */
  private checked(buf: Buffer, start: number, end: number): TextChunk {
    const bytes = buf.subarray(start, end);
    if (isAscii(bytes)) return { bytes, ascii: true };
    if (isUtf8(bytes)) return { bytes, ascii: false };
    this.done(buf);
    throw new HostParses();
  }

  private keep(buf: Buffer, start: number, end: number): void {
    const n = end - start;
    if (this.carry.length < n + 4) this.carry = Buffer.allocUnsafeSlow(Math.max(n + 4, 2 * this.carry.length));
    buf.copy(this.carry, 0, start, end);
    this.carried = n;
  }

  /** Gives back the buffer of a chunk next() returned (or of one it used up). */
  done(chunk: Buffer): void {
    this.recycle(chunk.buffer.byteLength === HEAD + this.chunkBytes + 4 ? Buffer.from(chunk.buffer as ArrayBuffer) : undefined);
    this.held--;
    this.slots.give();
  }

  private recycle(buf: Buffer | undefined): void {
    if (buf) this.spare.push(buf);
  }

  /** Waits for the reads still queued, gives their slots back and closes the file. */
  async close(): Promise<void> {
    for (const read of this.reads.splice(0)) {
      await read.catch(() => undefined);
      this.held--;
      this.slots.give();
    }
    await this.fh.close();
  }
}

