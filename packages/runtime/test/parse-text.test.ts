/**
 * Facts text parsed on the device (gpu/parse-text.ts) against io's host parser, the oracle: on random files the
 * device either gives the file up (the host then parses it) or gives exactly the host's rows; it never takes a file
 * the host rejects; and for files in the forms it takes (the generator knows which) it does not give up. Tiny read
 * sizes put chunk boundaries everywhere, inside fields included.
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, join } from 'node:path';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, test, vi } from 'vitest';
import { byteSortTimes, decodeRow, EncodedRelation, factsFormat, loadFactsFileInto, StringDictionary, StringInterner } from '@vixen/io';
import { VixenError, type Column, type Row, type ScalarType } from '@vixen/queryplan';
import { compile, Database, openGpu, type Gpu } from '../src/index.js';
import { internals } from '../src/gpu/device.js';
import { BufferPool } from '../src/gpu/pool.js';
import { downloadRelation, releaseRelation } from '../src/gpu/index.js';
import { parseTextOnDevice, textParseTimes } from '../src/gpu/parse-text.js';
import { deviceRowsRelation } from '../src/gpu/parsed-rows.js';
import { PARSE_STRING_GROUP } from '@vixen/codegen-wgsl';

let gpu: Gpu;
let dir: string;
beforeAll(async () => {
  gpu = await openGpu();
  dir = mkdtempSync(join(tmpdir(), 'vixen-parse-text-'));
});
afterAll(() => {
  gpu?.dispose();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

let files = 0;

/** The host's rows of the kept columns (the others unchecked, as a program loads them), or its error messages. */
async function hostRows(path: string, columns: Column[], kept: number[]): Promise<Row[] | string> {
  try {
    const target = new EncodedRelation(kept.map((c) => columns[c]!.type));
    const strings = new StringInterner();
    await loadFactsFileInto(path, columns, target, strings, 'r', undefined, kept);
    return target.rows(strings);
  } catch (e) {
    if (e instanceof VixenError) return e.message;
    throw e;
  }
}

/** The device's rows of the kept columns, or undefined when it gave the file up. */
async function deviceRows(path: string, types: ScalarType[], kept: number[], chunkBytes: number): Promise<Row[] | undefined> {
  const strings = new StringInterner();
  const rows = await parseTextOnDevice(gpu, { path, format: factsFormat(path)!, types, kept, chunkBytes }, strings);
  if (!rows) return undefined;
  const keptTypes = kept.map((c) => types[c]!);
  const rel = await deviceRowsRelation(gpu, rows, keptTypes);
  try {
    const words = await downloadRelation(gpu, rel);
    const width = rel.width;
    const out: Row[] = [];
    for (let at = 0; at < words.length; at += width) out.push(decodeRow(words, at, keptTypes, strings));
    return out;
  } finally {
    releaseRelation(gpu, rel);
  }
}

const TYPES: ScalarType[] = ['int32', 'uint32', 'int64', 'decimal', 'date', 'boolean', 'string'];

/** A field's text and whether the device takes it (the host does too). */
interface Field {
  text: string;
  device: boolean;
}

const digitsOf = (n: number) => fc.stringMatching(new RegExp(`^[0-9]{1,${n}}$`));
const taken = (text: string): Field => ({ text, device: true });

