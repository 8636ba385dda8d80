/**
 * Strings deduplicated by their UTF-8 bytes on worker threads (the text parser's ranges, Parquet row groups), so no
 * JS string is made there: the caller decodes each distinct one once. No Node API (the playground reads Parquet too).
 */

/** Distinct strings as UTF-8 bytes: string `i` is bytes[ends[i - 1] ?? 0, ends[i]). */
export interface InternedStrings {
  bytes: Uint8Array;
  ends: Uint32Array;
  /** Per string, the string columns holding it (their stringColumnBits among the kept columns, or-ed). */
  columns: Uint32Array;
}

/** Strings deduplicated by their bytes (open addressing on FNV-1a hashes). */
export class ByteInterner {
  private bytes: Uint8Array;
  private used = 0;
  private ends = new Uint32Array(1 << 10);
  private hashes = new Uint32Array(1 << 10);
  private columns = new Uint32Array(1 << 10);
  count = 0;
  /** Of those, the strings in `slots` (looked up). */
  private hashed = 0;
  private slots = new Int32Array(1 << 11).fill(-1);

  /**
   * `bytes`: room for the strings' bytes at first, where the caller knows about how many they take (a Parquet
   * decode, from its column chunks' sizes): each doubling copied them all again.
   */
  constructor(bytes = 1 << 16) {
    this.bytes = new Uint8Array(Math.max(1, bytes));
  }

  /** The id of buf[s, e), noted as held by the string column(s) of `bit`. */
  id(buf: Uint8Array, s: number, e: number, bit: number): number {
    const id = this.find(buf, s, e);
    this.columns[id]! |= bit;
    return id;
  }

  private find(buf: Uint8Array, s: number, e: number): number {
    let h = 0x811c9dc5;
    for (let i = s; i < e; i++) h = Math.imul(h ^ buf[i]!, 0x01000193);
    h >>>= 0;
    const mask = this.slots.length - 1;
    const len = e - s;
    for (let slot = h & mask; ; slot = (slot + 1) & mask) {
      const id = this.slots[slot]!;
      if (id < 0) {
        const added = this.add(buf, s, e, h);
        this.slots[slot] = added;
        // Half full at most, so probes stay short.
        if (2 * ++this.hashed > this.slots.length) this.rehash();
        return added;
      }
      if (this.hashes[id] !== h) continue;
      const from = id === 0 ? 0 : this.ends[id - 1]!;
      if (this.ends[id]! - from !== len) continue;
      let k = 0;
      while (k < len && this.bytes[from + k] === buf[s + k]) k++;
      if (k === len) return id;
    }
  }

  private add(buf: Uint8Array, s: number, e: number, h: number): number {
    const len = e - s;
    if (this.used + len > this.bytes.length) this.bytes = grow(this.bytes, this.used + len);
    this.bytes.set(buf.subarray(s, e), this.used);
    this.used += len;
    if (this.count === this.ends.length) {
      this.ends = grow(this.ends, this.count + 1);
      this.hashes = grow(this.hashes, this.count + 1);
      this.columns = grow(this.columns, this.count + 1);
    }
    const id = this.count++;
    this.ends[id] = this.used;
    this.hashes[id] = h;
    return id;
  }

  /**
   * The `n` strings of a PLAIN BYTE_ARRAY page (each a 4-byte little-endian length, then its bytes) from `page[at]`
   * on, added without a lookup, their ids into `ids`, noted as held by the string column(s) of `bit`: for columns
   * of mostly distinct strings (a writer keeps a dictionary for the others), where hashing each one cost more than
   * the rest of its decode; the run's sort finds the repeats. Returns how many were whole: `n`, or the index of
   * the value the page ends inside (none of the page's are then kept).
   */
  appendPlain(page: Uint8Array, at: number, n: number, bit: number, ids: Uint32Array): number {
    // At most the page's bytes, lengths excluded.
    if (this.used + page.length - at > this.bytes.length) this.bytes = grow(this.bytes, this.used + page.length - at);
    if (this.count + n > this.ends.length) {
      this.ends = grow(this.ends, this.count + n);
      this.hashes = grow(this.hashes, this.count + n);
      this.columns = grow(this.columns, this.count + n);
    }
    const { bytes, ends, columns } = this;
    let used = this.used;
    for (let i = 0, id = this.count; i < n; i++, id++) {
      const start = at + 4;
      const end = start + ((page[at]! | (page[at + 1]! << 8) | (page[at + 2]! << 16) | (page[at + 3]! << 24)) >>> 0);
      if (!(end <= page.length)) return i;
      // A byte loop for short strings: a view per string for `set` cost more than the copy.
      if (end - start < 64) for (let k = start; k < end; k++) bytes[used++] = page[k]!;
      else {
        bytes.set(page.subarray(start, end), used);
        used += end - start;
      }
      ends[id] = used;
      columns[id] = bit;
      ids[i] = id;
      at = end;
    }
    this.used = used;
    this.count += n;
    return n;
  }

  /** Twice the slots, holding the ids the old ones held (strings added by appendPlain are in none). */
  private rehash(): void {
    const old = this.slots;
    this.slots = new Int32Array(old.length * 2).fill(-1);
    const mask = this.slots.length - 1;
    for (const id of old) {
      if (id < 0) continue;
      let slot = this.hashes[id]! & mask;
      while (this.slots[slot]! >= 0) slot = (slot + 1) & mask;
      this.slots[slot] = id;
    }
  }

  /** The table, its arrays trimmed to their contents (views of the interner's where those are mostly full). */
  table(): InternedStrings {
    return { bytes: trimmed(this.bytes, this.used), ends: trimmed(this.ends, this.count), columns: trimmed(this.columns, this.count) };
  }
}

/** `a`'s first `n` elements: a view where they fill three quarters of it or more (no copy), else a copy (no waste). */
function trimmed<T extends Uint8Array | Uint32Array>(a: T, n: number): T {
  return (4 * n >= 3 * a.length ? a.subarray(0, n) : a.slice(0, n)) as T;
}

export function grow<T extends Uint8Array | Uint32Array>(a: T, need: number): T {
  let n = a.length * 2;
  while (n < need) n *= 2;
  const b = new (a.constructor as new (n: number) => T)(n);
  b.set(a);
  return b;
}

