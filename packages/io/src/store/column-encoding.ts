/**
 * How a store column file holds its values (store version 3). `words`: the device words as they are (wordsOf(type)
 * per value). `frame`: frame of reference: value = base + n * step, n an unsigned little-endian integer of `width`
 * bytes, computed in the words' own arithmetic (modulo 2^32 for one word, modulo 2^64 for two), so it is exact for
 * any bits: ints, dates, decimals as scaled ints, dictionary ids, booleans. An import picks per column the narrowest
 * encoding that holds every value (narrowColumn); a load uploads those bytes and widens them on the device
 * (codegen-wgsl storeColumn) or here on the host (widenColumn).
 */
export type ColumnEncoding = { kind: 'words' } | FrameEncoding;

export interface FrameEncoding {
  kind: 'frame';
  /** Bytes per value. */
  width: 1 | 2 | 3 | 4;
  /** The base value's words (lo, hi for a two-word value). */
  base: number[];
  /** What one unit of n adds, >= 1. */
  step: number;
}

export const WORDS_ENCODING: ColumnEncoding = { kind: 'words' };

/** Bytes per value of a column of `valueWords` words per value in `encoding`. */
export const bytesPerValue = (encoding: ColumnEncoding, valueWords: number): number => (encoding.kind === 'words' ? 4 * valueWords : encoding.width);

/** Greatest common divisor of two integers below 2^53. */
function gcd(a: number, b: number): number {
  while (b !== 0) {
    const r = a % b;
    a = b;
    b = r;
  }
  return a;
}

/**
 * The narrowest encoding of a column's `words` (`valueWords` words per value, back to back) that holds every value
 * exactly, and its bytes: frame of reference where the values' range divided by the gcd of their distances from the
 * minimum fits 1 to 4 bytes, fewer than the words; else the words themselves.
 */
export function narrowColumn(words: Uint32Array, valueWords: number): { encoding: ColumnEncoding; bytes: Uint8Array } {
  const plain = { encoding: WORDS_ENCODING, bytes: new Uint8Array(words.buffer, words.byteOffset, words.byteLength) };
  const rows = words.length / valueWords;
  if (rows === 0 || valueWords > 2) return plain;
  let base: number[];
  let range: number;
  /** Value i's distance from the base (exact: the range is below 2^53). */
  let distance: (i: number) => number;
  if (valueWords === 1) {
    // One word: the smaller range of the words read unsigned and read signed (either wraps to the same bits).
    let umin = words[0]!;
    let umax = umin;
    let smin = umin | 0;
    let smax = smin;
    for (let i = 1; i < rows; i++) {
      const w = words[i]!;
      if (w < umin) umin = w;
      else if (w > umax) umax = w;
      const s = w | 0;
      if (s < smin) smin = s;
      else if (s > smax) smax = s;
    }
    const signed = smax - smin < umax - umin;
    const lo = signed ? smin >>> 0 : umin;
    base = [lo];
    range = signed ? smax - smin : umax - umin;
    distance = (i) => (words[i]! - lo) >>> 0;
  } else {
    // Two words (int64, decimal): signed 64-bit order, the high word signed, then the low one unsigned.
    let minAt = 0;
    let maxAt = 0;
    for (let i = 1; i < rows; i++) {
      const hi = words[2 * i + 1]! | 0;
      const lo = words[2 * i]!;
      const minHi = words[2 * minAt + 1]! | 0;
      const maxHi = words[2 * maxAt + 1]! | 0;
      if (hi < minHi || (hi === minHi && lo < words[2 * minAt]!)) minAt = i;
      else if (hi > maxHi || (hi === maxHi && lo > words[2 * maxAt]!)) maxAt = i;
    }
    const lo = words[2 * minAt]!;
    const hi = words[2 * minAt + 1]! | 0;
    distance = (i) => ((words[2 * i + 1]! | 0) - hi) * 2 ** 32 + (words[2 * i]! - lo);
    // Inexact past 2^53, but then the units cannot fit 32 bits below a step of 2^21 (not worth finding).
    range = distance(maxAt);
    if (range >= 2 ** 53) return plain;
    base = [lo, hi >>> 0];
  }
  let step = 0;
  // Most distances are multiples of the step found so far: one remainder each, Euclid only for the others.
  for (let i = 0; i < rows && step !== 1; i++) {
    const d = distance(i);
    if (step === 0 || d % step !== 0) step = gcd(step, d);
  }
  step ||= 1;
  const most = range / step;
  const width = most < 2 ** 8 ? 1 : most < 2 ** 16 ? 2 : most < 2 ** 24 ? 3 : most < 2 ** 32 ? 4 : 0;
  // The device multiplies by a one-word step (two-word values 2^32 or more apart, only, have a wider one).
  if (width === 0 || width >= 4 * valueWords || step >= 2 ** 32) return plain;
  const bytes = new Uint8Array(rows * width);
  if (width === 3) {
    for (let i = 0; i < rows; i++) {
      const n = distance(i) / step;
      bytes[3 * i] = n;
      bytes[3 * i + 1] = n >>> 8;
      bytes[3 * i + 2] = n >>> 16;
    }
  } else {
    const n = width === 1 ? bytes : width === 2 ? new Uint16Array(bytes.buffer) : new Uint32Array(bytes.buffer);
    for (let i = 0; i < rows; i++) n[i] = distance(i) / step;
  }
  return { encoding: { kind: 'frame', width, base, step }, bytes };
}