/** Text of a value of `type` in the forms the device takes, plus extremes. */
function deviceField(type: ScalarType, delimiter: string): fc.Arbitrary<Field> {
  switch (type) {
    case 'int32':
      return fc.oneof(fc.integer({ min: -2147483648, max: 2147483647 }).map(String), fc.constantFrom('-0', '+7', '007', '-2147483648', '2147483647')).map(taken);
    case 'uint32':
      return fc.oneof(fc.integer({ min: 0, max: 4294967295 }).map(String), fc.constantFrom('-0', '+4294967295', '0000')).map(taken);
    case 'int64':
      return fc.oneof(fc.bigInt({ min: -(10n ** 18n) + 1n, max: 10n ** 18n - 1n }).map(String), fc.constantFrom('-999999999999999999', '+1', '-0')).map(taken);
    case 'decimal':
      return fc
        .tuple(fc.constantFrom('', '-', '+'), digitsOf(11), fc.option(digitsOf(4), { nil: undefined }))
        .map(([s, i, f]) => taken(`${s}${i}${f === undefined ? '' : `.${f}`}`));
    case 'date':
      return fc.date({ min: new Date('0000-01-01T00:00:00Z'), max: new Date('9999-12-31T00:00:00Z'), noInvalidDate: true }).map((d) => taken(d.toISOString().slice(0, 10)));
    case 'boolean':
      return fc.constantFrom('true', 'false', '1', '0').map(taken);
    case 'string':
      return fc
        .oneof(
          fc.string({ maxLength: 12 }),
          fc.string({ unit: 'grapheme', maxLength: 6 }),
          fc.string({ minLength: 100, maxLength: 300 }),
          fc.constantFrom('', ' padded ', 'é中😀'),
        )
        .map((s) => taken(s.replace(/[\n\r\0]/g, '').split(delimiter).join('')));
    case 'float32':
      throw new Error('not generated');
  }
}

/** Forms the host takes (or rejects) that the device leaves to it. */
function hostField(type: ScalarType): fc.Arbitrary<Field> {
  const odd = fc.constantFrom(' 12', '12 ', '', 'x', '1e3', '99999999999999999999', '1.23456', '2023-02-30', '2023-1-01', 'yes', '-5', '12345678901234567890');
  return odd.map((text) => ({ text, device: type === 'string' }));
}

/**
 * A CSV field as written: quoted (quotes doubled) when it must be (a quote, comma, CR or newline in it) or, now and
 * then, when it need not be; a string may then hold newlines and commas. `inner` is what a quoted string may add.
 */
