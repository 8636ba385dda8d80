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
  private bytes = new Uint8Array(1 << 16);
  private used = 0;
  private ends = new Uint32Array(1 << 10);
  private hashes = new Uint32Array(1 << 10);
  private columns = new Uint32Array(1 << 10);
  count = 0;
  private slots = new Int32Array(1 << 11).fill(-1);

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
        if (2 * this.count > this.slots.length) this.rehash();
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

  private rehash(): void {
    this.slots = new Int32Array(this.slots.length * 2).fill(-1);
    const mask = this.slots.length - 1;
    for (let id = 0; id < this.count; id++) {
      let slot = this.hashes[id]! & mask;
      while (this.slots[slot]! >= 0) slot = (slot + 1) & mask;
      this.slots[slot] = id;
    }
  }

  /** The table, trimmed to its contents. */
  table(): InternedStrings {
    return { bytes: this.bytes.slice(0, this.used), ends: this.ends.slice(0, this.count), columns: this.columns.slice(0, this.count) };
  }
}

export function grow<T extends Uint8Array | Uint32Array>(a: T, need: number): T {
  let n = a.length * 2;
  while (n < need) n *= 2;
  const b = new (a.constructor as new (n: number) => T)(n);
  b.set(a);
  return b;
}

