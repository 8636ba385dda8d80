/**
 * The device parser's reader (gpu/text-chunks.ts): chunks of whole lines that put together give the file back (a BOM
 * dropped, a final newline added), whatever the read size and line lengths, lines longer than the room kept in
 * front of a read included; files read at once share the slots and give every one back. (The device checks the
 * text itself: UTF-8 in parse-text.test.ts.)
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import fc from 'fast-check';
import { afterAll, expect, test } from 'vitest';
import { HostParses, hostMemory, TextChunkReader, TextChunkSlots } from '../src/gpu/text-chunks.js';

const dir = mkdtempSync(join(tmpdir(), 'vixen-text-chunks-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** The file's chunks put together, checking each (whole lines, 4-byte aligned after newlines that align it). */
async function chunksOf(path: string, chunkBytes: number, slots: TextChunkSlots, ahead: number): Promise<string> {
  const reader = await TextChunkReader.open(path, chunkBytes, slots, hostMemory);
  const parts: string[] = [];
  try {
    for (;;) {
      await reader.fill(ahead);
      const chunk = await reader.next();
      if (!chunk) break;
      expect(chunk.bytes.at(-1)).toBe(10);
      expect(chunk.bytes.byteOffset % 4).toBe(0);
      expect(chunk.lead).toBeLessThan(4);
      expect(chunk.bytes.subarray(0, chunk.lead).every((b) => b === 10)).toBe(true);
      parts.push(Buffer.from(chunk.bytes.subarray(chunk.lead)).toString('utf8'));
      reader.done(chunk);
    }
  } finally {
    await reader.close();
  }
  return parts.join('');
}

let files = 0;

test('chunks put together give the file back; slots all given back', async () => {
  // Long lines only with reads that are not tiny: a read per 5 bytes of 70,000 is slow and proves nothing more.
  const case$ = fc.constantFrom(5, 1000, 1 << 16).chain((chunkBytes) => {
    const long = chunkBytes >= 1000 ? ['x'.repeat(70_000), 'y'.repeat(3000)] : ['y'.repeat(40)];
    const line = fc.oneof(fc.string({ maxLength: 30 }), fc.constantFrom('é中😀', ...long), fc.constant(''));
    const file = fc.record({ lines: fc.array(line.map((s) => s.replace(/[\n\r]/g, '')), { maxLength: 8 }), bom: fc.boolean(), finalNewline: fc.boolean() });
    return fc.tuple(fc.array(file, { minLength: 1, maxLength: 4 }), fc.constant(chunkBytes));
  });
  await fc.assert(
    fc.asyncProperty(
      case$,
      async ([specs, chunkBytes]) => {
        const slots = new TextChunkSlots(3);
        const texts = specs.map((f) => f.lines.join('\n') + (f.finalNewline && f.lines.length > 0 ? '\n' : ''));
        const paths = specs.map((f, i) => {
          const path = join(dir, `f${files++}.txt`);
          writeFileSync(path, (f.bom ? '\uFEFF' : '') + texts[i]);
          return path;
        });
        const read = await Promise.all(paths.map((p) => chunksOf(p, chunkBytes, slots, 2)));
        expect(read).toEqual(texts.map((t) => (t === '' || t.endsWith('\n') ? t : `${t}\n`)));
        // Every slot given back: the limit's worth can be taken again, and no more.
        for (let i = 0; i < 3; i++) expect(slots.take()).toBe(true);
        expect(slots.take()).toBe(false);
      },
    ),
    { numRuns: 60 },
  );
});

test('a file ending with a CR is left to the host, its slots given back', async () => {
  const path = join(dir, 'cr.txt');
  writeFileSync(path, 'a\nb\r');
  const slots = new TextChunkSlots(2);
  await expect(chunksOf(path, 2, slots, 2)).rejects.toBeInstanceOf(HostParses);
  expect(slots.take() && slots.take()).toBe(true);
  expect(slots.take()).toBe(false);
});

test('reads larger than a read part come back whole, in order', async () => {
  // 40 MiB of numbered lines read 33 MiB at a time: parts of 16, 16 and 1 MiB, then the rest.
  const lines = Array.from({ length: 1 << 20 }, (_, i) => `${i}|${'v'.repeat(i % 61)}`);
  const text = `${lines.join('\n')}\n`;
  const path = join(dir, 'large.txt');
  writeFileSync(path, text);
  expect(text.length).toBeGreaterThan(33 * 2 ** 20);
  expect(await chunksOf(path, 33 * 2 ** 20, new TextChunkSlots(2), 2)).toBe(text);
});