function csvField(field: Field, quote: boolean, inner: string): Field {
  const text = field.text + inner;
  if (!quote && !/[",\r\n]/.test(field.text)) return field;
  return { text: `"${text.replaceAll('"', '""')}"`, device: field.device };
}

const files$ = fc
  .record({
    ext: fc.constantFrom('.tbl', '.tsv', '.csv', '.facts'),
    types: fc.array(fc.constantFrom(...TYPES), { minLength: 1, maxLength: 5 }),
    keptMask: fc.nat(31),
    crlf: fc.boolean(),
    bom: fc.boolean(),
    finalNewline: fc.boolean(),
    trailing: fc.boolean(),
    chunkBytes: fc.constantFrom(4, 5, 7, 16, 61, 1 << 16),
    seed: fc.nat(),
  })
  .chain((f) => {
    const format = factsFormat(`x${f.ext}`)!;
    const delimiter = format.delimiter;
    // A third of the files have fields in host-only forms and wrong field counts; the others are all device forms.
    const odd = f.seed % 3 === 0;
    const plain = (t: ScalarType) => (odd ? fc.oneof({ weight: 8, arbitrary: deviceField(t, delimiter) }, { weight: 1, arbitrary: hostField(t) }) : deviceField(t, delimiter));
    // CSV fields quoted at random, strings with quotes, commas and (rarely) newlines inside.
    const field = (t: ScalarType) =>
      format.quoting
        ? fc
            .tuple(plain(t), fc.boolean(), t === 'string' ? fc.constantFrom('', '', '', '"', ',', 'a""b', '\n', '\r\n') : fc.constant(''))
            .map(([f, quote, inner]) => csvField(f, quote, inner))
        : plain(t);
    const line = fc.oneof(
      { weight: 10, arbitrary: fc.tuple(...f.types.map(field)) },
      // Empty lines, and in odd files now and then a wrong field count.
      { weight: 1, arbitrary: fc.constant('empty' as const) },
      { weight: odd ? 1 : 0, arbitrary: fc.constant('short' as const) },
    );
    return fc.record({ f: fc.constant(f), lines: fc.array(line, { maxLength: 12 }) });
  });

describe('device text parsing equals the host parser', () => {
  test('random files, every type, tiny chunks', async () => {
    let deviceParsed = 0;
    let quotedParsed = 0;
    const before = { ...textParseTimes };
    await fc.assert(
      fc.asyncProperty(files$, async ({ f, lines }) => {
        const format = factsFormat(`x${f.ext}`)!;
        const eol = f.crlf ? '\r\n' : '\n';
        let simple = true;
        const texts = lines.map((l) => {
          if (l === 'empty') return '';
          if (l === 'short') {
            simple = false;
            return f.types.length === 1 ? `1${format.delimiter}2${format.delimiter}3` : 'x';
          }
          // A quoted newline may fall at a chunk's end, which the device leaves to the host.
          simple &&= l.every((x) => x.device && !x.text.includes('\n'));
          return l.map((x) => x.text).join(format.delimiter) + (format.trailingDelimiter && f.trailing ? format.delimiter : '');
        });
        const body = texts.join(eol) + (f.finalNewline && texts.length > 0 ? eol : '');
        const path = join(dir, `f${files++}${f.ext}`);
        writeFileSync(path, (f.bom ? '\uFEFF' : '') + body);
        const kept = f.types.map((_, i) => i).filter((i) => (f.keptMask >> i) & 1);
        if (kept.length === 0) kept.push(0);
        const columns = f.types.map((type, i) => ({ name: `c${i}`, type }));
        const host = await hostRows(path, columns, kept);
        const device = await deviceRows(path, f.types, kept, f.chunkBytes);
        // A single empty string column: the host reads an empty line as nothing, not a row (the device too).
        if (device !== undefined) {
          deviceParsed++;
          if (format.quoting && body.includes('"')) quotedParsed++;
          expect(device).toEqual(host);
        } else if (simple && typeof host !== 'string' && host.length > 0) {
          expect.fail(`the device gave up a file in its forms: ${JSON.stringify((f.bom ? '\uFEFF' : '') + body)}`);
        }
      }),
      { numRuns: 100, seed: 37 },
    );
    expect(deviceParsed).toBeGreaterThan(50);
    expect(quotedParsed).toBeGreaterThan(10);
    // Chunks after a file's first are counted and parsed in one round trip.
    expect(textParseTimes.oneTrip - before.oneTrip).toBeGreaterThan(0);
  }, 300_000);
});

test('repeated, colliding and prefix strings read as the host reads them, across chunks', async () => {
  // 50 values repeated (equal hashes, probing past other strings in a table of few slots), unique ones, prefixes of
  // each other and strings differing in one byte: the dedup compares bytes, not only hashes and lengths.
  const names = Array.from({ length: 50 }, (_, i) => `name ${i % 7 === 0 ? '' : 'x'.repeat(i)}${i}`);
  const lines = Array.from({ length: 3000 }, (_, i) => `${i}\t${names[(i * 31) % 50]}\t${i % 5 === 0 ? `u${i}` : i % 2 ? 'ab' : 'ac'}\t${'a'.repeat(i % 4)}`);
  const path = join(dir, `strings.tsv`);
  writeFileSync(path, lines.join('\n'));
  const types: ScalarType[] = ['int32', 'string', 'string', 'string'];
  const host = await hostRows(path, types.map((type, i) => ({ name: `c${i}`, type })), [0, 1, 2, 3]);
  for (const chunkBytes of [1 << 20, 4096, 100]) expect(await deviceRows(path, types, [0, 1, 2, 3], chunkBytes)).toEqual(host);
});

test('parse passes are shared by every layout; more string columns than one group of them read as the host reads them', async () => {
  // 25 string columns (two groups of PARSE_STRING_GROUP) between numbers, some kept and some not.
  const columns = 30;
  const types: ScalarType[] = Array.from({ length: columns }, (_, c) => (c % 6 === 0 ? 'int32' : 'string'));
  const lines = Array.from({ length: 700 }, (_, i) => types.map((t, c) => (t === 'int32' ? String(i * columns + c) : `s${(i * (c + 1)) % (5 + c)}-${c}`)).join('|'));
  const path = join(dir, 'wide.tbl');
  writeFileSync(path, lines.join('\n'));
  const all = types.map((_, c) => c);
  const some = all.filter((c) => c % 5 !== 2);
  expect(types.filter((t, c) => t === 'string' && some.includes(c)).length).toBeGreaterThan(PARSE_STRING_GROUP);
  for (const kept of [all, some]) {
    const host = await hostRows(path, types.map((type, i) => ({ name: `c${i}`, type })), kept);
    expect(await deviceRows(path, types, kept, 4096)).toEqual(host);
  }
  // A file of another layout (other columns, delimiter and string offsets) compiles nothing: its layout is data.
  const g = internals(gpu);
  const before = g.compiled.pipelines;
  const other = join(dir, 'other.tsv');
  writeFileSync(other, Array.from({ length: 50 }, (_, i) => `x${i % 3}\t${i}\ty${i % 4}`).join('\n'));
  const otherTypes: ScalarType[] = ['string', 'int32', 'string'];
  expect(await deviceRows(other, otherTypes, [0, 1, 2], 1 << 20)).toEqual(await hostRows(other, otherTypes.map((type, i) => ({ name: `c${i}`, type })), [0, 1, 2]));
  expect(g.compiled.pipelines - before).toBe(0);
});

test('a chunk of more records than its room (sized by the chunks before it) is parsed again at its count', async () => {
  // Long lines first, then ever shorter ones: each chunk holds more records than the fewest bytes a record took
  // before it suggest; strings repeat across chunks and within them.
  const lines = Array.from({ length: 2000 }, (_, i) => `${i}|${i < 200 ? `long ${'x'.repeat(60 + (i % 7))}` : `s${i % (3 + Math.floor(i / 400))}`}|${i % 9}|`);
  const path = join(dir, 'shrinking.tbl');
  writeFileSync(path, lines.join('\n'));
  const types: ScalarType[] = ['int32', 'string', 'int32'];
  const host = await hostRows(path, types.map((type, i) => ({ name: `c${i}`, type })), [0, 1, 2]);
  const before = { ...textParseTimes };
  expect(await deviceRows(path, types, [0, 1, 2], 2048)).toEqual(host);
  expect(textParseTimes.roomMissed - before.roomMissed).toBeGreaterThan(0);
  expect(textParseTimes.oneTrip - before.oneTrip).toBeGreaterThan(textParseTimes.roomMissed - before.roomMissed);
});

test('files parsed at once share the chunk slots; mostly distinct strings, a line many reads long', async () => {
  // Six files at once (more than a CPU adapter's chunk slots, so some wait for others), names and comments all
  // distinct (sliced from the chunk's gathered bytes), some non-ASCII, quoted CSV ones with doubled quotes, and a
  // line of 100,000 bytes (past the room kept in front of each read for a part line).
  const paths = Array.from({ length: 6 }, (_, f) => {
    const csv = f % 2 === 1;
    const lines = Array.from({ length: 400 }, (_, i) => {
      const name = f === 2 && i % 3 === 0 ? `näme ${i} ü` : `name ${f}-${i}`;
      const comment = f === 4 && i === 200 ? 'y'.repeat(60_000) : csv && i % 5 === 0 ? `"say ""${i}"", then"` : `comment ${i * 7919}`;
      return csv ? `${i},${name},${comment}` : `${i}|${name}|${comment}|`;
    });
    const path = join(dir, `distinct-${f}.${csv ? 'csv' : 'tbl'}`);
    writeFileSync(path, lines.join('\n'));
    return path;
  });
  const types: ScalarType[] = ['int32', 'string', 'string'];
  const columns = types.map((type, i) => ({ name: `c${i}`, type }));
  // Sorted by the workers (a CPU adapter's default) and by the device, which takes the strings the parse left there.
  const inUse = internals(gpu).pool.inUseBytes;
  for (const sort of ['workers', 'device']) {
    vi.stubEnv('VIXEN_STRING_SORT', sort);
    try {
      for (const chunkBytes of [1 << 16, 1000]) {
        const sorts = byteSortTimes.deviceSorts;
        const hosts = await Promise.all(paths.map((p) => hostRows(p, columns, [0, 1, 2])));
        const devices = await Promise.all(paths.map((p) => deviceRows(p, types, [0, 1, 2], chunkBytes)));
        expect(devices).toEqual(hosts);
        expect((hosts[4] as Row[])[200]![2]).toBe('y'.repeat(60_000));
        // The ASCII files' strings (two .tbl files: the CSV ones have doubled quotes) are sorted as bytes, on the device
        // where forced.
        expect(byteSortTimes.deviceSorts - sorts).toBe(sort === 'device' ? 2 : 0);
      }
    } finally {
      vi.unstubAllEnvs();
    }
  }
  expect(internals(gpu).pool.inUseBytes).toBe(inUse);
});

test('invalid UTF-8 is left to the host, which says where; valid forms of every length are taken', async () => {
  const good = join(dir, 'utf8.tsv');
  // 2, 3 and 4 byte forms at their edges (U+0080, U+07FF, U+0800, U+FFFF, U+10000, U+10FFFF), next to U+D7FF.
  writeFileSync(good, ['1\t\u0080\u07ff', '2\t\u0800\uffff\ud7ff', '3\t\u{10000}\u{10ffff}', '4\tplain'].join('\n'));
  const types: ScalarType[] = ['int32', 'string'];
  const columns = types.map((type, i) => ({ name: `c${i}`, type }));
  expect(await deviceRows(good, types, [0, 1], 1 << 16)).toEqual(await hostRows(good, columns, [0, 1]));
  const bad = [[0xff], [0xc0, 0x80], [0xe0, 0x80, 0x80], [0xed, 0xa0, 0x80], [0xf4, 0x90, 0x80, 0x80], [0x80], [0xc3], [0xe2, 0x82], [0xc3, 0xa9, 0xa9]];
  for (const [k, bytes] of bad.entries()) {
    const path = join(dir, `bad-utf8-${k}.tsv`);
    writeFileSync(path, Buffer.concat([Buffer.from('1\tok\n2\tx'), Buffer.from(bytes), Buffer.from('y\n3\tok\n')]));
    expect(await deviceRows(path, types, [0, 1], 1 << 16)).toBeUndefined();
    expect(await hostRows(path, columns, [0, 1])).toMatch(/UTF-8/);
  }
});

test('CSV quoted fields parse on the device: commas, doubled quotes, newlines, quoted numbers', async () => {
  const path = join(dir, 'quoted.csv');
  writeFileSync(path, '1,"a, b","2024-01-02"\r\n"2","say ""hi""\nthere",2024-01-03\r\n3,"",\"1999-12-31\"\n\n4,plain,2000-02-29');
  const types: ScalarType[] = ['int32', 'string', 'date'];
  const host = await hostRows(path, types.map((type, i) => ({ name: `c${i}`, type })), [0, 1, 2]);
  expect(host).toEqual([
    [1, 'a, b', 19724],
    [2, 'say "hi"\nthere', 19725],
    [3, '', 10956],
    [4, 'plain', 11016],
  ]);
  expect(await deviceRows(path, types, [0, 1, 2], 1 << 16)).toEqual(host);
  // A chunk cut inside the quoted newline: the device gives the file up.
  expect(await deviceRows(path, types, [0, 1, 2], 24)).toBeUndefined();
});

test('a chunk given up while the next one fails to read leaves nothing unsettled', async () => {
  // The first chunk has a bad int32; the read ahead meets invalid UTF-8.
  const path = join(dir, 'both-bad.tsv');
  writeFileSync(path, Buffer.concat([Buffer.from('x\ta\n'), Buffer.from([0x32, 0x09, 0xff, 0x0a])]));
  expect(await deviceRows(path, ['int32', 'string'], [0, 1], 4)).toBeUndefined();
  expect(await deviceRows(join(dir, 'no-such.tsv'), ['int32'], [0], 4)).toBeUndefined();
});

describe('runs and databases with parse: device', () => {
  const schema = `
item(id, name, price, day, ok) -> int32(id), string(name), decimal(price), date(day), boolean(ok).
tag(id, label) -> int32(id), string(label).
`;
  const program = compile(`${schema}cheap(name, label, day) <- item(id, name, price, day, true), tag(id, label), price < 10.5.`);

  const write = (name: string, files: Record<string, string>): string => {
    const d = join(dir, name);
    mkdirSync(d);
    for (const [f, text] of Object.entries(files)) writeFileSync(join(d, f), text);
    return d;
  };
  const items = Array.from({ length: 40 }, (_, i) => `${i}|name ${i % 7}|${(i * 1.25).toFixed(2)}|2024-02-${String((i % 29) + 1).padStart(2, '0')}|${i % 3 === 0 ? 'false' : 'true'}|`);
  const tags = Array.from({ length: 30 }, (_, i) => `${i}\tlabel ${i % 4} é`);

  test('gives the answers host parsing gives, strings included', async () => {
    const facts = write('good', { 'item.tbl': items.join('\n') + '\n', 'tag.tsv': tags.join('\r\n') });
    const host = await program.run({ gpu, factsDir: facts, parse: 'host' });
    const progress: number[] = [];
    const device = await program.run({ gpu, factsDir: facts, parse: 'device', onLoadProgress: (p) => progress.push(p.bytesDone / p.bytesTotal) });
    // Progress by chunk as the device parses them, up to every byte.
    expect(progress.at(-1)).toBe(1);
    expect(progress.every((x, i) => i === 0 || x >= progress[i - 1]!)).toBe(true);
    expect(device.relations.get('cheap')!.length).toBeGreaterThan(5);
    expect(device.relations).toEqual(host.relations);
    expect(device.stats.uploads.filter((u) => u.parsedOnDevice).map((u) => u.name).sort()).toEqual(['item', 'tag']);
    expect(host.stats.uploads.filter((u) => u.parsedOnDevice)).toEqual([]);
    const db = new Database(gpu, facts, { parse: 'device' });
    try {
      const first = await db.run(program);
      expect(first.relations).toEqual(host.relations);
      expect(first.stats.uploads.filter((u) => u.parsedOnDevice).length).toBe(2);
      // Resident now: the second run reads no file.
      expect((await db.run(program)).relations).toEqual(host.relations);
    } finally {
      db.clear();
    }
  });

  test('a later run\'s dictionary merges a resident relation\'s strings as bytes, decoding none', async () => {
    // 3,000 distinct ASCII names; the second program's constant is in no dictionary yet, so its run builds its own.
    const many = Array.from({ length: 3000 }, (_, i) => `${i}|name ${(i * 7919) % 3000}|1.00|2024-02-01|true|`);
    const facts = write('resident-bytes', { 'item.tbl': many.join('\n') + '\n', 'tag.tsv': '1\tx\n' });
    const later = compile(`${schema}below(id) <- item(id, name, _, _, _), name < "name 15x", name > "name 149".`);
    const want = await later.run({ gpu, factsDir: facts, parse: 'host' });
    const db = new Database(gpu, facts, { parse: 'device' });
    const text = vi.spyOn(StringDictionary.prototype, 'text');
    try {
      await db.run(compile(`${schema}all(id, name) <- item(id, name, _, _, _).`));
      text.mockClear();
      const got = await db.run(later);
      expect(got.relations).toEqual(want.relations);
      expect(got.relations.get('below')!.length).toBeGreaterThan(5);
      // Far fewer than the relation's strings (the constants' lookups search a few).
      expect(text.mock.calls.length).toBeLessThan(100);
    } finally {
      text.mockRestore();
      db.clear();
    }
  });

  /** The error message of a run that must fail, and whether every GPU buffer it took was given back. */
  const failure = async (facts: string, parse: 'host' | 'device'): Promise<{ message: string; balanced: boolean }> => {
    const pool = internals(gpu).pool;
    let held = 0;
    const acquire = vi.spyOn(pool, 'acquire').mockImplementation(function (this: typeof pool, ...args) {
      held++;
      return BufferPool.prototype.acquire.apply(this, args);
    });
    const release = vi.spyOn(pool, 'release').mockImplementation(function (this: typeof pool, ...args) {
      held--;
      return BufferPool.prototype.release.apply(this, args);
    });
    try {
      const error = await program.run({ gpu, factsDir: facts, parse }).then(() => undefined, (e: unknown) => e);
      expect(error).toBeInstanceOf(VixenError);
      const lines = (error as VixenError).diagnostics.map((d) => `${d.span ? `${basename(d.span.file)}:${d.span.start.line}:${d.span.start.column}: ` : ''}${d.message}`);
      return { message: lines.join('\n'), balanced: held === 0 };
    } finally {
      acquire.mockRestore();
      release.mockRestore();
    }
  };

  test('relations past one binding: many chunks, sorted as chunked relations', async () => {
    const small = await openGpu({ maxStorageBufferBindingSize: 1 << 16 });
    try {
      // 20000 rows of 2 words: 160 KB of rows, 8 KiB chunks of text.
      const facts = write('big', {
        'item.tbl': Array.from({ length: 20000 }, (_, i) => `${(i * 7919) % 20000}|n${i % 300}|${i % 100}.5|2024-01-01|true|`).join('\n'),
        'tag.tsv': Array.from({ length: 20000 }, (_, i) => `${i}\tl${i % 3}`).join('\n'),
      });
      const host = await program.run({ gpu: small, factsDir: facts, parse: 'host' });
      const device = await program.run({ gpu: small, factsDir: facts, parse: 'device' });
      expect(device.stats.uploads.filter((u) => u.parsedOnDevice).length).toBe(2);
      expect(device.relations.get('cheap')!.length).toBeGreaterThan(50);
      expect(device.relations).toEqual(host.relations);
    } finally {
      small.dispose();
    }
  });

  test('a malformed field gives the host parser messages, and nothing stays on the device', async () => {
    const bad = [...items];
    bad[17] = '17|name|12.5|2024-02-30|true|';
    bad[23] = '23|name|1.2.3|2024-02-01|true|';
    const facts = write('bad', { 'item.tbl': bad.join('\n'), 'tag.tsv': tags.join('\n') });
    const host = await failure(facts, 'host');
    expect(host.message).toBe(
      'item.tbl:18:14: expected date in column 4 (day) of item, found "2024-02-30" (no such day)\n' +
        'item.tbl:24:9: expected decimal in column 3 (price) of item, found "1.2.3"',
    );
    expect(await failure(facts, 'device')).toEqual({ message: host.message, balanced: true });
  });

  test('a file parsed on the device is given back when a later file fails', async () => {
    // item.tbl parses on the device; tag.tsv has a bad id.
    const facts = write('bad-later', { 'item.tbl': items.join('\n'), 'tag.tsv': [...tags, 'x\tlabel'].join('\n') });
    const host = await failure(facts, 'host');
    expect(host.message).toBe('tag.tsv:31:1: expected int32 in column 1 (id) of tag, found "x"');
    expect(await failure(facts, 'device')).toEqual({ message: host.message, balanced: true });
  });
});
