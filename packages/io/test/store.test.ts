/**
 * The columnar store (store/): an import loads back as the rows its text files give, every type and every column
 * subset; a load reads only the column files its program keeps; and a store that is not what its manifest says
 * (missing, truncated or corrupt file, another version, a corrupt manifest) or does not fit the program's
 * declaration is a VixenError naming the file or column, never rows.
 */
import { appendFileSync, cpSync, existsSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, statSync, truncateSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { VixenError, type Column, type RelationDecl, type Row } from '@vixen/queryplan';
import { EncodedFacts, loadFactsDir, loadFactsDirInto } from '../src/facts/index.js';
import { importStore } from '../src/store/import.js';
import type { LoadProgress } from '../src/load-progress.js';
import { STORE_MANIFEST } from '../src/store/manifest.js';
import { StoreDictionary, writeDictionary } from '../src/store/dictionary.js';
import { readStoreFile, StoreFileReader, writeStoreFile } from '../src/store/files.js';

const root = mkdtempSync(join(tmpdir(), 'vixen-store-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));

const columns: Column[] = [
  { name: 'i', type: 'int32' },
  { name: 'u', type: 'uint32' },
  { name: 'l', type: 'int64' },
  { name: 'f', type: 'float32' },
  { name: 'd', type: 'decimal' },
  { name: 'b', type: 'boolean' },
  { name: 'dt', type: 'date' },
  { name: 's', type: 'string' },
];
const lines = [
  '1,0,0,0,0,true,1970-01-01,plain',
  '-2147483648,4294967295,-9223372036854775808,-1.5e-7,-922337203685477.5808,false,0001-01-01,"quoted, with comma"',
  '2147483647,7,9223372036854775807,3.4e38,922337203685477.5807,true,9999-12-31,ünïcödé 😀',
  '3,8,-1,2.5,0.0001,false,2024-02-29,',
  '4,9,123456789012,1,12.5,true,1969-12-31,plain',
];
const decl = (name: string, keep?: number[]): RelationDecl => ({
  name,
  columns: keep ? keep.map((c) => columns[c]!) : columns,
  kind: 'edb',
  output: false,
  ...(keep ? { pruned: { sourceColumns: columns, loadColumns: keep } } : {}),
});
const other: Column[] = [
  { name: 'x', type: 'int32' },
  { name: 'name', type: 'string' },
];
const otherDecl: RelationDecl = { name: 'other', columns: other, kind: 'edb', output: false };

const text = join(root, 'text');
mkdirSync(text);
writeFileSync(join(text, 't.csv'), lines.join('\n') + '\n');
writeFileSync(join(text, 'other.tsv'), '5\tplain\n6\tonly here\n');
const store = join(root, 'store');
const imported = importStore({ relations: [decl('t', [0]), otherDecl], factsDir: text, out: store });

/** The file of column `c` of `relation` in the store `dir`, as its manifest names it. */
const columnFile = (dir: string, relation: string, c: number): string => JSON.parse(readFileSync(join(dir, STORE_MANIFEST), 'utf8')).relations[relation].columns[c].file;

/** A fresh copy of the store, to break. */
function copy(name: string): string {
  const to = join(root, name);
  cpSync(store, to, { recursive: true });
  return to;
}

const load = (dir: string, relations: RelationDecl[]): Promise<Record<string, Row[]>> => loadFactsDir(dir, relations, relations.map((r) => r.name));
const failure = async (p: Promise<unknown>): Promise<string> => {
  const e = await p.then(() => undefined, (x: unknown) => x);
  expect(e).toBeInstanceOf(VixenError);
  return (e as Error).message;
};

describe('columnar store', () => {
  it('imports every column of each base relation, whatever the program reads', async () => {
    const r = await imported;
    expect(r.relations).toEqual([{ name: 't', rows: 5 }, { name: 'other', rows: 2 }]);
    // A dictionary per string column: plain, quoted, unicode and empty in t; plain and only here in other.
    expect(r.strings).toBe(6);
    const manifest = JSON.parse(readFileSync(join(store, STORE_MANIFEST), 'utf8'));
    expect(manifest.relations.t.columns.map((c: { file: string; bytes: number }) => [c.file, c.bytes])).toEqual([
      // Narrow where the values' range allows: u (0, 2^32 - 1 read as -1, 7, 8, 9), the booleans, the dates (3.65M
      // days), the string ids.
      ['t/0.u32', 20], ['t/1.u8', 5], ['t/2.u32', 40], ['t/3.u32', 20], ['t/4.u32', 40], ['t/5.u8', 5], ['t/6.u24', 15], ['t/7.u8', 5],
    ]);
    expect(manifest.version).toBe(3);
    expect(manifest.relations.t.columns[1].encoding).toEqual({ kind: 'frame', width: 1, base: [2 ** 32 - 1], step: 1 });
    expect(manifest.relations.t.columns[0].encoding).toEqual({ kind: 'words' });
  });

  it('loads the rows the text files give: all columns, and any subset', async () => {
    await imported;
    for (const keep of [undefined, [7], [0, 2, 7], [4, 5, 6], [1, 3]]) {
      const relations = [decl('t', keep), otherDecl];
      expect(await load(store, relations), JSON.stringify(keep)).toEqual(await load(text, relations));
    }
  });

  it('reads only the column files a program keeps', async () => {
    await imported;
    const dir = copy('pruned');
    for (const c of [0, 1, 3, 4, 5, 6]) rmSync(join(dir, columnFile(dir, 't', c)));
    rmSync(join(dir, columnFile(dir, 'other', 1)));
    const relations = [decl('t', [2, 7]), { ...otherDecl, columns: [other[0]!], pruned: { sourceColumns: other, loadColumns: [0] } }];
    expect(await load(dir, relations)).toEqual(await load(text, relations));
    expect(await failure(load(dir, [decl('t', [0])]))).toMatch(/^store file missing: .*pruned\/t\/0\.u32$/);
  });

  it('loads a relation with inline facts only when the store has it, as a directory does', async () => {
    await imported;
    const facts = new EncodedFacts();
    const missing: RelationDecl = { name: 'inline', columns: other, kind: 'edb', output: false };
    await loadFactsDirInto(store, [otherDecl, missing], [], ['other', 'inline'], facts);
    expect([...facts.relations.keys()]).toEqual(['other']);
    expect(await failure(load(store, [missing]))).toMatch(/no relation inline in store .*store \(import it with vixen import\)/);
  });

  it('reports its progress in bytes, as a text load does', async () => {
    await imported;
    for (const dir of [text, store]) {
      const seen: LoadProgress[] = [];
      await loadFactsDirInto(dir, [decl('t'), otherDecl], ['t', 'other'], [], new EncodedFacts(), undefined, (p) => seen.push(p));
      const total = seen[0]!.bytesTotal;
      expect(total, dir).toBeGreaterThan(0);
      expect(seen.every((p) => p.bytesTotal === total && ['t', 'other'].includes(p.relation)), dir).toBe(true);
      expect(seen.map((p) => p.bytesDone), dir).toEqual([...seen.map((p) => p.bytesDone)].sort((a, b) => a - b));
      expect(seen.at(-1)!.bytesDone, dir).toBe(total);
    }
  });

  it('replaces a store, never anything else', async () => {
    await imported;
    const again = copy('again');
    await importStore({ relations: [otherDecl], factsDir: text, out: again });
    expect(existsSync(join(again, 't'))).toBe(false);
    expect(await load(again, [otherDecl])).toEqual(await load(text, [otherDecl]));
    expect(await failure(importStore({ relations: [otherDecl], factsDir: text, out: text }))).toMatch(/text exists and is not a Vixen store/);
    // A failed import leaves neither a store nor its temporary folder.
    expect(await failure(importStore({ relations: [decl('nope')], factsDir: text, out: join(root, 'failed') }))).toMatch(/no facts file for relation nope/);
    expect(readdirSync(root).filter((f) => f.includes('failed'))).toEqual([]);
  });

  it('names the file of a missing, truncated, longer or corrupt column, and reads no rows', async () => {
    await imported;
    const relations = [decl('t')];
    const missing = copy('missing');
    rmSync(join(missing, 't/2.u32'));
    expect(await failure(load(missing, relations))).toMatch(/^store file missing: .*missing\/t\/2\.u32$/);
    const truncated = copy('truncated');
    truncateSync(join(truncated, 't/2.u32'), 36);
    expect(await failure(load(truncated, relations))).toMatch(/^store file .*truncated\/t\/2\.u32 has 36 bytes, the manifest says 40 \(truncated or rewritten/);
    const longer = copy('longer');
    appendFileSync(join(longer, 't/0.u32'), Buffer.alloc(4));
    expect(await failure(load(longer, relations))).toMatch(/longer\/t\/0\.u32 has 24 bytes, the manifest says 20/);
    const corrupt = copy('corrupt');
    const bytes = readFileSync(join(corrupt, 't/4.u32'));
    bytes[3]! ^= 1;
    writeFileSync(join(corrupt, 't/4.u32'), bytes);
    expect(await failure(load(corrupt, relations))).toMatch(/^store file .*corrupt\/t\/4\.u32 is corrupt: its CRC-32 differs from the manifest's/);
    const dictionary = copy('dictionary');
    truncateSync(join(dictionary, 't/7.strings'), 3);
    expect(await failure(load(dictionary, [decl('t', [7])]))).toMatch(/dictionary\/t\/7\.strings has 3 bytes/);
    // The other columns do not read it.
    expect(await load(dictionary, [decl('t', [0, 6])])).toEqual(await load(text, [decl('t', [0, 6])]));
  });

  it('imports only the columns the program reads with columns: read, and names an omitted column a program reads', async () => {
    const subset = join(root, 'subset');
    const r = await importStore({ relations: [decl('t', [0, 7]), otherDecl], factsDir: text, out: subset, columns: 'read' });
    expect(r.relations).toEqual([{ name: 't', rows: 5 }, { name: 'other', rows: 2 }]);
    const manifest = JSON.parse(readFileSync(join(subset, STORE_MANIFEST), 'utf8'));
    expect(manifest.version).toBe(3);
    expect(manifest.relations.t.columns.map((c: { file?: string; omitted?: true }) => c.file ?? c.omitted)).toEqual(['t/0.u32', true, true, true, true, true, true, 't/7.u8']);
    expect(readdirSync(join(subset, 't')).sort()).toEqual(['0.u32', '7.offsets', '7.strings', '7.u8']);
    for (const keep of [[0, 7], [7], [0]]) expect(await load(subset, [decl('t', keep), otherDecl])).toEqual(await load(text, [decl('t', keep), otherDecl]));
    expect(await failure(load(subset, [decl('t', [0, 1, 6])]))).toBe(
      `relation t: store ${subset} omits columns 2 (u), 7 (dt), which the program reads (imported with --columns read for another program: import the facts again)`,
    );
  });

  it('names a large dictionary file changed after import (checked on a worker) and a manifest changed since the last load', async () => {
    const dir = mkdtempSync(join(root, 'large-'));
    mkdirSync(join(dir, 'text'));
    // 2 MB of strings: past the size readStoreFile checks on its own thread.
    writeFileSync(join(dir, 'text', 'other.csv'), Array.from({ length: 100_000 }, (_, i) => `${i},name ${String(i).padStart(14, '0')}`).join('\n') + '\n');
    const large = join(dir, 'store');
    await importStore({ relations: [otherDecl], factsDir: join(dir, 'text'), out: large });
    expect(statSync(join(large, 'other/1.strings')).size).toBeGreaterThan(2 ** 20);
    expect(await load(large, [otherDecl])).toEqual(await load(join(dir, 'text'), [otherDecl]));
    const bytes = readFileSync(join(large, 'other/1.strings'));
    bytes[bytes.length >> 1]! ^= 1;
    writeFileSync(join(large, 'other/1.strings'), bytes);
    expect(await failure(load(large, [otherDecl]))).toMatch(/^store file .*large-.*\/store\/other\/1\.strings is corrupt: its CRC-32 differs from the manifest's/);
    // The manifest read by the loads above is not taken for a changed one.
    const manifest = JSON.parse(readFileSync(join(large, STORE_MANIFEST), 'utf8'));
    writeFileSync(join(large, STORE_MANIFEST), JSON.stringify({ ...manifest, version: 4 }));
    expect(await failure(load(large, [otherDecl]))).toMatch(/store version 4 is not supported/);
  });

  it('reads a file of several pieces once as its checksum is taken: its bytes, or a corrupt one named', async () => {
    const dir = mkdtempSync(join(root, 'pieces-'));
    // 20 MB of bytes: three of the pieces the worker checks as they are read, the last one short.
    const bytes = Uint8Array.from({ length: 20_000_003 }, (_, i) => (i * 2654435761) >>> 24);
    const file = await writeStoreFile(dir, 'f.bin', bytes);
    const read = await readStoreFile(dir, file);
    // Compared as buffers (a failed toEqual would print 20M values).
    expect(read.length).toBe(bytes.length);
    expect(Buffer.from(read.buffer, read.byteOffset, read.length).equals(bytes)).toBe(true);
    const path = join(dir, 'f.bin');
    for (const at of [0, 9 << 20, bytes.length - 1]) {
      const bad = bytes.slice();
      bad[at]! ^= 1;
      writeFileSync(path, bad);
      await expect(readStoreFile(dir, file)).rejects.toThrow(/f\.bin is corrupt: its CRC-32 differs from the manifest's/);
    }
    // Pieces read one at a time and all at once (finishing in any order) give the same bytes and checksum.
    writeFileSync(path, bytes);
    for (const inFlight of [1, 2, 3, 8]) {
      const into = new Uint8Array(new SharedArrayBuffer(bytes.length));
      const reader = await StoreFileReader.open(dir, file);
      try {
        await reader.readChecked(into, inFlight);
      } finally {
        await reader.close();
      }
      expect(Buffer.from(into.buffer, 0, into.length).equals(bytes)).toBe(true);
    }
    // A file cut short once opened: its last pieces end early, named, whichever read meets the end.
    const reader = await StoreFileReader.open(dir, file);
    try {
      truncateSync(path, 12 << 20);
      await expect(reader.readChecked(new Uint8Array(new SharedArrayBuffer(bytes.length)), 3)).rejects.toThrow(/store file .*f\.bin ended after \d+ of 20000003 bytes/);
    } finally {
      await reader.close();
    }
  });

  it('names a manifest of another version, format or shape', async () => {
    await imported;
    const edit = (name: string, change: (m: Record<string, unknown>) => unknown): string => {
      const dir = copy(name);
      const m = JSON.parse(readFileSync(join(dir, STORE_MANIFEST), 'utf8'));
      writeFileSync(join(dir, STORE_MANIFEST), JSON.stringify(change(m) ?? m));
      return dir;
    };
    const relations = [decl('t')];
    expect(await failure(load(edit('v0', (m) => void (m.version = 0)), relations))).toMatch(/v0\/vixen-store\.json: store version 0 is not supported \(this Vixen reads versions 1, 2 and 3; import the facts again/);
    expect(await failure(load(edit('format', (m) => void (m.format = 'parquet')), relations))).toMatch(/format\/vixen-store\.json: not a Vixen store manifest/);
    expect(await failure(load(edit('shape', (m) => void ((m.relations as Record<string, { rows: unknown }>).t!.rows = -1)), relations))).toMatch(/shape\/vixen-store\.json: corrupt store manifest: relations\.t\.rows: /);
    expect(await failure(load(edit('undictionary', (m) => void delete (m.relations as Record<string, { columns: { dictionary?: unknown }[] }>).t!.columns[7]!.dictionary), relations))).toMatch(
      /undictionary\/vixen-store\.json: corrupt store manifest: relations\.t\.columns\.7: expected a dictionary for a string column, and only for one/,
    );
    expect(await failure(load(edit('escape', (m) => void ((m.relations as Record<string, { columns: { file: string }[] }>).t!.columns[0]!.file = '../text/t.csv')), relations))).toMatch(/escape\/vixen-store\.json: corrupt store manifest: relations\.t\.columns\.0\.file: expected a path inside the store/);
    const broken = copy('broken');
    writeFileSync(join(broken, STORE_MANIFEST), '{"format": "vixen-store", "vers');
    expect(await failure(load(broken, relations))).toMatch(/^cannot read store manifest .*broken\/vixen-store\.json: /);
  });

  it('names the relation and column a declaration does not fit', async () => {
    await imported;
    const retyped: RelationDecl = { ...otherDecl, columns: [other[0]!, { name: 'name', type: 'int32' }] };
    expect(await failure(load(store, [retyped]))).toMatch(/^relation other, column 2 \(name\): the program declares int32, store .*store holds string \(column name\)$/);
    const narrower: RelationDecl = { ...otherDecl, columns: [other[0]!] };
    expect(await failure(load(store, [narrower]))).toMatch(/^relation other has 2 columns in store .*store, the program declares 1$/);
  });

  it('imports string columns whose dictionaries are sorted on workers, each with its own ids', async () => {
    const dir = mkdtempSync(join(root, 'many-'));
    mkdirSync(join(dir, 'text'));
    // Two string columns of more distinct strings than one thread sorts, sharing some, with repeats, out of order.
    const rows = Array.from({ length: 90_000 }, (_, i) => [i, `k${(i * 7919) % 80_000}`, `v${(i * 31) % 70_001}`] as const);
    writeFileSync(join(dir, 'text', 'kv.csv'), rows.map((r) => r.join(',')).join('\n') + '\n');
    const kv: RelationDecl = { name: 'kv', kind: 'edb', output: false, columns: [{ name: 'i', type: 'int32' }, { name: 'k', type: 'string' }, { name: 'v', type: 'string' }] };
    await importStore({ relations: [kv], factsDir: join(dir, 'text'), out: join(dir, 'store') });
    const loaded = (await load(join(dir, 'store'), [kv])).kv!;
    expect(loaded.length).toBe(rows.length);
    expect(loaded.findIndex((r, i) => r[0] !== rows[i]![0] || r[1] !== rows[i]![1] || r[2] !== rows[i]![2])).toBe(-1);
  });

  it('writes rows sorted by their first word in short runs in the order of a sort by all words, others as read', async () => {
    const dir = mkdtempSync(join(root, 'order-'));
    mkdirSync(join(dir, 'text'));
    const li: RelationDecl = { name: 'li', kind: 'edb', output: false, columns: [{ name: 'o', type: 'int32' }, { name: 'p', type: 'int64' }, { name: 's', type: 'string' }, { name: 'n', type: 'int32' }] };
    // As lineitem: by order key, each order's lines in no order of the other columns (a negative int64 is a large
    // unsigned low word; "b" sorts before "a1" nowhere, so string ids follow the strings).
    const near = Array.from({ length: 3000 }, (_, i) => [Math.floor(i / 5), ((i * 7) % 5) - 2, ['b', 'a1', 'a', 'c', 'a1'][i % 5]!, i % 5]);
    const far = [...near].reverse();
    writeFileSync(join(dir, 'text', 'li.csv'), near.map((r) => r.join(',')).join('\n') + '\n');
    await importStore({ relations: [li], factsDir: join(dir, 'text'), out: join(dir, 'near') });
    writeFileSync(join(dir, 'text', 'li.csv'), far.map((r) => r.join(',')).join('\n') + '\n');
    await importStore({ relations: [li], factsDir: join(dir, 'text'), out: join(dir, 'far') });
    const words = async (store: string): Promise<Uint32Array> => {
      const facts = new EncodedFacts();
      await loadFactsDirInto(store, [li], ['li'], [], facts);
      const rel = facts.relations.get('li')!;
      const all = new Uint32Array(rel.count * rel.width);
      rel.pieces().reduce((at, p) => (all.set(p, at), at + p.length), 0);
      return all;
    };
    const ascending = (w: Uint32Array, width: number): boolean => {
      for (let r = 1; r * width < w.length; r++) {
        const k = Array.from({ length: width }, (_, i) => i).find((i) => w[(r - 1) * width + i] !== w[r * width + i]);
        if (k === undefined || w[(r - 1) * width + k]! > w[r * width + k]!) return false;
      }
      return true;
    };
    expect(ascending(await words(join(dir, 'near')), 5)).toBe(true);
    const sorted = (rows: Row[]): string[] => rows.map((r) => r.join(',')).sort();
    expect(sorted((await load(join(dir, 'near'), [li])).li!)).toEqual(sorted(near.map((r) => [r[0], BigInt(r[1]!), r[2], r[3]] as Row)));
    // Not sorted by the order key: stored as read (the device sorts it at each load).
    expect((await load(join(dir, 'far'), [li])).li!.map((r) => r[3])).toEqual(far.map((r) => r[3]));
  });

  it('decodes a dictionary whole as its strings one by one decode: ASCII in windows past 64 MiB, and not ASCII', async () => {
    const dir = mkdtempSync(join(root, 'dictionary-'));
    // 1.2M ASCII strings of about 60 bytes: more than one 64 MiB window, strings cut at no window's edge.
    const ascii = Array.from({ length: 1_200_000 }, (_, i) => `${String(i).padStart(8, '0')} ${'x'.repeat(i % 97)}`);
    const other = ['', 'a', 'ünïcödé', '😀 z'];
    // Lone surrogates (API strings) are written string by string, as UTF-8 writes each: never paired across two.
    const lone = ['a\ud83d', '\ude00b', 'c'];
    for (const [name, strings] of [['ascii', ascii], ['other', other], ['lone', lone]] as const) {
      const files = await writeDictionary(dir, name, strings);
      const dictionary = await StoreDictionary.read(dir, files);
      const texts = dictionary.texts();
      expect(texts.length).toBe(strings.length);
      expect(texts.findIndex((t, i) => t !== Buffer.from(strings[i]!, 'utf8').toString('utf8'))).toBe(-1);
      expect(dictionary.text(strings.length - 1)).toBe(strings.at(-1));
    }
  });
});
