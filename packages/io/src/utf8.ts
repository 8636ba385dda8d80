/**
 * UTF-8 checks for files the user hands in. Node decodes invalid bytes to U+FFFD without a word, which would turn
 * a Latin-1 facts file or source into silently different strings; these checks make that an error with a place.
 */
import { isUtf8 } from 'node:buffer';
import { readFileSync } from 'node:fs';
import { Transform } from 'node:stream';
import { errorAt, VixenError } from '@vixen/queryplan';

/** Character index in `text` (decoded from `bytes`) of the first invalid UTF-8 sequence, or undefined if none. */
export function firstInvalidUtf8(bytes: Uint8Array, text: string): number | undefined {
  if (isUtf8(bytes)) return undefined;
  // Up to the first bad sequence the text and bytes agree, so a U+FFFD there is either real (EF BF BD) or the bad one.
  for (let i = text.indexOf('\uFFFD'); i >= 0; i = text.indexOf('\uFFFD', i + 1)) {
    const at = Buffer.byteLength(text.slice(0, i));
    if (!(bytes[at] === 0xef && bytes[at + 1] === 0xbf && bytes[at + 2] === 0xbd)) return i;
  }
  return text.length;
}

/** Bytes at the end of `b` that start a multi-byte character the next chunk completes. */
function incompleteTail(b: Uint8Array): number {
  for (let back = 1; back <= Math.min(3, b.length); back++) {
    const byte = b[b.length - back]!;
    if ((byte & 0xc0) === 0x80) continue;
    const need = byte >= 0xf0 ? 4 : byte >= 0xe0 ? 3 : byte >= 0xc0 ? 2 : 1;
    return need > back ? back : 0;
  }
  return 0;
}

/**
 * Passes a byte stream through unchanged and calls `onInvalid` (once) before passing on the first chunk that is
 * not UTF-8, so a parser downstream knows that the U+FFFD it meets from then on stands for bad bytes.
 */
export function watchUtf8(onInvalid: () => void): Transform {
  let carry: Uint8Array = new Uint8Array(0);
  let bad = false;
  const fail = (): void => {
    bad = true;
    onInvalid();
  };
  return new Transform({
    transform(chunk: Buffer, _encoding, done) {
      if (!bad) {
        const b = carry.length > 0 ? Buffer.concat([carry, chunk]) : chunk;
        const tail = incompleteTail(b);
        carry = Buffer.from(b.subarray(b.length - tail));
        if (!isUtf8(b.subarray(0, b.length - tail))) fail();
      }
      done(null, chunk);
    },
    flush(done) {
      if (!bad && carry.length > 0) fail();
      done();
    },
  });
}

const READ_PROBLEMS: Record<string, string> = {
  ENOENT: 'no such file',
  EISDIR: 'it is a directory',
  EACCES: 'permission denied',
  EPERM: 'permission denied',
};

/**
 * A user's text file (`what` names it in messages: "program file"), decoded as UTF-8; a leading BOM is dropped.
 * Unreadable files and invalid UTF-8 are user errors, the latter located at the first bad byte.
 */
export function readTextFile(path: string, what: string): string {
  let bytes: Buffer;
  try {
    bytes = readFileSync(path);
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code ?? '';
    throw new VixenError(errorAt(`cannot read ${what} ${path}: ${READ_PROBLEMS[code] ?? (e as Error).message}`));
  }
  const text = bytes.toString('utf8');
  const bad = firstInvalidUtf8(bytes, text);
  if (bad !== undefined) {
    const lineStart = text.lastIndexOf('\n', bad - 1) + 1;
    const line = text.slice(0, lineStart).split('\n').length;
    const column = bad - lineStart + 1;
    const span = { file: path, start: { line, column, offset: bad }, end: { line, column: column + 1, offset: bad + 1 } };
    throw new VixenError(errorAt(`invalid UTF-8 in ${what}: it must be UTF-8 (convert it, e.g. with iconv)`, span), new Map([[path, text]]));
  }
  return text.startsWith('\uFEFF') ? text.slice(1) : text;
}