/** Where widenColumn writes: value i's words at `out[at + i * stride]` on (rows of `stride` words, a column at `at`). */
export interface WidenTarget {
  out: Uint32Array;
  at: number;
  stride: number;
}

/**
 * The words (`valueWords` per value) of values [first, first + rows) of `bytes` (a column file in `encoding`, in its
 * own buffer), written straight into rows of `out`.
 */
export function widenColumn(bytes: Uint8Array, encoding: ColumnEncoding, valueWords: number, first: number, rows: number, { out, at, stride }: WidenTarget): void {
  const per = bytesPerValue(encoding, valueWords);
  if (bytes.length % per !== 0 || (first + rows) * per > bytes.length) throw new Error(`internal: values ${first} to ${first + rows} of ${bytes.length} bytes`);
  if (encoding.kind === 'words') {
    const words = new Uint32Array(bytes.buffer, bytes.byteOffset + first * per, rows * valueWords);
    if (valueWords === 1) {
      for (let i = 0, o = at; i < rows; i++, o += stride) out[o] = words[i]!;
      return;
    }
    for (let i = 0, o = at; i < rows; i++, o += stride) {
      out[o] = words[2 * i]!;
      out[o + 1] = words[2 * i + 1]!;
    }
    return;
  }
  const { width, base, step } = encoding;
  let n: ArrayLike<number>;
  if (width === 3) {
    const three = new Uint32Array(rows);
    for (let i = 0, b = 3 * first; i < rows; i++, b += 3) three[i] = bytes[b]! | (bytes[b + 1]! << 8) | (bytes[b + 2]! << 16);
    n = three;
  } else {
    const values = bytes.length / width;
    const all = width === 1 ? bytes : width === 2 ? new Uint16Array(bytes.buffer, bytes.byteOffset, values) : new Uint32Array(bytes.buffer, bytes.byteOffset, values);
    n = all.subarray(first, first + rows);
  }
  const lo = base[0]!;
  if (valueWords === 1) {
    // Math.imul wraps as the device's u32 product does.
    for (let i = 0, o = at; i < rows; i++, o += stride) out[o] = lo + Math.imul(n[i]!, step);
    return;
  }
  const hi = base[1]!;
  for (let i = 0, o = at; i < rows; i++, o += stride) {
    // Exact for a column an import wrote (below 2^53); as the device's 64-bit sum for any other.
    const d = n[i]! * step;
    const dHi = Math.floor(d / 2 ** 32);
    const dLo = d - dHi * 2 ** 32;
    const sum = (lo + dLo) >>> 0;
    out[o] = sum;
    out[o + 1] = hi + dHi + (sum < dLo ? 1 : 0);
  }
}
